//! Owner-computes slabs sized for the enqueue stagger (issue 31; DESIGN.md §7, "Owner
//! computes"): the launch thread enqueues one chunk per device, one after the other, so on
//! NVIDIA each device starts about 40 µs after the one before it (4 H200s, fdtd-2d at
//! 16384², median over 14,403 split launches: enqueued at 179, 221, 260 and 301 µs into the
//! launch, each running 272 µs; results/session24-2026-11-28/README.md). With equal slabs
//! the last device ends 120 µs after the first, and every launch waits for it.
//!
//! Devices of one name keep equal slabs by measured throughput (following their finish
//! times skewed four H200s' slabs to 0.36/0.32/0.21/0.12, results/session19). Here the
//! slabs are sized once, from what the device order costs: each device `k` starts at `s_k`
//! (ns since the launch's start) and needs `r_k` ns per unit; equal finish `T` over `U`
//! units gives `u_k = (T − s_k) / r_k` with `T = (U + Σ s_k / r_k) / Σ 1 / r_k`. This is
//! the static baseline of Boyer's dissertation (§4.2, the static partition) with the
//! per-device start offsets of the Boyer scheduler's own model of a device
//! (§4.3: time = latency + units × rate), measured over [`SAMPLES`] launches (medians) and
//! then kept for good, so that slab boundaries, and the data the devices own, move once.

/// Launches of one shape whose starts are sampled before the slabs are sized.
pub(super) const SAMPLES: usize = 8;
/// The smallest predicted gain (share of the equal slabs' makespan) worth moving the slab
/// boundaries, and the data behind them, for.
const MIN_GAIN: f64 = 0.03;
/// No device gets less than this share of an equal slab.
const MIN_SHARE_OF_EQUAL: f64 = 0.25;

/// Per-device starts (ns since the launch's start) and device time per unit (ns) of the
/// sampled launches of one shape, until the slabs are sized ([`Self::note`]).
#[derive(Default)]
pub(super) struct StartSamples {
    starts: Vec<Vec<f64>>,
    ns_per_unit: Vec<Vec<f64>>,
    /// Sized (or judged not worth it): nothing more is sampled.
    pub settled: bool,
}

impl StartSamples {
    /// Notes one launch's per-device `(start ns, ns per unit)` (`None` for a device without
    /// a measured chunk: the launch is not counted). After [`SAMPLES`] launches, returns the
    /// fractions that end the devices together over `units` units, or `None` (also when the
    /// gain is under [`MIN_GAIN`]); either way the samples are then settled.
    pub fn note(&mut self, launch: &[Option<(f64, f64)>], units: u64) -> Option<Vec<f64>> {
        if self.settled || launch.iter().any(Option::is_none) {
            return None;
        }
        let n = launch.len();
        self.starts.resize(n, Vec::new());
        self.ns_per_unit.resize(n, Vec::new());
        for (k, m) in launch.iter().flatten().enumerate() {
            self.starts[k].push(m.0);
            self.ns_per_unit[k].push(m.1);
        }
        if self.starts[0].len() < SAMPLES {
            return None;
        }
        self.settled = true;
        let s: Vec<f64> = self.starts.iter_mut().map(|v| median(v)).collect();
        let r: Vec<f64> = self.ns_per_unit.iter_mut().map(|v| median(v)).collect();
        offset_fractions(&s, &r, units)
    }
}

/// `raw` fractions (summing to 1, some maybe under `floor` or negative) with every one at
/// least `floor`, the others scaled down in proportion to make room.
fn with_floor(raw: &[f64], floor: f64) -> Vec<f64> {
    let mut floored = vec![false; raw.len()];
    loop {
        let room = 1.0 - floor * floored.iter().filter(|f| **f).count() as f64;
        let free: f64 = raw
            .iter()
            .zip(&floored)
            .filter(|(_, f)| !**f)
            .map(|(x, _)| x)
            .sum();
        let f: Vec<f64> = raw
            .iter()
            .zip(&floored)
            .map(|(x, fl)| if *fl { floor } else { x * room / free })
            .collect();
        match f.iter().zip(&floored).position(|(x, fl)| !fl && *x < floor) {
            Some(k) => floored[k] = true,
            None => return f,
        }
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Fractions of `units` that make devices starting at `starts` (ns) with `ns_per_unit` end
/// together (the module's equation), each at least [`MIN_SHARE_OF_EQUAL`] of an equal
/// slab; `None` when a rate is not positive or the predicted makespan is not at least
/// [`MIN_GAIN`] shorter than with equal slabs.
pub(super) fn offset_fractions(
    starts: &[f64],
    ns_per_unit: &[f64],
    units: u64,
) -> Option<Vec<f64>> {
    let n = starts.len();
    if n < 2 || units == 0 || ns_per_unit.iter().any(|r| r.is_nan() || *r <= 0.0) {
        return None;
    }
    let u = units as f64;
    let inv: f64 = ns_per_unit.iter().map(|r| 1.0 / r).sum();
    let t = (u + starts
        .iter()
        .zip(ns_per_unit)
        .map(|(s, r)| s / r)
        .sum::<f64>())
        / inv;
    let raw: Vec<f64> = starts
        .iter()
        .zip(ns_per_unit)
        .map(|(s, r)| (t - s) / r / u)
        .collect();
    let fractions = with_floor(&raw, MIN_SHARE_OF_EQUAL / n as f64);
    let makespan = |f: &dyn Fn(usize) -> f64| {
        (0..n)
            .map(|k| starts[k] + ns_per_unit[k] * f(k) * u)
            .fold(0.0, f64::max)
    };
    let equal = makespan(&|_| 1.0 / n as f64);
    let sized = makespan(&|k| fractions[k]);
    (sized <= equal * (1.0 - MIN_GAIN)).then_some(fractions)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 H200s, fdtd-2d at 16384² (the module's figures): 2048 units of 512 work-groups,
    /// devices starting 41 µs after their enqueue, 272 µs per 512 units.
    #[test]
    fn later_devices_get_smaller_slabs_and_all_end_together() {
        let starts = [220e3, 261e3, 301e3, 342e3];
        let r = [272e3 / 512.0; 4];
        let f = offset_fractions(&starts, &r, 2048).expect("a gain of ~10 %");
        assert!(f.windows(2).all(|w| w[0] > w[1]), "{f:?}");
        assert!((f.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let ends: Vec<f64> = (0..4).map(|k| starts[k] + r[k] * f[k] * 2048.0).collect();
        let spread = ends.iter().cloned().fold(0.0, f64::max)
            - ends.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread < 1.0, "ends {ends:?}");
        // 614 µs with equal slabs (the measured makespan), ~554 µs sized
        assert!((ends[0] - 553.5e3).abs() < 1e3, "{ends:?}");
    }

    #[test]
    fn devices_starting_together_keep_equal_slabs() {
        let r = [500.0; 3];
        assert_eq!(offset_fractions(&[10e3, 11e3, 12e3], &r, 3000), None);
    }

    #[test]
    fn a_very_late_device_keeps_its_floor() {
        let f = offset_fractions(&[0.0, 5e6], &[1000.0, 1000.0], 1000).expect("a gain");
        assert!((f[1] - 0.125).abs() < 1e-9, "{f:?}");
        assert!((f[0] - 0.875).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn sizing_waits_for_the_samples_and_happens_once() {
        let mut s = StartSamples::default();
        let launch = [
            Some((220e3, 531.0)),
            Some((261e3, 531.0)),
            Some((301e3, 531.0)),
            Some((342e3, 531.0)),
        ];
        for _ in 0..SAMPLES - 1 {
            assert_eq!(s.note(&launch, 2048), None);
        }
        // a launch with a device unmeasured is not counted
        assert_eq!(
            s.note(
                &[None, Some((1.0, 1.0)), Some((1.0, 1.0)), Some((1.0, 1.0))],
                2048
            ),
            None
        );
        assert!(!s.settled);
        assert!(s.note(&launch, 2048).is_some());
        assert!(s.settled);
        assert_eq!(s.note(&launch, 2048), None, "sized once, for good");
    }
}
