//! The device definition line (`"record": "device"`): what identifies a device for
//! matching it to a profile (`profiles/*.json` `match`, [`crate::model::find_profile`]),
//! written once per device and process, before the first launch record that names the
//! device. A launch record names its device only by `device.index`, `device.name` and
//! `device.type`; PoCL's `pthread` and `basic` devices, or two GPUs of one family, are told
//! apart only by the version string or the compute-unit count, so `clprism accuracy
//! --measured` needs this line to pair a log-mode run with the right profile (issue 19
//! item 5). Old readers skip lines of an unknown `record` kind, so the launch records keep
//! the shape of `clprism.launch/2`.

use super::*;
use crate::model::DeviceIdentity;

/// A device definition line.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceDef {
    /// [`SCHEMA_VERSION`].
    pub schema: String,
    /// [`RECORD_DEVICE`].
    pub record: String,
    /// Process id of the launches naming the device.
    pub pid: u32,
    /// The device as the launch records name it (`index`, `name`, `type`).
    pub device: Device,
    /// `CL_DEVICE_VENDOR`.
    pub vendor: String,
    /// `CL_DEVICE_VERSION` (PoCL: `... HSTR: pthread-...`).
    pub version: String,
    /// `CL_DRIVER_VERSION`.
    pub driver_version: String,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS`.
    pub max_compute_units: u32,
}

impl DeviceDef {
    /// The definition line of `device` (whose `identity` is `id`) in process `pid`.
    pub fn new(pid: u32, device: &Device, id: &DeviceIdentity) -> DeviceDef {
        DeviceDef {
            schema: SCHEMA_VERSION.into(),
            record: RECORD_DEVICE.into(),
            pid,
            device: Device {
                identity: None,
                ..device.clone()
            },
            vendor: id.vendor.clone(),
            version: id.version.clone(),
            driver_version: id.driver_version.clone(),
            max_compute_units: id.max_compute_units,
        }
    }

    /// The identity it defines (`name` is `device.name`).
    pub fn identity(&self) -> DeviceIdentity {
        DeviceIdentity {
            name: self.device.name.clone(),
            vendor: self.vendor.clone(),
            version: self.version.clone(),
            driver_version: self.driver_version.clone(),
            max_compute_units: self.max_compute_units,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_lines_resolve_the_launches_identity() {
        let id = DeviceIdentity {
            name: "pthread-haswell".into(),
            vendor: "AuthenticAMD".into(),
            version: "OpenCL 3.0 PoCL HSTR: pthread-x86_64".into(),
            driver_version: "3.1".into(),
            max_compute_units: 2,
        };
        let dev = Device {
            index: "0:0".into(),
            name: id.name.clone(),
            kind: "cpu".into(),
            identity: None,
        };
        let def = DeviceDef::new(7, &dev, &id);
        let line = serde_json::to_string(&def).unwrap();
        round_trip(&line).unwrap();
        assert!(line.contains("\"record\":\"device\""), "{line}");
        let launch = Launch {
            schema: SCHEMA_VERSION.into(),
            pid: 7,
            kernel: "k".into(),
            global: vec![4],
            device: dev.clone(),
            ..Default::default()
        };
        let other = Launch {
            pid: 8,
            ..launch.clone()
        };
        let text = [
            line.clone(),
            serde_json::to_string(&launch).unwrap(),
            serde_json::to_string(&other).unwrap(),
        ]
        .join("\n");
        let (read, unresolved) = read_text(&text);
        assert_eq!(unresolved, 0);
        assert_eq!(read[0].1, TextLine::Definition);
        let ids: Vec<Option<DeviceIdentity>> = read[1..]
            .iter()
            .map(|(_, t)| match t {
                TextLine::Launch(l, _) => l.device.identity.as_deref().cloned(),
                _ => panic!("{t:?}"),
            })
            .collect();
        // the same process's launch gets it, another process's does not
        assert_eq!(ids, vec![Some(id), None]);
        // `--expand` keeps the device line
        assert!(expand(&text).starts_with(&line));
    }
}
