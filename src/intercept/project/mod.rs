//! `CLPRISM_MODE=project` (DESIGN.md §5-§6; Panwar et al. §IV-C, §IV-D): every kernel
//! launch gets an `emulation` record (statistics of one emulated work-group, the first) and
//! a `projection` record (projected time on every profiled device, ranked).
//!
//! The launch is never delayed beyond a device-side copy:
//!
//! 1. At the launch, when no earlier launch of the same (program, build options, kernel,
//!    NDRange, `__local` argument sizes, work-group) key was emulated or is being emulated,
//!    each buffer argument is copied (`clEnqueueCopyBuffer`, on the app's queue, before the
//!    kernel, with the app's wait list) into a buffer clprism owns in the app's context:
//!    the snapshot holds the contents as they were before the launch. The total size of
//!    these device copies is bounded by `CLPRISM_EMU_SNAPSHOT_MAX` (default 256 MiB):
//!    above it the launch is not emulated and the record says so. Buffers the kernel only
//!    reads are deferred instead (copy on write, `snapshot`); a copy that does not fit
//!    under the cap waits, bounded, for held bytes to come back (`budget`), then falls
//!    back to another shape's statistics (`backlog`). On an out-of-order queue
//!    the kernel additionally waits for the copies.
//! 2. The [`EmuWorker`] thread compiles the program (through the emulator's on-disk cache,
//!    modules kept per program), waits for the copies, reads the small snapshots (up to
//!    1 MiB) back whole on a queue of its own and releases them; larger ones stay on the
//!    device and the emulation reads them page by page (64 KiB, `emu::paged`) as the
//!    work-group first touches them, so host memory is the pages touched, not the buffer
//!    (`emulation.snapshot_bytes_read`); their copies are released as soon as the
//!    emulation ends. It emulates work-group (0,0,0) and projects the statistics
//!    with [`crate::model::project_all`] on every profile of `CLPRISM_PROFILES` (else the
//!    built-in `profiles/` folder of the source tree), marking the profile of the launch's
//!    own device ([`crate::model::find_profile`]).
//! 3. The log writer holds the launch record until these two objects are attached
//!    ([`crate::log::hold`]); at exit it waits at most 10 s for them.
//!
//! The launch itself is timed as in log mode (`CLPRISM_DEVICE_TIMING`), so a record can
//! hold both the measured `device_ns` on the launch's device and the model's time on every
//! profile; the *anchored* time on another profile (measured × the model's ratio between
//! the two devices, Habitat, Yu et al. ATC'21) is derived from them by the readers
//! ([`crate::log::schema::Projection::anchored`]): the device time arrives on the log
//! writer's thread after this module attached the projection, and writing the derived
//! figures would only lengthen the compact log.
//!
//! Repeated launches of a key take the earlier result at once (no snapshot, `"reused":
//! true`). Nothing here returns an error to the application: every failure becomes a
//! `reason` in the record.
//!
//! Record keys (read by other tools; keep them):
//! `"emulation": {"status": "ok"|"reused"|"unavailable"|"error", "reason": <string, absent
//! when ok>, "reused": bool, "stats": <WorkGroupStats, absent when none>}` and
//! `"projection": <ProjectionSet> + {"launch_device_profile": <name or null>}` (absent when
//! there are no statistics; with an `"error"` string when no profile could be used).
//! A kept result carries its key's id (`"key"` in both objects): the log writer then writes
//! it once, in a definition line, and each launch as a reference (`crate::log::compact`,
//! schema `clprism.launch/2`).

use super::launch::Launch;
use crate::emu::worker::{DeferredJob, EmuKey, EmuOutcome, EmuWorker};
use crate::emu::{self, ArgKind, ArgValue, EmuConfig, EmuError, Module, WorkGroupStats};
use crate::log::schema::{self, Emulation, EmulationStatus, Projection};
use crate::model::{self, ModelOptions, Profile};
use crate::registry::tables::{buffer_named_by, KernelArg, Key, ProgramOrigin, UNMAPPED_BINARY};
use crate::registry::TABLES;
use once_cell::sync::Lazy;
use opencl_sys::*;
use parking_lot::Mutex;
use serde_json::Value;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

mod backlog;
mod budget;
mod snapshot;
pub use snapshot::before_write;
use snapshot::SnapshotData;

/// A program's emulator module and, per kernel, which arguments it may store through
/// ([`emu::writes`]; `None`: unknown, any).
struct Loaded {
    module: Arc<Module>,
    /// Per kernel and parameter: may it store through it, may it load through it
    /// ([`emu::writes::accessed_params`]).
    written: HashMap<String, Option<Vec<bool>>>,
    read: HashMap<String, Option<Vec<bool>>>,
    /// How the source was compiled (`None`: IL, or an older cache entry).
    compile_path: Option<emu::CompilePath>,
}

type ModuleCache = HashMap<String, Arc<once_cell::sync::OnceCell<Result<Arc<Loaded>, EmuError>>>>;
type ResultCache = HashMap<EmuKey, (Emulation, Option<Projection>)>;
type ReusedMap = HashMap<(EmuKey, Key), Arc<crate::log::SharedExtra>>;
type InflightMap = HashMap<EmuKey, Vec<Waiter>>;

/// A launch waiting for an emulation in flight.
struct Waiter {
    seq: u64,
    /// Its device (for `projection.launch_device_profile`).
    device: Key,
    /// When the launch has another key whose snapshot could not be taken (backlog): that
    /// key, to be given the statistics of the one waited for.
    reshape: Option<Box<backlog::Reshape>>,
}

impl Waiter {
    fn plain(seq: u64, device: Key) -> Waiter {
        Waiter {
            seq,
            device,
            reshape: None,
        }
    }
}

/// Jobs the emulation queue holds; further first launches are not emulated (reason given).
const QUEUE_CAPACITY: usize = 256;
/// Emulation budgets in project mode: the default instruction budget, 2 s of wall time.
const EMU_CFG: EmuConfig = EmuConfig {
    warp_width: 32,
    instr_budget: 200_000_000,
    time_budget_ns: 2_000_000_000,
    skip_write_free_loops: false,
};

/// Project mode's process-wide state, one object reached from one place ([`projector`]).
struct Projector {
    /// The emulation thread, started at the first emulated launch.
    worker: Lazy<Result<EmuWorker, String>>,
    /// Loaded modules per program (hash + build options).
    modules: Mutex<ModuleCache>,
    /// Finished attachments per key: the `emulation` object (as first written) and the
    /// projection without `launch_device_profile`.
    results: Mutex<ResultCache>,
    /// Ready-made attachments of reused launches per (key, launch device).
    reused: Mutex<ReusedMap>,
    /// Keys with a job in the queue, and the launches (sequence number, device) waiting for
    /// that job's result.
    inflight: Mutex<InflightMap>,
    /// Per kernel (program hash, app build options, kernel name): the arguments it may
    /// store through (`None`: unknown), as the last launch that loaded its module found.
    written: Mutex<HashMap<String, Option<Vec<bool>>>>,
    /// Profile name of each device (by handle) that launched something.
    device_profile: Mutex<HashMap<Key, Option<String>>>,
    /// Bytes of snapshots held now, and the bounded wait for them.
    budget: budget::Budget,
    /// Next id of an emulation key whose result is kept (the log writes that result once
    /// and refers to it by this id: `emulation.key`, `projection.key`).
    next_key_id: AtomicU64,
    /// The device profiles projected onto, loaded at first use.
    profiles: Lazy<Result<Vec<Profile>, String>>,
}

fn start_worker() -> Result<EmuWorker, String> {
    EmuWorker::start(QUEUE_CAPACITY).map_err(|e| e.to_string())
}

static PROJECTOR: Lazy<Projector> = Lazy::new(|| Projector {
    worker: Lazy::new(start_worker),
    modules: Default::default(),
    results: Default::default(),
    reused: Default::default(),
    inflight: Default::default(),
    written: Default::default(),
    device_profile: Default::default(),
    budget: Default::default(),
    next_key_id: AtomicU64::new(0),
    profiles: Lazy::new(load_profiles),
});

/// The process's project-mode state.
fn projector() -> &'static Projector {
    &PROJECTOR
}

/// The profile folder: `CLPRISM_PROFILES`, else `profiles/` of the source tree this library
/// was built from.
pub fn profiles_dir() -> PathBuf {
    crate::exec::best::profiles_dir()
}

fn load_profiles() -> Result<Vec<Profile>, String> {
    let d = profiles_dir();
    match model::load_dir(&d) {
        Ok(v) if v.is_empty() => Err(format!("no device profile in {}", d.display())),
        Ok(v) => Ok(v),
        Err(e) => Err(format!("device profiles: {e}")),
    }
}

/// What the launch path does in project mode; see the module docs.
pub enum Plan {
    /// Nothing more to do (the record already carries its attachments or a reason).
    Done,
    /// A job to submit after the kernel was enqueued.
    Job(Box<Pending>),
}

/// A job prepared at the launch.
pub struct Pending {
    seq: u64,
    /// The app's queue (flushed after the kernel so that the snapshot copies start).
    queue: cl_command_queue,
    key: EmuKey,
    info: LaunchInfo,
    /// Eager copies (their events are also appended to the kernel's wait list on
    /// out-of-order queues) and deferred buffers.
    snaps: snapshot::Snapshots,
    /// The app's wait list plus the copy events (out-of-order queues only).
    wait: Vec<cl_event>,
}

// SAFETY: OpenCL handles may be used from any thread.
unsafe impl Send for Pending {}

/// Everything the worker needs about the launch.
#[derive(Clone)]
struct LaunchInfo {
    program_key: String,
    origin: ProgramOrigin,
    options: Arc<str>,
    args: Vec<Option<KernelArg>>,
    context: Key,
    device: Key,
    global: Vec<u64>,
    local: Vec<u64>,
    local_assumed: bool,
    dynamic_local: u64,
}

/// The `emulation` record of a launch whose emulation did not run (or failed).
fn emulation_failed(status: EmulationStatus, reason: String) -> Emulation {
    Emulation::failed(status, reason, false)
}

fn status_of(e: &EmuError) -> EmulationStatus {
    match e {
        EmuError::NoToolchain(_) | EmuError::Unsupported(_) => EmulationStatus::Unavailable,
        _ => EmulationStatus::Error,
    }
}

fn unavailable(rec: &mut crate::log::LaunchRecord, reason: String) {
    rec.set_emulation(&emulation_failed(EmulationStatus::Unavailable, reason));
}

/// Largest divisor of `g` not above `cap`.
fn divisor_at_most(g: u64, cap: u64) -> u64 {
    (1..=cap.min(g).max(1))
        .rev()
        .find(|d| g.is_multiple_of(*d))
        .unwrap_or(1)
}

/// Called on the launch path before the kernel is enqueued. Adds the attachments to `rec`
/// at once when the key was emulated before; otherwise takes the snapshot and holds the
/// record. Never fails: problems go into the record.
///
/// # Safety
/// `launch` holds the app's live handles.
pub unsafe fn before_launch(launch: &Launch, rec: &mut crate::log::LaunchRecord) -> Plan {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| plan(launch, rec)));
    match r {
        Ok(Ok(p)) => p,
        Ok(Err(reason)) => {
            unavailable(rec, reason);
            Plan::Done
        }
        Err(_) => {
            rec.set_emulation(&emulation_failed(
                EmulationStatus::Error,
                "internal error in project mode".into(),
            ));
            Plan::Done
        }
    }
}

unsafe fn plan(launch: &Launch, rec: &mut crate::log::LaunchRecord) -> Result<Plan, String> {
    let (q, k, wait) = (launch.queue, launch.kernel, launch.wait_list());
    let worker = projector()
        .worker
        .as_ref()
        .map_err(|e| format!("no emulation thread: {e}"))?;
    let kinfo = TABLES
        .kernels
        .get(k as Key)
        .ok_or("kernel created before clprism could see it")?;
    let pinfo = TABLES
        .programs
        .get(kinfo.program)
        .ok_or("program created before clprism could see it")?;
    let qinfo = TABLES.queues.get(q as Key);
    let (context, device, ooo) = match &qinfo {
        Some(i) => (
            i.context,
            i.device,
            i.app_properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0,
        ),
        None => (
            crate::exec::cl::queue_context(q).map_err(|e| e.to_string())? as Key,
            crate::exec::cl::queue_device(q).map_err(|e| e.to_string())? as Key,
            true,
        ),
    };
    let n = launch.work_dim;
    let g = Launch::dims(&launch.global, n);
    if g.contains(&0) {
        return Err("empty NDRange".into());
    }
    let (l, local_assumed) = match &launch.local {
        None => {
            let mut l = vec![1u64; n as usize];
            l[0] = divisor_at_most(g[0], 64);
            (l, true)
        }
        Some(l) => (Launch::dims(l, n), false),
    };
    let off = launch.offset.map(|o| Launch::dims(&o, n));
    let mut locals = Vec::new();
    let mut dynamic_local = 0u64;
    for a in &kinfo.args {
        if let Some(KernelArg::Local(s)) = a {
            locals.push(s.to_string());
            dynamic_local += *s as u64;
        }
    }
    // the app's build options plus the macros the launch's device predefines (clang's SPIR
    // target lacks `__OPENCL_VERSION__`), so the emulated source is the device's
    let defines = crate::registry::device::compiler_defines(device as cl_device_id);
    let options: Arc<str> = if defines.is_empty() {
        pinfo.options.clone()
    } else {
        format!("{} {defines}", pinfo.options).into()
    };
    let key = EmuKey {
        program: format!("{}\u{1f}{}\u{1f}{}", pinfo.hash, options, locals.join(",")),
        kernel: kinfo.name.to_string(),
        shape: emu::LaunchShape::new(&g, &l, off.as_deref()),
        group: [0; 3],
    };
    // Emulated before (or given another shape's result): attach the earlier result now.
    if worker.contains(&key) || projector().results.lock().contains_key(&key) {
        if let Some(entries) = reused_entries(&key, device) {
            rec.shared_extra = Some(entries);
            return Ok(Plan::Done);
        }
    }
    let info = LaunchInfo {
        program_key: format!("{}\u{1f}{}", pinfo.hash, options),
        origin: pinfo.origin.clone(),
        options,
        args: kinfo.args.clone(),
        context,
        device,
        global: g,
        local: l,
        local_assumed,
        dynamic_local,
    };
    // Being emulated: wait for that result (no snapshot, no job).
    {
        let mut inflight = projector().inflight.lock();
        if let Some(waiting) = inflight.get_mut(&key) {
            waiting.push(Waiter::plain(rec.seq, device));
            crate::log::hold(rec.seq);
            return Ok(Plan::Done);
        }
        // `done` keeps a key's result before it ends the key's in-flight state, so a result
        // kept since the check above is seen here, under the in-flight lock (without this
        // second look the launch was emulated again and logged without its key)
        if let Some(entries) = reused_entries(&key, device) {
            drop(inflight);
            rec.shared_extra = Some(entries);
            return Ok(Plan::Done);
        }
        inflight.insert(key.clone(), Vec::new());
    }
    // The module (loaded once per program, through the emulator's on-disk cache) tells
    // which buffers the kernel may write: only those are copied before the launch.
    let (written, read) = match loaded(&info) {
        Ok(l) => {
            let w = l.written.get(&key.kernel).cloned().flatten();
            projector()
                .written
                .lock()
                .insert(written_key(&pinfo, &kinfo.name), w.clone());
            (w, l.read.get(&key.kernel).cloned().flatten())
        }
        Err(e) => {
            // nothing to emulate with: no snapshot; the outcome is kept for the key
            crate::log::hold(rec.seq);
            let o = EmuOutcome {
                result: Err(e),
                reused: false,
            };
            done(rec.seq, &key, &info, o, None);
            return Ok(Plan::Done);
        }
    };
    let access = snapshot::ArgAccess {
        written: written.as_deref(),
        read: read.as_deref(),
    };
    let snaps = match snapshot::take(q, context, &info.args, access, wait) {
        Ok(s) => s,
        Err(reason) => {
            // backlog: take another shape's statistics of the same kernel when there are
            // some (held first: they may be released at once, or from the worker thread)
            crate::log::hold(rec.seq);
            if !backlog::borrow(&key, &info, rec.seq, &reason, Default::default()) {
                let e = emulation_failed(EmulationStatus::Unavailable, reason);
                finish_key(&key, &e, None);
                crate::log::release(rec.seq, attachments(&e, None, 0));
            }
            return Ok(Plan::Done);
        }
    };
    let mut pending = Pending {
        seq: rec.seq,
        queue: q,
        key,
        info,
        snaps,
        wait: Vec::new(),
    };
    if ooo && !pending.snaps.copy_events.is_empty() {
        pending.wait = wait.to_vec();
        pending.wait.extend_from_slice(&pending.snaps.copy_events);
    }
    crate::log::hold(rec.seq);
    Ok(Plan::Job(Box::new(pending)))
}

fn written_key(p: &crate::registry::tables::ProgramInfo, kernel: &str) -> String {
    format!("{}\u{1f}{}\u{1f}{kernel}", p.hash, p.options)
}

/// A kernel launch is about to be forwarded in project mode: the deferred snapshots of the
/// buffers it may write (all its buffer arguments unless a launch of the kernel loaded its
/// module) are copied first ([`before_write`]).
///
/// # Safety
/// `launch` holds the app's live handles.
pub unsafe fn before_kernel(launch: &Launch) {
    if !snapshot::any_pending() {
        return;
    }
    let _ = std::panic::catch_unwind(|| {
        let Some(kinfo) = TABLES.kernels.get(launch.kernel as Key) else {
            return;
        };
        let written = TABLES.programs.get(kinfo.program).and_then(|p| {
            projector()
                .written
                .lock()
                .get(&written_key(&p, &kinfo.name))
                .cloned()
                .flatten()
        });
        for (i, a) in kinfo.args.iter().enumerate() {
            let Some(h) = a.as_ref().and_then(buffer_named_by) else {
                continue;
            };
            if written
                .as_ref()
                .is_none_or(|w| w.get(i).copied().unwrap_or(true))
            {
                before_write(launch.queue, h);
            }
        }
    });
}

/// The attachments of a reused launch of `key` on `device`, built and serialized once and
/// shared by every such record, so a repeated launch costs no JSON copying.
fn reused_entries(key: &EmuKey, device: Key) -> Option<Arc<crate::log::SharedExtra>> {
    let k = (key.clone(), device);
    if let Some(e) = projector().reused.lock().get(&k) {
        return Some(e.clone());
    }
    let (e, p) = projector().results.lock().get(key).cloned()?;
    let entries = Arc::new(crate::log::SharedExtra::new(reused_attachments(
        e, p, device,
    )));
    projector().reused.lock().insert(k, entries.clone());
    Some(entries)
}

/// Ends the in-flight state of `key`: the launches that waited for it get `emulation`
/// (marked reused) and `projection`.
fn finish_key(key: &EmuKey, emulation: &Emulation, projection: Option<&Projection>) {
    let waiting = projector().inflight.lock().remove(key).unwrap_or_default();
    for w in waiting {
        match w.reshape {
            // a kept result: one serialized object shared by every waiting launch
            None if emulation.key.is_some() => match reused_entries(key, w.device) {
                Some(shared) => crate::log::release_shared(w.seq, shared),
                None => {
                    let extra =
                        reused_attachments(emulation.clone(), projection.cloned(), w.device);
                    crate::log::release(w.seq, extra);
                }
            },
            None => {
                let extra = reused_attachments(emulation.clone(), projection.cloned(), w.device);
                crate::log::release(w.seq, extra);
            }
            Some(r) => backlog::reshaped(*r, w.seq, emulation),
        }
    }
}

/// The `emulation` (marked reused) and `projection` (with the launch device's profile)
/// objects of a launch that takes an earlier launch's result.
fn reused_attachments(
    mut e: Emulation,
    p: Option<Projection>,
    device: Key,
) -> Vec<(String, Value)> {
    e.reused = true;
    if e.status == Some(EmulationStatus::Ok) {
        e.status = Some(EmulationStatus::Reused);
    }
    attachments(&e, p, device)
}

/// The `emulation` and `projection` attachments of a launch on `device`, as the log takes
/// them.
fn attachments(e: &Emulation, p: Option<Projection>, device: Key) -> Vec<(String, Value)> {
    let mut extra = vec![(schema::KEY_EMULATION.to_string(), schema::to_value(e))];
    if let Some(mut p) = p {
        p.launch_device_profile = device_profile(device);
        extra.push((schema::KEY_PROJECTION.to_string(), schema::to_value(&p)));
    }
    extra
}

impl Pending {
    /// The wait list to give the kernel: the app's, plus the snapshot copies on an
    /// out-of-order queue.
    pub fn kernel_wait<'a>(&'a self, app: &'a [cl_event]) -> &'a [cl_event] {
        if self.wait.is_empty() {
            app
        } else {
            &self.wait
        }
    }
}

/// Called after the kernel enqueue: submits the job (`enqueued`), or cleans up.
pub fn after_launch(plan: Plan, enqueued: bool) {
    let Plan::Job(mut p) = plan else { return };
    let fail = |p: &mut Pending, reason: String| {
        snapshot::release(&mut p.snaps);
        let e = emulation_failed(EmulationStatus::Unavailable, reason);
        finish_key(&p.key, &e, None);
        crate::log::release(p.seq, attachments(&e, None, 0));
    };
    if !enqueued {
        // the record itself was written as enqueue_failed (never held)
        fail(
            &mut p,
            "the launch emulated for this kernel and shape failed to enqueue".into(),
        );
        return;
    }
    let Ok(worker) = projector().worker.as_ref() else {
        fail(&mut p, "no emulation thread".into());
        return;
    };
    // SAFETY: the app's queue, valid during its enqueue call.
    unsafe { snapshot::register(p.queue, &p.snaps) };
    if !p.snaps.eager.is_empty() || !p.snaps.deferred.is_empty() {
        // the worker waits for the copies and the marker: make sure they are submitted even
        // if the app never flushes (a flush is invisible to the app)
        // SAFETY: as above.
        let _ = unsafe { crate::exec::cl::flush(p.queue) };
    }
    let seq = p.seq;
    let key = p.key.clone();
    let info = p.info.clone();
    // the eager copies' bytes return to the budget once the emulation has ended
    let bytes = std::mem::take(&mut p.snaps.bytes);
    let counters = p.snaps.counters.clone();
    let job = DeferredJob {
        key: key.clone(),
        prepare: Box::new(move || prepare(*p)),
        cfg: EMU_CFG,
        done: Box::new(move |o| {
            done(seq, &key, &info, o, Some((&counters, bytes)));
            projector().budget.unhold(bytes);
        }),
    };
    if let Err(job) = worker.submit_deferred(job) {
        // dropping the prepare closure releases the snapshot (`Drop for Pending`)
        let DeferredJob { key, prepare, .. } = *job;
        drop(prepare);
        projector().budget.unhold(bytes);
        let e = emulation_failed(
            EmulationStatus::Unavailable,
            format!("emulation queue full ({QUEUE_CAPACITY} launches waiting)"),
        );
        finish_key(&key, &e, None);
        crate::log::release(seq, attachments(&e, None, 0));
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // clprism's own handles, released once (drained by whoever used them)
        snapshot::release(&mut self.snaps);
    }
}

/// The program's module and write analysis, loaded once (the first caller compiles it
/// through the emulator's on-disk cache; concurrent callers wait for that).
fn loaded(info: &LaunchInfo) -> Result<Arc<Loaded>, EmuError> {
    let cell = projector()
        .modules
        .lock()
        .entry(info.program_key.clone())
        .or_default()
        .clone();
    cell.get_or_init(|| {
        let (words, compile_path) = match &info.origin {
            ProgramOrigin::Source(src) => {
                emu::compile_source_path(src, &info.options, &crate::exec::frontend_options())
            }
            ProgramOrigin::Il(il) => emu::spirv_words(il).map(|w| (w, None)),
            ProgramOrigin::Binary(_) => Err(EmuError::Unsupported(format!(
                "{UNMAPPED_BINARY}: no source or SPIR-V to emulate"
            ))),
            ProgramOrigin::Linked(_) => Err(EmuError::Unsupported(
                "program made by clLinkProgram (separate compilation)".into(),
            )),
            ProgramOrigin::Other => Err(EmuError::Unsupported(
                "built-in kernels or unknown program origin".into(),
            )),
        }?;
        let module = Arc::new(emu::load_module(&words)?);
        let access = emu::writes::accessed_by_kernel_words(&words);
        let per = |f: fn(&emu::writes::Access) -> bool| -> HashMap<String, Option<Vec<bool>>> {
            access
                .iter()
                .map(|(k, v)| (k.clone(), v.as_ref().map(|v| v.iter().map(f).collect())))
                .collect()
        };
        let (written, read) = (per(|a| a.written), per(|a| a.read));
        Ok(Arc::new(Loaded {
            module,
            written,
            read,
            compile_path,
        }))
    })
    .clone()
}

/// Worker side: snapshot read-back (small buffers whole, large ones page by page during the
/// emulation), module, argument values.
fn prepare(mut p: Pending) -> Result<(Arc<Module>, Vec<ArgValue>), EmuError> {
    // SAFETY: clprism's own snapshot handles.
    let snaps = unsafe { snapshot::read_back(&mut p.snaps, p.info.context, p.info.device) };
    // the copy events; eager copies not read back yet are released with `p`
    snapshot::release(&mut p.snaps);
    let mut snaps = snaps.map_err(EmuError::Internal)?;
    // argument index that took each buffer's contents (a buffer passed twice is cloned)
    let mut placed: HashMap<Key, usize> = HashMap::new();
    let m = loaded(&p.info)?.module.clone();
    let kinfo = m.kernel(&p.key.kernel).ok_or_else(|| {
        EmuError::BadLaunch(format!("no kernel {} in the emulated module", p.key.kernel))
    })?;
    if kinfo.args.len() != p.info.args.len() {
        return Err(EmuError::BadLaunch(format!(
            "kernel takes {} arguments, {} set",
            kinfo.args.len(),
            p.info.args.len()
        )));
    }
    let mut args: Vec<ArgValue> = Vec::with_capacity(kinfo.args.len());
    for (i, (ai, a)) in kinfo.args.iter().zip(&p.info.args).enumerate() {
        let a = a
            .as_ref()
            .ok_or_else(|| EmuError::BadLaunch(format!("argument {i} not set")))?;
        let v = match (ai.kind, a) {
            (ArgKind::Local, KernelArg::Local(s)) => ArgValue::Local(*s),
            (ArgKind::Global | ArgKind::Constant, KernelArg::Value(b)) => {
                let b = b.as_slice();
                let h = if b.len() == std::mem::size_of::<usize>() {
                    usize::from_ne_bytes(b.try_into().unwrap_or_default())
                } else {
                    0
                };
                if h == 0 {
                    ArgValue::Scalar(vec![0; 8])
                } else {
                    // a buffer passed twice gets two copies (a paged one fetches its pages
                    // again rather than copying the whole allocation)
                    match (snaps.get_mut(&h), placed.get(&h)) {
                        (Some(SnapshotData::Whole(v)), None) => {
                            placed.insert(h, i);
                            ArgValue::Buffer(std::mem::take(v))
                        }
                        (Some(SnapshotData::Paged(n, f)), _) => {
                            ArgValue::Paged(emu::paged::PagedBuffer::new(*n, f.clone()))
                        }
                        (_, Some(&j)) => args[j].clone(),
                        (None, None) => {
                            return Err(EmuError::Unsupported(format!(
                                "argument {i} is not a buffer clprism knows (image or pipe?)"
                            )))
                        }
                    }
                }
            }
            (_, KernelArg::Value(b)) => ArgValue::Scalar(b.as_slice().to_vec()),
            (kind, KernelArg::Local(_)) => {
                return Err(EmuError::BadLaunch(format!(
                    "argument {i} ({kind:?}) was set as __local"
                )))
            }
        };
        args.push(v);
    }
    Ok((m, args))
}

/// The launch device's profile name (cached per device).
fn device_profile(device: Key) -> Option<String> {
    if let Some(p) = projector().device_profile.lock().get(&device) {
        return p.clone();
    }
    let name = projector().profiles.as_ref().ok().and_then(|ps| {
        let id = crate::exec::best::device_identity(device as cl_device_id)?;
        model::find_profile(ps, &id).map(|p| p.name.clone())
    });
    projector()
        .device_profile
        .lock()
        .insert(device, name.clone());
    name
}

/// How the launch's program was compiled for the emulation, when known.
fn compile_path_of(info: &LaunchInfo) -> Option<emu::CompilePath> {
    let cell = projector().modules.lock().get(&info.program_key).cloned()?;
    cell.get()?.as_ref().ok()?.compile_path
}

/// Projection of `stats` for the launch (without `launch_device_profile`).
fn projection_record(stats: &WorkGroupStats, info: &LaunchInfo) -> Projection {
    let static_local = projector()
        .modules
        .lock()
        .get(&info.program_key)
        .and_then(|c| c.get().cloned())
        .and_then(|l| l.ok().map(|l| l.module.local_static))
        .unwrap_or(0);
    let err = |e: String| Projection {
        error: Some(e),
        ..Default::default()
    };
    let profiles = match projector().profiles.as_ref() {
        Ok(p) => p,
        Err(e) => return err(e.clone()),
    };
    // whole-kernel read set: the sizes of the buffers the work-group reads
    let sizes: Vec<(u32, u64)> = info
        .args
        .iter()
        .enumerate()
        .filter_map(|(i, a)| {
            let h = buffer_named_by(a.as_ref()?)?;
            TABLES.buffers.with(h, |x| (i as u32, x.size as u64))
        })
        .collect();
    let shape = match crate::exec::best::launch_shape(
        &info.global,
        &info.local,
        static_local + info.dynamic_local,
        stats,
        &sizes,
    ) {
        Ok(s) => s,
        Err(e) => return err(e),
    };
    match model::project_all(
        std::slice::from_ref(stats),
        &shape,
        profiles,
        &ModelOptions::recommended(),
    ) {
        Ok(set) => Projection {
            set,
            // the shape projected with, so `clprism accuracy` re-projects the same launch
            launch_shape: Some(shape),
            ..Default::default()
        },
        Err(e) => err(e.to_string()),
    }
}

/// Worker side, after the emulation: build and attach the records.
/// `snap`: the launch's snapshot counters and the bytes copied at the launch (`None` when
/// no snapshot was taken).
fn done(
    seq: u64,
    key: &EmuKey,
    info: &LaunchInfo,
    o: EmuOutcome,
    snap: Option<(&snapshot::Counters, u64)>,
) {
    if o.reused {
        // the worker's cache answered: the launch takes the kept result under its key
        let kept = projector().results.lock().get(key).cloned();
        if let (Some((e, p)), Some(shared)) = (kept, reused_entries(key, info.device)) {
            finish_key(key, &e, p.as_ref());
            crate::log::release_shared(seq, shared);
            return;
        }
    }
    let (mut emulation, mut projection) = match &o.result {
        Ok(st) => {
            let mut e = Emulation::with_stats(st.clone(), o.reused);
            if info.local_assumed {
                e.local_assumed = Some(info.local.clone());
            }
            e.compile_path = compile_path_of(info).map(Into::into);
            (e, Some(projection_record(st, info)))
        }
        Err(err) => (
            Emulation::failed(status_of(err), err.to_string(), o.reused),
            None,
        ),
    };
    if let (false, Some((c, _)), Err(err)) = (o.reused, snap, &o.result) {
        let nonzero = |a: &AtomicU64| Some(a.load(Ordering::Relaxed)).filter(|x| *x > 0);
        let note = backlog::Note {
            lost: nonzero(&c.lost),
            waited_ns: nonzero(&c.waited_ns),
        };
        if note.lost.is_some() && backlog::borrow(key, info, seq, &err.to_string(), note) {
            // a deferred buffer was overwritten without a copy (a transient loss): the
            // launch and its key take another shape's statistics, as in the backlog
            return;
        }
    }
    if let (false, Some((c, eager))) = (o.reused, snap) {
        let nonzero = |a: &AtomicU64| Some(a.load(Ordering::Relaxed)).filter(|x| *x > 0);
        emulation.snapshot_bytes = Some(eager);
        emulation.snapshot_bytes_read = Some(c.read_back.load(Ordering::Relaxed));
        emulation.snapshot_deferred_bytes = nonzero(&c.deferred);
        emulation.snapshot_later_bytes = nonzero(&c.later);
        emulation.snapshot_lost_bytes = nonzero(&c.lost);
        emulation.snapshot_wait_ns = nonzero(&c.waited_ns);
        emulation.snapshot_held_ns = nonzero(&c.held_ns);
    }
    // keep the first result of a key for later launches (not a transient failure), under
    // an id the log refers to (written once: `log::compact`)
    if !o.reused && !matches!(o.result, Err(EmuError::Internal(_))) {
        let id = projector().next_key_id.fetch_add(1, Ordering::Relaxed);
        emulation.key = Some(id);
        if let Some(p) = projection.as_mut() {
            p.key = Some(id);
        }
        projector()
            .results
            .lock()
            .insert(key.clone(), (emulation.clone(), projection.clone()));
    }
    finish_key(key, &emulation, projection.as_ref());
    crate::log::release(seq, attachments(&emulation, projection, info.device));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_local_divides_global() {
        assert_eq!(divisor_at_most(1024, 64), 64);
        assert_eq!(divisor_at_most(100, 64), 50);
        assert_eq!(divisor_at_most(7, 64), 7);
        assert_eq!(divisor_at_most(97 * 2, 64), 2);
    }

    #[test]
    fn emulation_record_keys() {
        let e = schema::to_value(&emulation_failed(
            EmulationStatus::Unavailable,
            "why".into(),
        ));
        assert_eq!(
            e,
            serde_json::json!({"status": "unavailable", "reason": "why", "reused": false})
        );
        let st = WorkGroupStats::default();
        let e = schema::to_value(&Emulation::with_stats(st, false));
        assert_eq!(e["status"], "ok");
        assert!(!e.as_object().unwrap().contains_key("reason"));
        assert!(e["stats"]["instructions"].is_object());
    }
}
