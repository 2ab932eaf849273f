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
//!    the snapshot holds the contents as they were before the launch. The total size is
//!    bounded by `CLPRISM_EMU_SNAPSHOT_MAX` (default 256 MiB): above it the launch is not
//!    emulated and the record says so. On an out-of-order queue the kernel additionally
//!    waits for the copies.
//! 2. The [`EmuWorker`] thread compiles the program (through the emulator's on-disk cache,
//!    modules kept per program), waits for the copies, reads the snapshots back on a queue
//!    of its own, releases them, emulates work-group (0,0,0) and projects the statistics
//!    with [`crate::model::project_all`] on every profile of `CLPRISM_PROFILES` (else the
//!    built-in `profiles/` folder of the source tree), marking the profile of the launch's
//!    own device ([`crate::model::find_profile`]).
//! 3. The log writer holds the launch record until these two objects are attached
//!    ([`crate::log::hold`]); at exit it waits at most 10 s for them.
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

#![allow(clippy::too_many_arguments)]

use crate::emu::worker::{DeferredJob, EmuKey, EmuOutcome, EmuWorker};
use crate::emu::{self, ArgKind, ArgValue, EmuConfig, EmuError, Module, WorkGroupStats};
use crate::model::{self, ModelOptions, Profile};
use crate::registry::tables::{KernelArg, Key, ProgramOrigin, UNMAPPED_BINARY};
use crate::registry::TABLES;
use once_cell::sync::Lazy;
use opencl_sys::*;
use parking_lot::Mutex;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

type ModuleCache = HashMap<String, Result<Arc<Module>, EmuError>>;
type ResultCache = HashMap<EmuKey, (Value, Option<Value>)>;
type ReusedMap = HashMap<(EmuKey, Key), Arc<crate::log::SharedExtra>>;
type InflightMap = HashMap<EmuKey, Vec<(u64, Key)>>;

/// Jobs the emulation queue holds; further first launches are not emulated (reason given).
const QUEUE_CAPACITY: usize = 256;
/// Longest wait of the worker for a snapshot copy to finish.
const SNAPSHOT_WAIT: Duration = Duration::from_secs(30);
/// Emulation budgets in project mode: the default instruction budget, 2 s of wall time.
const EMU_CFG: EmuConfig = EmuConfig {
    warp_width: 32,
    instr_budget: 200_000_000,
    time_budget_ns: 2_000_000_000,
    skip_write_free_loops: false,
};

static WORKER: Lazy<Result<EmuWorker, String>> =
    Lazy::new(|| EmuWorker::start(QUEUE_CAPACITY).map_err(|e| e.to_string()));
/// Loaded modules per program (hash + build options).
static MODULES: Lazy<Mutex<ModuleCache>> = Lazy::new(Default::default);
/// Finished attachments per key: the `emulation` object (as first written) and the
/// projection without `launch_device_profile`.
static RESULTS: Lazy<Mutex<ResultCache>> = Lazy::new(Default::default);
/// Ready-made attachments of reused launches per (key, launch device).
static REUSED: Lazy<Mutex<ReusedMap>> = Lazy::new(Default::default);
/// Keys with a job in the queue, and the launches (sequence number, device) waiting for
/// that job's result.
static INFLIGHT: Lazy<Mutex<InflightMap>> = Lazy::new(Default::default);
/// Profile name of each device (by handle) that launched something.
static DEVICE_PROFILE: Lazy<Mutex<HashMap<Key, Option<String>>>> = Lazy::new(Default::default);
/// Bytes of snapshots held now.
static SNAPSHOT_BYTES: AtomicU64 = AtomicU64::new(0);
static PROFILES: Lazy<Result<Vec<Profile>, String>> = Lazy::new(load_profiles);

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
    snaps: Vec<Snapshot>,
    /// Copy events, also appended to the kernel's wait list on out-of-order queues.
    copy_events: Vec<cl_event>,
    /// The app's wait list plus the copy events (out-of-order queues only).
    wait: Vec<cl_event>,
    bytes: u64,
}

// SAFETY: OpenCL handles may be used from any thread.
unsafe impl Send for Pending {}

struct Snapshot {
    /// The app's buffer handle.
    src: Key,
    /// clprism's copy.
    copy: cl_mem,
    size: usize,
}

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

fn emulation_json(
    status: &str,
    reason: Option<String>,
    reused: bool,
    stats: Option<&WorkGroupStats>,
) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("status".into(), json!(status));
    if let Some(r) = reason {
        m.insert("reason".into(), json!(r));
    }
    m.insert("reused".into(), json!(reused));
    if let Some(s) = stats {
        m.insert(
            "stats".into(),
            serde_json::to_value(s).unwrap_or(Value::Null),
        );
    }
    Value::Object(m)
}

fn status_of(e: &EmuError) -> &'static str {
    match e {
        EmuError::NoToolchain(_) | EmuError::Unsupported(_) => "unavailable",
        _ => "error",
    }
}

fn unavailable(rec: &mut crate::log::LaunchRecord, reason: String) {
    rec.extra.insert(
        "emulation".into(),
        emulation_json("unavailable", Some(reason), false, None),
    );
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
/// The arguments are those of `clEnqueueNDRangeKernel` (pointers valid for `work_dim`).
pub unsafe fn before_launch(
    q: cl_command_queue,
    k: cl_kernel,
    work_dim: u32,
    offset: *const usize,
    global: *const usize,
    local: *const usize,
    wait: &[cl_event],
    rec: &mut crate::log::LaunchRecord,
) -> Plan {
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        plan(q, k, work_dim, offset, global, local, wait, rec)
    }));
    match r {
        Ok(Ok(p)) => p,
        Ok(Err(reason)) => {
            unavailable(rec, reason);
            Plan::Done
        }
        Err(_) => {
            rec.extra.insert(
                "emulation".into(),
                emulation_json(
                    "error",
                    Some("internal error in project mode".into()),
                    false,
                    None,
                ),
            );
            Plan::Done
        }
    }
}

unsafe fn plan(
    q: cl_command_queue,
    k: cl_kernel,
    work_dim: u32,
    offset: *const usize,
    global: *const usize,
    local: *const usize,
    wait: &[cl_event],
    rec: &mut crate::log::LaunchRecord,
) -> Result<Plan, String> {
    let worker = WORKER
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
    let n = work_dim as usize;
    let g: Vec<u64> = (0..n).map(|i| *global.add(i) as u64).collect();
    if g.contains(&0) {
        return Err("empty NDRange".into());
    }
    let (l, local_assumed) = if local.is_null() {
        let mut l = vec![1u64; n];
        l[0] = divisor_at_most(g[0], 64);
        (l, true)
    } else {
        (
            (0..n).map(|i| *local.add(i) as u64).collect::<Vec<_>>(),
            false,
        )
    };
    let off: Option<Vec<u64>> =
        (!offset.is_null()).then(|| (0..n).map(|i| *offset.add(i) as u64).collect());
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
    // Emulated before: attach the earlier result now.
    if worker.contains(&key) {
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
        let mut inflight = INFLIGHT.lock();
        if let Some(waiting) = inflight.get_mut(&key) {
            waiting.push((rec.seq, device));
            crate::log::hold(rec.seq);
            return Ok(Plan::Done);
        }
        inflight.insert(key.clone(), Vec::new());
    }
    let mut pending = Pending {
        seq: rec.seq,
        queue: q,
        key,
        info,
        snaps: Vec::new(),
        copy_events: Vec::new(),
        wait: Vec::new(),
        bytes: 0,
    };
    if let Err(reason) = snapshot(q, &mut pending, wait) {
        let e = emulation_json("unavailable", Some(reason.clone()), false, None);
        finish_key(&pending.key, &e, None);
        return Err(reason);
    }
    if ooo && !pending.copy_events.is_empty() {
        pending.wait = wait.to_vec();
        pending.wait.extend_from_slice(&pending.copy_events);
    }
    crate::log::hold(rec.seq);
    Ok(Plan::Job(Box::new(pending)))
}

/// The attachments of a reused launch of `key` on `device`, built and serialized once and
/// shared by every such record, so a repeated launch costs no JSON copying.
fn reused_entries(key: &EmuKey, device: Key) -> Option<Arc<crate::log::SharedExtra>> {
    let k = (key.clone(), device);
    if let Some(e) = REUSED.lock().get(&k) {
        return Some(e.clone());
    }
    let (e, p) = RESULTS.lock().get(key).cloned()?;
    let mut extra = serde_json::Map::new();
    attach_reused(&mut extra, e, p, device);
    let entries = Arc::new(crate::log::SharedExtra::new(extra.into_iter().collect()));
    REUSED.lock().insert(k, entries.clone());
    Some(entries)
}

/// Ends the in-flight state of `key`: the launches that waited for it get `emulation`
/// (marked reused) and `projection`.
fn finish_key(key: &EmuKey, emulation: &Value, projection: Option<&Value>) {
    let waiting = INFLIGHT.lock().remove(key).unwrap_or_default();
    for (seq, device) in waiting {
        let mut extra = serde_json::Map::new();
        attach_reused(&mut extra, emulation.clone(), projection.cloned(), device);
        crate::log::release(seq, extra.into_iter().collect());
    }
}

fn attach_reused(
    extra: &mut serde_json::Map<String, Value>,
    mut e: Value,
    p: Option<Value>,
    device: Key,
) {
    if let Some(o) = e.as_object_mut() {
        o.insert("reused".into(), json!(true));
        if o.get("status").and_then(Value::as_str) == Some("ok") {
            o.insert("status".into(), json!("reused"));
        }
    }
    extra.insert("emulation".into(), e);
    if let Some(mut p) = p {
        let dp = device_profile(device);
        if let Some(o) = p.as_object_mut() {
            o.insert("launch_device_profile".into(), json!(dp));
        }
        extra.insert("projection".into(), p);
    }
}

/// Copies every buffer argument into a clprism-owned buffer on the app's queue.
unsafe fn snapshot(q: cl_command_queue, p: &mut Pending, wait: &[cl_event]) -> Result<(), String> {
    let rt = crate::exec::cl::rt().map_err(|e| e.to_string())?;
    let copy = rt
        .clEnqueueCopyBuffer
        .ok_or("clEnqueueCopyBuffer unavailable")?;
    let mut handles: Vec<(Key, usize)> = Vec::new();
    for a in p.info.args.iter().flatten() {
        if let KernelArg::Value(b) = a {
            let b = b.as_slice();
            if b.len() == std::mem::size_of::<cl_mem>() {
                let h = usize::from_ne_bytes(b.try_into().unwrap_or_default());
                if h != 0 && !handles.iter().any(|x| x.0 == h) {
                    if let Some(size) = TABLES.buffers.with(h, |i| i.size) {
                        handles.push((h, size));
                    }
                }
            }
        }
    }
    let total: u64 = handles.iter().map(|h| h.1 as u64).sum();
    let cap = crate::config::get().emu_snapshot_max;
    if total > cap {
        return Err(format!(
            "buffer snapshot of {total} bytes exceeds CLPRISM_EMU_SNAPSHOT_MAX={cap}"
        ));
    }
    let held = SNAPSHOT_BYTES.fetch_add(total, Ordering::AcqRel);
    p.bytes = total;
    if held + total > cap {
        release_snapshot(p);
        return Err(format!(
            "buffer snapshot of {total} bytes: {held} bytes of earlier snapshots are still held (CLPRISM_EMU_SNAPSHOT_MAX={cap})"
        ));
    }
    let wp = if wait.is_empty() {
        std::ptr::null()
    } else {
        wait.as_ptr()
    };
    for (h, size) in handles {
        let m = match crate::exec::cl::create_buffer(p.info.context as cl_context, size) {
            Ok(m) => m,
            Err(e) => {
                release_snapshot(p);
                return Err(format!("snapshot buffer: {e}"));
            }
        };
        p.snaps.push(Snapshot {
            src: h,
            copy: m,
            size,
        });
        let mut ev: cl_event = std::ptr::null_mut();
        let r = copy(
            q,
            h as cl_mem,
            m,
            0,
            0,
            size,
            wait.len() as u32,
            wp,
            &mut ev,
        );
        if r != CL_SUCCESS {
            release_snapshot(p);
            return Err(format!("snapshot copy: clEnqueueCopyBuffer returned {r}"));
        }
        p.copy_events.push(ev);
    }
    Ok(())
}

/// Releases the snapshot buffers and events and returns their bytes to the budget.
fn release_snapshot(p: &mut Pending) {
    // SAFETY: clprism's own handles, released once.
    unsafe {
        for e in p.copy_events.drain(..) {
            crate::exec::cl::release_event(e);
        }
        for s in p.snaps.drain(..) {
            crate::exec::cl::release_mem(s.copy);
        }
    }
    SNAPSHOT_BYTES.fetch_sub(std::mem::take(&mut p.bytes), Ordering::AcqRel);
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
        release_snapshot(p);
        let e = emulation_json("unavailable", Some(reason), false, None);
        finish_key(&p.key, &e, None);
        crate::log::release(p.seq, vec![("emulation".into(), e)]);
    };
    if !enqueued {
        // the record itself was written as enqueue_failed (never held)
        fail(
            &mut p,
            "the launch emulated for this kernel and shape failed to enqueue".into(),
        );
        return;
    }
    let Ok(worker) = WORKER.as_ref() else {
        fail(&mut p, "no emulation thread".into());
        return;
    };
    if !p.snaps.is_empty() {
        // the worker waits for the copies: make sure they are submitted even if the app
        // never flushes (a flush is invisible to the app)
        // SAFETY: the app's queue, valid during its enqueue call.
        let _ = unsafe { crate::exec::cl::flush(p.queue) };
    }
    let seq = p.seq;
    let key = p.key.clone();
    let info = p.info.clone();
    let bytes = p.bytes;
    let job = DeferredJob {
        key: key.clone(),
        prepare: Box::new(move || prepare(*p)),
        cfg: EMU_CFG,
        done: Box::new(move |o| {
            done(seq, &key, &info, o);
            SNAPSHOT_BYTES.fetch_sub(bytes, Ordering::AcqRel);
        }),
    };
    if let Err(job) = worker.submit_deferred(job) {
        // dropping the prepare closure releases the snapshot (`Drop for Pending`)
        let DeferredJob { key, prepare, .. } = *job;
        drop(prepare);
        SNAPSHOT_BYTES.fetch_sub(bytes, Ordering::AcqRel);
        let e = emulation_json(
            "unavailable",
            Some(format!(
                "emulation queue full ({QUEUE_CAPACITY} launches waiting)"
            )),
            false,
            None,
        );
        finish_key(&key, &e, None);
        crate::log::release(seq, vec![("emulation".into(), e)]);
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        // SAFETY: clprism's own handles, released once (drained by whoever used them).
        unsafe {
            for e in self.copy_events.drain(..) {
                crate::exec::cl::release_event(e);
            }
            for s in self.snaps.drain(..) {
                crate::exec::cl::release_mem(s.copy);
            }
        }
    }
}

/// Waits (polling, bounded) for an event; Err with the reason.
unsafe fn wait_event(ev: cl_event) -> Result<(), String> {
    let gi = crate::exec::cl::rt()
        .ok()
        .and_then(|t| t.clGetEventInfo)
        .ok_or("clGetEventInfo unavailable")?;
    let start = Instant::now();
    loop {
        let mut st: cl_int = CL_QUEUED;
        let r = gi(
            ev,
            CL_EVENT_COMMAND_EXECUTION_STATUS,
            4,
            (&mut st as *mut cl_int).cast(),
            std::ptr::null_mut(),
        );
        if r != CL_SUCCESS {
            return Err(format!("clGetEventInfo returned {r}"));
        }
        if st < 0 {
            return Err(format!("snapshot copy failed with status {st}"));
        }
        if st == CL_COMPLETE {
            return Ok(());
        }
        if start.elapsed() > SNAPSHOT_WAIT {
            return Err(format!(
                "snapshot copy not finished after {} s",
                SNAPSHOT_WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// Reads the snapshots back (worker thread) and releases them.
unsafe fn read_snapshots(p: &mut Pending) -> Result<HashMap<Key, Vec<u8>>, String> {
    let mut out = HashMap::new();
    if p.snaps.is_empty() {
        return Ok(out);
    }
    for e in &p.copy_events {
        wait_event(*e)?;
    }
    let ctx = p.info.context as cl_context;
    let q = crate::exec::cl::create_queue(ctx, p.info.device as cl_device_id)
        .map_err(|e| format!("snapshot read queue: {e}"))?;
    let mut res = Ok(());
    for s in &p.snaps {
        let mut v = vec![0u8; s.size];
        if let Err(e) = crate::exec::cl::read(q, s.copy, 0, &mut v) {
            res = Err(format!("snapshot read: {e}"));
            break;
        }
        out.insert(s.src, v);
    }
    if let Some(f) = crate::exec::cl::rt()
        .ok()
        .and_then(|t| t.clReleaseCommandQueue)
    {
        f(q);
    }
    res.map(|_| out)
}

fn module_for(info: &LaunchInfo) -> Result<Arc<Module>, EmuError> {
    if let Some(m) = MODULES.lock().get(&info.program_key) {
        return m.clone();
    }
    let r = match &info.origin {
        ProgramOrigin::Source(src) => emu::compile_source(
            src,
            &info.options,
            &crate::emu::FrontendOptions::from_config(crate::config::get(), |k| {
                std::env::var_os(k)
            }),
        )
        .and_then(|w| emu::load_module(&w))
        .map(Arc::new),
        ProgramOrigin::Il(il) => emu::spirv_words(il)
            .and_then(|w| emu::load_module(&w))
            .map(Arc::new),
        ProgramOrigin::Binary(_) => Err(EmuError::Unsupported(format!(
            "{UNMAPPED_BINARY}: no source or SPIR-V to emulate"
        ))),
        ProgramOrigin::Linked(_) => Err(EmuError::Unsupported(
            "program made by clLinkProgram (separate compilation)".into(),
        )),
        ProgramOrigin::Other => Err(EmuError::Unsupported(
            "built-in kernels or unknown program origin".into(),
        )),
    };
    MODULES.lock().insert(info.program_key.clone(), r.clone());
    r
}

/// Worker side: snapshot read-back, module, argument values.
fn prepare(mut p: Pending) -> Result<(Arc<Module>, Vec<ArgValue>), EmuError> {
    // SAFETY: clprism's own snapshot handles.
    let snaps = unsafe { read_snapshots(&mut p) };
    release_snapshot_handles(&mut p);
    let mut snaps = snaps.map_err(EmuError::Internal)?;
    // argument index that took each buffer's contents (a buffer passed twice is cloned)
    let mut placed: HashMap<Key, usize> = HashMap::new();
    let m = module_for(&p.info)?;
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
                    match (snaps.remove(&h), placed.get(&h)) {
                        (Some(v), _) => {
                            placed.insert(h, i);
                            ArgValue::Buffer(v)
                        }
                        (None, Some(&j)) => args[j].clone(),
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

fn release_snapshot_handles(p: &mut Pending) {
    // SAFETY: clprism's own handles, released once; the byte budget is returned in `done`.
    unsafe {
        for e in p.copy_events.drain(..) {
            crate::exec::cl::release_event(e);
        }
        for s in p.snaps.drain(..) {
            crate::exec::cl::release_mem(s.copy);
        }
    }
}

/// The launch device's profile name (cached per device).
fn device_profile(device: Key) -> Option<String> {
    if let Some(p) = DEVICE_PROFILE.lock().get(&device) {
        return p.clone();
    }
    let name = PROFILES.as_ref().ok().and_then(|ps| {
        let id = crate::exec::best::device_identity(device as cl_device_id)?;
        model::find_profile(ps, &id).map(|p| p.name.clone())
    });
    DEVICE_PROFILE.lock().insert(device, name.clone());
    name
}

/// Projection of `stats` for the launch (without `launch_device_profile`).
fn projection_json(stats: &WorkGroupStats, info: &LaunchInfo) -> Value {
    let static_local = MODULES
        .lock()
        .get(&info.program_key)
        .and_then(|m| m.as_ref().ok().map(|m| m.local_static))
        .unwrap_or(0);
    let err = |e: String| {
        let mut v = serde_json::to_value(model::ProjectionSet::default()).unwrap_or(json!({}));
        if let Some(o) = v.as_object_mut() {
            o.insert("error".into(), json!(e));
        }
        v
    };
    let profiles = match PROFILES.as_ref() {
        Ok(p) => p,
        Err(e) => return err(e.clone()),
    };
    // whole-kernel read set: the sizes of the buffers the work-group reads
    let sizes: Vec<(u32, u64)> = info
        .args
        .iter()
        .enumerate()
        .filter_map(|(i, a)| match a {
            Some(KernelArg::Value(b)) if b.as_slice().len() == 8 => {
                let h = usize::from_ne_bytes(b.as_slice().try_into().ok()?);
                TABLES.buffers.with(h, |x| (i as u32, x.size as u64))
            }
            _ => None,
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
        &ModelOptions::default(),
    ) {
        Ok(set) => {
            let mut v = serde_json::to_value(set).unwrap_or(Value::Null);
            // the shape projected with, so `clprism accuracy` re-projects the same launch
            if let (Some(o), Ok(s)) = (v.as_object_mut(), serde_json::to_value(shape)) {
                o.insert("launch_shape".into(), s);
            }
            v
        }
        Err(e) => err(e.to_string()),
    }
}

/// Worker side, after the emulation: build and attach the records.
fn done(seq: u64, key: &EmuKey, info: &LaunchInfo, o: EmuOutcome) {
    let (emulation, projection) = match &o.result {
        Ok(st) => {
            let status = if o.reused { "reused" } else { "ok" };
            let mut e = emulation_json(status, None, o.reused, Some(st));
            if info.local_assumed {
                if let Some(m) = e.as_object_mut() {
                    m.insert("local_assumed".into(), json!(info.local));
                }
            }
            (e, Some(projection_json(st, info)))
        }
        Err(err) => (
            emulation_json(status_of(err), Some(err.to_string()), o.reused, None),
            None,
        ),
    };
    // keep the first result of a key for later launches (not a transient failure)
    if !o.reused && !matches!(o.result, Err(EmuError::Internal(_))) {
        RESULTS
            .lock()
            .insert(key.clone(), (emulation.clone(), projection.clone()));
    }
    finish_key(key, &emulation, projection.as_ref());
    let mut entries = vec![("emulation".to_string(), emulation)];
    if let Some(mut p) = projection {
        let dp = device_profile(info.device);
        if let Some(m) = p.as_object_mut() {
            m.insert("launch_device_profile".into(), json!(dp));
        }
        entries.push(("projection".to_string(), p));
    }
    crate::log::release(seq, entries);
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
        let e = emulation_json("unavailable", Some("why".into()), false, None);
        assert_eq!(e["status"], "unavailable");
        assert_eq!(e["reason"], "why");
        assert_eq!(e["reused"], false);
        assert!(e.get("stats").is_none());
        let st = WorkGroupStats::default();
        let e = emulation_json("ok", None, false, Some(&st));
        assert!(e.get("reason").is_none());
        assert!(e["stats"]["instructions"].is_object());
    }
}
