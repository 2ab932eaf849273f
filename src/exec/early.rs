//! Opening the balance devices early on a host whose app device has like siblings (the other
//! GPUs of a multi-GPU host), and probing a kernel's first launch instead of forwarding it
//! whole (issue 31, items 1 and 2).
//!
//! Before, `CLPRISM_SPLIT=auto` opened the devices only once launches long enough to split had
//! added up to `CLPRISM_BALANCE_OPEN_COST` on the app's device, and forwarded every kernel's
//! first launch whole to measure it: an application that launches a long kernel once (PolyBench
//! gemm at 16384³: one launch of 6 s on an H200) never gained, whatever the devices.
//!
//! * **Open for the first long launch** ([`note_build`], [`open_for_long_launch`]): when the
//!   app's device has siblings of its platform, name and type, the first launch of each kernel
//!   is probed, and a probe whose rest takes at least `CLPRISM_BALANCE_OPEN_COST` on the app's
//!   device starts the opening at once, while the app's device goes on with the launch in
//!   chunks of half the probe; the other devices take the rest. Like GPUs add compute of their own;
//!   CPU devices share the host's cores with the app and are counted only with
//!   `CLPRISM_BALANCE_SIBLINGS=any`. (Opening at the first build, as first built, slowed
//!   clpeak: see [`note_build`].)
//! * **Open at the app's context** ([`open_at_context`], `CLPRISM_BALANCE_OPEN=context`, the
//!   default since session 30): where the app's device has like siblings, the opening starts
//!   when the app creates its context, one context at a time behind the open gate
//!   (`exec::open_gate`), so that the devices are usually ready by the first long launch.
//! * **Probe the first launch** ([`probe_wanted`], run by `intercept::balance`): Boyer's
//!   algorithm measures each device on a first chunk of β = 7 % of the work-groups
//!   (dissertation §4.4, Algorithm 4.1). The first launch of a kernel runs that chunk alone
//!   on the app's device, in the app's queue, and its profiled time is the kernel's figure on
//!   the app's device ([`note_probe`]); the remaining 93 % is then judged like any measured
//!   launch (`decide`: split over the opened devices when it pays, else forwarded at
//!   forwarding's cost). Running the first 7 % of the work-groups before the rest is one of
//!   the orders OpenCL allows the native run (the order of work-groups is unspecified), and
//!   only kernels without NDRange queries are probed, so each work-item sees the same ids,
//!   sizes and data as natively.

use super::balance;
use crate::config::{Siblings, SplitPolicy};
use crate::registry::tables::ProgramInfo;
use opencl_sys::cl_device_id;
use std::sync::atomic::Ordering;

/// How many like siblings of `dev` the `CLPRISM_BALANCE_SIBLINGS` policy counts (found once
/// per device: a driver query per device of its platform).
fn counted_siblings(dev: cl_device_id, policy: Siblings) -> usize {
    if policy == Siblings::Off || dev.is_null() {
        return 0;
    }
    if let Some(&known) = balance().sibling_devices.lock().get(&(dev as usize)) {
        return known;
    }
    let kind_counts = policy == Siblings::Any || crate::registry::device::is_gpu_like(dev);
    let counted = if kind_counts {
        crate::registry::device::like_siblings(dev)
    } else {
        0
    };
    balance()
        .sibling_devices
        .lock()
        .insert(dev as usize, counted);
    counted
}

/// The app built `info` for `app_device` (balance mode, `CLPRISM_BALANCE_EARLY` on): when
/// the device has like siblings, probe the first launch of each kernel from now on
/// ([`probe_wanted`]); a probe that finds its launch long opens the devices then
/// ([`open_for_long_launch`]). Returns whether it did.
///
/// **Design change (deliberate; issue 31 item 1 asked to open at the first build):** opening
/// four H200 contexts at clpeak's first `clBuildProgram` made its measured bandwidth 0.49×
/// native and its float16 compute 0.07× (`results/session18-2026-11-27`): once clprism holds
/// contexts on the other GPUs, the app's short launches on its own GPU ran with gaps (and
/// with contexts only on the other GPUs, up to 2× longer on the device), where opening a
/// context on the app's GPU alone cost nothing measurable. So the bet is taken only on a
/// launch that shows it can pay: the probe's estimate of the rest at least
/// `CLPRISM_BALANCE_OPEN_COST`.
pub fn note_build(app_device: cl_device_id) -> bool {
    let cfg = crate::config::get();
    if !cfg.balance_early || counted_siblings(app_device, cfg.balance_siblings) == 0 {
        return false;
    }
    if !balance().probing.swap(true, Ordering::AcqRel) {
        crate::config::debug(|| {
            "balance: the app's device has like siblings: first launches are probed".to_string()
        });
    }
    true
}

/// The app is creating a context on `devices` (`CLPRISM_BALANCE_OPEN=context`, the default;
/// balance mode, `CLPRISM_BALANCE_EARLY` on): when one of them has like siblings, start
/// opening the balance devices in the background now, so that they open while the driver
/// creates the app's own context and the app prepares its data, instead of after the app's
/// first long launch has begun. Returns whether the opening was started (or already was).
///
/// The first H200 context took 0.34 s beside the app's own, each later one 0.14-0.17 s, one
/// at a time behind the open gate; the app's first compile waited 157 ms for the one in
/// flight. On 4 H200s in `auto` (first runs) this took gemm 16384³ from 2.62× to 3.26×,
/// 3mm 8192 from 1.58× to 2.61×, 2mm from 1.26× to 1.97×; apps of about 1.5 s that never split
/// took 0.15-0.3 s longer than with `launch` (results/session30-2026-11-28, call g). Before
/// the gate the compile waited for the whole opening: 0.55-0.75 s on those short apps.
pub fn open_at_context(devices: &[cl_device_id]) -> bool {
    let cfg = crate::config::get();
    if !cfg.balance_early || !cfg.balance_open_at_context {
        return false;
    }
    let Some(&dev) = devices
        .iter()
        .find(|&&d| counted_siblings(d, cfg.balance_siblings) > 0)
    else {
        return false;
    };
    crate::config::debug(|| {
        format!(
            "balance: the app creates a context on a device with {} like siblings: opening the balance devices",
            counted_siblings(dev, cfg.balance_siblings)
        )
    });
    let _ = super::engine_for_launch();
    true
}

/// A probe found that the rest of a launch of `info`'s program takes `rest_ns` on the app's
/// device: when that is at least `CLPRISM_BALANCE_OPEN_COST`, start opening the balance
/// devices (and building the program there) in the background now, unless they are open or
/// opening. Returns whether the devices are open or opening afterwards.
///
/// A launch that long also has its program compiled for the footprint derivation in the
/// background ([`super::compile_for_footprint`]), whether the devices are open or not.
pub fn open_for_long_launch(info: &ProgramInfo, app_device: cl_device_id, rest_ns: f64) -> bool {
    let b = balance();
    let long = rest_ns >= crate::config::get().balance_open_cost_ms as f64 * 1e6;
    if long {
        super::compile_for_footprint(info, app_device);
    }
    if b.engine.get().is_some() || b.starting.load(Ordering::Acquire) {
        // open before the program was built there (`CLPRISM_BALANCE_OPEN=context`): build it
        // now, the app's device going on with the launch meanwhile (`devices_preparing`)
        if long && matches!(b.engine.get(), Some(Ok(_))) && super::device_build(info).is_none() {
            super::prebuild_in_background(info);
        }
        return true;
    }
    if !long {
        return false;
    }
    crate::config::debug(|| {
        format!(
            "balance: a probe puts the rest of a launch at {:.1} ms: opening the balance devices",
            rest_ns / 1e6
        )
    });
    let _ = super::engine_for_launch();
    super::prebuild_in_background(info);
    true
}

/// Whether the launch of `kernel` ([`super::kernel_id`]) should first run a probe chunk on
/// the app's device: the devices were opened for like siblings, the kernel has no figure on
/// the app's device yet, and the launch would otherwise be forwarded whole for want of one
/// (`auto`), or because the devices are still opening (`always`).
pub fn probe_wanted(kernel: &str) -> bool {
    if !balance().probing.load(Ordering::Acquire) {
        return false;
    }
    match balance().engine.get() {
        Some(Err(_)) => return false,
        Some(Ok(_)) if crate::config::get().split == SplitPolicy::Always => return false,
        _ => {}
    }
    super::forwarded_figure(kernel).is_none()
}

/// Whether the balance devices are being opened in the background and not ready yet.
pub fn devices_opening() -> bool {
    balance().engine.get().is_none() && balance().starting.load(Ordering::Acquire)
}

/// Whether the balance devices are still being opened, or `info`'s program is still being
/// built on them in the background (`exec::prebuild_in_background`): until both are done, a
/// launch handed to the launch thread would wait there with the app's device idle
/// (PolyBench gemm on 2 H200s: the build took 90 ms after the devices opened; session 25).
pub fn devices_preparing(info: &ProgramInfo) -> bool {
    devices_opening() || super::device_build(info) == Some(false)
}

/// Whether the balance devices are open and `info`'s program is built on them: a launch
/// handed to the launch thread now starts its chunks without waiting for either.
pub fn devices_ready(info: &ProgramInfo) -> bool {
    matches!(balance().engine.get(), Some(Ok(_))) && super::device_build(info) == Some(true)
}

/// The rest of a first launch, as its scout puts it, from which the scout alone is the
/// probe when the devices are ready, ns (20 ms: 40 times `CLPRISM_BALANCE_SPLIT_FLOOR`'s
/// default, so that a scout that errs fourfold still leaves a launch ten floors long).
///
/// Once the devices are open and the program is built on them, the rest of the probe (the
/// other seven eighths of Boyer's first chunk) would run on the app's device alone while
/// the others wait: PolyBench 2mm's second kernel on 2 H200s ran a 55 ms probe, 48 ms of it
/// after the scout (session 28, `a/mm-logs.tgz`); on 4 H200s its scout alone took 3.1 ms
/// where the probe had taken 27 ms (session 29, calls a and b). A rest this long splits
/// whatever the scout's error: the split decision (`exec::decide`) gains from a launch of a
/// few ms, and the balanced run's own first chunks (Boyer's β, dissertation §4.4) measure
/// every device, the app's included, again. A shorter rest keeps the whole probe, whose
/// figure then decides a launch near the threshold.
pub const SCOUT_SUFFICES_NS: f64 = 20e6;

/// Whether the probe of a first launch ends with its scout: the devices are `ready`
/// ([`devices_ready`]) and the scout puts the rest of the launch at [`SCOUT_SUFFICES_NS`]
/// or more.
pub fn scout_suffices(ready: bool, rest_ns: f64) -> bool {
    ready && rest_ns >= SCOUT_SUFFICES_NS
}

/// The device time of one chunk the app's device runs while the devices open, ns: once
/// they are ready, the rest of the launch waits at most this long for the app's device
/// (chunks of half the probe, as before session 25, ran 223 ms each for gemm at 16384³
/// on an H200, and the devices waited 104 ms for the last one). Each chunk costs one enqueue
/// and one wait (about 30-50 µs on NVIDIA), 0.2 % of this.
pub const CONTINUATION_CHUNK_NS: f64 = 25e6;

/// The work-groups (along the split dimension) of the next chunk the app's device runs while
/// the devices open: [`CONTINUATION_CHUNK_NS`] at the probe's measured `ns_per_unit`, at most
/// half the probe (`probe_units`) and at least one.
pub fn continuation_units(ns_per_unit: f64, probe_units: usize) -> usize {
    let by_time = if ns_per_unit > 0.0 {
        (CONTINUATION_CHUNK_NS / ns_per_unit).floor() as usize
    } else {
        usize::MAX
    };
    by_time.min(probe_units / 2).max(1)
}

/// The probe of `kernel`'s first launch took `ns` on the app's device for `work_groups`
/// work-groups: the kernel's figure there, as a measured forwarded launch gives it.
pub fn note_probe(kernel: &str, ns: u64, work_groups: u64) {
    if ns == 0 || work_groups == 0 {
        return;
    }
    balance().forwarded.lock().insert(
        kernel.to_string(),
        (ns as f64 / work_groups as f64, work_groups),
    );
}

/// The fraction of the work-groups along the split dimension that the probe of a launch on
/// `app_device` runs: Boyer's first chunk per device, β·2/N over N devices as the scheduler
/// takes it (`sched::BoyerParams::beta`; β = 0.07, dissertation §4.4), N being the app's
/// device and its counted like siblings: 7 % on two GPUs, 3.5 % on four, so the part run on
/// one device before the others join shrinks as they add up.
pub fn probe_fraction(app_device: cl_device_id) -> f64 {
    let beta = match balance().engine.get() {
        Some(Ok(e)) => e.boyer.beta,
        _ => crate::sched::BoyerParams::default().beta,
    };
    let n = 1 + counted_siblings(app_device, crate::config::get().balance_siblings);
    beta * 2.0 / n.max(2) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scout_is_the_probe_only_for_a_long_rest_on_ready_devices() {
        assert!(scout_suffices(true, SCOUT_SUFFICES_NS));
        assert!(scout_suffices(true, 700e6));
        // not ready: the probe goes on (and the devices open meanwhile)
        assert!(!scout_suffices(false, 700e6));
        // a rest near the split threshold keeps the whole probe's figure
        assert!(!scout_suffices(true, SCOUT_SUFFICES_NS * 0.99));
        assert!(!scout_suffices(true, 2e6));
    }

    #[test]
    fn continuation_chunks_run_about_25_ms_at_most_half_the_probe() {
        // gemm at 16384³ on an H200: 3.1 ms per work-group row, a probe of 144 rows
        assert_eq!(continuation_units(3.1e6, 144), 8);
        // a fast kernel: half the probe bounds the chunk
        assert_eq!(continuation_units(1e3, 72), 36);
        // a row longer than the chunk time, or no timing: one row, or half the probe
        assert_eq!(continuation_units(60e6, 144), 1);
        assert_eq!(continuation_units(0.0, 10), 5);
        assert_eq!(continuation_units(1e3, 1), 1);
    }
}
