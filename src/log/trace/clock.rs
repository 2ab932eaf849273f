//! Mapping a device's profiling clock to the host clock of the trace (ns since the Unix
//! epoch, `CLOCK_REALTIME`).
//!
//! Two methods, chosen per device:
//! 1. **`clGetDeviceAndHostTimer`** (OpenCL 2.1) when the device supports it: one call gives a
//!    simultaneous (device timer, host timer) pair, and `clGetHostTimer`, bracketed by two
//!    reads of the trace clock, gives the host timer's offset to the trace clock. Device
//!    timer and profiling timestamps share one time base (OpenCL 3.0 §5.14). The best of
//!    three brackets (narrowest) is kept. Computed once per device, on the log writer thread.
//!    A mapping that would put a command's submission more than 1 ms before its host enqueue
//!    is not trusted; method 2 is used instead and the trace says so.
//! 2. **Enqueue alignment** otherwise (e.g. PoCL's CPU devices return
//!    `CL_INVALID_OPERATION`): the command's `CL_PROFILING_COMMAND_SUBMIT` cannot precede the
//!    host's enqueue time (`LaunchRecord::time_ns`), so the offset is the smallest one that
//!    puts no command of that device before its enqueue: `max(time_ns − submit)` over the
//!    device's launches ([`timeline::build`](super::timeline::build)). It assumes that the two
//!    clocks do not drift during the run, and it draws kernels early by at most the shortest
//!    enqueue-to-submit delay of the run.
//!
//! The trace's `otherData.clock_mapping` says which method each device got.

use super::now_ns;
use once_cell::sync::Lazy;
use opencl_sys::*;
use parking_lot::Mutex;
use std::collections::BTreeMap;

/// How one device's timestamps are mapped to the trace clock.
#[derive(Debug, Clone, PartialEq)]
pub enum Mapping {
    /// `host_ns = device_ns + offset` from `clGetDeviceAndHostTimer` + `clGetHostTimer`.
    Timer {
        /// ns added to a device timestamp.
        offset: i128,
        /// Width of the bracket around `clGetHostTimer`, ns (the mapping's uncertainty).
        uncertainty_ns: u64,
    },
    /// Enqueue alignment; the string says why the timer could not be used.
    Enqueue(String),
}

impl Mapping {
    /// Short description for the trace's `otherData`.
    pub fn describe(&self) -> String {
        match self {
            Mapping::Timer { uncertainty_ns, .. } => {
                format!("clGetDeviceAndHostTimer (+/- {uncertainty_ns} ns)")
            }
            Mapping::Enqueue(why) => {
                format!("aligned to the host enqueue time (max(time_ns - SUBMIT)); {why}")
            }
        }
    }
}

static MAPPINGS: Lazy<Mutex<BTreeMap<String, Mapping>>> = Lazy::new(Default::default);

/// The mapping chosen for each device index so far.
pub fn mappings() -> BTreeMap<String, Mapping> {
    MAPPINGS.lock().clone()
}

/// Chooses the mapping of device `index` (`platform:device`) once.
pub fn calibrate(index: &str) {
    if MAPPINGS.lock().contains_key(index) {
        return;
    }
    let m = timer_mapping(index).unwrap_or_else(Mapping::Enqueue);
    MAPPINGS.lock().insert(index.to_string(), m);
}

/// The device handle of `platform:device` as `clGetPlatformIDs`/`clGetDeviceIDs(ALL)` number
/// them.
fn device_of(index: &str) -> Result<cl_device_id, String> {
    let (p, d) = index
        .split_once(':')
        .and_then(|(p, d)| Some((p.parse::<usize>().ok()?, d.parse::<usize>().ok()?)))
        .ok_or_else(|| format!("device index '{index}' is not platform:device"))?;
    let t = crate::loader::table().ok_or("no OpenCL library")?;
    let (Some(gp), Some(gd)) = (t.clGetPlatformIDs, t.clGetDeviceIDs) else {
        return Err("no clGetPlatformIDs/clGetDeviceIDs".into());
    };
    // SAFETY: two-call enumeration with buffers of the reported sizes.
    unsafe {
        let mut n = 0;
        if gp(0, std::ptr::null_mut(), &mut n) != CL_SUCCESS || p >= n as usize {
            return Err("platform not found".into());
        }
        let mut plats = vec![std::ptr::null_mut(); n as usize];
        if gp(n, plats.as_mut_ptr(), std::ptr::null_mut()) != CL_SUCCESS {
            return Err("platform not found".into());
        }
        let mut nd = 0;
        if gd(
            plats[p],
            CL_DEVICE_TYPE_ALL,
            0,
            std::ptr::null_mut(),
            &mut nd,
        ) != CL_SUCCESS
            || d >= nd as usize
        {
            return Err("device not found".into());
        }
        let mut devs = vec![std::ptr::null_mut(); nd as usize];
        if gd(
            plats[p],
            CL_DEVICE_TYPE_ALL,
            nd,
            devs.as_mut_ptr(),
            std::ptr::null_mut(),
        ) != CL_SUCCESS
        {
            return Err("device not found".into());
        }
        Ok(devs[d])
    }
}

/// Method 1, or the reason it is unavailable.
fn timer_mapping(index: &str) -> Result<Mapping, String> {
    let dev = device_of(index)?;
    let t = crate::loader::table().ok_or("no OpenCL library")?;
    let (Some(dh), Some(h)) = (t.clGetDeviceAndHostTimer, t.clGetHostTimer) else {
        return Err("the OpenCL library lacks clGetDeviceAndHostTimer".into());
    };
    let mut best: Option<(u64, i128)> = None;
    for _ in 0..3 {
        let (mut dt, mut ht, mut ht2) = (0u64, 0u64, 0u64);
        // SAFETY: cl_ulong out-pointers; `dev` is a device of the real library.
        let r = unsafe { dh(dev, &mut dt, &mut ht) };
        if r != CL_SUCCESS {
            return Err(format!("clGetDeviceAndHostTimer returned {r}"));
        }
        let a = now_ns();
        // SAFETY: as above.
        let r = unsafe { h(dev, &mut ht2) };
        let b = now_ns();
        if r != CL_SUCCESS {
            return Err(format!("clGetHostTimer returned {r}"));
        }
        // host timer -> trace clock, then device -> host timer
        let host_to_trace = (a / 2 + b / 2) as i128 - ht2 as i128;
        let offset = ht as i128 - dt as i128 + host_to_trace;
        let width = b.saturating_sub(a);
        if best.is_none_or(|(w, _)| width < w) {
            best = Some((width, offset));
        }
    }
    let (uncertainty_ns, offset) = best.ok_or("no calibration")?;
    Ok(Mapping::Timer {
        offset,
        uncertainty_ns,
    })
}
