//! The `best` scheduler of balance mode (issue 5, deliverable 5; DESIGN.md §6–§7): the whole
//! launch runs on one device, the one the projection ranks first (Panwar et al. §IV-D, the
//! best-device choice evaluated in §V), or, when no projection exists, the fastest device
//! measured so far for that kernel.
//!
//! Projection: each participating device is matched to a device profile
//! ([`crate::model::find_profile`]) from `CLPRISM_PROFILES` (else the built-in `profiles/`).
//! Work-group (0,0,0) of the launch is emulated by the mini-emulator once per distinct warp
//! width of those profiles, and [`crate::model::project_all`] projects the whole NDRange on
//! every profile; the participating device with the smallest projected time wins (the first
//! one on ties). The projected times are cached per (program, kernel, launch shape: NDRange,
//! work-group size, `__local` argument sizes), so the emulation runs once per shape; by-value
//! arguments of later launches are assumed not to change the ranking.
//!
//! Approximation: the emulated work-group runs on zero-filled buffers (the app's contents are
//! not read back for it), so a kernel whose control flow depends on the data (loop bounds or
//! branches read from memory) is projected as it would run on zeros. The record says so
//! (`"inputs": "zero-filled"`).
//!
//! Fallback (measured rule): when a participating device has no profile, the profiles cannot
//! be loaded, or the emulation or projection fails, each device that has not yet run the
//! kernel gets one launch (`first-try`, in device order), then the device with the smallest
//! measured ns per work-group wins (`measured`). The record gives the reason.
//!
//! Record (`schedule.best`): `{"by": "projection"|"measured"|"first-try", "device": <index
//! among the participating devices, as in "devices" and the chunks>, "projected_ns": [per
//! participating device, ns, or null] | null, "profiles": [profile name or null per
//! participating device], "measured_ns_per_wg": [per participating device or null],
//! "inputs": "zero-filled" (when projected), "cached": bool, "reason": <fallback reason,
//! absent when by = projection>}`.

use super::cl;
use super::program::ArgKind;
use super::{Engine, Job};
use crate::emu::{self, EmuConfig, Module, WorkGroupStats};
use crate::log::schema::{BestBy, BestChoice};
use crate::model::{self, DeviceIdentity, ModelOptions, Profile};
use crate::registry::tables::KernelArg;
use opencl_sys::*;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::time::Instant;

/// Emulation budgets for the projection's work-group: the emulator's default instruction
/// budget and 2 s of wall time (counts are extrapolated past either, as in project mode).
const EMU_BUDGET: EmuConfig = EmuConfig {
    warp_width: 32,
    instr_budget: 200_000_000,
    time_budget_ns: 2_000_000_000,
    skip_write_free_loops: false,
};

/// How the device was chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum By {
    /// The projection ranked it first.
    Projection,
    /// Fastest measured ns per work-group so far.
    Measured,
    /// A device that has not run the kernel yet (measured rule, before every device ran it).
    FirstTry,
}

impl By {
    /// The record's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            By::Projection => "projection",
            By::Measured => "measured",
            By::FirstTry => "first-try",
        }
    }
}

/// Projected ns per engine device (`None`: no profile, or the profile cannot run the launch,
/// with the reason), or why there is no projection.
type Projected = Result<Vec<Result<f64, String>>, String>;

/// State of the `best` scheduler, kept by the balance worker.
#[derive(Default)]
pub(super) struct BestState {
    /// Profile of each engine device (None: no profile matches), or why none could be
    /// loaded; filled at the first `best` launch.
    profiles: Option<Result<Vec<Option<Profile>>, String>>,
    /// Launch key (see [`shape_key`]) → projected times.
    projected: FxHashMap<String, Projected>,
}

/// The device `best` picked for a launch.
pub(super) struct Choice {
    /// Index among the participating devices (`devs`).
    pub pick: usize,
    /// The `schedule.best` record.
    pub record: BestChoice,
}

/// Measured rule: the first participating device with no measurement yet (`FirstTry`),
/// else the one with the smallest measured ns per work-group (`Measured`; the first on
/// ties). `measured` is indexed by engine device, `devs` holds engine indices; the result
/// is an index into `devs`.
pub fn pick_measured(measured: &[Option<f64>], devs: &[usize]) -> (usize, By) {
    let m = |i: usize| measured.get(devs[i]).copied().flatten();
    if let Some(i) = (0..devs.len()).find(|&i| m(i).is_none()) {
        return (i, By::FirstTry);
    }
    let pick = (0..devs.len())
        .min_by(|&a, &b| m(a).partial_cmp(&m(b)).unwrap_or(std::cmp::Ordering::Equal))
        .unwrap_or(0);
    (pick, By::Measured)
}

/// Projection rule: the participating device with the smallest projected time (the first on
/// ties). `projected` is indexed by engine device. Errors: a participating device without a
/// projected time (the reason names it), or a time that is not a finite number.
pub fn pick_projected(
    projected: &[Result<f64, String>],
    devs: &[usize],
    names: &[String],
) -> Result<usize, String> {
    let mut best: Option<(usize, f64)> = None;
    for (i, &d) in devs.iter().enumerate() {
        let name = names.get(d).map_or("?", |s| s.as_str());
        let t = match projected.get(d) {
            Some(Ok(t)) if t.is_finite() && *t >= 0.0 => *t,
            Some(Ok(t)) => return Err(format!("projected time {t} ns on {name}")),
            Some(Err(e)) => return Err(format!("no projection for {name}: {e}")),
            None => return Err(format!("no projection for {name}")),
        };
        if best.is_none_or(|(_, b)| t < b) {
            best = Some((i, t));
        }
    }
    best.map(|b| b.0)
        .ok_or_else(|| "no participating device".into())
}

/// The launch shape the projection cache is keyed on: program (hash and build options),
/// kernel, NDRange and work-group size per dimension, and the `__local` argument sizes.
pub fn shape_key(
    program: &str,
    kernel: &str,
    global: &[usize],
    local: &[usize],
    args: &[KernelArg],
) -> String {
    let locals: Vec<usize> = args
        .iter()
        .filter_map(|a| match a {
            KernelArg::Local(n) => Some(*n),
            _ => None,
        })
        .collect();
    format!("{program}|{kernel}|{global:?}|{local:?}|{locals:?}")
}

/// The projection's launch shape (as project mode builds it): `global`/`local` in
/// work-items, local memory per work-group = the module's static `__local` plus the dynamic
/// `__local` arguments (bytes), and the whole kernel's read set = the total size (bytes) of
/// the buffer arguments the emulated work-group read (`buffer_sizes`: argument index, bytes).
pub fn launch_shape(
    global: &[u64],
    local: &[u64],
    local_mem_bytes: u64,
    stats: &WorkGroupStats,
    buffer_sizes: &[(u32, u64)],
) -> Result<model::LaunchShape, String> {
    let mut shape = model::LaunchShape::from_ndrange(global, local, local_mem_bytes)
        .map_err(|e| e.to_string())?;
    let read: u64 = stats
        .footprints
        .iter()
        .filter(|f| !f.read.is_empty())
        .filter_map(|f| buffer_sizes.iter().find(|b| b.0 == f.arg).map(|b| b.1))
        .sum();
    shape.kernel_read_bytes = (read > 0).then_some(read);
    Ok(shape)
}

/// A string parameter of a device (empty when the query fails).
fn device_string(dev: cl_device_id, param: cl_device_info) -> String {
    let Some(f) = cl::rt().ok().and_then(|t| t.clGetDeviceInfo) else {
        return String::new();
    };
    let mut size = 0usize;
    // SAFETY: two-call string query on a valid device handle, buffer of the reported size.
    unsafe {
        if f(dev, param, 0, std::ptr::null_mut(), &mut size) != CL_SUCCESS || size == 0 {
            return String::new();
        }
        let mut buf = vec![0u8; size];
        if f(
            dev,
            param,
            size,
            buf.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        ) != CL_SUCCESS
        {
            return String::new();
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }
}

/// The CL strings a device profile is matched on ([`model::DeviceMatch`]); `None` when the
/// real library's `clGetDeviceInfo` is unavailable.
pub(crate) fn device_identity(dev: cl_device_id) -> Option<DeviceIdentity> {
    let f = cl::rt().ok()?.clGetDeviceInfo?;
    // SAFETY: fixed-size query on a valid device handle.
    let cu: cl_uint =
        unsafe { cl::info(|n, v, r| f(dev, CL_DEVICE_MAX_COMPUTE_UNITS, n, v, r)) }.unwrap_or(0);
    Some(DeviceIdentity {
        name: device_string(dev, CL_DEVICE_NAME),
        vendor: device_string(dev, CL_DEVICE_VENDOR),
        version: device_string(dev, CL_DEVICE_VERSION),
        driver_version: device_string(dev, CL_DRIVER_VERSION),
        max_compute_units: cu,
    })
}

/// The profile folder: `CLPRISM_PROFILES`, else the built-in `profiles/`.
pub fn profiles_dir() -> std::path::PathBuf {
    crate::config::get()
        .profiles
        .clone()
        .unwrap_or_else(model::profile::builtin_dir)
}

/// Profile of each engine device, or why the profiles could not be loaded.
fn load_profiles(engine: &Engine) -> Result<Vec<Option<Profile>>, String> {
    let dir = profiles_dir();
    let all = model::load_dir(&dir).map_err(|e| format!("device profiles: {e}"))?;
    Ok(engine
        .devices
        .iter()
        .map(|d| {
            let id = device_identity(d.id)?;
            model::find_profile(&all, &id).cloned()
        })
        .collect())
}

impl BestState {
    /// Work-groups one wave of engine device `d` runs at once, for work-groups of
    /// `wg_items` work-items that use `local_bytes` of `__local` memory: compute units ×
    /// resident work-groups per compute unit ([`model::occupancy`], Quintanilla §2.3
    /// eq. 2.1–2.4, with the device's profile), for `registers` 32-bit registers per
    /// work-item when the build log told them (NVIDIA, `program::ptxas_registers`). Without
    /// them the registers are left out, so the wave is an upper bound. A device without a
    /// profile, or whose profile cannot run the work-group: its compute units (one
    /// work-group each).
    pub(super) fn wave_work_groups(
        &mut self,
        engine: &Engine,
        d: usize,
        wg_items: u64,
        local_bytes: u64,
        registers: Option<u32>,
    ) -> u64 {
        let cus = engine.devices[d].compute_units as u64;
        let profiles = self.profiles.get_or_insert_with(|| load_profiles(engine));
        let Some(p) = profiles
            .as_ref()
            .ok()
            .and_then(|v| v.get(d))
            .and_then(|p| p.as_ref())
        else {
            return cus;
        };
        let k = model::occupancy::KernelResources {
            work_group_size: wg_items,
            local_mem_bytes: local_bytes,
            private_mem_bytes: None,
            registers_per_work_item: registers,
        };
        match model::occupancy::occupancy(p, &k) {
            Ok(o) => cus * o.active_work_groups_per_cu.max(1),
            Err(_) => cus,
        }
    }

    /// Chooses the device of a `best` launch over the participating devices `devs` (engine
    /// indices). `measured`: ns per work-group per engine device measured so far for this
    /// kernel; `module`: the app's program as the mini-emulator loads it (called only when
    /// a projection must be computed). Never fails: problems select the measured rule and
    /// become the record's `reason`.
    pub(super) fn choose(
        &mut self,
        engine: &Engine,
        devs: &[usize],
        job: &Job,
        kinds: &[ArgKind],
        measured: Option<&[Option<f64>]>,
        module: impl FnOnce() -> Result<Arc<Module>, String>,
    ) -> Choice {
        let t = Instant::now();
        let names: Vec<String> = engine.devices.iter().map(|d| d.name.clone()).collect();
        let profiles = self
            .profiles
            .get_or_insert_with(|| load_profiles(engine))
            .clone();
        let dim = job.work_dim as usize;
        let key = shape_key(
            &format!("{}|{}", job.program.hash, job.program.options),
            &job.kernel,
            &job.global[..dim],
            &job.local[..dim],
            &job.args,
        );
        let mut cached = false;
        let projected: Result<Vec<Result<f64, String>>, String> = match &profiles {
            Err(e) => Err(e.clone()),
            Ok(ps) => match devs
                .iter()
                .find(|&&d| ps.get(d).is_none_or(|p| p.is_none()))
            {
                Some(&d) => Err(format!(
                    "no device profile in {} matches {} ({})",
                    profiles_dir().display(),
                    engine.devices[d].index,
                    engine.devices[d].name
                )),
                None => {
                    if let Some(p) = self.projected.get(&key) {
                        cached = true;
                        p.clone()
                    } else {
                        let p = project(ps, job, kinds, module);
                        self.projected.insert(key, p.clone());
                        p
                    }
                }
            },
        };
        let profiles = devs
            .iter()
            .map(|&d| match &profiles {
                Ok(ps) => ps.get(d).and_then(|p| p.as_ref()).map(|p| p.name.clone()),
                Err(_) => None,
            })
            .collect();
        let projected_ns = projected.as_ref().ok().map(|v| {
            devs.iter()
                .map(|&d| v.get(d).and_then(|r| r.as_ref().ok().copied()))
                .collect()
        });
        let measured_ns_per_wg = devs
            .iter()
            .map(|&d| measured.and_then(|m| m.get(d).copied().flatten()))
            .collect();
        let (pick, by, reason) = match projected
            .as_ref()
            .map_err(|e| e.clone())
            .and_then(|p| pick_projected(p, devs, &names))
        {
            Ok(i) => (i, By::Projection, None),
            Err(e) => {
                let (i, by) = pick_measured(measured.unwrap_or(&[]), devs);
                (i, by, Some(e))
            }
        };
        let record = BestChoice {
            by: BestBy::parse(by.as_str()),
            device: pick,
            projected_ns,
            profiles,
            measured_ns_per_wg,
            cached,
            choose_ms: t.elapsed().as_secs_f64() * 1e3,
            inputs: projected.is_ok().then(|| "zero-filled".to_string()),
            reason,
        };
        Choice { pick, record }
    }
}

/// Emulates work-group (0,0,0) of the launch on zero-filled buffers once per distinct warp
/// width of the engine devices' profiles and projects it on each profile. Returns projected
/// ns per engine device.
fn project(
    profiles: &[Option<Profile>],
    job: &Job,
    kinds: &[ArgKind],
    module: impl FnOnce() -> Result<Arc<Module>, String>,
) -> Projected {
    let module = module().map_err(|e| format!("emulator: {e}"))?;
    let dim = job.work_dim as usize;
    let dims = |v: &[usize]| v[..dim].iter().map(|x| *x as u64).collect::<Vec<u64>>();
    let (global, local, offset) = (dims(&job.global), dims(&job.local), dims(&job.offset));
    let eshape = emu::LaunchShape::new(&global, &local, Some(&offset));
    let mut widths: Vec<u32> = profiles.iter().flatten().map(|p| p.warp_width).collect();
    widths.sort_unstable();
    widths.dedup();
    let mut stats: Vec<WorkGroupStats> = Vec::new();
    for w in widths {
        let mut args = super::footprint::zero_args(job, kinds);
        let cfg = EmuConfig {
            warp_width: w,
            ..EMU_BUDGET
        };
        let st = emu::emulate(&module, &job.kernel, &eshape, [0, 0, 0], &mut args, &cfg)
            .map_err(|e| format!("emulating work-group 0: {e}"))?;
        stats.push(st);
    }
    let first = stats.first().ok_or("no device profile")?;
    let dynamic_local = job.dynamic_local_bytes();
    let buffer_sizes: Vec<(u32, u64)> = job
        .args
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let m = crate::registry::tables::buffer_named_by(a)?;
            let size = crate::registry::TABLES.buffers.with(m, |b| b.size as u64)?;
            Some((i as u32, size))
        })
        .collect();
    let shape = launch_shape(
        &global,
        &local,
        module.local_static + dynamic_local,
        first,
        &buffer_sizes,
    )?;
    // each distinct profile once (identical devices share one)
    let mut unique: Vec<Profile> = Vec::new();
    for p in profiles.iter().flatten() {
        if !unique.iter().any(|u| u.name == p.name) {
            unique.push(p.clone());
        }
    }
    let set = model::project_all(&stats, &shape, &unique, &ModelOptions::recommended())
        .map_err(|e| format!("projection: {e}"))?;
    Ok(profiles
        .iter()
        .map(|p| {
            let p = p.as_ref().ok_or("no profile")?;
            if let Some(pr) = set.devices.iter().find(|x| x.device == p.name) {
                return Ok(pr.projected_ns);
            }
            Err(set
                .skipped
                .iter()
                .find(|s| s.device == p.name)
                .map_or_else(|| "not projected".into(), |s| s.reason.clone()))
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_rule_tries_each_device_then_takes_the_fastest() {
        // engine devices 0..4; devices 1 and 3 take part
        let devs = [1, 3];
        assert_eq!(pick_measured(&[], &devs), (0, By::FirstTry));
        let m = [Some(1.0), Some(5.0), None, None];
        assert_eq!(pick_measured(&m, &devs), (1, By::FirstTry));
        let m = [Some(1.0), Some(5.0), None, Some(2.0)];
        assert_eq!(pick_measured(&m, &devs), (1, By::Measured));
        let m = [Some(1.0), Some(2.0), None, Some(5.0)];
        assert_eq!(pick_measured(&m, &devs), (0, By::Measured));
    }

    #[test]
    fn projection_rule_takes_the_smallest_time_first_on_ties() {
        let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let p = vec![Ok(30.0), Ok(10.0), Ok(10.0)];
        assert_eq!(pick_projected(&p, &[0, 1, 2], &names), Ok(1));
        assert_eq!(pick_projected(&p, &[2, 0], &names), Ok(0));
        assert_eq!(pick_projected(&p, &[0], &names), Ok(0));
        // a participating device without a time: no projection (named in the reason)
        let p = vec![Ok(30.0), Err("no profile".to_string()), Ok(1.0)];
        let e = pick_projected(&p, &[0, 1, 2], &names).unwrap_err();
        assert!(e.contains('b') && e.contains("no profile"), "{e}");
        // ... but one that does not take part does not matter
        assert_eq!(pick_projected(&p, &[0, 2], &names), Ok(1));
        let p = vec![Ok(f64::NAN)];
        assert!(pick_projected(&p, &[0], &names).is_err());
        assert!(pick_projected(&p, &[], &names).is_err());
    }

    #[test]
    fn shape_key_separates_shapes_not_buffers() {
        use crate::registry::tables::ArgBytes;
        let v = |x: u64| {
            let b = x.to_ne_bytes();
            // SAFETY: 8 readable bytes.
            KernelArg::Value(unsafe { ArgBytes::copy_from(b.as_ptr(), b.len()) })
        };
        let a = shape_key(
            "h|",
            "k",
            &[64, 64],
            &[16, 16],
            &[v(1), KernelArg::Local(256)],
        );
        let b = shape_key(
            "h|",
            "k",
            &[64, 64],
            &[16, 16],
            &[v(2), KernelArg::Local(256)],
        );
        assert_eq!(a, b, "by-value arguments are not part of the shape");
        for other in [
            shape_key(
                "h|",
                "k",
                &[128, 64],
                &[16, 16],
                &[v(1), KernelArg::Local(256)],
            ),
            shape_key(
                "h|",
                "k",
                &[64, 64],
                &[8, 16],
                &[v(1), KernelArg::Local(256)],
            ),
            shape_key(
                "h|",
                "k",
                &[64, 64],
                &[16, 16],
                &[v(1), KernelArg::Local(512)],
            ),
            shape_key(
                "h|",
                "j",
                &[64, 64],
                &[16, 16],
                &[v(1), KernelArg::Local(256)],
            ),
            shape_key(
                "g|",
                "k",
                &[64, 64],
                &[16, 16],
                &[v(1), KernelArg::Local(256)],
            ),
        ] {
            assert_ne!(a, other);
        }
    }

    #[test]
    fn launch_shape_counts_work_groups_local_memory_and_read_set() {
        use crate::emu::stats::ArgFootprint;
        let mut st = WorkGroupStats::default();
        let fp = |arg: u32, read: bool| {
            let mut f = ArgFootprint {
                arg,
                ..Default::default()
            };
            if read {
                f.read = vec![[0, 4]];
            }
            f
        };
        st.footprints = vec![fp(0, true), fp(1, false), fp(2, true)];
        let s = launch_shape(
            &[64, 32],
            &[16, 8],
            100,
            &st,
            &[(0, 1000), (1, 20), (2, 300)],
        )
        .unwrap();
        assert_eq!(s.work_groups, 4 * 4);
        assert_eq!(s.resources.work_group_size, 128);
        assert_eq!(s.resources.local_mem_bytes, 100);
        assert_eq!(s.kernel_read_bytes, Some(1300));
        st.footprints.clear();
        let s = launch_shape(&[64], &[16], 0, &st, &[]).unwrap();
        assert_eq!(s.kernel_read_bytes, None);
        assert!(launch_shape(&[64], &[0], 0, &st, &[]).is_err());
    }
}
