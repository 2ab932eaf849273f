//! The devices that take part in balance mode (`CLPRISM_DEVICES`), each with its own
//! clprism-owned context and in-order profiling queue (devices may sit on different
//! platforms).

use super::cl::{self, ClResult};
use crate::registry::device::{describe, enumerate};
use once_cell::sync::OnceCell;
use opencl_sys::*;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;

/// Which devices take part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSelection {
    /// Every device of every platform.
    All,
    /// GPUs only (falls back to all when there is none).
    Gpu,
    /// The first N GPUs (in platform:device order).
    FirstGpus(usize),
    /// CPUs only.
    Cpu,
    /// An explicit list, in order.
    List(Vec<Pick>),
}

/// One item of an explicit device list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// Device `D` of platform `P` (`P:D`, in [`enumerate`]'s numbering).
    Index(usize, usize),
    /// Every device of a PoCL-Remote platform (`remote`: `CL_PLATFORM_VERSION` names
    /// `REMOTE`; docs/remote.md), in platform and device order.
    Remote,
}

/// Parses `CLPRISM_DEVICES`: `all`, `gpu`, `gpu:N` (the first N GPUs), `cpu`, or a list of
/// `P:D` and `remote` items (`1:0,remote`: device 0 of platform 1 and every PoCL-Remote
/// device).
///
/// Errors: a malformed list item, with the item named.
pub fn parse_selection(s: &str) -> Result<DeviceSelection, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "all" => Ok(DeviceSelection::All),
        "gpu" => Ok(DeviceSelection::Gpu),
        "cpu" => Ok(DeviceSelection::Cpu),
        other if other.starts_with("gpu:") => match other[4..].parse::<usize>() {
            Ok(n) if n > 0 => Ok(DeviceSelection::FirstGpus(n)),
            _ => Err(format!("'{other}': gpu:N needs a positive N")),
        },
        other => {
            let mut v = Vec::new();
            for item in other.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                let pick = if item == "remote" {
                    Pick::Remote
                } else {
                    let (p, d) = item
                        .split_once(':')
                        .ok_or_else(|| format!("'{item}' is not P:D or remote"))?;
                    let p = p
                        .parse()
                        .map_err(|_| format!("'{item}': bad platform index"))?;
                    let d = d
                        .parse()
                        .map_err(|_| format!("'{item}': bad device index"))?;
                    Pick::Index(p, d)
                };
                if !v.contains(&pick) {
                    v.push(pick);
                }
            }
            if v.is_empty() {
                return Err("empty device list".into());
            }
            Ok(DeviceSelection::List(v))
        }
    }
}

/// One participating device.
pub struct Device {
    /// `platform:device`.
    pub index: String,
    /// `CL_DEVICE_NAME`.
    pub name: String,
    /// `gpu` / `cpu` / ...
    pub kind: String,
    /// The real device handle.
    pub id: cl_device_id,
    /// clprism's context holding only this device.
    pub context: cl_context,
    /// clprism's in-order profiling queue.
    pub queue: cl_command_queue,
    /// `CL_DEVICE_MAX_WORK_GROUP_SIZE`.
    pub max_wg: usize,
    /// `CL_DEVICE_MAX_COMPUTE_UNITS` (1 when the query fails).
    pub compute_units: u32,
    /// The device has `cl_nv_compiler_options`: clprism builds with `-cl-nv-verbose` and
    /// reads each kernel's registers from the build log ([`super::program::ptxas_registers`]).
    pub reports_registers: bool,
    /// `CL_DRIVER_VERSION` (part of the key of saved register counts).
    pub driver_version: String,
    /// Chunks still running from abandoned (straggler) work: the device is skipped by new
    /// launches until they drain, so nothing queues behind a hung kernel.
    pub stale_chunks: AtomicU32,
    /// Since when the device has had abandoned chunks running, and how long the first may
    /// still need (its `busy`, [`Device::abandoned`]); `None` while it has none
    /// ([`Device::abandoned`], [`Device::straggler_drained`]).
    stale_since: parking_lot::Mutex<Option<(std::time::Instant, std::time::Duration)>>,
    /// Fault injection (`CLPRISM_FAULT=fail:I`): enqueues on this device fail.
    pub inject_fail: bool,
    /// Test-only (`CLPRISM_FAULT=differ:I`): this device's chunks count as computing other
    /// bytes than the app's device (the agreement check sees one merged byte flipped).
    pub inject_differ: bool,
    /// Fault injection (`CLPRISM_FAULT=block:I`): a user event that never completes gates
    /// every chunk on this device (`stall:I:MS`: one that completes MS ms after the open).
    pub block_event: Option<cl_event>,
    /// Set once the device stopped responding (a bounded wait on one of its commands ran
    /// out, [`Device::mark_dead`]); it takes no part in later launches, and nothing of it is
    /// waited for or released any more (its commands may never complete).
    pub broken: AtomicBool,
    /// Host-to-device rate measured when the device was opened, bytes per ns ([`host_rate`]);
    /// `None` for a CPU device or when the measurement failed.
    pub host_rate: Option<f64>,
    /// The link to a device of a PoCL-Remote platform, measured when it was opened
    /// ([`link_of`]); `None` for a local device or when the measurement failed.
    pub link: Option<Link>,
    /// A device of a PoCL-Remote platform: its server may die with bytes only it holds, so
    /// a resident launch never leaves them there alone
    /// (`exec::launch::resident`'s `secure_remote_results`).
    pub remote: bool,
}

/// A remote device's link as a transfer sees it (issue 33 item 3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// Round trip of a small blocking write (the median of [`LINK_PINGS`]), ns.
    pub latency_ns: f64,
    /// Rate of a [`LINK_PROBE_BYTES`] write once its round trip is taken off, bytes per ns.
    pub bytes_per_ns: f64,
}

// SAFETY: OpenCL handles are thread-safe (OpenCL 1.1+ API thread safety).
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

/// The shortest time a command of a balance device is waited for before the device counts
/// as dead (PoCL 6.0's remote client never fails the commands of a server that died).
pub const RESPONSE_FLOOR: std::time::Duration = std::time::Duration::from_secs(10);

/// The slowest link a transfer is allowed, bytes per second (100 MB/s), on top of
/// [`RESPONSE_FLOOR`].
const SLOWEST_LINK: u64 = 100_000_000;

/// How long a device's commands that move `bytes` and run after work that took `busy` are
/// waited for before the device counts as dead: [`RESPONSE_FLOOR`], plus the bytes at
/// 100 MB/s, plus 4x `busy` (a straggler behind which the commands queue).
pub fn response_bound(bytes: u64, busy: std::time::Duration) -> std::time::Duration {
    RESPONSE_FLOOR + std::time::Duration::from_millis(bytes * 1000 / SLOWEST_LINK) + busy * 4
}

impl Device {
    /// Marks the device dead for the rest of the run (`why`: which wait ran out); the first
    /// call prints one warning line. Returns whether this call marked it.
    pub fn mark_dead(&self, why: &str) -> bool {
        if self.broken.swap(true, Ordering::AcqRel) {
            return false;
        }
        crate::config::warn(&format!(
            "balance: device {} ({}) stopped responding ({why}); it is left out of every later \
             launch, and its unfinished work runs elsewhere",
            self.index, self.name
        ));
        true
    }

    /// One of the device's chunks was abandoned as a straggler; `busy`: the longer of its
    /// launch's time so far and what the chunk should take by the device's measured rate.
    pub fn abandoned(&self, busy: std::time::Duration) {
        self.stale_chunks.fetch_add(1, Ordering::AcqRel);
        self.stale_since
            .lock()
            .get_or_insert((std::time::Instant::now(), busy));
    }

    /// One of the device's abandoned chunks completed (or failed).
    pub fn straggler_drained(&self) {
        let left = self
            .stale_chunks
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
            .map_or(0, |n| n.saturating_sub(1));
        if left == 0 {
            *self.stale_since.lock() = None;
        }
    }

    /// Marks the device dead when an abandoned chunk of it has been running for longer than
    /// [`response_bound`] allows for its `busy` ([`Device::abandoned`]: far past what its
    /// measured rate predicts; a server
    /// that died: PoCL's remote client never completes its commands). Returns whether it is
    /// dead.
    pub fn check_stragglers(&self) -> bool {
        let since = *self.stale_since.lock();
        if let Some((t, busy)) = since {
            let bound = response_bound(0, busy);
            if t.elapsed() > bound {
                self.mark_dead(&format!(
                    "an abandoned chunk did not complete in {} s",
                    bound.as_secs()
                ));
            }
        }
        self.dead()
    }

    /// Whether the device was marked dead ([`Device::mark_dead`]).
    pub fn dead(&self) -> bool {
        self.broken.load(Ordering::Acquire)
    }

    /// Whether new launches may use this device.
    pub fn available(&self) -> bool {
        self.stale_chunks.load(Ordering::Acquire) == 0 && !self.broken.load(Ordering::Acquire)
    }
}

/// Test-only fault injection, `CLPRISM_FAULT=block:I`, `fail:I`, `differ:I` (I = index among
/// the participating devices) or `open-delay:MS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Device I never completes a chunk (gated by a user event).
    Block(usize),
    /// Every enqueue on device I fails.
    Fail(usize),
    /// Opening the devices takes MS ms longer (`open-delay:MS`), so launches meet the
    /// devices still opening (`CLPRISM_BALANCE_EARLY`).
    OpenDelay(u64),
    /// Device I computes other bytes than the app's device (`differ:I`): the agreement check
    /// of a kernel's first split finds a difference (`exec::launch`).
    Differ(usize),
    /// Device I's chunks wait until MS ms after the device opened (`stall:I:MS`): its first
    /// chunks become abandoned stragglers that drain later.
    Stall(usize, u64),
}

/// Parses `CLPRISM_FAULT`.
pub fn parse_fault(s: &str) -> Result<Fault, String> {
    let bad = || format!("'{s}' is not block:I, fail:I, differ:I, stall:I:MS or open-delay:MS");
    let (k, i) = s.split_once(':').ok_or_else(bad)?;
    if k.trim() == "stall" {
        let (i, ms) = i.split_once(':').ok_or_else(bad)?;
        return match (i.trim().parse(), ms.trim().parse()) {
            (Ok(i), Ok(ms)) => Ok(Fault::Stall(i, ms)),
            _ => Err(format!("'{s}': bad device index or delay")),
        };
    }
    let i: u64 = i
        .trim()
        .parse()
        .map_err(|_| format!("'{s}': bad device index or delay"))?;
    match k.trim() {
        "block" => Ok(Fault::Block(i as usize)),
        "fail" => Ok(Fault::Fail(i as usize)),
        "open-delay" => Ok(Fault::OpenDelay(i)),
        "differ" => Ok(Fault::Differ(i as usize)),
        _ => Err(bad()),
    }
}

/// Opens the selected devices. Errors when none can be opened.
pub fn open(
    sel: &DeviceSelection,
    fault: Option<Fault>,
    gate: &super::open_gate::OpenGate,
) -> Result<Vec<Device>, String> {
    if let Some(Fault::OpenDelay(ms)) = fault {
        std::thread::sleep(std::time::Duration::from_millis(ms));
    }
    use crate::config::debug as dbg;
    let chosen = super::background::get()
        .driver_call(|| choose(sel))
        .ok_or("the application is exiting")?;
    let chosen = without_pocl_pthread_pairs(chosen);
    dbg(|| format!("open: {} devices chosen", chosen.len()));
    // one thread per device: a GPU context costs ~0.14 s (H100), several open in parallel
    let items: Vec<(usize, usize, usize, usize)> = chosen
        .iter()
        .enumerate()
        .map(|(i, &(p, d, id))| (i, p, d, id as usize))
        .collect();
    let rates = HostRates::default();
    let opened = super::background::get().in_parallel("device opening", items, |(i, p, d, id)| {
        open_one(i, (p, d), id as cl_device_id, fault, &rates, gate)
    });
    let mut out = Vec::new();
    for ((p, d, _), r) in chosen.iter().zip(opened) {
        match r {
            Ok(dev) => out.push(dev),
            Err(_) if super::background::get().exiting() => {}
            Err(e) => crate::config::warn(&format!("balance: device {p}:{d} cannot be used: {e}")),
        }
    }
    dbg(|| {
        let rates: Vec<String> = out
            .iter()
            .map(|d| d.host_rate.map_or("-".into(), |r| format!("{r:.1}")))
            .collect();
        format!(
            "open: {} devices open; host-to-device GB/s: {}",
            out.len(),
            rates.join(", ")
        )
    });
    if out.is_empty() {
        return Err("no usable device for balance mode".into());
    }
    Ok(out)
}

/// Whether a device is one of PoCL 4.x / 5.x's pthread CPU devices (named `cpu-<cpu>` there;
/// `cpu-minimal-` is the basic driver, `cpu-tbb-` the TBB one; PoCL 3 named them `pthread-`).
/// Two of them running one kernel at once, one at a zero global offset and the other not,
/// abort the process in PoCL 5.0: its work-group function cache looks an entry up by the
/// offset class and grid width too, but releases the first entry with the kernel's hash and
/// local size, so a release can take another command's reference
/// (`pocl_release_dlhandle_cache: Assertion 'found->ref_count > 0' failed`). Without clprism,
/// `bench/pocl_concurrent_offsets.c` aborts in 5 of 20 runs on two such devices and 0 of 20
/// on a pthread and a basic device; Rodinia srad in balance mode on `pthread pthread basic`
/// aborted in 19 of 30 runs (results/session14-2026-11-27/srad-pocl5-abort.txt). Newer PoCL
/// releases the entry it looked up.
pub fn is_racy_pocl_pthread(name: &str, driver_version: &str) -> bool {
    let pthread = name.starts_with("cpu-")
        && !name.starts_with("cpu-minimal")
        && !name.starts_with("cpu-tbb");
    let major = driver_version
        .split('.')
        .next()
        .and_then(|m| m.trim().parse::<u32>().ok());
    pthread && matches!(major, Some(4 | 5))
}

/// `CL_DRIVER_VERSION` of a device (`None` when the query fails).
pub(crate) fn driver_version(id: cl_device_id) -> Option<String> {
    cl::rt().ok().and_then(|t| t.clGetDeviceInfo).and_then(|f| {
        crate::registry::device::info_string(|n, pp, s| {
            // SAFETY: string query on a real device.
            unsafe { f(id, CL_DRIVER_VERSION, n, pp, s) }
        })
    })
}

/// `chosen` with only the first of the PoCL pthread devices that [`is_racy_pocl_pthread`]
/// names (the others are left out with a warning: chunks on two of them at once can abort
/// the app).
fn without_pocl_pthread_pairs(
    chosen: Vec<(usize, usize, cl_device_id)>,
) -> Vec<(usize, usize, cl_device_id)> {
    let mut kept_one = false;
    chosen
        .into_iter()
        .filter(|&(p, d, id)| {
            let racy =
                is_racy_pocl_pthread(&describe(id).name, &driver_version(id).unwrap_or_default());
            if racy && kept_one {
                crate::config::warn(&format!(
                    "balance: device {p}:{d} left out: PoCL 4/5 can abort the app when one \
                     kernel runs on two of its pthread devices at once (pocl_release_dlhandle_cache)"
                ));
                return false;
            }
            kept_one |= racy;
            true
        })
        .collect()
}

/// The host-to-device rates measured while a set of devices opens, one per device name and
/// driver version: like devices (the GPUs of one model on one host) share one measurement.
/// The device whose context opens last is the application's own GPU when it is busy with
/// the launch that started the opening (PolyBench 2mm on 2 H200s: its clprism context was
/// created 115 ms after its sibling's, and its own 2 × 64 MiB measurement then kept the
/// engine from being ready for 37 ms more; session 28, `a/mm-logs.tgz`). The figure only
/// seeds the split decision's transfer estimates, which the measured transfers replace.
#[derive(Default)]
struct HostRates {
    by_model: Mutex<FxHashMap<String, Arc<OnceCell<Option<f64>>>>>,
}

impl HostRates {
    /// The rate of a device of `model` (its name and driver version), measured by `measure`
    /// for the first such device only; the others wait for that one's figure.
    fn of(&self, model: String, measure: impl FnOnce() -> Option<f64>) -> Option<f64> {
        let cell = self.by_model.lock().entry(model).or_default().clone();
        *cell.get_or_init(measure)
    }
}

/// Opens device `id` (`platform:device` = `pd`, index `i` among the chosen devices): its
/// own context and in-order profiling queue, and the figures balance mode reads from it
/// (the host-to-device rate once per model of device, [`HostRates`]).
fn open_one(
    i: usize,
    (p, d): (usize, usize),
    id: cl_device_id,
    fault: Option<Fault>,
    rates: &HostRates,
    gate: &super::open_gate::OpenGate,
) -> Result<Device, String> {
    use crate::config::debug as dbg;
    let (context, queue) = gate
        .creation(
            || super::background::get().exiting(),
            || {
                dbg(|| format!("open: device {p}:{d}: creating context and queue"));
                let opened = DeviceRefOpen::open(id);
                dbg(|| format!("open: device {p}:{d}: context and queue created"));
                opened
            },
        )
        .ok_or("the application is exiting")?
        .map_err(|e| e.to_string())?;
    let t = cl::rt().map_err(|e| e.to_string())?;
    let max_wg = t
        .clGetDeviceInfo
        // SAFETY: usize-sized query on a real device.
        .and_then(|f| unsafe {
            cl::info::<usize>(|n, pp, s| f(id, CL_DEVICE_MAX_WORK_GROUP_SIZE, n, pp, s))
        })
        .unwrap_or(1);
    let compute_units = t
        .clGetDeviceInfo
        // SAFETY: cl_uint query on a real device.
        .and_then(|f| unsafe {
            cl::info::<u32>(|n, pp, s| f(id, CL_DEVICE_MAX_COMPUTE_UNITS, n, pp, s))
        })
        .unwrap_or(1)
        .max(1);
    let string_info = |param| {
        t.clGetDeviceInfo.and_then(|f| {
            crate::registry::device::info_string(|n, pp, s| {
                // SAFETY: string query on a real device.
                unsafe { f(id, param, n, pp, s) }
            })
        })
    };
    // A PoCL-Remote device passes the server's extension string on, but its client checks
    // build options itself and refuses NVIDIA's: "clBuildProgram returned -43: Invalid build
    // option: -cl-nv-verbose" for an H200 behind `pocld` (results/session22-2026-11-28,
    // remote-gpu), so no such device took a chunk.
    let reports_registers = !platform_is_remote(id)
        && string_info(CL_DEVICE_EXTENSIONS).is_some_and(|x| {
            x.split_whitespace()
                .any(|e| e == super::program::NV_COMPILER_OPTIONS_EXTENSION)
        });
    let driver_version = string_info(CL_DRIVER_VERSION).unwrap_or_default();
    let block_event = match fault {
        // SAFETY: a user event in clprism's own context.
        Some(Fault::Block(b)) if b == i => unsafe { cl::user_event(context).ok() },
        // SAFETY: as above; completed once, by the thread started here.
        Some(Fault::Stall(b, ms)) if b == i => {
            unsafe { cl::user_event(context).ok() }.inspect(|&ev| {
                let ev = ev as usize;
                super::spawn_background("clprism-fault-stall", move || {
                    std::thread::sleep(std::time::Duration::from_millis(ms));
                    // SAFETY: clprism's own user event, never released.
                    let _ = unsafe { cl::set_user_event(ev as cl_event, CL_COMPLETE as cl_int) };
                });
            })
        }
        _ => None,
    };
    let r = describe(id);
    let host_rate = (!r.kind.eq_ignore_ascii_case("cpu"))
        .then(|| {
            rates.of(format!("{}|{driver_version}", r.name), || {
                // SAFETY: clprism's own context and queue of this device, just created.
                unsafe { host_rate(context, queue) }
            })
        })
        .flatten();
    Ok(Device {
        index: format!("{p}:{d}"),
        name: r.name.clone(),
        kind: r.kind.clone(),
        id,
        context,
        queue,
        max_wg,
        compute_units,
        reports_registers,
        driver_version,
        stale_chunks: AtomicU32::new(0),
        stale_since: parking_lot::Mutex::new(None),
        inject_fail: fault == Some(Fault::Fail(i)),
        inject_differ: fault == Some(Fault::Differ(i)),
        block_event,
        broken: AtomicBool::new(false),
        host_rate,
        remote: platform_is_remote(id),
        link: platform_is_remote(id)
            // SAFETY: as above.
            .then(|| unsafe { link_of(context, queue) })
            .flatten()
            .inspect(|l| {
                dbg(|| {
                    format!(
                        "open: device {p}:{d}: link round trip {:.1} us, {:.2} GB/s",
                        l.latency_ns / 1e3,
                        l.bytes_per_ns
                    )
                })
            }),
    })
}

/// Small writes timed for a remote device's round trip (the median is kept).
const LINK_PINGS: usize = 5;

/// Bytes of the write that measures a remote device's rate: 8 MiB, about 8 ms at the
/// 1 GB/s PoCL-Remote reached on loopback of an H200 host (results/session22-2026-11-28).
const LINK_PROBE_BYTES: usize = 8 << 20;

/// Measures the link to a device of a PoCL-Remote platform: [`LINK_PINGS`] writes of 4 KiB
/// (the median is the round trip) and two of [`LINK_PROBE_BYTES`] (the second, less one
/// round trip, gives the rate), each waited for at most [`response_bound`] for its bytes.
/// Through `pocld` on loopback a round trip took 100-135 µs and transfers ran at 0.8-3 GB/s
/// where local devices answer in 10-45 µs (bench/remote.sh, results/session22-2026-11-28):
/// the host rate measured on a local GPU says nothing about them. `None`: a call failed or
/// a write did not complete in time (its memory is then leaked).
///
/// # Safety
/// `ctx` and `queue` are clprism's own context and queue of one device.
unsafe fn link_of(ctx: cl_context, queue: cl_command_queue) -> Option<Link> {
    let dev = cl::create_buffer(ctx, LINK_PROBE_BYTES).ok()?;
    let host = vec![0u8; LINK_PROBE_BYTES];
    let mut pings = Vec::with_capacity(LINK_PINGS);
    let mut big = None;
    for _ in 0..LINK_PINGS {
        pings.push(timed_write(queue, dev, &host[..4096]));
    }
    if pings.iter().all(Option::is_some) {
        big = timed_write(queue, dev, &host).and_then(|_| timed_write(queue, dev, &host));
    }
    let Some(big) = big else {
        // a write may still be in flight: its memory stays
        std::mem::forget(host);
        return None;
    };
    cl::release_mem(dev);
    let mut pings: Vec<f64> = pings.into_iter().flatten().collect();
    pings.sort_by(f64::total_cmp);
    let latency_ns = pings[pings.len() / 2];
    Some(Link {
        latency_ns,
        bytes_per_ns: LINK_PROBE_BYTES as f64 / (big - latency_ns).max(1.0),
    })
}

/// One write of `src` into `dev` on `queue`, waited for at most [`response_bound`] for its
/// bytes: its wall time, ns, or `None` (failed, or still pending: the caller keeps `src`).
///
/// # Safety
/// `queue` and `dev` are clprism's own, of one context.
unsafe fn timed_write(queue: cl_command_queue, dev: cl_mem, src: &[u8]) -> Option<f64> {
    let t = std::time::Instant::now();
    let ev = cl::write_event(queue, dev, 0, src).ok()?;
    let _ = cl::flush(queue);
    let bound = response_bound(src.len() as u64, std::time::Duration::ZERO);
    match cl::wait_bounded(&[ev], bound) {
        Ok(waited) => {
            cl::release_event(ev);
            waited.ok().map(|()| t.elapsed().as_nanos() as f64)
        }
        Err(_) => None,
    }
}

/// Bytes copied by [`host_rate`]: 64 MiB, long enough that PCIe's rate, not the call's
/// latency, sets the time (a GPU moves it in 1.3-6 ms).
const RATE_PROBE_BYTES: usize = 64 << 20;

/// The host-to-device rate of `queue`'s device from driver-allocated (pinned) host memory,
/// bytes per ns: the second of two blocking writes of [`RATE_PROBE_BYTES`] (the first
/// pays the driver's first use). Measured when a GPU or accelerator is opened, so that the
/// split decision's first estimates use the machine's rate rather than an assumed 10 GB/s
/// (`exec::launch::DEFAULT_HOST_RATE`): on 2 H200s the upload ring later moved 1 GiB in
/// 21-22 ms (results/session20-2026-11-27 `f-logs`), and the assumed rate priced
/// fdtd-2d's first split at 644 ms of transfers. `None`: a call failed.
///
/// # Safety
/// `ctx` and `queue` are clprism's own context and queue of one device.
unsafe fn host_rate(ctx: cl_context, queue: cl_command_queue) -> Option<f64> {
    let host = cl::create_host_buffer(ctx, RATE_PROBE_BYTES).ok()?;
    let dev = cl::create_buffer(ctx, RATE_PROBE_BYTES).ok();
    let rate = dev.and_then(|dev| {
        let p = cl::map(queue, host, RATE_PROBE_BYTES).ok()?;
        let src = std::slice::from_raw_parts(p, RATE_PROBE_BYTES);
        let mut ns = 0.0;
        for _ in 0..2 {
            let t = std::time::Instant::now();
            cl::write(queue, dev, 0, src, true).ok()?;
            ns = t.elapsed().as_nanos() as f64;
        }
        let _ = cl::unmap(queue, host, p);
        (ns > 0.0).then(|| RATE_PROBE_BYTES as f64 / ns)
    });
    if let Some(d) = dev {
        cl::release_mem(d);
    }
    cl::release_mem(host);
    rate
}

/// The devices `sel` names, as `(platform index, device index, handle)` (driver queries).
fn choose(sel: &DeviceSelection) -> Vec<(usize, usize, cl_device_id)> {
    let all = enumerate();
    let kind_of = |d: cl_device_id| describe(d).kind.clone();
    match sel {
        DeviceSelection::All => all.clone(),
        DeviceSelection::Cpu => all
            .iter()
            .copied()
            .filter(|x| kind_of(x.2) == "cpu")
            .collect(),
        DeviceSelection::Gpu => {
            let g: Vec<_> = all
                .iter()
                .copied()
                .filter(|x| kind_of(x.2) == "gpu")
                .collect();
            if g.is_empty() {
                all.clone()
            } else {
                g
            }
        }
        DeviceSelection::FirstGpus(n) => all
            .iter()
            .copied()
            .filter(|x| kind_of(x.2) == "gpu")
            .take(*n)
            .collect(),
        DeviceSelection::List(l) => {
            let mut v: Vec<(usize, usize, cl_device_id)> = Vec::new();
            for pick in l {
                let found: Vec<_> = match *pick {
                    Pick::Index(p, d) => all.iter().filter(|x| x.0 == p && x.1 == d).collect(),
                    Pick::Remote => all.iter().filter(|x| platform_is_remote(x.2)).collect(),
                };
                if found.is_empty() {
                    let what = match pick {
                        Pick::Index(p, d) => format!("no device {p}:{d}"),
                        Pick::Remote => "no PoCL-Remote device (remote)".into(),
                    };
                    crate::config::warn(&format!("CLPRISM_DEVICES: {what}; skipped"));
                }
                for x in found {
                    if !v.iter().any(|y| y.2 == x.2) {
                        v.push(*x);
                    }
                }
            }
            v
        }
    }
}

/// Whether `dev` belongs to a PoCL-Remote platform (its `CL_PLATFORM_VERSION` names
/// `REMOTE`).
fn platform_is_remote(dev: cl_device_id) -> bool {
    let Ok(t) = cl::rt() else {
        return false;
    };
    let (Some(gi), Some(pi)) = (t.clGetDeviceInfo, t.clGetPlatformInfo) else {
        return false;
    };
    // SAFETY: handle-sized query on a real device.
    let Some(platform) =
        (unsafe { cl::info::<cl_platform_id>(|n, p, s| gi(dev, CL_DEVICE_PLATFORM, n, p, s)) })
    else {
        return false;
    };
    crate::registry::device::info_string(|n, p, s| {
        // SAFETY: string query on the device's platform.
        unsafe { pi(platform, CL_PLATFORM_VERSION, n, p, s) }
    })
    .is_some_and(|v| v.contains("REMOTE"))
}

struct DeviceRefOpen;
impl DeviceRefOpen {
    fn open(id: cl_device_id) -> ClResult<(cl_context, cl_command_queue)> {
        // SAFETY: creating clprism-owned objects on a real device handle.
        unsafe {
            let c = cl::create_context(id)?;
            let q = cl::create_queue(c, id)?;
            Ok((c, q))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_response_bound_grows_with_bytes_and_busy_time() {
        use std::time::Duration;
        assert_eq!(response_bound(0, Duration::ZERO), RESPONSE_FLOOR);
        // 1 GB at 100 MB/s, and 4x a 2 s launch
        assert_eq!(
            response_bound(1_000_000_000, Duration::from_secs(2)),
            RESPONSE_FLOOR + Duration::from_secs(10 + 8)
        );
    }

    #[test]
    fn selection_parsing() {
        assert_eq!(parse_selection("GPU"), Ok(DeviceSelection::Gpu));
        assert_eq!(
            parse_selection("0:1, 1:0,0:1"),
            Ok(DeviceSelection::List(vec![
                Pick::Index(0, 1),
                Pick::Index(1, 0)
            ]))
        );
        assert!(parse_selection("0-1").unwrap_err().contains("0-1"));
        assert!(parse_selection("x:1").is_err());
        assert!(parse_selection(",").is_err());
        assert_eq!(
            parse_selection("1:0, remote"),
            Ok(DeviceSelection::List(vec![Pick::Index(1, 0), Pick::Remote]))
        );
        assert_eq!(
            parse_selection("REMOTE"),
            Ok(DeviceSelection::List(vec![Pick::Remote]))
        );
        assert!(parse_selection("remote:1").is_err());
        assert_eq!(parse_selection("gpu:2"), Ok(DeviceSelection::FirstGpus(2)));
        assert!(parse_selection("gpu:0").is_err());
    }

    #[test]
    fn fault_parsing() {
        assert_eq!(parse_fault("block:1"), Ok(Fault::Block(1)));
        assert_eq!(parse_fault("fail:0"), Ok(Fault::Fail(0)));
        assert_eq!(parse_fault("open-delay:800"), Ok(Fault::OpenDelay(800)));
        assert_eq!(parse_fault("stall:1:300"), Ok(Fault::Stall(1, 300)));
        assert!(parse_fault("stall:1").is_err());
        assert!(parse_fault("hang:0").is_err());
    }

    #[test]
    fn pocl_pthread_devices_with_the_wg_cache_race() {
        assert!(is_racy_pocl_pthread(
            "cpu-skylake-avx512-Intel(R) Xeon(R) Processor",
            "5.0+debian"
        ));
        assert!(is_racy_pocl_pthread("cpu-haswell-AMD EPYC", "4.0"));
        assert!(!is_racy_pocl_pthread(
            "cpu-minimal-skylake-avx512-Intel(R) Xeon(R)",
            "5.0+debian"
        ));
        assert!(!is_racy_pocl_pthread(
            "pthread-haswell-AMD EPYC",
            "3.1+debian"
        ));
        assert!(!is_racy_pocl_pthread("cpu-haswell", "6.0"));
        assert!(!is_racy_pocl_pthread("NVIDIA H100 80GB HBM3", "580.159.04"));
    }
}
