//! The small parts of a `schedule` record that name devices and the probe: who took part,
//! who sat the launch out, and the first launch's probe chunk on the app's device.

use serde::{Deserialize, Serialize};

/// A device that took part in a balanced launch (`schedule.devices[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ScheduleDevice {
    /// `platform:device` index.
    pub index: String,
    /// `CL_DEVICE_NAME`.
    pub name: String,
}

/// The probe chunk of a kernel's first launch (`schedule.probe`; issue 31 item 2): the first
/// β of the work-groups along the split dimension, run on the app's device in its queue.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProbeLog {
    /// Work-groups the probe ran.
    pub work_groups: u64,
    /// Work-groups of the whole launch.
    pub of_work_groups: u64,
    /// Its device time on the app's device (profiling `END − START`), ns.
    pub device_ns: u64,
}

/// A balance device that sat a launch out (`schedule.devices_excluded[]`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExcludedDevice {
    /// `platform:device` index.
    pub index: String,
    /// Why (the kernel did not build there, the device failed earlier, busy with abandoned
    /// straggler chunks).
    pub reason: String,
}
