//! Multi-device execution for balance mode (DESIGN.md §7; Boyer ch. 4): each intercepted
//! `clEnqueueNDRangeKernel` is split into chunks of whole work-groups along the
//! slowest-varying dimension and run on every participating device, with byte-identical
//! results.
//!
//! Ordering (DESIGN.md §7): the hook enqueues a start barrier on the application's queue
//! (its wait list, or every earlier command) and an end barrier gated by a user event, the
//! event the app gets, and returns; clprism's launch thread ([`pipeline`]) waits for the
//! start barrier, takes the pre-launch contents of the buffers, brings the per-device
//! replicas up to date, runs the chunks as the scheduler (`sched`) assigns them, merges what
//! each device wrote into the app's buffer (or leaves it on the devices, [`directory`]) and
//! sets the user event. Where the driver lets commands pass a user-event barrier (PoCL 3.1
//! with a `basic` device) the launch runs the same steps in the enqueuing thread and the app
//! gets a marker enqueued after them. Chunk completions arrive through event callbacks into
//! a channel; callbacks do nothing else. Launches are serialised by one lock.

pub mod background;
pub mod best;
mod binary_cache;
pub mod cl;
mod decide;
pub mod devices;
pub mod directory;
pub mod early;
pub mod footprint;
mod launch;
pub mod merge;
pub mod open_gate;
pub mod pipeline;
pub mod program;
mod staging;

use crate::log::LaunchRecord;
use crate::registry::tables::{KernelArg, Key, ProgramInfo};
use crossbeam_channel::{unbounded, Receiver, Sender};
use devices::Device;
use once_cell::sync::{Lazy, OnceCell};
use opencl_sys::*;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::ffi::c_void;

/// One intercepted launch handed to the worker.
pub struct Job {
    /// The pending log record.
    pub rec: LaunchRecord,
    /// The application's queue, context and device (queue retained by clprism).
    pub app_queue: cl_command_queue,
    /// Context of the application's queue.
    pub app_context: cl_context,
    /// Device of the application's queue.
    pub app_device: cl_device_id,
    /// The application's program (retained by clprism) and what clprism knows of it.
    pub app_program: cl_program,
    /// Recorded program origin and options.
    pub program: ProgramInfo,
    /// Kernel function name.
    pub kernel: String,
    /// [`kernel_id`] of the program and kernel, made once per kernel object.
    pub id: std::sync::Arc<str>,
    /// Argument values as set at enqueue time.
    pub args: Vec<KernelArg>,
    /// NDRange dimensions.
    pub work_dim: u32,
    /// Global size, offset and local size (work-items) in 3 dimensions.
    pub global: [usize; 3],
    /// Global offset (work-items).
    pub offset: [usize; 3],
    /// Local size (work-items); chosen by clprism when the app gave none.
    pub local: [usize; 3],
    /// Whether the app passed a local size.
    pub local_given: bool,
    /// Epoch of each buffer argument when the app enqueued the launch (later app writes bump
    /// the live epoch and must not be mistaken for data this launch uploaded).
    pub epochs: FxHashMap<Key, u64>,
}

/// The key of kernel `name` of `program` under which clprism keeps its measurements (see
/// [`Job::kernel_id`]); also for a launch forwarded before a `Job` exists.
pub fn kernel_id(program: &ProgramInfo, name: &str) -> String {
    format!("{}|{}|{}", program.hash, program.options, name)
}

impl Job {
    /// The key of what clprism measures and remembers per kernel (speeds, whole-launch time,
    /// merge cost, the warm start's history): the program's content hash, its build options
    /// and the kernel name, so same-named kernels of different programs or builds (e.g. one
    /// source built with different `-D` options) keep their own figures.
    pub fn kernel_id(&self) -> String {
        self.id.to_string()
    }

    /// The options the mini-emulator compiles the app's program with for this launch: the
    /// app's build options plus the macros the app's device predefines and clang does not
    /// (`registry::device::compiler_defines`), so the emulated kernel (its write footprint
    /// above all) is the one the device runs.
    pub fn emulation_options(&self) -> String {
        emulation_options(&self.program, self.app_device)
    }

    /// What the early split decision reads of this launch ([`EarlyLaunch`]).
    pub fn early(&self) -> EarlyLaunch<'_> {
        EarlyLaunch {
            id: &self.id,
            program: &self.program,
            app_device: self.app_device,
            args: &self.args,
            work_dim: self.work_dim,
            global: self.global,
            local: self.local,
        }
    }

    /// Bytes of `__local` memory per work-group given as kernel arguments (the dynamic part;
    /// the module's static `__local` variables are not included).
    pub fn dynamic_local_bytes(&self) -> u64 {
        self.args
            .iter()
            .map(|a| match a {
                KernelArg::Local(n) => *n as u64,
                _ => 0,
            })
            .sum()
    }
}

// SAFETY: OpenCL handles are thread-safe.
unsafe impl Send for Job {}

/// A chunk completion, reported by its event callback or found by polling the event.
pub(crate) struct ChunkDone {
    pub launch: u64,
    pub chunk: u64,
    /// Index among the launch's participating devices.
    pub device: usize,
    /// Index in [`Engine::devices`].
    pub global_device: usize,
    pub status: cl_int,
    pub device_ns: Option<u64>,
    /// Set by whichever of the callback's report and the launch loop's poll is handled
    /// first; the other is then ignored (a completion is counted once).
    pub claimed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// The balance engine: participating devices, caches and the chunk-completion channel.
pub struct Engine {
    /// Participating devices.
    pub devices: Vec<Device>,
    /// When the devices were open, ms since the app's first OpenCL call (the record's
    /// `schedule.devices_ready_ms`).
    pub ready_ms: f64,
    /// The chunk scheduler (`CLPRISM_SCHEDULER`, parsed once; Boyer's by default).
    pub scheduler: crate::sched::SchedulerKind,
    /// Boyer's parameters (`CLPRISM_BOYER`, parsed once; the paper's by default).
    pub boyer: crate::sched::BoyerParams,
    state: Mutex<launch::WorkerState>,
    done_tx: Sender<ChunkDone>,
    done_rx: Receiver<ChunkDone>,
    /// Buffers the directory tracks (`exec::directory`), mirrored out of the worker state
    /// so that an app command on a buffer checks it without taking the worker's lock.
    tracked: std::sync::atomic::AtomicUsize,
    /// What the directory moved in the process, for the line at exit.
    traffic: directory::Traffic,
    /// The launch thread of asynchronous balanced launches (`CLPRISM_BALANCE_ASYNC`).
    pub pipeline: pipeline::Pipeline,
}

impl Engine {
    /// The worker state now tracks `n` buffers in its directory.
    fn note_tracked(&self, n: usize) {
        self.tracked.store(n, std::sync::atomic::Ordering::Release);
    }
}

/// The emulator front end's options in the app's process: `CLPRISM_TOOLCHAIN` and
/// `CLPRISM_CACHE` from [`crate::config`], `PATH`, `XDG_CACHE_HOME` and `HOME` from the
/// environment (the emulator itself never reads it).
pub(crate) fn frontend_options() -> crate::emu::FrontendOptions {
    crate::emu::FrontendOptions::from_config(crate::config::get(), |k| std::env::var_os(k))
}

/// clprism's cache directory (see [`frontend_options`]); `None` when there is none.
pub(crate) fn cache_dir() -> Option<std::path::PathBuf> {
    crate::emu::frontend::cache_dir(&frontend_options())
}

/// A launch handed back to be forwarded to the driver as the app made it: why, and what the
/// hook does with the native run.
#[derive(Debug, Default)]
pub struct Forward {
    /// Why it was not split (the record's `schedule.fallback`), shared: the reasons of the
    /// frequent verdicts are made once ([`reason`], the memos of `opening_deferred` and the
    /// early decision), so a launch kept whole allocates no text.
    pub reason: Reason,
    /// Buffers of the launch that its kernel only reads: the native run does not make their
    /// replicas stale.
    pub unwritten: Vec<Key>,
    /// Measure the forwarded launch: (kernel id ([`Job::kernel_id`]), work-groups); see
    /// [`watch_forwarded`].
    pub measure: Option<(std::sync::Arc<str>, u64)>,
}

/// A program variant by its shared (content hash, build options) texts.
type Variant = (std::sync::Arc<str>, std::sync::Arc<str>);

/// A "too short" verdict's (figure bits, work-groups) and its reason ([`short_reason`]).
type ShortReason = ((u64, u64), Reason);

/// A fallback reason's text: shared between the launches that give it, or made from
/// per-launch figures by the log writer (never formatted on the app's thread).
pub type Reason = crate::log::ReasonText;

/// The shared text of a fixed reason, made once per call site (`static`): what the frequent
/// fixed verdicts return instead of a new `String` per launch.
pub fn reason(cell: &'static OnceCell<Reason>, text: &'static str) -> Reason {
    cell.get_or_init(|| Reason::from(text)).clone()
}

impl From<std::sync::Arc<str>> for Forward {
    fn from(reason: std::sync::Arc<str>) -> Self {
        Reason::from(reason).into()
    }
}

impl From<String> for Forward {
    fn from(reason: String) -> Self {
        Forward {
            reason: reason.into(),
            ..Default::default()
        }
    }
}

impl From<&str> for Forward {
    fn from(reason: &str) -> Self {
        Forward {
            reason: reason.into(),
            ..Default::default()
        }
    }
}

impl From<Reason> for Forward {
    fn from(reason: Reason) -> Self {
        Forward {
            reason,
            ..Default::default()
        }
    }
}

/// A balanced launch that completed.
pub struct Balanced {
    /// Time from the first chunk's enqueue to the last chunk's completion, ns.
    pub makespan_ns: u64,
    /// The `schedule` log record.
    pub schedule: crate::log::schema::Schedule,
}

/// Runs a launch balanced across the engine's devices, synchronously. `Err(reason)`: nothing
/// of the app's data was changed and the caller runs the launch natively.
pub fn run(job: &Job) -> Result<Balanced, Forward> {
    let e = engine().map_err(|e| format!("balance engine unavailable: {e}"))?;
    let mut st = e.state.lock();
    st.run(e, job)
}

/// Writes the log record of launch `rec` that ran balanced (`done`), after its probe chunk
/// when there was one; `launch_thread`: it ran on clprism's launch thread.
pub fn record_balanced(
    rec: &LaunchRecord,
    done: Balanced,
    probe: Option<crate::log::schema::ProbeLog>,
    launch_thread: bool,
) {
    let mut rec = rec.clone();
    let mut schedule = done.schedule;
    schedule.launch_thread = launch_thread.then_some(true);
    schedule.devices_ready_ms = devices_ready_ms();
    let probe_ns = probe.as_ref().map_or(0, |p| p.device_ns);
    schedule.probe = probe;
    rec.set_schedule(&schedule);
    let seq = rec.seq;
    crate::log::pending(rec);
    crate::log::complete(
        seq,
        CL_SUCCESS,
        Some(crate::log::DeviceTimes {
            submit: 0,
            start: 0,
            // the launch's device time: its probe's, then the balanced rest's
            end: done.makespan_ns + probe_ns,
        }),
    );
}

/// The early split decision without waiting for a launch in progress: `None` when the
/// launch thread is busy (its launches hold the worker's state; the launch thread then
/// takes the decision itself, see [`submit_async`]).
pub fn try_pre_decide(engine: &Engine, launch: &EarlyLaunch) -> Option<Result<(), Forward>> {
    if engine.pipeline.busy() {
        return None;
    }
    let mut st = engine.state.try_lock()?;
    Some(st.pre_decide(engine, launch))
}

/// Hands `job` to the launch thread (`exec::pipeline`) when the app's driver allows it:
/// the returned event is the app's (completes when the launch has). `decided`: the early
/// decision already ran on the app's thread. `Err`: [`pipeline::Refused`].
///
/// # Safety
/// `q` and `wait` are the app's valid queue and wait list; the job's handles are valid.
pub unsafe fn submit_async(
    engine: &'static Engine,
    job: Job,
    q: cl_command_queue,
    wait: &[cl_event],
    decided: bool,
    probe: Option<crate::log::schema::ProbeLog>,
) -> Result<cl_event, pipeline::Refused> {
    if !engine.pipeline.allowed(job.app_context, job.app_device) {
        return Err(pipeline::Refused::Synchronous(Box::new(job)));
    }
    engine
        .pipeline
        .submit(job, q, wait, (decided, probe), run_submitted)
}

/// The launch thread's work for one launch: waits for its start barrier, runs it balanced
/// (or whole on the app's device when it is not split), writes its record and lets the
/// app's queue go on.
fn run_submitted(s: pipeline::Submitted) {
    let Ok(e) = engine() else {
        s.open_gate(None, CL_COMPLETE);
        return;
    };
    let waited = if s.wait_start {
        pipeline::wait_polling(s.start)
    } else {
        Ok(())
    };
    if let Err(code) = waited {
        if background::get().exiting() {
            // the driver may be torn down: touch nothing
            std::mem::forget(s);
            return;
        }
        let mut rec = s.job.rec.clone();
        rec.forwarded = Some(crate::log::Forwarded {
            reason: format!("a command the launch waits for failed ({code}); not run").into(),
            decision_ns: 0,
            devices_ready_ms: devices_ready_ms(),
            launch_thread: true,
        });
        let seq = rec.seq;
        crate::log::pending(rec);
        crate::log::complete(seq, CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, None);
        s.open_gate(
            Some(&e.pipeline),
            CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST,
        );
        return;
    }
    crate::config::debug(|| {
        format!(
            "launch {}: on the launch thread{}",
            s.job.rec.seq,
            if s.wait_start {
                ""
            } else {
                " (quiet queue: its start barrier is not waited for)"
            }
        )
    });
    let outcome = background::get().driver_call(|| e.state.lock().run_async(e, &s.job, s.decided));
    let Some(outcome) = outcome else {
        std::mem::forget(s);
        return;
    };
    match outcome {
        launch::AsyncOutcome::Balanced(done) => {
            // the app's queue goes on first; the record is written while the app wakes up
            // (its commands that touch buffers wait for this thread, `Pipeline::settle`)
            let (rec, probe) = (s.job.rec.clone(), s.probe.clone());
            s.open_gate(Some(&e.pipeline), CL_COMPLETE);
            record_balanced(&rec, *done, probe, true);
        }
        launch::AsyncOutcome::Whole {
            reason,
            device_ns,
            status,
        } => {
            let mut rec = s.job.rec.clone();
            rec.forwarded = Some(crate::log::Forwarded {
                reason,
                decision_ns: 0,
                devices_ready_ms: devices_ready_ms(),
                launch_thread: true,
            });
            let seq = rec.seq;
            crate::log::pending(rec);
            crate::log::complete(
                seq,
                status,
                Some(crate::log::DeviceTimes {
                    submit: 0,
                    start: 0,
                    end: device_ns,
                }),
            );
            s.open_gate(
                Some(&e.pipeline),
                if status == CL_SUCCESS {
                    CL_COMPLETE
                } else {
                    status.min(-1)
                },
            );
        }
    }
}

/// Balance mode's process-wide state, one object reached from one place ([`balance`]):
/// the engine, the app's buffer epochs, the forwarded launches being measured, the app's own
/// build times and the program builds on the balance devices.
#[derive(Default)]
struct Balance {
    /// The engine, opened once; an error (no usable device) is kept and reported once.
    engine: OnceCell<Result<Engine, String>>,
    /// Set while a background thread opens the balance devices (see [`wait_for_background_start`]).
    starting: std::sync::atomic::AtomicBool,
    /// The background start of the engine is begun once ([`engine_for_launch`]).
    start_once: OnceCell<()>,
    /// Buffer epochs: bumped whenever the application writes a buffer, so replicas know they are
    /// stale. Absent = epoch 1.
    epochs: Mutex<FxHashMap<Key, u64>>,
    /// Host epochs: bumped only when a command other than a kernel launch writes a buffer
    /// (a write, fill, copy or map by the app: [`invalidate_by_host`]). A buffer whose epoch
    /// moved while its host epoch did not was written only by launches kept whole, which a
    /// split of those launches would have left on the devices (`decide`'s rent rule).
    /// Absent = host epoch 1.
    host_epochs: Mutex<FxHashMap<Key, u64>>,
    /// kernel (`Job::kernel_id`) → ns per work-group of its last forwarded launch measured on the app's
    /// device (`CLPRISM_SPLIT=auto` without a footprint; `sched::split`'s `t_whole`).
    /// Also the work-groups of that launch (a figure from a few work-groups overstates a
    /// GPU's time per work-group at many: [`opening_deferred`] measures again).
    forwarded: Mutex<FxHashMap<String, (f64, u64)>>,
    /// kernel (`Job::kernel_id`) → (retained event, work-groups) of its latest forwarded launch
    /// that is to be measured and has not been read yet (see [`watch_forwarded`]).
    pending: Mutex<FxHashMap<String, (usize, u64)>>,
    /// Program variant (`hash|options`) → how long the app's own `clBuildProgram` of it took,
    /// ns: the early decision's estimate of what trying a split first costs (a build on every
    /// balance device, see `decide`).
    app_build_ns: Mutex<FxHashMap<Variant, u64>>,
    /// Program variant (`hash|options`) → its builds on the balance devices, started in the
    /// background when the app builds the program ([`prebuild_in_background`]) or at its first
    /// balanced launch, whichever comes first (the other waits for it).
    prebuilt: Mutex<FxHashMap<String, std::sync::Arc<OnceCell<DevicePrograms>>>>,
    /// Program variant (`hash|options`) → whether its source can be split (the reason when
    /// not), found once ([`source_verdict`]).
    source_verdicts: Mutex<FxHashMap<String, Result<(), String>>>,
    /// Program variants whose [`source_verdict`] is being found in the background
    /// ([`source_verdict_ready`]).
    verdicts_pending: Mutex<rustc_hash::FxHashSet<String>>,
    /// App-device time of the launches long enough to split seen before the devices opened,
    /// ns: what splitting them could at most have saved ([`opening_deferred`]).
    open_credit_ns: Mutex<f64>,
    /// kernel (`Job::kernel_id`) → the (figure bits, work-groups) of its last "too short"
    /// verdict before the devices open, and that verdict's reason ([`short_reason`]).
    short_reasons: Mutex<FxHashMap<String, ShortReason>>,
    /// Set once the app built a program on a device with like siblings
    /// ([`early::note_build`]): first launches are then probed ([`early::probe_wanted`]).
    probing: std::sync::atomic::AtomicBool,
    /// App device (handle as an integer) → how many like siblings of it
    /// `CLPRISM_BALANCE_SIBLINGS` counts, found once per device.
    sibling_devices: Mutex<FxHashMap<usize, usize>>,
    /// Program variants for one launch shape (`hash|options|suffix`: programs that read
    /// `get_global_size` or `get_num_groups`) whose build on the balance devices was started
    /// in the background ([`build_shape_variant_in_background`]).
    shape_builds: Mutex<rustc_hash::FxHashSet<String>>,
    /// Programs (`hash|emulation options`) whose SPIR-V for the footprint derivation is being
    /// compiled in the background (`None`), was compiled there (`Some(true)`) or failed to
    /// compile (`Some(false)`) ([`compile_for_footprint`]).
    emu_compiles: Mutex<FxHashMap<String, Option<bool>>>,
    /// Keeps the opening's context creations apart from the app's compiles
    /// ([`open_gate`], [`app_compile`]).
    open_gate: open_gate::OpenGate,
}

static BALANCE: Lazy<Balance> = Lazy::new(Balance::default);

/// The process's balance-mode state.
fn balance() -> &'static Balance {
    &BALANCE
}

/// The app built `info`'s program in `ns` (balance mode records it for `decide`).
pub fn note_app_build(info: &ProgramInfo, ns: u64) {
    balance()
        .app_build_ns
        .lock()
        .insert((info.hash.clone(), info.options.clone()), ns);
}

/// How long the app's build of `program` took, ns (None: not seen, e.g. a binary). Keyed by
/// the variant's (hash, options) handles: read at every launch the early decision judges,
/// so no key text is formatted.
pub(crate) fn app_build_ns(program: &ProgramInfo) -> Option<u64> {
    balance()
        .app_build_ns
        .lock()
        .get(&(program.hash.clone(), program.options.clone()))
        .copied()
}

/// What the early split decision reads of a launch: borrowed from the hook, so that a launch
/// it keeps whole builds no [`Job`] (no copy of the record, the arguments or the program, no
/// epochs map, no context query).
pub struct EarlyLaunch<'a> {
    /// [`Job::id`].
    pub id: &'a std::sync::Arc<str>,
    /// The app's program.
    pub program: &'a ProgramInfo,
    /// Device of the application's queue.
    pub app_device: cl_device_id,
    /// Argument values as set at enqueue time.
    pub args: &'a [KernelArg],
    /// NDRange dimensions.
    pub work_dim: u32,
    /// Global size (work-items).
    pub global: [usize; 3],
    /// Local size (work-items; chosen by clprism when the app gave none).
    pub local: [usize; 3],
}

/// The early split decision (`CLPRISM_SPLIT=auto`, see `decide`), taken before the start
/// barrier: `Err` means forward the launch as the app made it, at forwarding's cost.
pub fn pre_decide(engine: &Engine, launch: &EarlyLaunch) -> Result<(), Forward> {
    engine.state.lock().pre_decide(engine, launch)
}

/// A kernel launch that was not split (forwarded, or run whole by the launch thread) may
/// have written buffer `m`: every replica of it is stale.
pub fn invalidate(m: Key) {
    let mut e = balance().epochs.lock();
    *e.entry(m).or_insert(1) += 1;
}

/// A command of the application other than a kernel launch (a write, fill, copy or map)
/// wrote buffer `m`: every replica of it is stale, and its host epoch moves too
/// ([`host_epoch`]).
pub fn invalidate_by_host(m: Key) {
    invalidate(m);
    let mut e = balance().host_epochs.lock();
    *e.entry(m).or_insert(1) += 1;
}

/// Current host epoch of buffer `m` (see [`invalidate_by_host`]).
pub fn host_epoch(m: Key) -> u64 {
    balance().host_epochs.lock().get(&m).copied().unwrap_or(1)
}

/// Measures a forwarded launch: once `ev` has completed, its device time (the app's queue
/// has profiling while clprism times launches) divided by `work_groups` becomes the kernel's
/// `t_whole` for `sched::split`. The event is kept (retained) and read when a later launch of
/// the kernel asks for the figure ([`forwarded_ns_per_work_group`]): by then the start barrier
/// of that launch has waited for it on an in-order queue, whereas a completion callback can
/// arrive after the decision (NVIDIA delivers them up to ~20 ms late). Without profiling
/// nothing is recorded, and the kernel keeps being forwarded (never slower than native).
///
/// While one measurement of the kernel is pending, a later one is not kept: the pending
/// (earlier) launch completes first on an in-order queue. Replacing it with the latest
/// launch, as before, never let the figure arrive while the app kept its queue full
/// (bench/launches.c on PoCL: the first 3,254 of 20,000 launches were all forwarded as
/// "measured", each with a profiled event; results/session13-2026-11-24).
///
/// # Safety
/// `ev` is a valid event of the forwarded launch.
pub unsafe fn watch_forwarded(ev: cl_event, request: (std::sync::Arc<str>, u64)) {
    let (kernel, wgs) = request;
    let mut pending = balance().pending.lock();
    if pending.contains_key(&*kernel) || cl::retain_event(ev).is_err() {
        return;
    }
    pending.insert(kernel.to_string(), (ev as usize, wgs));
}

/// The kernel's ns per work-group on the app's device from its latest measured forwarded
/// launch, reading a completed pending event first. `None`: none measured, or the launch has
/// not completed yet.
fn forwarded_ns_per_work_group(kernel: &str) -> Option<f64> {
    forwarded_figure(kernel).map(|f| f.0)
}

/// [`forwarded_ns_per_work_group`] with the work-groups of the launch it was measured on.
fn forwarded_figure(kernel: &str) -> Option<(f64, u64)> {
    let mut pending = balance().pending.lock();
    if let Some(&(ev, wgs)) = pending.get(kernel) {
        // SAFETY: an event retained by `watch_forwarded`, released once here.
        let status = unsafe { cl::event_status(ev as cl_event) };
        let done = matches!(status, Ok(s) if s <= CL_COMPLETE);
        if done || status.is_err() {
            pending.remove(kernel);
            if matches!(status, Ok(CL_COMPLETE)) && wgs > 0 {
                if let Some(ns) = event_device_ns(ev as cl_event).filter(|ns| *ns > 0) {
                    balance()
                        .forwarded
                        .lock()
                        .insert(kernel.to_string(), (ns as f64 / wgs as f64, wgs));
                }
            }
            // SAFETY: see above.
            unsafe { cl::release_event(ev as cl_event) };
        }
    }
    drop(pending);
    balance().forwarded.lock().get(kernel).copied()
}

/// The application is about to use buffer `m` (and, for a sub-buffer, its parent) in a
/// command of its own, or in a launch that is not split: the bytes that only balance devices
/// hold are copied into it first (the buffer directory, `CLPRISM_BALANCE_GATHER=lazy`).
/// Costs one atomic load while no buffer is tracked. A failed gather warns (the app then
/// sees the bytes its buffer had before the split launches; nothing else can be done
/// without the driver's cooperation).
pub fn gather_for_app(m: Key) {
    let Some(Ok(e)) = balance().engine.get() else {
        return;
    };
    e.pipeline.settle();
    if e.tracked.load(std::sync::atomic::Ordering::Acquire) == 0 {
        return;
    }
    let mut st = e.state.lock();
    for b in with_parent(m) {
        if let Err(why) = st.gather_for_app(e, b) {
            crate::config::warn(&format!("balance: {why}"));
        }
    }
}

/// The line printed at exit when the buffer directory was used: split launches that left
/// their results on the devices, bytes fetched between devices, gathers into the app's
/// buffers (`None`: the directory was not used).
pub fn directory_summary() -> Option<String> {
    let Some(Ok(e)) = balance().engine.get() else {
        return None;
    };
    e.traffic.summary()
}

/// Whether the buffer directory tracks any buffer now (the cheap check before
/// [`gather_for_app`] over a kernel's arguments).
pub fn directory_in_use() -> bool {
    matches!(balance().engine.get(), Some(Ok(e)) if e.tracked.load(std::sync::atomic::Ordering::Acquire) > 0)
}

/// Current epoch of buffer `m`.
pub fn epoch(m: Key) -> u64 {
    balance().epochs.lock().get(&m).copied().unwrap_or(1)
}

/// The application released buffer `m` for the last time: drop its replicas.
pub fn forget(m: Key) {
    if let Some(Ok(e)) = balance().engine.get() {
        // a launch still on the launch thread may use (and track) the buffer
        e.pipeline.settle();
    }
    balance().epochs.lock().remove(&m);
    balance().host_epochs.lock().remove(&m);
    if let Some(Ok(e)) = balance().engine.get() {
        e.state.lock().forget(e, m);
    }
}

/// The `QUEUED`, `SUBMIT` or `START` time (`param`) to report for `ev` when it is the event
/// of a launch that ran on clprism's launch thread (`exec::pipeline`): the launch's start
/// barrier's, so that `END − START` spans the launch as a kernel event's does. `None`: not
/// such an event, or another profiling query. `ev` is the app's event, only passed to the
/// driver.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn launch_profiling(ev: cl_event, param: cl_profiling_info) -> Option<u64> {
    if !matches!(
        param,
        CL_PROFILING_COMMAND_QUEUED | CL_PROFILING_COMMAND_SUBMIT | CL_PROFILING_COMMAND_START
    ) {
        return None;
    }
    let Some(Ok(e)) = balance().engine.get() else {
        return None;
    };
    let f = crate::loader::table().and_then(|t| t.clGetEventProfilingInfo)?;
    // SAFETY: a cl_ulong output of the app's (valid) event.
    let end = || unsafe { cl::info::<u64>(|n, p, r| f(ev, CL_PROFILING_COMMAND_END, n, p, r)) };
    let s = e.pipeline.span_of(ev, end)?;
    Some(match param {
        CL_PROFILING_COMMAND_QUEUED => s.queued,
        CL_PROFILING_COMMAND_SUBMIT => s.submit,
        _ => s.start,
    })
}

/// The app enqueued a command of its own on queue `q` (anything but a launch clprism ran on
/// its launch thread): the next balanced launch on `q` waits for its start barrier.
pub fn note_app_command(q: usize) {
    if let Some(Ok(e)) = balance().engine.get() {
        e.pipeline.note_app_command(q);
    }
}

/// The app got the event of a balanced launch it enqueued on queue `q`
/// (`pipeline::Pipeline::note_event_handed`).
pub fn note_event_handed(q: usize) {
    if let Some(Ok(e)) = balance().engine.get() {
        e.pipeline.note_event_handed(q);
    }
}

/// The app's `clFinish` of queue `q`: true when clprism served it, every launch on the queue
/// done and nothing else pending there but clprism's opened barriers
/// (`pipeline::Pipeline::finish_early`, `CLPRISM_BALANCE_EARLY_FINISH`); false: the caller
/// goes to the driver.
pub fn finish_early(q: usize) -> bool {
    if !crate::config::get().balance_early_finish {
        return false;
    }
    match balance().engine.get() {
        Some(Ok(e)) => e.pipeline.finish_early(q),
        _ => false,
    }
}

/// The line `CLPRISM_DEBUG=1` prints at exit on how the app's `clFinish` calls were served
/// (`None`: the devices were not opened).
pub fn finish_summary() -> Option<String> {
    let Some(Ok(e)) = balance().engine.get() else {
        return None;
    };
    let (served, driver) = e.pipeline.finish_counts();
    Some(format!(
        "balance: clFinish: {served} served by clprism (CLPRISM_BALANCE_EARLY_FINISH), {driver} by the driver"
    ))
}

/// The driver's `clFinish` of queue `q` returned `CL_SUCCESS`
/// (`pipeline::Pipeline::note_driver_finish`).
pub fn note_driver_finish(q: usize) {
    if let Some(Ok(e)) = balance().engine.get() {
        e.pipeline.note_driver_finish(q);
    }
}

/// Waits until clprism's launch thread has finished every balanced launch submitted so far
/// (`exec::pipeline`); returns at once when none is in flight. Called before an app command
/// that uses buffers outside a balanced launch.
pub fn settle_launches() {
    if let Some(Ok(e)) = balance().engine.get() {
        e.pipeline.settle();
    }
}

/// A forwarded launch of `kernel` ([`Job::kernel_id`]) over `work_groups` took `ns` on the
/// app's device: the kernel's `t_whole` for `sched::split` (as [`watch_forwarded`] records).
fn note_forwarded(kernel: &str, ns: u64, work_groups: u64) {
    if ns > 0 && work_groups > 0 {
        balance().forwarded.lock().insert(
            kernel.to_string(),
            (ns as f64 / work_groups as f64, work_groups),
        );
    }
}

/// Buffer `m` and, for a sub-buffer, its parent.
fn with_parent(m: Key) -> impl Iterator<Item = Key> {
    let parent = crate::registry::TABLES
        .buffers
        .with(m, |b| b.parent.map(|p| p.0))
        .flatten();
    std::iter::once(m).chain(parent)
}

/// The engine, started on first use. Errors (no usable device) are reported once.
pub fn engine() -> Result<&'static Engine, &'static str> {
    balance()
        .engine
        .get_or_init(|| {
            let cfg = crate::config::get();
            let sel = match cfg.devices.as_deref().map(devices::parse_selection) {
                None => devices::DeviceSelection::Gpu,
                Some(Ok(s)) => s,
                Some(Err(e)) => {
                    crate::config::warn(&crate::config::malformed(
                        "CLPRISM_DEVICES",
                        cfg.devices.as_deref().unwrap_or(""),
                        &format!("all|gpu|cpu|P:D,... ({e})"),
                        "gpu",
                    ));
                    devices::DeviceSelection::Gpu
                }
            };
            let fault = cfg
                .fault
                .as_deref()
                .and_then(|s| match devices::parse_fault(s) {
                    Ok(f) => Some(f),
                    Err(e) => {
                        crate::config::warn(&format!("CLPRISM_FAULT: {e}; no fault injected"));
                        None
                    }
                });
            let devs = devices::open(&sel, fault, &balance().open_gate).map_err(|e| {
                crate::config::error(&format!(
                    "balance mode unavailable: {e}; launches run natively"
                ));
                e
            })?;
            let (done_tx, done_rx) = unbounded();
            // SAFETY: plain extern "C" function, tied to this DSO by glibc.
            unsafe { libc::atexit(release_faults) };
            let ready_ms = crate::config::since_first_call().as_secs_f64() * 1e3;
            crate::config::debug(|| format!("engine ready at {ready_ms:.1} ms"));
            let (scheduler, boyer) = scheduler_settings(cfg);
            let pipeline = pipeline::Pipeline::default();
            pipeline.set_spin(cfg.balance_spin.unwrap_or_else(|| {
                devs.iter()
                    .all(|d| crate::registry::device::is_gpu_like(d.id))
            }));
            Ok(Engine {
                state: Mutex::new(launch::WorkerState::seeded(&devs)),
                devices: devs,
                ready_ms,
                scheduler,
                boyer,
                done_tx,
                done_rx,
                tracked: Default::default(),
                traffic: Default::default(),
                pipeline,
            })
        })
        .as_ref()
        .map_err(|e| e.as_str())
}

/// `CLPRISM_SCHEDULER` and `CLPRISM_BOYER`, parsed once; a malformed value warns once and
/// the default is used.
fn scheduler_settings(
    cfg: &crate::config::Config,
) -> (crate::sched::SchedulerKind, crate::sched::BoyerParams) {
    use crate::config::{malformed, warn};
    use crate::sched::parse::{parse_boyer_params, parse_scheduler};
    let scheduler = match cfg.scheduler.as_deref().map(|s| (s, parse_scheduler(s))) {
        None => crate::sched::SchedulerKind::Boyer,
        Some((_, Ok(k))) => k,
        Some((s, Err(e))) => {
            warn(&malformed("CLPRISM_SCHEDULER", s, &e, "boyer"));
            crate::sched::SchedulerKind::Boyer
        }
    };
    let boyer = match cfg.boyer.as_deref().map(|s| (s, parse_boyer_params(s))) {
        None => Default::default(),
        Some((_, Ok(p))) => p,
        Some((s, Err(e))) => {
            warn(&malformed("CLPRISM_BOYER", s, &e, "the paper's values"));
            Default::default()
        }
    };
    (scheduler, boyer)
}

/// Runs `work` on a named background thread (see [`background`] for how it ends at exit).
fn spawn_background(name: &str, work: impl FnOnce() + Send + 'static) {
    background::get().spawn(name, work);
}

/// A program built on every balance device (`cl_program` handles as integers, or why the
/// build failed), shared by the program's kernels.
pub(crate) type DevicePrograms = Vec<Result<usize, String>>;

/// Where the build of `program` (its variant without NDRange queries) on the balance devices
/// stands: `None` not started, `Some(false)` running, `Some(true)` done.
pub(crate) fn device_build(program: &ProgramInfo) -> Option<bool> {
    balance()
        .prebuilt
        .lock()
        .get(&format!("{}|{}", program.hash, program.options))
        .map(|c| c.get().is_some())
}

/// Starts building `code`, the variant `variant` of a program for one launch shape, on the
/// balance devices in the background, once per variant; its [`program_cell`] holds the
/// builds when done. The launch thread runs such a variant's launches whole meanwhile,
/// instead of making the app wait for the compiler: clpeak's `--compute-sp` program (its
/// kernels read `get_global_size`) took 2.48 s to build on four H200s on a machine's first
/// run, and every launch the app made meanwhile waited behind it (session 29, call d).
pub(crate) fn build_shape_variant_in_background(variant: &str, code: String, options: String) {
    if !balance().shape_builds.lock().insert(variant.to_string()) {
        return;
    }
    let cell = program_cell(variant);
    spawn_background("clprism-build", move || {
        if let Ok(e) = engine() {
            cell.get_or_init(|| build_on_devices(e, &code, &options));
        }
    });
}

/// The build cell of program variant `variant`.
pub(crate) fn program_cell(variant: &str) -> std::sync::Arc<OnceCell<DevicePrograms>> {
    balance()
        .prebuilt
        .lock()
        .entry(variant.to_string())
        .or_default()
        .clone()
}

/// Builds `source` with the app's `options` (plus `-cl-kernel-arg-info`, and
/// `-cl-nv-verbose` where the device reports registers) on every balance device, one thread
/// per device.
pub(crate) fn build_on_devices(e: &Engine, source: &str, options: &str) -> DevicePrograms {
    let options = format!("{options} -cl-kernel-arg-info");
    crate::config::debug(|| format!("build: {} devices", e.devices.len()));
    let items: Vec<_> = e
        .devices
        .iter()
        .map(|d| {
            let options = if d.reports_registers {
                format!("{options} {}", program::NV_VERBOSE_OPTION)
            } else {
                options.clone()
            };
            let key = binary_cache::key(source, &options, &d.name, &d.driver_version);
            (
                d.context as usize,
                d.id as usize,
                options,
                key,
                d.name.as_str(),
            )
        })
        .collect();
    let built = background::get().in_parallel("build", items, |(ctx, id, options, key, name)| {
        // SAFETY: building on clprism's own context.
        unsafe {
            build_cached(
                ctx as cl_context,
                id as cl_device_id,
                source,
                &options,
                &key,
                name,
            )
        }
    });
    crate::config::debug(|| "build: done".into());
    built
}

/// Builds `source` for `dev` from the binary cached under `key` when there is one the
/// driver accepts, else from source (saving its binary); returns the program as an integer.
///
/// # Safety
/// `ctx` holds `dev`; both are clprism's own.
unsafe fn build_cached(
    ctx: cl_context,
    dev: cl_device_id,
    source: &str,
    options: &str,
    key: &str,
    device_name: &str,
) -> Result<usize, String> {
    if let Some(bin) = binary_cache::load(key) {
        match cl::build_binary(ctx, dev, &bin, options) {
            Ok(p) => {
                crate::config::debug(|| {
                    format!("build: {device_name}: from the cached binary {key}")
                });
                return Ok(p as usize);
            }
            Err(e) => crate::config::debug(|| {
                format!("build: {device_name}: cached binary {key} rejected ({e}); building from source")
            }),
        }
    }
    let p = cl::build_source(ctx, dev, source, options)?;
    crate::config::debug(|| format!("build: {device_name}: from source"));
    if let Some(bin) = cl::program_binary(p) {
        if let Err(e) = binary_cache::save(key, &bin) {
            crate::config::warn_once_per(
                &format!("balance: program binary not saved in the cache: {e}"),
                "binary-cache-save",
            );
        }
    }
    Ok(p as usize)
}

/// The app built `info`'s program: build it on the balance devices in the background (the
/// engine is started first when needed), so its first balanced launch does not wait for
/// the driver's compiler (Black-Scholes: 65 ms on four H200s). Only source programs; the
/// variant built is the one for a null offset (as nearly every app launches; see
/// [`program::RangeQueries`]) without the global size baked in: the kernels that read no
/// global size or group count take it (those that do get a variant per launch shape,
/// `launch::Worker::build`; clpeak builds one program for all its tests, and only its
/// bandwidth kernels read `get_global_size`).
pub fn prebuild_in_background(info: &ProgramInfo) {
    let crate::registry::tables::ProgramOrigin::Source(src) = &info.origin else {
        return;
    };
    // a program that includes files is checked on the background thread (the preprocessor
    // runs there, not in the app's clBuildProgram)
    let unsplittable = |text: &str| program::unsplittable_reason(text).is_some();
    let includes = program::includes_files(src);
    if !includes && unsplittable(src) {
        return;
    }
    let (hash, source) = (info.hash.clone(), src.clone());
    let options = info.options.to_string();
    if balance().engine.get().is_none() {
        balance()
            .starting
            .store(true, std::sync::atomic::Ordering::Release);
    }
    spawn_background("clprism-build", move || {
        let started = engine();
        balance()
            .starting
            .store(false, std::sync::atomic::Ordering::Release);
        let text = if includes {
            match program::inspected_text(&hash, &source, &options) {
                Ok(t) if !unsplittable(&t) => t,
                _ => return,
            }
        } else {
            source.clone()
        };
        let queries = program::RangeQueries {
            size: false,
            ..program::RangeQueries::of(&text)
        };
        let (variant, code) = if queries.any() {
            let (suffix, code) = queries.variant(&source, [0; 3], [0; 3]);
            (format!("{hash}|{options}|{suffix}"), code)
        } else {
            (format!("{hash}|{options}"), source.to_string())
        };
        if let Ok(e) = started {
            program_cell(&variant).get_or_init(|| build_on_devices(e, &code, &options));
        }
    });
}

/// A probe found a launch of `info`'s program on `app_device` long enough to open the balance
/// devices: compile the program's SPIR-V for the mini-emulator in the background now, into
/// the emulator's on-disk cache, once per program and options. The launch thread's first
/// footprint derivation of each of its kernels then reads it from there instead of running
/// the compiler while every device waits (PolyBench gemm, 2mm and 3mm on 2 H200s: the
/// footprint phase took 58-70 ms of the 131-178 ms before the first chunks; session 25).
/// A program without source, or a failed compile, leaves that to the launch thread as before.
pub fn compile_for_footprint(info: &ProgramInfo, app_device: cl_device_id) {
    let crate::registry::tables::ProgramOrigin::Source(src) = &info.origin else {
        return;
    };
    let options = emulation_options(info, app_device);
    let key = format!("{}|{options}", info.hash);
    {
        let mut started = balance().emu_compiles.lock();
        if started.contains_key(&key) {
            return;
        }
        started.insert(key.clone(), None);
    }
    let source = src.clone();
    spawn_background("clprism-emu-compile", move || {
        let t = std::time::Instant::now();
        let r = crate::emu::compile_source(&source, &options, &frontend_options());
        balance().emu_compiles.lock().insert(key, Some(r.is_ok()));
        crate::config::debug(|| {
            format!(
                "footprint: SPIR-V compiled ahead in {:.1} ms{}",
                t.elapsed().as_secs_f64() * 1e3,
                r.err().map_or(String::new(), |e| format!(" (failed: {e})"))
            )
        });
    });
}

/// The build options the mini-emulator compiles `info` with for a launch on `app_device`:
/// the app's, plus the device's compiler defines (`Job::emulation_options`).
fn emulation_options(info: &ProgramInfo, app_device: cl_device_id) -> String {
    let d = crate::registry::device::compiler_defines(app_device);
    if d.is_empty() {
        info.options.to_string()
    } else {
        format!("{} {d}", info.options)
    }
}

/// Whether [`compile_for_footprint`] compiled `info` for a launch on `app_device` already:
/// its footprint derivation then only emulates the sampled work-groups.
pub(crate) fn compiled_ahead(info: &ProgramInfo, app_device: cl_device_id) -> bool {
    emu_compile_state(info, app_device) == Some(Some(true))
}

/// Where [`compile_for_footprint`] of `info` for a launch on `app_device` stands: `None` not
/// begun, `Some(None)` running, `Some(Some(ok))` ended.
pub(crate) fn emu_compile_state(
    info: &ProgramInfo,
    app_device: cl_device_id,
) -> Option<Option<bool>> {
    let key = format!("{}|{}", info.hash, emulation_options(info, app_device));
    balance().emu_compiles.lock().get(&key).copied()
}

/// Whether a launch of a kernel of the source program `program` can be split: `Err` with
/// the reason when its text (after `#include`s) has something a split cannot reproduce
/// ([`program::unsplittable_reason`]) or cannot be read. Found once per program variant:
/// scanning the source at every launch cost CLBlast's ~100 KB programs tens of µs per launch.
pub fn source_verdict(program: &ProgramInfo, source: &std::sync::Arc<str>) -> Result<(), String> {
    let key = format!("{}|{}", program.hash, program.options);
    if let Some(v) = balance().source_verdicts.lock().get(&key) {
        return v.clone();
    }
    let v = program::inspected_text(&program.hash, source, &program.options).and_then(|text| {
        match program::unsplittable_reason(&text) {
            Some(r) => Err(r.to_string()),
            None => Ok(()),
        }
    });
    balance().source_verdicts.lock().insert(key, v.clone());
    v
}

/// [`source_verdict`] without waiting for the preprocessor when `CLPRISM_BALANCE_EARLY` is on:
/// `None` while the verdict of a source that `#include`s files is found in the background
/// (begun here once per program variant), and the launch is forwarded meanwhile. Reading the
/// includes runs the toolchain's preprocessor, a process of its own: Rodinia srad's first
/// launch on an H100 host waited 69.6 ms for it on the app's thread.
pub fn source_verdict_ready(
    program: &ProgramInfo,
    source: &std::sync::Arc<str>,
) -> Option<Result<(), String>> {
    let key = format!("{}|{}", program.hash, program.options);
    if let Some(v) = balance().source_verdicts.lock().get(&key) {
        return Some(v.clone());
    }
    if !crate::config::get().balance_early || !program::includes_files(source) {
        return Some(source_verdict(program, source));
    }
    if balance().verdicts_pending.lock().insert(key) {
        let (p, s) = (program.clone(), source.clone());
        spawn_background("clprism-verdict", move || {
            let _ = source_verdict(&p, &s);
        });
    }
    None
}

/// A launch [`opening_deferred`] forwards without opening the balance devices.
pub struct Deferred {
    /// For the record's `schedule.fallback`.
    pub reason: Reason,
    /// Measure the forwarded launch (the kernel has no figure on the app's device yet).
    pub measure: bool,
}

/// The shortest launch on the app's device for which `CLPRISM_SPLIT=auto` opens the balance
/// devices, ns: a split over n devices saves at most `t (1 - 1/n)` and costs at least
/// [`decide::ASSUMED_SPLIT_FLOOR_NS`], so with two devices nothing below twice the floor can
/// pay (Boyer's "should we split" test, dissertation §4.3, with the ideal split).
pub const OPEN_MIN_LAUNCH_NS: f64 = 2.0 * decide::ASSUMED_SPLIT_FLOOR_NS;

/// `CLPRISM_SPLIT=auto` with `CLPRISM_BALANCE_EARLY` on: why the launch of `kernel`
/// ([`kernel_id`]) over `work_groups` work-groups is forwarded without opening the balance
/// devices, or `None` when they are open, opening, or now worth opening (then the opening
/// and the build on them of the program `program` names start in the background here).
///
/// Opening the devices and building the app's programs on them costs CPU time while the app
/// runs and, at exit, a wait for a driver call in flight; an app whose launches are all too
/// short to split, or that launches each kernel once (the first launch is always measured
/// whole), pays it for nothing (PolyBench-ACC on three PoCL devices: 2.4-5.3x native before
/// this rule). So the devices open only once the measured launches long enough to split add
/// up to what opening costs ([`open_credit_short`]). `always` and `CLPRISM_BALANCE_EARLY=off`
/// keep opening at the app's first build or launch.
///
/// The "too short" verdict is a function of the kernel's figure and the launch's
/// work-groups: its text is made once per (kernel, figure, work-groups) and shared
/// ([`Balance::short_reasons`]), so a launch kept whole there allocates nothing.
pub fn opening_deferred(
    kernel: &str,
    work_groups: u64,
    program: impl FnOnce() -> Option<Key>,
) -> Option<Deferred> {
    static MEASURING: OnceCell<Reason> = OnceCell::new();
    let cfg = crate::config::get();
    if cfg.split != crate::config::SplitPolicy::Auto || !cfg.balance_early {
        return None;
    }
    let b = balance();
    if b.engine.get().is_some() || b.starting.load(std::sync::atomic::Ordering::Acquire) {
        return None;
    }
    let measuring = forwarded_figure(kernel).and_then(|(f, measured_wgs)| {
        // Measured on fewer than half as many work-groups: a GPU runs a small launch's
        // work-groups side by side, so its time per work-group overstates a larger launch
        // (Rodinia nw on an H100: 2 work-groups took 12.7 us, which made 400 work-groups
        // 2.5 ms; they took 10 us). This launch is measured instead (once: a measurement in
        // flight is not replaced).
        (work_groups <= 2 * measured_wgs).then_some(f)
    });
    let Some(ns_per_wg) = measuring else {
        return Some(Deferred {
            reason: reason(
                &MEASURING,
                "kept whole on the app's device, measured before the balance devices are \
                 opened (CLPRISM_SPLIT=auto opens them once launches long enough to split add \
                 up to CLPRISM_BALANCE_OPEN_COST)",
            ),
            measure: true,
        });
    };
    let t = ns_per_wg * work_groups as f64;
    if t < OPEN_MIN_LAUNCH_NS {
        return Some(Deferred {
            reason: short_reason(kernel, ns_per_wg, work_groups, t),
            measure: false,
        });
    }
    if let Some(reason) = open_credit_short(t, cfg.balance_open_cost_ms as f64 * 1e6) {
        return Some(Deferred {
            reason,
            measure: false,
        });
    }
    crate::config::debug(|| {
        format!(
            "balance: opening the devices for {kernel} ({:.0} us)",
            t / 1e3
        )
    });
    if let Some(p) = program().and_then(|p| crate::registry::TABLES.programs.get(p)) {
        prebuild_in_background(&p);
    }
    None
}

/// Why a launch of `t_ns` (at least [`OPEN_MIN_LAUNCH_NS`]) on the app's device does not open
/// the balance devices yet, or `None` when it does. Launches under the minimum never count (no
/// split of them can pay; [`short_reason`]). The others add their time to a credit, and the devices open once it reaches `cost_ns`
/// (`CLPRISM_BALANCE_OPEN_COST`): a split saves less than the launch's time, so an app that
/// exits right after the opening paid at most what splitting could have gained by then, the
/// ski-rental bound (rent until the rent paid equals the price; Karlin et al., "Competitive
/// randomized algorithms for nonuniform problems", 1994) that `decide` also applies to a
/// kernel's first split. Rodinia on one H100 plus PoCL's CPU device, before: pathfinder's 5
/// launches and particlefilter's 36 opened the devices and the apps ran 1.28x and 1.22x
/// native, their exits waiting for the opening in flight.
fn open_credit_short(t_ns: f64, cost_ns: f64) -> Option<Reason> {
    let mut credit = balance().open_credit_ns.lock();
    *credit += t_ns;
    let so_far = *credit;
    // the figures change every launch: the text is made by the log writer
    (so_far < cost_ns).then(|| {
        Reason::deferred(move || {
            format!(
                "kept whole on the app's device: the balance devices open once launches long \
                 enough to split add up to what opening them costs ({:.1} of {:.0} ms so far, \
                 CLPRISM_BALANCE_OPEN_COST)",
                so_far / 1e6,
                cost_ns / 1e6
            )
        })
    })
}

/// The "too short for a split to pay" reason of [`opening_deferred`] for a launch of
/// `kernel` taking `t` ns (`ns_per_wg` × `work_groups`), made once per (kernel, figure,
/// work-groups).
fn short_reason(kernel: &str, ns_per_wg: f64, work_groups: u64, t: f64) -> Reason {
    let key = (ns_per_wg.to_bits(), work_groups);
    let mut memo = balance().short_reasons.lock();
    if let Some((k, r)) = memo.get(kernel) {
        if *k == key {
            return r.clone();
        }
    }
    let r: Reason = format!(
        "kept whole on the app's device: {:.1} us there, too short for a split to pay \
         (under {:.0} us); the balance devices are not opened",
        t / 1e3,
        OPEN_MIN_LAUNCH_NS / 1e3
    )
    .into();
    match memo.get_mut(kernel) {
        Some(e) => *e = (key, r.clone()),
        None => {
            memo.insert(kernel.to_string(), (key, r.clone()));
        }
    }
    r
}

/// When the balance devices became ready (ms since the first OpenCL call; the record's
/// `schedule.devices_ready_ms`), or `None` while they are not open (or failed to open).
/// A lookup, no wait: every launch record after the opening carries it, forwarded or not.
pub fn devices_ready_ms() -> Option<f64> {
    match balance().engine.get() {
        Some(Ok(e)) => Some((e.ready_ms * 1e3).round() / 1e3),
        _ => None,
    }
}

/// The engine for a launch, without making the app wait for the devices to open when
/// `CLPRISM_BALANCE_EARLY` is on: `None` while a background start is under way (begun here
/// if nothing began it), and the caller forwards the launch. Opening a context costs about
/// 0.1 s per H200 (4×H200: 0.37–0.45 s, results/gpu-2026-11-22f), more than a
/// transfer-bound app's whole run of launches. With the option off, the first launch opens
/// the devices itself and waits.
pub fn engine_for_launch() -> Option<Result<&'static Engine, &'static str>> {
    if let Some(e) = balance().engine.get() {
        return Some(e.as_ref().map_err(|e| e.as_str()));
    }
    if !crate::config::get().balance_early {
        return Some(engine());
    }
    balance().start_once.get_or_init(|| {
        if balance().engine.get().is_none()
            && !balance()
                .starting
                .load(std::sync::atomic::Ordering::Acquire)
        {
            balance()
                .starting
                .store(true, std::sync::atomic::Ordering::Release);
            spawn_background("clprism-engine", || {
                let _ = engine();
                balance()
                    .starting
                    .store(false, std::sync::atomic::Ordering::Release);
            });
        }
    });
    balance()
        .engine
        .get()
        .map(|e| e.as_ref().map_err(|e| e.as_str()))
}

/// Waits until a background start of the engine (begun by [`prebuild_in_background`] or
/// [`early::open_at_context`]) has opened its devices. The hooks of the app's context
/// creations call it, so that a second context of the app is not created beside clprism's
/// (the app's compiles go through [`app_compile`] instead): on NVIDIA's driver (4×H200),
/// creating contexts on one thread while the app built a program on another crashed the
/// process in 11 of 25 runs (results/gpu-2026-11-22f).
pub fn wait_for_background_start() {
    if balance()
        .starting
        .load(std::sync::atomic::Ordering::Acquire)
    {
        let _ = engine();
    }
}

/// Runs the app's compile `call` (`clBuildProgram`, `clCompileProgram`, `clLinkProgram`)
/// once no context creation of the opening is in flight ([`open_gate`]): the creations not
/// yet begun wait for the compile instead. On NVIDIA's driver a context created during an
/// app's compile crashed the process (results/gpu-2026-11-22f); before the gate the compile
/// waited for the whole opening.
///
/// While the devices open, `CLPRISM_DEBUG` prints where each such compile begins and ends
/// (inside the gate, so the lines are in the order of the events), and how long it waited.
pub fn app_compile<T>(call: impl FnOnce() -> T) -> T {
    let (out, waited) = balance().open_gate.app_compile(|| {
        let opening = early::devices_opening();
        if opening {
            crate::config::debug(|| "open: the app's compile begins".into());
        }
        let out = call();
        if opening {
            crate::config::debug(|| "open: the app's compile ends".into());
        }
        out
    });
    if waited >= std::time::Duration::from_millis(1) {
        crate::config::debug(|| {
            format!(
                "open: the app's compile waited {:.1} ms for a context creation in flight",
                waited.as_secs_f64() * 1e3
            )
        });
    }
    out
}

extern "C" fn release_faults() {
    // Let a device blocked by fault injection drain, so the driver can shut down.
    if let Some(Ok(e)) = balance().engine.get() {
        for d in &e.devices {
            if let Some(ev) = d.block_event {
                // SAFETY: clprism's own user event.
                unsafe {
                    let _ = cl::set_user_event(ev, -1);
                }
            }
        }
    }
}

/// Tag passed to a chunk's event callback.
#[derive(Clone)]
struct ChunkTag {
    launch: u64,
    chunk: u64,
    device: usize,
    global_device: usize,
    claimed: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

/// The kernel's device time of a completed event (profiling queue), ns.
pub(crate) fn event_device_ns(ev: cl_event) -> Option<u64> {
    let f = crate::loader::table().and_then(|t| t.clGetEventProfilingInfo)?;
    // SAFETY: cl_ulong outputs of a completed event.
    unsafe {
        let s: Option<u64> = cl::info(|n, p, r| f(ev, CL_PROFILING_COMMAND_START, n, p, r));
        let e: Option<u64> = cl::info(|n, p, r| f(ev, CL_PROFILING_COMMAND_END, n, p, r));
        Some(e?.saturating_sub(s?))
    }
}

/// Chunk event callback: reads the kernel's device time and posts the completion.
extern "C" fn chunk_callback(ev: cl_event, status: cl_int, user: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        // SAFETY: `user` is the Box<ChunkTag> leaked at enqueue time, reclaimed exactly once.
        let tag = unsafe { Box::from_raw(user as *mut ChunkTag) };
        let device_ns = if status >= 0 {
            event_device_ns(ev)
        } else {
            None
        };
        if let Some(Ok(e)) = balance().engine.get() {
            let _ = e.done_tx.send(ChunkDone {
                launch: tag.launch,
                chunk: tag.chunk,
                device: tag.device,
                global_device: tag.global_device,
                status,
                device_ns,
                claimed: tag.claimed.clone(),
            });
        }
        // SAFETY: the callback owns the chunk's event.
        unsafe { cl::release_event(ev) };
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_devices_open_once_long_launches_add_up_to_the_opening_cost() {
        let first = open_credit_short(400e3, 1e6).expect("0.4 of 1 ms");
        assert!(
            first.text().contains("0.4 of 1 ms so far"),
            "{}",
            first.text()
        );
        let second = open_credit_short(400e3, 1e6).expect("0.8 of 1 ms");
        assert!(
            second.text().contains("0.8 of 1 ms so far"),
            "{}",
            second.text()
        );
        // the first reason keeps its own figures
        assert!(first.text().contains("0.4 of 1 ms"));
        assert!(open_credit_short(400e3, 1e6).is_none());
    }
}
