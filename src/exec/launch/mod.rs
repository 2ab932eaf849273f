//! One balanced launch, run on the app's thread under the engine's lock (DESIGN.md §7;
//! Boyer ch. 4), as a plan of steps, one file each:
//!
//! 1. [`plan`]: build on the devices, the buffer arguments, the split shape, the scheduler,
//!    the write footprints and the split decision (may forward the launch);
//! 2. [`replicas`]: the pre-launch contents and each device's replicas;
//! 3. [`chunks`]: the chunks under the scheduler, through the chunk-driver loop the
//!    simulator also runs (`sched::driver`);
//! 4. [`readback`]: the merge, then the write-back into the app's buffers;
//! 5. [`record`]: what the launch teaches the next ones, and its `schedule` record.
//!
//! [`steps`] runs 2-5 in two halves (the chunks issued, then waited for), between which
//! [`ahead`] may take up the app's next launch ([`gates`] opens its halo writes on the
//! devices) or, when nothing waits behind, [`forecast`] pushes the halos of the launch
//! expected next. This file holds the state the steps share across launches ([`WorkerState`]) and the
//! order of the steps ([`WorkerState::balanced`]).

mod ahead;
mod chunks;
mod floor;
mod forecast;
mod gates;
mod issue;
mod plan;
mod readback;
mod record;
mod replicas;
mod resident;
mod stagger;
mod steps;

use super::cl::{self, ClError};
use super::footprint::FootprintModel;
use super::program::{self, ArgKind};
use super::staging::{HostBytes, StagingPool};
use super::{ChunkDone, Engine, Job};
use crate::log::schema::{ExcludedDevice, Schedule};
use crate::registry::tables::{buffer_named_by, KernelArg, Key, ProgramOrigin, UNMAPPED_BINARY};
use crate::sched::SchedulerKind;
use crossbeam_channel::Receiver;
use opencl_sys::*;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A footprint derivation's cost over the kernel's device time per work-group on the app's
/// GPU, before one was measured in the process: 6·10⁴, above the ratios measured on an H200
/// at session 20's build (results/session20-2026-11-27 `f-logs`: 2mm 8192 kernel 1 63.5 ms
/// over 1.46 µs per work-group, 4.4·10⁴; 3mm 72.4 ms over 1.44 µs, 5.0·10⁴; gemm 16384 58 ms
/// over 5.96 µs, 9.7·10³). Session 18's 1.2-1.7·10⁵ (and this prior's 2·10⁵ then) predate the
/// sampled derivation; with 2·10⁵ the trial rule kept 2mm and 3mm whole in `auto` (a 0.75 s
/// trial price against 0.2-0.36 s saved per launch) while `always` ran them 1.16x faster.
const DERIVATION_RATIO_PRIOR: f64 = 6e4;

/// [`DERIVATION_RATIO_PRIOR`] for a program whose SPIR-V was compiled in the background
/// (`exec::compile_for_footprint`): the derivation then only emulates its sampled
/// work-groups. On 2 H200s (session 25, `results/session25-2026-11-28/gpu-c.sh`): gemm 16384
/// 2.8 ms over 5.8 µs per work-group (6.08 s over 1,048,576 work-groups natively), 4.9·10²;
/// 2mm 8192 kernel 2 3.9 ms over 2.7 µs (0.72 s over 262,144), 1.4·10³. The bound, 10⁴, keeps
/// a margin of 7 over those. Measured ratios above it (derivations that ran the compiler)
/// do not count for such a program.
const DERIVATION_RATIO_COMPILED: f64 = 1e4;

/// What every step after the plan reads: the engine, the launch and its plan.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    engine: &'a Engine,
    job: &'a Job,
    plan: &'a plan::Plan,
}

/// A footprint read-back of one buffer: the merged `[start, end)` ranges, a host copy of the
/// buffer valid inside them, the bytes read, and the ranges written by the app's own device
/// (copied device-side at write-back).
type ReadBack = (Vec<[u64; 2]>, HostBytes, u64, Vec<[u64; 2]>);

/// The application's program as the mini-emulator loaded it.
#[derive(Clone)]
struct Emulated {
    module: Arc<crate::emu::Module>,
    words: Arc<Vec<u32>>,
}

/// A program/kernel built on one device.
struct Built {
    _program: cl_program,
    kernel: cl_kernel,
    kinds: Vec<ArgKind>,
    /// 32-bit registers per work-item from the build log (NVIDIA only), for the wave.
    registers: Option<u32>,
}

/// A device's copy of one application buffer.
struct Replica {
    mem: cl_mem,
    /// Application epoch the replica holds; 0 = nothing valid.
    epoch: u64,
    size: usize,
}

/// Worker-owned caches.
#[derive(Default)]
pub(super) struct WorkerState {
    /// (variant key, kernel name) → per device build (None: failed on that device).
    kernels: FxHashMap<(String, String), Vec<Option<Built>>>,
    /// (app buffer, device) → replica.
    replicas: FxHashMap<(Key, usize), Replica>,
    /// (app context, app device) → clprism's queue there (snapshots, merge write-back).
    home: FxHashMap<(Key, Key), cl_command_queue>,
    /// (app context, app device) → clprism's queue there for chunks of the app's own device.
    home_exec: FxHashMap<(Key, Key), cl_command_queue>,
    /// (app program, kernel name) → a kernel of the app's own program (chunks on the app's
    /// device run in the app's context, so their replicas are filled by device-side copies).
    home_kernels: FxHashMap<(Key, String), cl_kernel>,
    /// kernel ([`super::Job::kernel_id`]) → measured ns per work-group per device (for the
    /// `best` scheduler).
    measured: FxHashMap<String, Vec<Option<f64>>>,
    /// Profiles and projected times of the `best` scheduler.
    best: super::best::BestState,
    /// (program hash | options) → the program loaded by the mini-emulator, or why not.
    modules: FxHashMap<String, Result<Emulated, String>>,
    /// (program, kernel, shape, by-value arguments, buffer sizes) → write footprints.
    footprints: FxHashMap<String, Result<Arc<FootprintModel>, String>>,
    /// device → a second queue in clprism's context there, for reading back a completed
    /// chunk's bytes while the device's main queue runs later chunks.
    read_queues: FxHashMap<usize, cl_command_queue>,
    /// Host staging (pinned where the driver allows) kept per app buffer across launches.
    host_pool: StagingPool,
    /// Page-locked host copies of halo ranges, kept between launches
    /// ([`resident::HaloAreas`]).
    halo_areas: resident::HaloAreas,
    /// Threads that issue a launch's driver calls for its devices in parallel
    /// (`CLPRISM_BALANCE_ISSUE`, [`issue`]).
    issue: issue::IssuePool,
    /// A footprint derivation's time over the kernel's time per work-group on the app's GPU,
    /// measured ([`WorkerState::note_derivation`]).
    derivation_ratio: Option<f64>,
    /// App context → its upload ring (`staging::UploadRing`), made at the first large upload.
    rings: FxHashMap<Key, super::staging::UploadRing>,
    /// kernel (`kernel_id`) → ns per work-group on the app's device when it last ran whole
    /// there through clprism (its first launch under `CLPRISM_SPLIT=auto`); for
    /// `sched::split`. Forwarded launches are measured into the engine state's forwarded measurements (`super::forwarded_ns_per_work_group`).
    whole: FxHashMap<String, f64>,
    /// kernel (`kernel_id`) → read-back plus write-back time of its last split launch, ns.
    merge_cost: FxHashMap<String, f64>,
    /// (kernel (`kernel_id`), work-groups along the split dimension, devices) → Ω per
    /// device measured by the last complete balanced launch (ns per work-group), to seed
    /// the next launch's warm start (`sched::ChunkScheduler::seed_history`).
    /// With it, the number of warm starts in a row since the last cold one.
    history: FxHashMap<HistoryKey, (Vec<Option<f64>>, u32)>,
    /// Measured host transfer rate (app device → host), bytes per ns; for `sched::split`.
    host_rate: Option<f64>,
    /// Per device of the engine, the link measured when a remote one was opened
    /// (`devices::Link`; `None` for a local device).
    links: Vec<Option<crate::exec::devices::Link>>,
    /// (kernel (`kernel_id`), app buffer) → the buffer's epoch and host epoch
    /// (`exec::host_epoch`) at that kernel's last balanced launch: an epoch that moved since
    /// means the input was rewritten between launches, by the app's own commands when the
    /// host epoch moved too, else by launches kept whole.
    last_epochs: FxHashMap<(String, Key), (u64, u64)>,
    /// kernel (`kernel_id`) → what its last full split decision found, for the early
    /// decision ([`super::decide`]).
    split_memo: FxHashMap<String, super::decide::SplitMemo>,
    /// The shortest split launches so far, first and later ones ([`floor`]).
    split_floor: floor::SplitFloor,
    /// Kernels (`kernel_id`) split at least once.
    split_once: rustc_hash::FxHashSet<String>,
    /// program source (`ProgramInfo::hash`) → what splitting would have saved on the
    /// launches of its kernels kept whole before each was tried, ns (`decide`'s trial rule).
    /// One saving per program, not per kernel: its kernels share the build on the devices
    /// and mostly their arrays, so one price tries them all. Per kernel, PolyBench fdtd-2d's
    /// three kernels each saved for the whole price on their own, and 3,189 of its 15,000
    /// launches were kept whole waiting for trials (2 H200s, results/session21-2026-11-27).
    forgone: FxHashMap<Arc<str>, f64>,
    /// The rent rule's saving and switches, shared by every kernel whose results stay on
    /// the devices (`decide::RentPool`).
    rent: super::decide::RentPool,
    /// program source (`ProgramInfo::hash`) → what its kernels' split launches took against
    /// the same launches whole (`decide::SplitEffect`): a program whose splits do not pay
    /// runs whole from then on.
    split_effect: FxHashMap<Arc<str>, super::decide::SplitEffect>,
    /// kernel (`Job::kernel_id`) → its last early `sched::split::decide` call
    /// (`decide::DecisionMemo`).
    early_memo: FxHashMap<String, Option<super::decide::DecisionMemo>>,
    /// (program variant, kernel name) → bytes in which its first split over devices that
    /// may differ from the app's device ([`plan::Plan::check_agreement`]) differed from a
    /// whole run there: 0, it splits from then on; more, it runs whole.
    agreement: FxHashMap<(String, String), u64>,
    /// kernel (`Job::kernel_id`) → why it always runs whole: it does floating-point
    /// arithmetic and fewer than two balance devices compile it as the app's device does
    /// (`plan::float_whole_before_build`). Its later launches skip the build lookup and the text
    /// checks (27.8 µs against 6.3 µs per launch for PolyBench lu on PoCL, session 15).
    float_whole: FxHashMap<std::sync::Arc<str>, std::sync::Arc<str>>,
    /// kernel (`Job::kernel_id`) → why it counts as floating point, `None` for an integer
    /// kernel (`plan::float_reason`): found once, not at each of its launches.
    float_verdicts: FxHashMap<std::sync::Arc<str>, Option<String>>,
    /// Which copies of each app buffer hold valid bytes, for buffers some device alone
    /// holds bytes of (`CLPRISM_BALANCE_GATHER=lazy`; see [`resident`]).
    directory: crate::exec::directory::Directory,
    /// (program variant, kernel name) → its by-value arguments whose value does not change
    /// its footprint, each with the buffer arguments whose read hulls it may move
    /// (`emu::dataflow::value_params_free_of_writes`), found once.
    free_values: FxHashMap<(String, String), FreeValues>,
    /// (program variant, kernel name) → its by-value arguments' bytes at its last launch, and
    /// the arguments whose value changed between two launches
    /// (`plan::WorkerState::varying_values`).
    value_history: FxHashMap<(String, String), ValueHistory>,
    /// (units along the split dimension, participating devices) → each device's fraction of
    /// the units in launches whose results stay on the devices (owner computes, see
    /// [`chunks`]): one contiguous slab per device, the same for every kernel of that shape.
    resident_partitions: FxHashMap<(u64, Vec<usize>), Vec<f64>>,
    /// The same shapes' chunk starts over their first owner-computes launches on GPUs of
    /// one name, until their slabs are sized for the enqueue stagger ([`stagger`]).
    partition_starts: FxHashMap<(u64, Vec<usize>), stagger::StartSamples>,
    /// Launches whose chunks were issued and are not yet waited for (`ChunkTag::launch`
    /// ids): their completions are left to their own loop ([`chunks::settle_stragglers`]).
    unfinished: Vec<u64>,
    /// The app's next launch, taken up while the launch before it ran
    /// (`CLPRISM_BALANCE_PIPELINE`, [`ahead`]).
    ahead: Option<ahead::Ahead>,
    /// Transfers read devices' copies on the queue their chunks run on, after them (set
    /// while a launch is taken up behind running chunks, [`ahead`]).
    reads_follow_chunks: bool,
    /// The launch running now is the launch thread's (`run_async`): only there does the
    /// driver hold commands behind a user event (`exec::pipeline::holds_behind_user_event`),
    /// which the halo push's gated writes need; PoCL 3.1 with a `basic` device deadlocked
    /// setting one while the app's thread polled an event (tests/async_launch.rs).
    on_launch_thread: bool,
    /// Which launch followed which, for the halos pushed ahead of the next one
    /// (`CLPRISM_BALANCE_PUSH`, [`forecast`]).
    forecast: forecast::Forecast,
    /// Opens the halo writes of launches issued ahead on the devices ([`gates`]).
    gates: gates::GateRelay,
    /// When the latest balanced launch ended: a launch issued behind it counts its wall
    /// time from then (the split floor and the split effect, [`Self::run`]).
    last_split_end: Option<Instant>,
}

/// By-value arguments free of a kernel's writes, each with the buffer arguments whose loads
/// it moves (`emu::dataflow::value_params_free_of_writes`).
type FreeValues = Arc<Vec<(u32, Vec<u32>)>>;

/// A kernel's by-value argument bytes at its last launch, and the arguments that changed.
type ValueHistory = (Vec<Option<Vec<u8>>>, Vec<u32>);

/// What the launch thread did with a launch ([`WorkerState::run_async`]).
pub(super) enum AsyncOutcome {
    /// Split (or run by clprism's scheduler on one device).
    Balanced(Box<super::Balanced>),
    /// Run whole on the app's device: why, its device time (ns) and status.
    Whole {
        reason: super::Reason,
        device_ns: u64,
        status: cl_int,
    },
}

/// (kernel (`Job::kernel_id`), work-groups along the split dimension, participating devices).
type HistoryKey = (String, u64, Vec<usize>);

/// What a split launch is assumed to cost at least on a GPU app device before enough were
/// measured ([`floor`]), ns (`CLPRISM_BALANCE_SPLIT_FLOOR`, default 0.5 ms). A split launch
/// issued behind the one before costs what it adds after that one's end: fdtd-2d's took
/// about 0.55 ms over 4 H200s (session 27) and 0.70 ms on average over 2. Resident jacobi-2d
/// launches over 4 H200s, one at a time, took 1.28 ms (median) with only 0.11-0.33 ms of
/// chunks (results/session19-2026-11-27); that was the prior (1 ms) before launches were
/// issued ahead, and it kept jacobi-2d and a third of fdtd-2d's launches whole in `auto`
/// (2 H200s: fdtd-2d 1.37-1.39x native at 1 ms, 1.52-1.53x at 0.5 ms, 1.47-1.51x at 0.3 ms;
/// results/session28-2026-11-28, call a).
fn gpu_split_floor_prior_ns() -> f64 {
    crate::config::get().balance_split_floor_us as f64 * 1e3
}

/// The transfer figures of a split whose remote devices' links are `links`: the host rate
/// `host_rate` (bytes per ns) or the slowest link's, whichever is lower, and the slowest
/// link's round trip (ns; 0 without remote devices). Transfers to the devices run in
/// parallel, so the slowest link sets their time (issue 33 item 3).
fn over_links(
    host_rate: f64,
    links: impl IntoIterator<Item = crate::exec::devices::Link>,
) -> (f64, f64) {
    links
        .into_iter()
        .fold((host_rate, 0.0), |(rate, latency), l| {
            (rate.min(l.bytes_per_ns), f64::max(latency, l.latency_ns))
        })
}

/// Whether a split launch that fetched `fetched` bytes between devices and left `resident`
/// bytes on them moved arrays rather than halos: a quarter of its resident bytes or more.
fn moved_arrays(fetched: Option<u64>, resident: Option<u64>) -> bool {
    match (fetched, resident) {
        (Some(f), Some(r)) => f > 0 && f.saturating_mul(4) >= r,
        _ => false,
    }
}

/// Host transfer rate assumed before one is measured, bytes per ns (10 GB/s).
const DEFAULT_HOST_RATE: f64 = 10.0;

/// Why a launch ran whole while the SPIR-V that says which NDRange queries its kernel reads
/// was compiled in the background (`Worker::range_queries`).
pub(super) const NDRANGE_READS_CHECKING: &str = "its kernel's NDRange queries are being read from its SPIR-V in the background (CLPRISM_BALANCE_EARLY)";

/// Why a launch ran whole while its program's build for every launch shape (a kernel that
/// reads no global size in a program that does, `Worker::range_queries`) was made on the
/// balance devices in the background.
pub(super) const PROGRAM_BUILDING: &str =
    "its program is being built on the balance devices in the background (CLPRISM_BALANCE_EARLY)";

/// Why a launch ran whole while its program's variant for the launch shape (a kernel that
/// reads `get_global_size` or `get_num_groups`, rebuilt per shape: `exec::program`) is built
/// on the balance devices in the background (`exec::build_shape_variant_in_background`).
pub(super) const SHAPE_VARIANT_BUILDING: &str = "its program's variant for this NDRange is being built on the balance devices in the background (CLPRISM_BALANCE_EARLY)";

/// A buffer argument of a balanced launch.
#[derive(Clone)]
struct BufArg {
    /// Kernel argument index.
    index: usize,
    /// The app's buffer.
    mem: Key,
    /// Its size, bytes.
    size: usize,
    /// Whether the kernel may write it (not `const`/read-only, or the footprint says so).
    written: bool,
    /// Its replicas must be refreshed at every launch (`CL_MEM_USE_HOST_PTR`: the host may
    /// change the memory behind the app's back).
    always_stale: bool,
    /// Kernel arguments bound to this buffer.
    bindings: usize,
}

/// The queue `cache` holds under `key`, created in `ctx` on `dev` at its first use (a
/// clprism-owned queue, kept for the process).
///
/// Errors: the driver's, from `clCreateCommandQueue`.
fn cached_queue<K: std::hash::Hash + Eq>(
    cache: &mut FxHashMap<K, cl_command_queue>,
    key: K,
    ctx: cl_context,
    dev: cl_device_id,
) -> Result<cl_command_queue, ClError> {
    if let Some(q) = cache.get(&key) {
        return Ok(*q);
    }
    // SAFETY: a clprism-owned queue in a context that includes `dev`; callers pass the app's
    // context with its device, or clprism's context of a balance device.
    let q = unsafe { cl::create_queue(ctx, dev)? };
    cache.insert(key, q);
    Ok(q)
}

/// Non-blocking transfers between host memory and devices that must finish before that
/// memory is freed, each with the balance device whose queue runs it (`None`: a queue in the
/// app's context). Settled ([`PendingReads::settle`]) or dropped, they are waited for with a
/// bound: PoCL 6.0's remote client never completes a dead server's commands.
#[derive(Default)]
struct PendingReads(Vec<(Option<usize>, cl_event)>);

impl PendingReads {
    /// Adds a transfer run by balance device `d` (`None`: the app's context).
    fn push(&mut self, d: Option<usize>, ev: cl_event) {
        self.0.push((d, ev));
    }

    /// Waits for every transfer (at most `bound` in all) and releases their events.
    ///
    /// Errors: a transfer failed (its code), or one was still pending after `bound`
    /// ([`Unsettled::stalled`]): its device is marked dead ([`super::devices::Device::mark_dead`], where
    /// `engine` is given) and no event is released; the caller must then leak the host
    /// memory the transfers use.
    fn settle(&mut self, engine: Option<&Engine>, bound: Duration) -> Result<(), Unsettled> {
        let evs: Vec<cl_event> = self.0.iter().map(|e| e.1).collect();
        // SAFETY: clprism's own transfer events.
        match unsafe { cl::wait_bounded(&evs, bound) } {
            Ok(r) => {
                for e in std::mem::take(&mut self.0) {
                    // SAFETY: released once, after completing.
                    unsafe { cl::release_event(e.1) };
                }
                r.map_err(|e| Unsettled {
                    stalled: false,
                    why: format!("a transfer failed: {e}"),
                })
            }
            Err(i) => {
                let d = self.0[i].0;
                self.0.clear();
                let why = format!("a transfer did not complete in {} s", bound.as_secs());
                if let (Some(engine), Some(d)) = (engine, d) {
                    engine.devices[d].mark_dead(&why);
                }
                Err(Unsettled { stalled: true, why })
            }
        }
    }
}

/// Why [`PendingReads::settle`] failed.
struct Unsettled {
    /// A transfer was still pending at the bound (its host memory must be leaked).
    stalled: bool,
    why: String,
}

impl Drop for PendingReads {
    fn drop(&mut self) {
        let _ = self.settle(None, super::devices::RESPONSE_FLOOR);
    }
}

/// Host memory (`area`) that the non-blocking transfers in `pending` read or fill: dropped,
/// it waits for them ([`PendingReads::settle`]) and leaks the memory (never frees it while a
/// driver may still use it) when one did not complete.
struct InFlight<T> {
    area: Option<T>,
    pending: PendingReads,
    /// A transfer did not complete in its bound: `area` is leaked.
    stalled: bool,
}

impl<T> InFlight<T> {
    fn new(area: T) -> Self {
        InFlight {
            area: Some(area),
            pending: PendingReads::default(),
            stalled: false,
        }
    }

    /// [`PendingReads::settle`] (a stall leaves the area leaked, see the type).
    fn settle(&mut self, engine: &Engine, bound: Duration) -> Result<(), String> {
        self.pending.settle(Some(engine), bound).map_err(|u| {
            self.stalled |= u.stalled;
            u.why
        })
    }

    /// The area, once every transfer completed; `None` after a stall.
    fn into_area(mut self) -> Option<T> {
        if self.stalled || !self.pending.0.is_empty() {
            return None;
        }
        self.area.take()
    }
}

impl<T> std::ops::Deref for InFlight<T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.area.as_ref().expect("taken only by into_area")
    }
}

impl<T> std::ops::DerefMut for InFlight<T> {
    fn deref_mut(&mut self) -> &mut T {
        self.area.as_mut().expect("taken only by into_area")
    }
}

impl<T> Drop for InFlight<T> {
    fn drop(&mut self) {
        if let Err(u) = self.pending.settle(None, super::devices::RESPONSE_FLOOR) {
            self.stalled |= u.stalled;
        }
        if self.stalled {
            std::mem::forget(self.area.take());
        }
    }
}

// SAFETY: OpenCL handles are thread-safe; the state is only used under the engine's lock.
unsafe impl Send for WorkerState {}

/// What happened to a launch, for the `schedule` record.
struct Outcome {
    makespan_ns: u64,
    schedule: Schedule,
    /// The launch's clock start (its issue, for a launch taken up ahead).
    t0: Instant,
}

impl WorkerState {
    /// A fresh state whose host rate starts at the median of the rates measured when
    /// `devices` were opened (`devices::Device::host_rate`), where any was.
    pub(super) fn seeded(devices: &[super::devices::Device]) -> Self {
        let mut rates: Vec<f64> = devices.iter().filter_map(|d| d.host_rate).collect();
        rates.sort_by(f64::total_cmp);
        WorkerState {
            host_rate: rates.get(rates.len() / 2).copied(),
            links: devices.iter().map(|d| d.link).collect(),
            ..Default::default()
        }
    }

    /// The app needs its buffer `m` (a command of its own reads or writes it, or a launch
    /// that is not split uses it): the bytes only devices hold are copied into it
    /// ([`resident`]). Returns the bytes copied. Errors: a failed transfer (the entry is
    /// kept, nothing is lost).
    pub(super) fn gather_for_app(&mut self, engine: &Engine, m: Key) -> Result<u64, String> {
        self.drop_dead_holders(engine);
        let r = self.gather(engine, m);
        engine.note_tracked(self.directory.len());
        if let Ok(bytes) = &r {
            engine.traffic.gather(*bytes);
        }
        r
    }

    /// The app released buffer `m`: its directory entry, replicas and host areas go (the
    /// replicas on a dead device are leaked: releasing them may wait for its commands).
    pub(super) fn forget(&mut self, engine: &Engine, m: Key) {
        self.directory.remove(m);
        let keys: Vec<_> = self.replicas.keys().filter(|k| k.0 == m).copied().collect();
        for k in keys {
            let dead = engine.devices.get(k.1).is_some_and(|d| d.dead());
            if let Some(r) = self.replicas.remove(&k).filter(|_| !dead) {
                // SAFETY: clprism's own replica.
                unsafe { cl::release_mem(r.mem) };
            }
        }
        self.host_pool.forget(m);
        self.halo_areas.forget(m);
    }

    /// Devices marked dead hold nothing any more in the buffer directory; bytes that one of
    /// them alone held are lost (one warning per buffer: the app's buffer keeps its older
    /// bytes there).
    fn drop_dead_holders(&mut self, engine: &Engine) {
        for (d, dev) in engine.devices.iter().enumerate().filter(|x| x.1.dead()) {
            let Some(h) = super::directory::holder_of_slot(d) else {
                continue;
            };
            for (m, lost) in self.directory.drop_holder(h) {
                crate::config::warn(&format!(
                    "balance: {lost} bytes of buffer {m:#x} that only device {} held are lost \
                     with it; the app's buffer keeps its older bytes there",
                    dev.index
                ));
            }
        }
    }

    /// clprism's queue in the app's context on the app's device (snapshots, merge write-back).
    fn home_queue(
        &mut self,
        ctx: cl_context,
        dev: cl_device_id,
    ) -> Result<cl_command_queue, ClError> {
        cached_queue(&mut self.home, (ctx as Key, dev as Key), ctx, dev)
    }

    /// clprism's second queue on balance device `d` (see `read_queues`).
    fn read_queue(&mut self, engine: &Engine, d: usize) -> Result<cl_command_queue, ClError> {
        let dev = &engine.devices[d];
        cached_queue(&mut self.read_queues, d, dev.context, dev.id)
    }

    /// The application's program loaded by the mini-emulator (compiled through the emu
    /// cache), or why not.
    fn module(&mut self, job: &Job, source: &str) -> Result<Emulated, String> {
        let options = job.emulation_options();
        let key = format!("{}|{}", job.program.hash, options);
        self.modules
            .entry(key)
            .or_insert_with(|| {
                let words =
                    crate::emu::compile_source(source, &options, &super::frontend_options())
                        .map_err(|e| e.to_string())?;
                let module = crate::emu::load_module(&words).map_err(|e| e.to_string())?;
                Ok(Emulated {
                    module: Arc::new(module),
                    words: Arc::new(words),
                })
            })
            .clone()
    }

    /// The NDRange queries the program variant of `job`'s kernel must rewrite: the program's
    /// (`program::RangeQueries::of` its `checked` text), with the global size left out when
    /// the kernel's SPIR-V (through its callees) reads neither `get_global_size` nor
    /// `get_num_groups`, so that it shares one build for every launch shape: clpeak builds one
    /// program for all its tests, and only its bandwidth kernels read `get_global_size`; its
    /// compute kernels waited for a build per launch shape (2.48 s on four H200s, session 29).
    /// With `CLPRISM_BALANCE_EARLY` on, a SPIR-V not compiled yet is compiled in the
    /// background (`exec::compile_for_footprint`) while the launch runs whole
    /// ([`NDRANGE_READS_CHECKING`]). A SPIR-V that cannot be had keeps the program's queries.
    /// `Err`: the kernel reads `get_global_linear_id`, which no variant rewrites.
    fn range_queries(
        &mut self,
        job: &Job,
        source: &str,
        checked: &str,
    ) -> Result<program::RangeQueries, String> {
        let text = program::RangeQueries::of(checked);
        if !text.size {
            return Ok(text);
        }
        let module_key = format!("{}|{}", job.program.hash, job.emulation_options());
        if crate::config::get().balance_early && !self.modules.contains_key(&module_key) {
            match super::emu_compile_state(&job.program, job.app_device) {
                None => {
                    super::compile_for_footprint(&job.program, job.app_device);
                    return Err(NDRANGE_READS_CHECKING.into());
                }
                Some(None) => return Err(NDRANGE_READS_CHECKING.into()),
                Some(Some(false)) => return Ok(text),
                Some(Some(true)) => {}
            }
        }
        let reads = match self.module(job, source) {
            Ok(m) => match m.module.kernel(&job.kernel) {
                Some(k) => k.ndrange_reads,
                None => return Ok(text),
            },
            Err(_) => return Ok(text),
        };
        if reads.linear_id {
            return Err(
                "kernel reads get_global_linear_id (a chunk would see its own, not the launch's)"
                    .into(),
            );
        }
        Ok(program::RangeQueries {
            size: reads.extent,
            offset: text.offset,
        })
    }

    /// clprism's queue in the app's context on the app's device for the chunks run there.
    fn home_exec_queue(
        &mut self,
        ctx: cl_context,
        dev: cl_device_id,
    ) -> Result<cl_command_queue, ClError> {
        cached_queue(&mut self.home_exec, (ctx as Key, dev as Key), ctx, dev)
    }

    fn home_kernel(&mut self, job: &Job) -> Result<cl_kernel, ClError> {
        let k = (job.app_program as Key, job.kernel.clone());
        if let Some(x) = self.home_kernels.get(&k) {
            return Ok(*x);
        }
        // SAFETY: a clprism-owned kernel of the app's (retained, built) program.
        let kernel = unsafe { cl::create_kernel(job.app_program, &job.kernel)? };
        self.home_kernels.insert(k, kernel);
        Ok(kernel)
    }

    /// Runs one balanced launch (the app's start barrier has completed).
    /// The early split decision for `job` ([`super::decide`]): `Err(reason)` forwards the
    /// launch before any barrier, build or footprint. Only under `CLPRISM_SPLIT=auto` with
    /// the app's device among the balance devices and a scheduler that splits.
    /// What deriving the footprint of a kernel never split yet is expected to cost on the
    /// app's thread, ns, where the app's device is a GPU or accelerator (0 elsewhere: a CPU
    /// device's work-group is nearly as slow as its emulation). The emulator runs a
    /// work-group's instructions one work-item at a time, the GPU thousands of work-groups at
    /// once, so the derivation costs a device-dependent multiple of the kernel's measured time
    /// per work-group on the app's device: measured at each derivation
    /// ([`Self::note_derivation`]), and [`DERIVATION_RATIO_PRIOR`] before the first.
    /// On 4 H200s the derivations cost 0.37-0.47 s for 2mm's and 3mm's kernels at 8192
    /// (2.75 us per work-group) and 0.72 s for gemm at 16384 (5.8 us), which the ski-rental
    /// rule of `decide` weighed as the app's 10-100 ms build: 2mm and 3mm ran 0.65-0.97x
    /// native (results/session18-2026-11-27/final-compute.txt).
    fn derivation_estimate_ns(&self, job: &super::EarlyLaunch) -> f64 {
        let ratio = self.derivation_ratio.unwrap_or(DERIVATION_RATIO_PRIOR);
        let ratio = if super::compiled_ahead(job.program, job.app_device) {
            ratio.min(DERIVATION_RATIO_COMPILED)
        } else {
            ratio
        };
        self.gpu_ns_per_work_group(job.id, job.app_device)
            .unwrap_or(0.0)
            * ratio
    }

    /// What building `program` on the balance devices still costs a first split, ns: the
    /// app's own build of it as the estimate, nothing once the background build is done
    /// (a probe's continuation waits for it since session 25, and trying a split on what
    /// was left then was weighed with the build's cost: matmul 512² on two PoCL devices was
    /// kept whole in 3 of 6 runs).
    fn build_estimate_ns(&self, program: &crate::registry::tables::ProgramInfo) -> f64 {
        if super::device_build(program) == Some(true) {
            return 0.0;
        }
        super::app_build_ns(program).map_or(super::decide::ASSUMED_TRIAL_COST_NS, |ns| ns as f64)
    }

    /// What a kernel's first split moves once through the host, ns: each buffer argument up
    /// to the devices and back into the app's buffer (the directory gathers what the devices
    /// wrote when the app reads it), at the measured host rate. Part of the trial cost of the
    /// early decision's ski-rental rule: without it, PolyBench jacobi-2d at 16384² (two 1 GiB
    /// arrays, 1 ms launches that no split speeds up) tried one split per kernel in `auto`,
    /// and uploading and gathering its arrays cost its 2,000 steps 40 % (results/session19).
    fn first_transfers_ns(&self, job: &super::EarlyLaunch) -> f64 {
        let mut seen: Vec<Key> = Vec::new();
        let mut bytes = 0u64;
        for m in job.args.iter().filter_map(buffer_named_by) {
            // a buffer the directory tracks is on the devices already
            if seen.contains(&m) || self.directory.get(m).is_some() {
                continue;
            }
            seen.push(m);
            bytes += crate::registry::TABLES
                .buffers
                .with(m, |b| b.size as u64)
                .unwrap_or(0);
        }
        2.0 * bytes as f64 / self.host_rate.unwrap_or(DEFAULT_HOST_RATE)
    }

    /// The host rate (bytes per ns) and link round trip (ns) of a split over engine devices
    /// `devs` ([`over_links`]).
    pub(super) fn transfer_figures(&self, devs: impl Iterator<Item = usize>) -> (f64, f64) {
        let links = devs.filter_map(|d| self.links.get(d).copied().flatten());
        over_links(self.host_rate.unwrap_or(DEFAULT_HOST_RATE), links)
    }

    /// The shortest split launch measured so far, ns; before one, what a split is assumed to
    /// cost at least: [`gpu_split_floor_prior_ns`] when the app's device is a GPU or an
    /// accelerator (or the shortest first split without its one-time work, when shorter:
    /// fdtd-2d's kernel 3 split in 0.80 ms at its first split, 0.93 ms later, on 2 H200s,
    /// results/session20 `f-logs`), else `decide::ASSUMED_SPLIT_FLOOR_NS`.
    ///
    /// A first split is a split too: once later splits were measured, the floor is the
    /// shorter of theirs and the first splits' (without their one-time phases). A first split
    /// only ever overstates what a split costs, so it cannot lower the floor below a real one;
    /// left out, a single later split of the slowest kernel set it: on 4 H200s, fdtd-2d's
    /// kernel 3 (halo fetches) split in 1.37 ms after kernel 2's first split had taken
    /// 0.63 ms, and every later launch of all three kernels was kept whole as "no split
    /// launch takes less than 1.37 ms" (results/session22-2026-11-28, call a).
    fn split_floor_or_prior(&self, app_device: cl_device_id) -> (f64, bool) {
        let gpu = crate::registry::device::is_gpu_like(app_device);
        self.split_floor.get(gpu, gpu_split_floor_prior_ns())
    }

    /// A footprint derivation for `job` took `ns`: the ratio of that to the kernel's time per
    /// work-group on the app's device (GPUs and accelerators only) updates the estimate of
    /// [`Self::derivation_estimate_ns`].
    fn note_derivation(&mut self, job: &Job, ns: f64) {
        let per_wg = self.gpu_ns_per_work_group(&job.kernel_id(), job.app_device);
        if let Some(per_wg) = per_wg.filter(|p| *p > 0.0) {
            let r = ns / per_wg;
            self.derivation_ratio =
                Some(self.derivation_ratio.map_or(r, |old| 0.5 * old + 0.5 * r));
        }
    }

    /// Kernel `kid`'s measured ns per work-group on the app's device when that is a GPU or an
    /// accelerator (whole launches through clprism first, else forwarded ones).
    fn gpu_ns_per_work_group(&self, kid: &str, app_device: cl_device_id) -> Option<f64> {
        if !crate::registry::device::is_gpu_like(app_device) {
            return None;
        }
        self.whole
            .get(kid)
            .copied()
            .or_else(|| super::forwarded_ns_per_work_group(kid))
    }

    pub(super) fn pre_decide(
        &mut self,
        engine: &Engine,
        job: &super::EarlyLaunch,
    ) -> Result<(), super::Forward> {
        let cfg = crate::config::get();
        let splitting_scheduler = !matches!(
            engine.scheduler,
            SchedulerKind::Single(_) | SchedulerKind::Best
        );
        if cfg.split != crate::config::SplitPolicy::Auto || cfg.verify || !splitting_scheduler {
            return Ok(());
        }
        let Some(home) = engine.devices.iter().position(|d| d.id == job.app_device) else {
            return Ok(());
        };
        if engine.devices.len() < 2 {
            return Ok(());
        }
        // looked up by the kernel object's shared id: no key text per launch
        let kid: &str = job.id;
        let last_epoch = |m: Key| self.last_epochs.get(&(kid.to_string(), m)).copied();
        let (host_bytes_per_ns, link_latency_ns) = self.transfer_figures(0..engine.devices.len());
        let memo = self.split_memo.get(kid);
        // the trial rule prices only a kernel never split (its look-ups lock and format keys:
        // not at every launch of a kernel already tried)
        let trial_cost_ns = if memo.is_none() {
            self.build_estimate_ns(job.program)
                .max(self.derivation_estimate_ns(job))
                + self.first_transfers_ns(job)
        } else {
            0.0
        };
        let (floor_ns, floor_assumed) = self.split_floor_or_prior(job.app_device);
        let known = super::decide::Known {
            home_ns_per_work_group: self
                .whole
                .get(kid)
                .copied()
                .or_else(|| super::forwarded_ns_per_work_group(kid)),
            measured: self.measured.get(kid).map(|v| v.as_slice()),
            merge_ns: self.merge_cost.get(kid).copied(),
            host_bytes_per_ns,
            link_latency_ns,
            split_floor_ns: floor_ns,
            split_floor_assumed: floor_assumed,
            trial_cost_ns,
            forgone_ns: self.forgone.get(&*job.program.hash).copied().unwrap_or(0.0),
            split_effect: self.split_effect.get(&*job.program.hash).copied(),
            memo,
            last_epoch: &last_epoch,
        };
        if !self.early_memo.contains_key(kid) {
            self.early_memo.insert(kid.to_string(), None);
        }
        let Some(last) = self.early_memo.get_mut(kid) else {
            return Ok(());
        };
        match super::decide::early(
            job,
            engine.devices.len(),
            home,
            &known,
            last,
            &mut self.rent,
        ) {
            super::decide::Early::Consider { relocated_bytes } => {
                if relocated_bytes > 0 {
                    crate::config::debug(|| {
                        format!(
                            "{kid}: split, moving {} MiB of inputs back onto the devices (rent rule)",
                            relocated_bytes >> 20
                        )
                    });
                }
                Ok(())
            }
            super::decide::Early::Forward {
                reason,
                measure,
                unwritten,
                forgone_ns,
            } => {
                if forgone_ns > 0.0 {
                    match self.forgone.get_mut(&*job.program.hash) {
                        Some(f) => *f += forgone_ns,
                        None => {
                            self.forgone.insert(job.program.hash.clone(), forgone_ns);
                        }
                    }
                }
                let groups = (0..job.work_dim as usize)
                    .map(|d| (job.global[d] / job.local[d].max(1)) as u64)
                    .product();
                Err(super::Forward {
                    reason,
                    unwritten,
                    measure: measure.then(|| (job.id.clone(), groups)),
                })
            }
        }
    }

    /// The launch thread's run of one launch (`exec::pipeline`): the early decision when the
    /// app's thread did not take it (`decided`), then the balanced run; a launch either
    /// hands back runs whole on the app's device ([`Self::run_whole`]).
    pub(super) fn run_async(&mut self, engine: &Engine, job: &Job, decided: bool) -> AsyncOutcome {
        if let Some(failed) = self.failed_ahead(engine, job) {
            return failed;
        }
        // a launch taken up ahead was decided then
        if !decided && !self.has_ahead(job.rec.seq) {
            if let Err(f) = self.pre_decide(engine, &job.early()) {
                return self.run_whole(engine, job, f);
            }
        }
        self.on_launch_thread = true;
        let ran = self.run(engine, job);
        self.on_launch_thread = false;
        match ran {
            Ok(b) => AsyncOutcome::Balanced(Box::new(b)),
            Err(f) => self.run_whole(engine, job, f),
        }
    }

    /// A launch of the launch thread that is not split (`forward` says why): its buffers
    /// are gathered into the app's, then it runs as the app made it on the app's device
    /// (clprism's kernel of the app's program, on clprism's queue in the app's context, the
    /// driver's local size when the app gave none), and the buffers it may write count as
    /// written by the app. Its device time is the kernel's figure when `forward` asks for a
    /// measurement.
    fn run_whole(&mut self, engine: &Engine, job: &Job, forward: super::Forward) -> AsyncOutcome {
        let bufs: Vec<Key> = job.args.iter().filter_map(buffer_named_by).collect();
        for m in bufs.iter().flat_map(|m| super::with_parent(*m)) {
            if let Err(why) = self.gather_for_app(engine, m) {
                crate::config::warn(&format!("balance: {why}"));
            }
        }
        let ran = self.enqueue_whole(job);
        for m in bufs.iter().filter(|m| !forward.unwritten.contains(m)) {
            for b in super::with_parent(*m) {
                super::invalidate(b);
            }
        }
        match ran {
            Ok(ns) => {
                if let Some((kid, wgs)) = &forward.measure {
                    super::note_forwarded(kid, ns, *wgs);
                }
                AsyncOutcome::Whole {
                    reason: forward.reason,
                    device_ns: ns,
                    status: CL_SUCCESS,
                }
            }
            Err(e) => AsyncOutcome::Whole {
                reason: format!(
                    "{}; run whole on the app's device by clprism's launch thread, it failed \
                     there ({e})",
                    forward.reason.text()
                )
                .into(),
                device_ns: 0,
                status: e.code,
            },
        }
    }

    /// Runs `job` whole on the app's device and waits for it: its device time, ns (0 when
    /// the queue does not profile).
    fn enqueue_whole(&mut self, job: &Job) -> Result<u64, ClError> {
        let q = self.home_exec_queue(job.app_context, job.app_device)?;
        let k = self.home_kernel(job)?;
        let dim = job.work_dim as usize;
        // SAFETY: clprism's kernel of the app's program and its queue in the app's context;
        // the argument bytes are the app's (buffers retained for the launch thread).
        unsafe {
            for (i, a) in job.args.iter().enumerate() {
                match a {
                    KernelArg::Value(v) => {
                        let b = v.as_slice();
                        cl::set_arg(k, i as u32, b.len(), b.as_ptr().cast())?
                    }
                    KernelArg::Local(n) => cl::set_arg(k, i as u32, *n, std::ptr::null())?,
                }
            }
            let local: &[usize] = if job.local_given {
                &job.local[..dim]
            } else {
                &[]
            };
            let ev = cl::enqueue_ndrange(
                q,
                k,
                job.work_dim,
                &job.offset[..dim],
                &job.global[..dim],
                local,
                &[],
            )?;
            let _ = cl::flush(q);
            let waited = cl::wait(&[ev]);
            let ns = super::event_device_ns(ev).unwrap_or(0);
            cl::release_event(ev);
            waited?;
            Ok(ns)
        }
    }

    pub(super) fn run(
        &mut self,
        engine: &Engine,
        job: &Job,
    ) -> Result<super::Balanced, super::Forward> {
        let t0 = Instant::now();
        let started_ns = crate::log::unix_ns().saturating_sub(job.rec.time_ns);
        let o = self.balanced(engine, &engine.done_rx, job, t0);
        let ended = self.last_split_end.replace(Instant::now());
        let o = o?;
        let mut schedule = o.schedule;
        // a launch issued behind the one before costs what it adds after that one's end
        let since = match ended {
            Some(e) if schedule.issued_ahead == Some(true) => e.max(o.t0),
            _ => o.t0,
        };
        let wall_ns = since.elapsed().as_nanos() as u64;
        schedule.wall_ns = Some(wall_ns);
        schedule.started_ns = Some(started_ns);
        if schedule.issued_ahead == Some(true) {
            // its chunk and phase times count from when it was taken up
            let taken_up = crate::log::unix_ns().saturating_sub(o.t0.elapsed().as_nanos() as u64);
            schedule.issued_ns = Some(taken_up.saturating_sub(job.rec.time_ns));
        }
        let used = schedule.devices_used();
        if used == 1 {
            schedule.one_device_reason = Some(super::decide::one_device_reason(&schedule));
        }
        if used >= 2 {
            self.note_split_effect(job, &schedule, wall_ns);
            self.note_split(&job.kernel_id(), &schedule, wall_ns);
        }
        Ok(super::Balanced {
            makespan_ns: o.makespan_ns,
            schedule,
        })
    }

    /// A split launch of `job` took `wall_ns`: unless it is its kernel's first split, or a
    /// launch that moved a quarter or more of its resident arrays between devices (the rent
    /// rule's one-time move of inputs that launches kept whole rewrote: fdtd-2d's kernel 1
    /// fetched 739 MB in 37 ms at such a launch on 4 H200s, 35 times its halo launches), a
    /// sample of its program's [`super::decide::SplitEffect`] against the kernel's measured
    /// time whole on the app's device (none measured: no sample).
    fn note_split_effect(&mut self, job: &Job, schedule: &Schedule, wall_ns: u64) {
        let kid = job.kernel_id();
        if !self.split_once.contains(&kid) {
            return;
        }
        if moved_arrays(schedule.fetched_bytes, schedule.resident_bytes) {
            return;
        }
        let per_wg = self
            .whole
            .get(&kid)
            .copied()
            .or_else(|| super::forwarded_ns_per_work_group(&kid));
        let Some(per_wg) = per_wg else {
            return;
        };
        let groups: u64 = (0..job.work_dim as usize)
            .map(|d| (job.global[d] / job.local[d].max(1)) as u64)
            .product();
        let split = super::decide::split_wall_without_one_time_work(schedule, wall_ns);
        self.split_effect
            .entry(job.program.hash.clone())
            .or_default()
            .note(split, per_wg * groups as f64);
    }

    /// A launch of kernel `kid` split over two devices or more took `wall_ns`: a sample of
    /// the split floor (its first split only of the trial floor, which still holds the
    /// driver's first enqueue of the kernel on each device).
    fn note_split(&mut self, kid: &str, schedule: &Schedule, wall_ns: u64) {
        let w = super::decide::split_wall_without_one_time_work(schedule, wall_ns);
        let first = self.split_once.insert(kid.to_string());
        self.split_floor.note(first, w);
    }

    /// Builds the launch's kernel on every balance device (once per program variant); with
    /// `CLPRISM_BALANCE_EARLY` on, a variant for one launch shape is built in the background
    /// ([`SHAPE_VARIANT_BUILDING`]) and this launch runs whole meanwhile.
    /// Returns the variant key, the devices that can take chunks now, and for each device that
    /// sits this launch out, why (the record's `devices_excluded`).
    fn build(
        &mut self,
        engine: &Engine,
        job: &Job,
    ) -> Result<(String, Vec<usize>, Vec<ExcludedDevice>), String> {
        let source = match &job.program.origin {
            ProgramOrigin::Source(s) => s.clone(),
            ProgramOrigin::Binary(_) => {
                return Err(format!(
                    "{UNMAPPED_BINARY}: NDRange queries cannot be rewritten"
                ))
            }
            ProgramOrigin::Il(_) => {
                return Err("program created from IL: NDRange queries cannot be rewritten".into())
            }
            _ => return Err("program origin unknown to clprism (linked or built-in)".into()),
        };
        // the checks read included files too (hashcat)
        let checked = program::inspected_text(&job.program.hash, &source, &job.program.options)?;
        if let Some(r) = program::unsplittable_reason(&checked) {
            return Err(r.into());
        }
        if program::mentions_atomics(&checked) {
            // per kernel, from the SPIR-V: kmeans' other kernels need not run whole
            let m = self.module(job, &source).map_err(|e| {
                format!("kernel source uses atomics and the per-kernel check is unavailable ({e})")
            })?;
            if m.module
                .kernel(&job.kernel)
                .is_none_or(|k| k.global_atomics)
            {
                return Err(
                    "kernel uses atomics on global memory (work-groups may update the same bytes)"
                        .into(),
                );
            }
        }
        let queries = self.range_queries(job, &source, &checked)?;
        // a kernel of a program that reads the global size, which itself reads none: it takes
        // the program's build for every shape (started in the background, as a shape's is)
        let shared_by_shapes = !queries.size && program::RangeQueries::of(&checked).size;
        let (variant, text) = if queries.any() {
            let g = job.global.map(|x| x as u64);
            let o = job.offset.map(|x| x as u64);
            let (suffix, text) = queries.variant(&source, g, o);
            (
                format!("{}|{}|{suffix}", job.program.hash, job.program.options),
                text,
            )
        } else {
            (
                format!("{}|{}", job.program.hash, job.program.options),
                source.to_string(),
            )
        };
        let key = (variant.clone(), job.kernel.clone());
        if !self.kernels.contains_key(&key) {
            // one build per program variant and device, shared by its kernels (started in
            // the background when the app built the program; see `prebuild_in_background`)
            // a variant per global size: built in the background with CLPRISM_BALANCE_EARLY
            // (kept in its cell, as its kernels are kept here), else here for this launch
            let programs = if (queries.size || shared_by_shapes)
                && crate::config::get().balance_early
            {
                // built in the background while this shape's launches run whole
                match super::program_cell(&variant).get() {
                    Some(built) => built.clone(),
                    None => {
                        super::build_shape_variant_in_background(
                            &variant,
                            text,
                            job.program.options.to_string(),
                        );
                        return Err(if queries.size {
                            SHAPE_VARIANT_BUILDING
                        } else {
                            PROGRAM_BUILDING
                        }
                        .into());
                    }
                }
            } else if queries.size {
                super::build_on_devices(engine, &text, &job.program.options)
            } else {
                super::program_cell(&variant)
                    .get_or_init(|| super::build_on_devices(engine, &text, &job.program.options))
                    .clone()
            };
            let mut per_dev = Vec::new();
            for (d, p) in engine.devices.iter().zip(programs) {
                // SAFETY: a program built on clprism's own context, never released.
                let b = p.and_then(|p| unsafe {
                    let p = p as cl_program;
                    match cl::create_kernel(p, &job.kernel) {
                        Ok(k) => match program::arg_kinds(k) {
                            Ok(kinds) => Ok(Built {
                                _program: p,
                                kernel: k,
                                kinds,
                                registers: d
                                    .reports_registers
                                    .then(|| {
                                        program::kernel_registers(
                                            &cl::build_log(p, d.id),
                                            super::cache_dir().as_deref(),
                                            &format!("{variant}|{}|{}", d.name, d.driver_version),
                                            &job.kernel,
                                        )
                                    })
                                    .flatten(),
                            }),
                            Err(e) => {
                                cl::release_kernel(k);
                                Err(e)
                            }
                        },
                        Err(e) => Err(e.to_string()),
                    }
                });
                match b {
                    Ok(b) => per_dev.push(Some(b)),
                    // an app that exits while the launch thread builds: nothing to report
                    Err(_) if super::background::get().exiting() => per_dev.push(None),
                    Err(e) => {
                        crate::config::warn(&format!(
                            "balance: building {} for {} failed: {e}",
                            job.kernel, d.name
                        ));
                        per_dev.push(None);
                    }
                }
            }
            self.kernels.insert(key.clone(), per_dev);
        }
        chunks::settle_stragglers(engine, &engine.done_rx, &self.unfinished);
        self.drop_dead_holders(engine);
        let builds = &self.kernels[&key];
        let mut usable = Vec::new();
        let mut excluded = Vec::new();
        for (i, d) in engine.devices.iter().enumerate() {
            let why = if builds[i].is_none() {
                Some("the kernel did not build there".to_string())
            } else if d.broken.load(std::sync::atomic::Ordering::Acquire) {
                Some("the device failed earlier".to_string())
            } else if !d.available() {
                Some(format!(
                    "busy with {} abandoned straggler chunks",
                    d.stale_chunks.load(std::sync::atomic::Ordering::Acquire)
                ))
            } else {
                None
            };
            match why {
                Some(reason) => excluded.push(ExcludedDevice {
                    index: d.index.clone(),
                    reason,
                }),
                None => usable.push(i),
            }
        }
        if usable.is_empty() {
            return Err("no device could build the kernel or all are busy".into());
        }
        Ok((variant, usable, excluded))
    }

    /// Errors: a participating device was marked dead during the launch (its chunks'
    /// output may be lost: the launch is forwarded, so that nothing it alone held counts).
    fn no_dead_device(engine: &Engine, plan: &plan::Plan) -> Result<(), String> {
        match plan.devs.iter().find(|&&d| engine.devices[d].dead()) {
            Some(&d) => Err(format!(
                "device {} stopped responding during the launch",
                engine.devices[d].index
            )),
            None => Ok(()),
        }
    }

    /// One balanced launch as a plan of steps: plan (build, footprint, decide), pre-launch
    /// contents and replicas, chunks under the scheduler, merge, write-back, what it
    /// teaches the next launches, and its record. `Err`: the launch is forwarded; nothing
    /// of the app's data changed. A launch the launch thread took up while the one before it
    /// ran ([`ahead`]) goes on from where that left it. Once the chunks are issued, the app's
    /// next launch may be taken up before they are waited for ([`Self::look_ahead`]).
    fn balanced(
        &mut self,
        engine: &Engine,
        done_rx: &Receiver<ChunkDone>,
        job: &Job,
        t0: Instant,
    ) -> Result<Outcome, super::Forward> {
        let ahead = self.take_ahead(job.rec.seq);
        if !matches!(ahead, Some(ahead::Ahead::Issued { .. })) {
            // its transfers read copies off the chunks' queues: pushed halos must be in
            self.settle_pushes();
        }
        let mut front = match ahead {
            Some(ahead::Ahead::Issued { front, .. }) => *front,
            Some(ahead::Ahead::Planned { plan, t0, .. }) => {
                self.front(engine, done_rx, job, *plan, t0)?
            }
            Some(ahead::Ahead::Forwarded { forward, .. }) => return Err(forward),
            None => {
                let plan = self.plan(engine, job, t0)?;
                crate::config::debug(|| {
                    format!(
                        "launch {}: planned at {:.1} us",
                        job.rec.seq,
                        t0.elapsed().as_nanos() as f64 / 1e3
                    )
                });
                self.front(engine, done_rx, job, plan, t0)?
            }
        };
        self.forecast
            .observe(&front.plan, front.started.issued_slabs().as_deref());
        self.look_ahead(engine, done_rx, job, &mut front);
        self.back(engine, done_rx, job, front)
    }
}

/// Cache key of a launch's write footprints: the program variant and kernel, the NDRange,
/// every by-value and `__local` argument, and the buffer sizes (buffer handles do not
/// matter, their sizes do). By-value arguments in `free` are left out: their value does
/// not change the footprint (`emu::dataflow::value_params_free_of_writes`).
fn footprint_key(
    key: &(String, String),
    job: &Job,
    kinds: &[ArgKind],
    bufs: &[(Key, usize)],
    free: &[u32],
) -> String {
    use std::fmt::Write;
    // the device's predefined macros: the same source may write other bytes on a device of
    // another OpenCL version
    let mut k = format!(
        "{}|{}|{}|{:?}|{:?}|{:?}|",
        key.0,
        key.1,
        crate::registry::device::compiler_defines(job.app_device),
        job.global,
        job.local,
        job.offset
    );
    for (i, (a, kind)) in job.args.iter().zip(kinds).enumerate() {
        match (a, buffer_named_by(a)) {
            (_, Some(m)) => {
                let size = bufs.iter().find(|b| b.0 == m).map_or(0, |b| b.1);
                let _ = write!(k, "b{size},");
            }
            (KernelArg::Local(n), None) => {
                let _ = write!(k, "l{n},");
            }
            (KernelArg::Value(_), None) if free.contains(&(i as u32)) => {
                let _ = write!(k, "v{kind:?}*,");
            }
            (KernelArg::Value(v), None) => {
                let _ = write!(k, "v{kind:?}{:?},", v.as_slice());
            }
        }
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Local devices leave the host rate alone; remote ones lower it to the slowest link's
    /// and add that link's round trip (the figures of an H200 behind `pocld` on loopback).
    #[test]
    fn the_slowest_link_sets_the_transfer_figures() {
        use crate::exec::devices::Link;
        assert_eq!(over_links(53.0, []), (53.0, 0.0));
        let near = Link {
            latency_ns: 103_600.0,
            bytes_per_ns: 0.82,
        };
        let far = Link {
            latency_ns: 150_000.0,
            bytes_per_ns: 2.1,
        };
        assert_eq!(over_links(53.0, [near, far]), (0.82, 150_000.0));
        assert_eq!(over_links(0.5, [near]), (0.5, 103_600.0));
    }

    /// fdtd-2d on 4 H200s: a launch that fetched 739 MB of its 1 GiB resident arrays moved
    /// arrays; one that fetched its 196,620 bytes of halo rows did not; nor did a launch
    /// whose results were merged back (nothing resident) or that fetched nothing.
    #[test]
    fn array_moves_are_told_from_halos() {
        let gib = 1u64 << 30;
        assert!(moved_arrays(Some(738_918_400), Some(gib)));
        assert!(moved_arrays(Some(gib / 4), Some(gib)));
        assert!(!moved_arrays(Some(196_620), Some(gib)));
        assert!(!moved_arrays(Some(gib), None));
        assert!(!moved_arrays(Some(0), Some(0)));
        assert!(!moved_arrays(None, Some(gib)));
    }
}
