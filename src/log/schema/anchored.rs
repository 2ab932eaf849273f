//! Anchored projection across devices (issue 19 item 3; the idea of Habitat, Yu et al.,
//! USENIX ATC'21 §3: scale a time measured on one GPU by a model's ratio between the two
//! GPUs).
//!
//! For a launch timed on its own device `L` (`device_ns`, measured) whose profile the
//! projection names (`projection.launch_device_profile`), the anchored time on another
//! profiled device `d` is
//!
//! ```text
//! anchored_ns(d) = device_ns × projected_ns(d) / projected_ns(L)
//! ```
//!
//! with both `projected_ns` from the same `projection.devices` (same model options as the
//! pure projection). The model's absolute error on `L` cancels; what is left is its error
//! on the ratio between the devices.
//!
//! Where it is computed, and why there: at read time, here, by every reader (`clprism
//! report`, `clprism accuracy`), not in the record. The device time of a launch arrives
//! only on the log writer's thread, after the projection was attached, and every input
//! is already in the record (`device_ns`, `projection.devices[].projected_ns`,
//! `launch_device_profile`), so writing the figures would add bytes per launch to the
//! compact log (one number per profile) for nothing a reader cannot recompute exactly. A
//! reader can also anchor a launch that was not timed (adaptive timing) on the median of
//! the timed launches of the same kernel and shape, which a per-record figure could not.
//!
//! Ranking: anchoring multiplies every device's model time by one factor,
//! `device_ns / projected_ns(L)`, so the anchored ranking and projected-best device are
//! the model's (`projection.devices[].rank`, `projection.best`); the readers say so.

use super::Projection;
use serde::Serialize;

/// Which method produced a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// Measured on the device (`device_ns`): the launch device itself.
    Measured,
    /// Measured time on the launch device × the model's ratio between the devices.
    Anchored,
    /// The model alone (`projected_ns`): no measured time or no profile for the launch
    /// device to anchor on.
    Model,
}

impl Method {
    /// `measured`, `anchored` or `model`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Measured => "measured",
            Method::Anchored => "anchored",
            Method::Model => "model",
        }
    }
}

/// One profiled device's times for one launch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeviceTime {
    /// Profile name.
    pub device: String,
    /// The pure model's projected time, ns (`projection.devices[].projected_ns`).
    pub model_ns: f64,
    /// The anchored time, ns: `anchor_ns × model_ns / model_ns(launch device)`; on the
    /// launch device, the anchor itself. `None` when there is no anchor.
    pub anchored_ns: Option<f64>,
    /// The best estimate: `anchored_ns` when there is one, else `model_ns`.
    pub ns: f64,
    /// The method that produced `ns`.
    pub method: Method,
}

impl Projection {
    /// The projected time of `device` by the pure model, ns.
    pub fn model_ns(&self, device: &str) -> Option<f64> {
        self.set
            .devices
            .iter()
            .find(|d| d.device == device)
            .map(|d| d.projected_ns)
    }

    /// The anchor's scale, `anchor_ns / projected_ns(launch device)`: `None` when the
    /// launch device has no profile, was not projected, or its projection is not positive,
    /// or `anchor_ns` is not a positive time.
    pub fn anchor_scale(&self, anchor_ns: Option<f64>) -> Option<f64> {
        let m = anchor_ns.filter(|m| m.is_finite() && *m > 0.0)?;
        let own = self.model_ns(self.launch_device_profile.as_deref()?)?;
        (own.is_finite() && own > 0.0).then(|| m / own)
    }

    /// Every projected device's times (module docs): anchored on `anchor_ns`, the measured
    /// time of this launch (or of its kernel and shape) on the launch's own device, ns.
    /// In the order of `projection.devices`.
    pub fn anchored(&self, anchor_ns: Option<f64>) -> Vec<DeviceTime> {
        let scale = self.anchor_scale(anchor_ns);
        let own = self.launch_device_profile.as_deref();
        self.set
            .devices
            .iter()
            .map(|d| {
                let anchored = scale.map(|s| s * d.projected_ns);
                let method = match (anchored, own == Some(d.device.as_str())) {
                    (None, _) => Method::Model,
                    (Some(_), true) => Method::Measured,
                    (Some(_), false) => Method::Anchored,
                };
                DeviceTime {
                    device: d.device.clone(),
                    model_ns: d.projected_ns,
                    anchored_ns: anchored,
                    ns: anchored.unwrap_or(d.projected_ns),
                    method,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn projection(own: Option<&str>) -> Projection {
        Projection {
            set: serde_json::from_value(serde_json::json!({"devices": [
                {"device": "h200", "t_compute_ns": 1.0, "t_global_ns": 2.0, "t_local_ns": 0.0,
                 "bound": "global", "projected_ns": 800.0, "rank": 1},
                {"device": "h100", "t_compute_ns": 1.0, "t_global_ns": 3.0, "t_local_ns": 0.0,
                 "bound": "global", "projected_ns": 1000.0, "rank": 2}]}))
            .unwrap(),
            launch_device_profile: own.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn anchored_scales_the_measured_time_by_the_model_ratio() {
        let p = projection(Some("h100"));
        let t = p.anchored(Some(1500.0));
        assert_eq!(t[0].device, "h200");
        assert_eq!(t[0].method, Method::Anchored);
        assert_eq!(t[0].anchored_ns, Some(1500.0 * 800.0 / 1000.0));
        assert_eq!(t[0].ns, 1200.0);
        assert_eq!(t[0].model_ns, 800.0);
        assert_eq!(t[1].method, Method::Measured);
        assert_eq!(t[1].ns, 1500.0);
        // the ranking is the model's: one factor for every device
        assert!(t[0].ns < t[1].ns);
        // no anchor: the model
        for (p, m) in [
            (projection(Some("h100")), None),
            (projection(None), Some(1500.0)),
            (projection(Some("other")), Some(1500.0)),
            (projection(Some("h100")), Some(0.0)),
        ] {
            let t = p.anchored(m);
            assert!(t
                .iter()
                .all(|d| d.method == Method::Model && d.ns == d.model_ns));
        }
    }
}
