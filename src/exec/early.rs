//! Opening the balance devices early on a host whose app device has like siblings (the other
//! GPUs of a multi-GPU host), and probing a kernel's first launch instead of forwarding it
//! whole (issue 31, items 1 and 2).
//!
//! Before, `CLPRISM_SPLIT=auto` opened the devices only once launches long enough to split had
//! added up to `CLPRISM_BALANCE_OPEN_COST` on the app's device, and forwarded every kernel's
//! first launch whole to measure it: an application that launches a long kernel once (PolyBench
//! gemm at 16384³: one launch of 6 s on an H200) never gained, whatever the devices.
//!
//! * **Open at the first build** ([`open_at_build`]): when the app's device has siblings of its
//!   platform, name and type, the opening starts in the background as the app's first
//!   `clBuildProgram` returns, in `auto` as in `always`. Like GPUs add compute of their own, so
//!   opening them is a bet that costs at most the opening (0.47 s for four H200 contexts,
//!   issue 31) and is lost only by an app whose launches are all short; CPU devices share the
//!   host's cores with the app and are counted only with `CLPRISM_BALANCE_SIBLINGS=any`.
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
    let kind_counts = match policy {
        Siblings::Any => true,
        _ => matches!(
            &*crate::registry::device::describe(dev).kind,
            "gpu" | "accelerator"
        ),
    };
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

/// The app built `info` for `app_device` (balance mode, `CLPRISM_BALANCE_EARLY` on): when the
/// device has like siblings, start opening the balance devices and building the program on
/// them in the background now, also with `CLPRISM_SPLIT=auto`, and probe first launches
/// from now on. Returns whether it did (with `always` the caller pre-builds anyway).
pub fn open_at_build(info: &ProgramInfo, app_device: cl_device_id) -> bool {
    let cfg = crate::config::get();
    if !cfg.balance_early || counted_siblings(app_device, cfg.balance_siblings) == 0 {
        return false;
    }
    if !balance().siblings_open.swap(true, Ordering::AcqRel) {
        crate::config::debug(|| {
            "balance: the app's device has like siblings: opening the balance devices at its \
             first build"
                .to_string()
        });
    }
    // started here, not only by the pre-build: that skips programs it cannot split
    let _ = super::engine_for_launch();
    super::prebuild_in_background(info);
    true
}

/// Whether the launch of `kernel` ([`super::kernel_id`]) should first run a probe chunk on
/// the app's device: the devices were opened for like siblings, the kernel has no figure on
/// the app's device yet, and the launch would otherwise be forwarded whole for want of one
/// (`auto`), or because the devices are still opening (`always`).
pub fn probe_wanted(kernel: &str) -> bool {
    if !balance().siblings_open.load(Ordering::Acquire) {
        return false;
    }
    match balance().engine.get() {
        Some(Err(_)) => return false,
        Some(Ok(_)) if crate::config::get().split == SplitPolicy::Always => return false,
        _ => {}
    }
    super::forwarded_figure(kernel).is_none()
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
