//! One balanced launch, run on the worker thread: replicas, chunks, merge (DESIGN.md §7).

use super::cl::{self, ClError};
use super::devices::Device;
use super::footprint::{self, FootprintModel};
use super::program::{self, ArgKind};
use super::staging::{HostBytes, Role, StagingPool};
use super::{chunk_callback, ChunkDone, ChunkTag, Engine, Job};
use crate::registry::tables::{KernelArg, Key, ProgramOrigin, UNMAPPED_BINARY};
use crate::registry::TABLES;
use crate::sched::{self, Action, ChunkScheduler, SchedState, SchedulerKind};
use crossbeam_channel::Receiver;
use opencl_sys::*;
use rustc_hash::FxHashMap;
use serde_json::{json, Value};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static NEXT_LAUNCH: AtomicU64 = AtomicU64::new(1);

/// A balanced launch in which no chunk completes for this long is given up (the scheduler
/// cannot tell a hung device from a slow one when no device has completed a chunk yet); the
/// launch then runs natively and nothing the hung chunks produce is ever merged.
const STALL_LIMIT: Duration = Duration::from_secs(120);

/// A footprint read-back of one buffer: the merged `[start, end)` ranges, a host copy of the
/// buffer valid inside them, and the bytes read.
/// Ranges written by the app's own device are copied device-side at write-back (last).
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
    /// kernel (`kernel_id`) → ns per work-group on the app's device when it last ran whole
    /// there through clprism (its first launch under `CLPRISM_SPLIT=auto`); for
    /// `sched::split`. Forwarded launches are measured into [`super::FORWARDED`].
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
    /// (kernel (`kernel_id`), app buffer) → the buffer's epoch at that kernel's last balanced launch: an
    /// epoch that moved since means the app rewrites the input between launches.
    last_epochs: FxHashMap<(String, Key), u64>,
    /// kernel (`kernel_id`) → what its last full split decision found, for the early
    /// decision ([`super::decide`]).
    split_memo: FxHashMap<String, super::decide::SplitMemo>,
    /// The shortest wall time of a launch split over >= 2 devices so far, ns (0: none);
    /// a kernel's first split (which includes the driver's compile at first enqueue) is
    /// left out.
    split_floor_ns: f64,
    /// Kernels (`kernel_id`) split at least once.
    split_once: rustc_hash::FxHashSet<String>,
    /// kernel (`kernel_id`) → what splitting would have saved on its launches kept whole
    /// before a split was tried, ns (`decide`'s trial rule).
    forgone: FxHashMap<String, f64>,
}

/// (kernel (`Job::kernel_id`), work-groups along the split dimension, participating devices).
type HistoryKey = (String, u64, Vec<usize>);

/// Warm starts of a kernel in a row after which one launch starts cold (Boyer's β chunks on
/// every device), so a device that the earlier Ω left without work is measured again.
const WARM_STREAK_MAX: u32 = 8;

/// Host transfer rate assumed before one is measured, bytes per ns (10 GB/s).
const DEFAULT_HOST_RATE: f64 = 10.0;

/// A buffer argument of a balanced launch.
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

/// Non-blocking reads into host memory that must finish before that memory is freed: waited
/// for and released on drop (declare it after the buffers it reads into, so it drops first).
struct PendingReads(Vec<cl_event>);

impl Drop for PendingReads {
    fn drop(&mut self) {
        wait_release(&self.0);
    }
}

// SAFETY: OpenCL handles are thread-safe; the state is only used under the engine's lock.
unsafe impl Send for WorkerState {}

/// What happened to a launch, for the `schedule` record.
struct Outcome {
    makespan_ns: u64,
    schedule: Value,
}

impl WorkerState {
    pub(super) fn forget(&mut self, m: Key) {
        let keys: Vec<_> = self.replicas.keys().filter(|k| k.0 == m).copied().collect();
        for k in keys {
            if let Some(r) = self.replicas.remove(&k) {
                // SAFETY: clprism's own replica.
                unsafe { cl::release_mem(r.mem) };
            }
        }
        self.host_pool.forget(m);
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
                let words = crate::emu::compile_source(
                    source,
                    &options,
                    &crate::emu::FrontendOptions::from_config(crate::config::get(), |k| {
                        std::env::var_os(k)
                    }),
                )
                .map_err(|e| e.to_string())?;
                let module = crate::emu::load_module(&words).map_err(|e| e.to_string())?;
                Ok(Emulated {
                    module: Arc::new(module),
                    words: Arc::new(words),
                })
            })
            .clone()
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
    pub(super) fn pre_decide(&mut self, engine: &Engine, job: &Job) -> Result<(), String> {
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
        let kid = job.kernel_id();
        let last_epoch = |m: Key| self.last_epochs.get(&(kid.clone(), m)).copied();
        let known = super::decide::Known {
            home_ns_per_work_group: self
                .whole
                .get(&kid)
                .copied()
                .or_else(|| super::forwarded_ns_per_work_group(&kid)),
            measured: self.measured.get(&kid).map(|v| v.as_slice()),
            merge_ns: self.merge_cost.get(&kid).copied(),
            host_bytes_per_ns: self.host_rate.unwrap_or(DEFAULT_HOST_RATE),
            split_floor_ns: if self.split_floor_ns > 0.0 {
                self.split_floor_ns
            } else {
                super::decide::ASSUMED_SPLIT_FLOOR_NS
            },
            trial_cost_ns: super::app_build_ns(&job.program)
                .map_or(super::decide::ASSUMED_TRIAL_COST_NS, |ns| ns as f64),
            forgone_ns: self.forgone.get(&kid).copied().unwrap_or(0.0),
            memo: self.split_memo.get(&kid),
            last_epoch: &last_epoch,
        };
        match super::decide::early(job, engine.devices.len(), home, &known) {
            super::decide::Early::Consider => Ok(()),
            super::decide::Early::Forward {
                reason,
                measure,
                unwritten,
                forgone_ns,
            } => {
                if forgone_ns > 0.0 {
                    *self.forgone.entry(kid.clone()).or_default() += forgone_ns;
                }
                super::set_unwritten(unwritten);
                if measure {
                    let groups = (0..job.work_dim as usize)
                        .map(|d| (job.global[d] / job.local[d].max(1)) as u64)
                        .product();
                    super::request_measure(&kid, groups);
                }
                Err(reason)
            }
        }
    }

    pub(super) fn run(&mut self, engine: &Engine, job: &Job) -> Result<super::Balanced, String> {
        let t0 = Instant::now();
        let o = self.balanced(engine, &engine.done_rx, job, t0)?;
        let mut schedule = o.schedule;
        let wall_ns = t0.elapsed().as_nanos() as u64;
        schedule["wall_ns"] = json!(wall_ns);
        let used = super::decide::devices_used(&schedule);
        if used == 1 {
            schedule["one_device_reason"] = json!(super::decide::one_device_reason(&schedule));
        }
        if used >= 2 && !self.split_once.insert(job.kernel_id()) {
            let w = super::decide::split_wall_without_one_time_work(&schedule, wall_ns);
            if self.split_floor_ns == 0.0 || w < self.split_floor_ns {
                self.split_floor_ns = w;
            }
        }
        Ok(super::Balanced {
            makespan_ns: o.makespan_ns,
            schedule,
        })
    }

    /// Builds the launch's kernel on every balance device (once per program variant).
    /// Returns the variant key, the devices that can take chunks now, and for each device that
    /// sits this launch out, why (the record's `devices_excluded`).
    fn build(
        &mut self,
        engine: &Engine,
        job: &Job,
    ) -> Result<(String, Vec<usize>, Vec<Value>), String> {
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
        let range_queries = program::uses_range_queries(&checked);
        let (variant, text) = if range_queries {
            let g = job.global.map(|x| x as u64);
            let o = job.offset.map(|x| x as u64);
            (
                format!("{}|{}|{g:?}|{o:?}", job.program.hash, job.program.options),
                program::variant_source(&source, g, o),
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
            let programs = if range_queries {
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
                                            crate::emu::frontend::cache_dir(
                                                &crate::emu::FrontendOptions::from_config(
                                                    crate::config::get(),
                                                    |k| std::env::var_os(k),
                                                ),
                                            )
                                            .as_deref(),
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
                Some(reason) => excluded.push(json!({"index": d.index, "reason": reason})),
                None => usable.push(i),
            }
        }
        if usable.is_empty() {
            return Err("no device could build the kernel or all are busy".into());
        }
        Ok((variant, usable, excluded))
    }

    fn balanced(
        &mut self,
        engine: &Engine,
        done_rx: &Receiver<ChunkDone>,
        job: &Job,
        t0: Instant,
    ) -> Result<Outcome, String> {
        let (variant, mut devs, excluded) = self.build(engine, job)?;
        // Phase boundaries (ns since t0) for the `schedule` record and the timeline.
        let mut marks: Vec<(&str, u64)> = vec![("build", t0.elapsed().as_nanos() as u64)];
        let key = (variant, job.kernel.clone());
        let kinds = self.kernels[&key][devs[0]]
            .as_ref()
            .map(|b| b.kinds.clone())
            .unwrap_or_default();
        if kinds.len() != job.args.len() {
            return Err(format!(
                "kernel has {} arguments, {} were set",
                kinds.len(),
                job.args.len()
            ));
        }
        // classify buffer arguments
        let mut bufs: Vec<BufArg> = Vec::new();
        for (i, (kind, a)) in kinds.iter().zip(&job.args).enumerate() {
            match kind {
                ArgKind::Opaque => {
                    return Err(format!("argument {i} is an image, sampler, pipe or queue"))
                }
                ArgKind::Global { .. } | ArgKind::Constant => {
                    let Some(m) = buffer_of(a) else {
                        if matches!(a, KernelArg::Value(b) if b.as_slice().iter().all(|x| *x == 0))
                        {
                            continue; // NULL buffer argument
                        }
                        return Err(format!("argument {i} is not a buffer clprism knows"));
                    };
                    let info = TABLES
                        .buffers
                        .get(m)
                        .ok_or(format!("argument {i}: unknown buffer"))?;
                    if info.parent.is_some() {
                        return Err(format!("argument {i} is a sub-buffer"));
                    }
                    // CL_MEM_READ_ONLY does not stop a kernel writing through a non-const
                    // pointer (undefined by the spec, done by drivers and apps: hashcat's
                    // r_markov fills its READ_ONLY candidate buffer); trusting the flag left
                    // that output unmerged, and hashcat missed its crack
                    let written = matches!(kind, ArgKind::Global { writable: true });
                    if let Some(b) = bufs.iter_mut().find(|b| b.mem == m) {
                        b.written |= written;
                        b.bindings += 1;
                        continue;
                    }
                    bufs.push(BufArg {
                        index: i,
                        mem: m,
                        size: info.size,
                        written,
                        always_stale: info.flags & CL_MEM_USE_HOST_PTR != 0,
                        bindings: 1,
                    });
                }
                _ => {}
            }
        }
        // shape: split along the slowest-varying dimension with more than one work-group
        let dim = job.work_dim as usize;
        let groups: Vec<usize> = (0..dim).map(|d| job.global[d] / job.local[d]).collect();
        let split = (0..dim).rev().find(|d| groups[*d] > 1).unwrap_or(0);
        let units = groups[split] as u64;
        let wgs_per_unit: u64 = groups
            .iter()
            .enumerate()
            .filter(|(d, _)| *d != split)
            .map(|(_, g)| *g as u64)
            .product();

        // scheduler (CLPRISM_SCHEDULER, CLPRISM_BOYER: parsed once, when the engine started)
        let cfg = crate::config::get();
        let mut kind = engine.scheduler.clone();
        let boyer = engine.boyer;
        if let SchedulerKind::Static(f) = &kind {
            if f.len() != devs.len() {
                crate::config::warn_once_per(&format!("CLPRISM_SCHEDULER: static partition has {} fractions for {} devices; using boyer", f.len(), devs.len()), "static-len");
                kind = SchedulerKind::Boyer;
            }
        }
        if let SchedulerKind::Single(i) = kind {
            if i >= devs.len() {
                return Err(format!("single:{i} but only {} devices", devs.len()));
            }
        }
        let mut best_log = Value::Null;
        if kind == SchedulerKind::Best {
            let mut state = std::mem::take(&mut self.best);
            let measured = self.measured.get(&job.kernel_id()).cloned();
            let source = match &job.program.origin {
                ProgramOrigin::Source(s) => s.to_string(),
                _ => String::new(),
            };
            let c = state.choose(engine, &devs, job, &kinds, measured.as_deref(), || {
                self.module(job, &source).map(|m| m.module)
            });
            self.best = state;
            best_log = c.record;
            kind = SchedulerKind::Single(c.pick);
        }
        // One balance device, the app's own: nothing to balance, so the launch goes to the
        // driver as the app made it (Black-Scholes on one H200 took 1.7 ms per launch through
        // the replicas and the merge against 0.2 ms forwarded, results/gpu-2026-11-22p).
        if engine.devices.len() == 1 && engine.devices[0].id == job.app_device && !cfg.verify {
            return Err("kept whole on the app's device: it is the only balance device".into());
        }
        let mut sched = ChunkScheduler::new(&kind, &boyer, devs.len(), units)?;

        // 2. write footprints (cached per shape; derived on zero-filled buffers, see below)
        let verify = cfg.verify;
        let fkey = footprint_key(
            &key,
            job,
            &kinds,
            &bufs.iter().map(|b| (b.mem, b.size)).collect::<Vec<_>>(),
        );
        let mut from_disk = false;
        if !self.footprints.contains_key(&fkey) {
            // a model saved by an earlier run of the same program and launch shape
            if let Some(m) = footprint::load_cached(&fkey) {
                self.footprints.insert(fkey.clone(), m.map(Arc::new));
                from_disk = true;
            }
        }
        let cached = self.footprints.get(&fkey).cloned();
        let need_model = cached.is_none();
        // What the model changes: arguments the kernel never writes need no merge, and a
        // buffer the kernel only writes needs no pre-launch copy on the devices.
        let apply = |bufs: &mut Vec<BufArg>, m: &FootprintModel| -> bool {
            for b in bufs.iter_mut() {
                if b.written && b.bindings == 1 && m.read_only.contains(&(b.index as u32)) {
                    b.written = false;
                }
            }
            bufs.iter()
                .filter(|b| b.written)
                .all(|b| b.bindings == 1 && m.written.iter().any(|w| w.arg == b.index as u32))
        };
        let mut model: Option<Arc<FootprintModel>> = None;
        if let Some(Ok(m)) = &cached {
            if apply(&mut bufs, m) {
                model = Some(m.clone());
            }
        }
        let skip_baseline = |b: &BufArg, model: &Option<Arc<FootprintModel>>| {
            !verify
                && b.written
                && model.as_ref().is_some_and(|m| {
                    m.written
                        .iter()
                        .any(|w| w.arg == b.index as u32 && !w.read_by_kernel)
                })
        };

        // The app's own device runs its chunks in the app's context (replicas filled and
        // merged by device-side copies, no host round trip) when footprints say what to copy
        // and the kernel needs no NDRange-query variant.
        let plain_source = match &job.program.origin {
            ProgramOrigin::Source(s) => {
                program::inspected_text(&job.program.hash, s, &job.program.options)
                    .is_ok_and(|t| !program::uses_range_queries(&t))
            }
            _ => false,
        };
        let home_of = |model: &Option<Arc<FootprintModel>>| -> Option<usize> {
            model.as_ref()?;
            if !plain_source {
                return None;
            }
            devs.iter().copied().find(|&d| {
                let dv = &engine.devices[d];
                dv.id == job.app_device && dv.block_event.is_none() && !dv.inject_fail
            })
        };
        let mut footprint_log = json!(null);
        if need_model {
            let t = Instant::now();
            let source = match &job.program.origin {
                ProgramOrigin::Source(s) => s.to_string(),
                _ => String::new(),
            };
            let groups3 = [0, 1, 2].map(|d| groups.get(d).map_or(1, |g| *g as u64));
            // A failure past this point is the kernel's own (not a missing toolchain): it is
            // saved in the cache so later runs of the same launch shape skip the derivation.
            let mut kernel_verdict = false;
            let derived = self.module(job, &source).and_then(|m| {
                kernel_verdict = true;
                match crate::emu::dataflow::data_dependent_writes(&m.words, &job.kernel) {
                    Ok(None) => {}
                    Ok(Some(why)) => return Err(why),
                    Err(e) => return Err(e.to_string()),
                }
                let dims = |v: &[usize]| v[..dim].iter().map(|x| *x as u64).collect::<Vec<_>>();
                let shape = crate::emu::LaunchShape::new(
                    &dims(&job.global),
                    &dims(&job.local),
                    Some(&dims(&job.offset)),
                );
                // No global store's address or execution depends on memory contents (checked
                // above), so the footprint does not either: the sampled work-groups run on
                // zero-filled buffers (pages the OS maps lazily, so a work-group costs only
                // what it touches), in parallel, without reading the app's buffers back.
                let samples = footprint::sample_groups(groups3);
                let arg_sets: Vec<_> = samples.iter().map(|_| zero_args(job, &kinds)).collect();
                let (module, kernel) = (&m.module, job.kernel.as_str());
                let results: Vec<Result<crate::emu::stats::WorkGroupStats, String>> =
                    std::thread::scope(|scope| {
                        let handles: Vec<_> = samples
                            .iter()
                            .zip(arg_sets)
                            .map(|(&g, mut args)| {
                                scope.spawn(move || {
                                    // only the written ranges are wanted: loops that cannot
                                    // change them are jumped over (emu::dataflow::loop_skips)
                                    let cfg = crate::emu::EmuConfig {
                                        skip_write_free_loops: true,
                                        ..Default::default()
                                    };
                                    crate::emu::emulate(module, kernel, &shape, g, &mut args, &cfg)
                                        .map_err(|e| e.to_string())
                                })
                            })
                            .collect();
                        handles
                            .into_iter()
                            .map(|h| {
                                h.join().unwrap_or_else(|_| {
                                    kernel_verdict = false;
                                    Err("the emulator panicked on a sampled work-group".into())
                                })
                            })
                            .collect()
                    });
                let mut by_group: FxHashMap<[u64; 3], _> =
                    samples.into_iter().zip(results).collect();
                footprint::derive(groups3, split, |g| {
                    by_group
                        .remove(&g)
                        .unwrap_or_else(|| Err(format!("work-group {g:?} was not sampled")))
                })
                .map(Arc::new)
            });
            footprint_log = json!({"derived_ms": t.elapsed().as_secs_f64() * 1e3});
            if let Ok(m) = &derived {
                footprint_log["sampled_groups"] = json!(m.sampled_groups);
                footprint_log["skipped_loops"] = json!(m.skipped_loops);
                if apply(&mut bufs, m) {
                    model = Some(m.clone());
                }
            }
            if derived.is_ok() || kernel_verdict {
                let outcome = derived.as_ref().map(|m| &**m).map_err(String::as_str);
                if let Err(e) = footprint::save_cached(&fkey, outcome) {
                    crate::config::warn_once_per(
                        &format!("balance: footprint model not saved in the cache: {e}"),
                        "footprint-cache-save",
                    );
                }
            }
            self.footprints.insert(fkey.clone(), derived);
        }
        if from_disk {
            footprint_log = json!({"from_cache": true});
        }
        match (&model, self.footprints.get(&fkey)) {
            (None, Some(Err(e))) => footprint_log["reason"] = json!(e),
            (None, _) => {
                footprint_log["reason"] =
                    json!("a written buffer is bound to several arguments or has no footprint")
            }
            _ => {}
        }
        marks.push(("footprint", t0.elapsed().as_nanos() as u64));
        crate::config::debug(|| {
            format!(
                "launch {}: build {:.3} ms, footprint {:.3} ms (derived: {need_model})",
                job.rec.seq,
                marks[0].1 as f64 / 1e6,
                (marks[1].1 - marks[0].1) as f64 / 1e6
            )
        });
        let home_d = home_of(&model);
        let slot =
            |d: usize, home_d: Option<usize>| if Some(d) == home_d { usize::MAX - d } else { d };

        // 2b. whether splitting pays for its transfers (CLPRISM_SPLIT=auto, sched::split)
        let mut split_log = Value::Null;
        let mut configured = None;
        // the app's device among the balance devices (its launch is the baseline)
        let app_d = devs
            .iter()
            .copied()
            .find(|&d| engine.devices[d].id == job.app_device);
        if let (Some(h), crate::config::SplitPolicy::Auto) = (app_d, cfg.split) {
            if devs.len() > 1 && !verify && !matches!(kind, SchedulerKind::Single(_)) {
                let measured = self.measured.get(&job.kernel_id());
                let epoch_of = |b: &BufArg| job.epochs.get(&b.mem).copied().unwrap_or(1);
                let upload: u64 = bufs
                    .iter()
                    .filter(|b| !skip_baseline(b, &model))
                    .filter(|b| {
                        b.always_stale
                            || b.written
                            || self
                                .last_epochs
                                .get(&(job.kernel_id(), b.mem))
                                .is_some_and(|e| *e != epoch_of(b))
                    })
                    .map(|b| b.size as u64)
                    .sum();
                let work_groups = units * wgs_per_unit;
                let inputs = sched::split::SplitInputs {
                    work_groups,
                    home_whole_ns_per_work_group: self
                        .whole
                        .get(&job.kernel_id())
                        .copied()
                        .or_else(|| super::forwarded_ns_per_work_group(&job.kernel_id())),
                    ns_per_work_group: devs
                        .iter()
                        .map(|d| measured.and_then(|m| m.get(*d).copied().flatten()))
                        .collect(),
                    home: devs.iter().position(|d| *d == h).unwrap_or(0),
                    upload_bytes: upload,
                    written_bytes: bufs
                        .iter()
                        .filter(|b| b.written)
                        .map(|b| b.size as u64)
                        .sum(),
                    host_bytes_per_ns: self.host_rate.unwrap_or(DEFAULT_HOST_RATE),
                    min_gain: 0.05,
                    split_floor_ns: self.split_floor_ns,
                    merge_by_diff: home_d.is_none(),
                    measured_merge_ns: self.merge_cost.get(&job.kernel_id()).copied(),
                };
                let d = sched::split::decide(&inputs);
                self.split_memo.insert(
                    job.kernel_id(),
                    super::decide::SplitMemo {
                        // per argument index, from the kernel's signature and the footprint's
                        // read-only analysis (not from `bufs`, which merges arguments bound to
                        // one buffer under its first index)
                        written_args: kinds
                            .iter()
                            .enumerate()
                            .filter(|(i, k)| {
                                matches!(k, ArgKind::Global { writable: true })
                                    && !model
                                        .as_ref()
                                        .is_some_and(|m| m.read_only.contains(&(*i as u32)))
                            })
                            .map(|(i, _)| i)
                            .collect(),
                        input_args: bufs
                            .iter()
                            .filter(|b| !skip_baseline(b, &model))
                            .map(|b| b.index)
                            .collect(),
                        merge_by_diff: inputs.merge_by_diff,
                    },
                );
                split_log = serde_json::to_value(&d).unwrap_or(Value::Null);
                split_log["upload_bytes"] = json!(inputs.upload_bytes);
                split_log["host_rate_measured"] = json!(self.host_rate.is_some());
                let measured_first = d.est_home_ns.is_none() && home_d.is_some();
                if !d.split && !measured_first {
                    // Forwarded to the driver as it is: measured, the app's own launch is the
                    // fastest way; or a first launch without a footprint (so no direct run on
                    // the app's device), whose profiled event measures it. Nothing of the
                    // app's data changed yet.
                    super::set_unwritten(
                        bufs.iter().filter(|b| !b.written).map(|b| b.mem).collect(),
                    );
                    if d.est_home_ns.is_some() {
                        return Err(format!("kept whole on the app's device: {}", d.reason));
                    }
                    super::request_measure(&job.kernel_id(), work_groups);
                    return Err("kept whole on the app's device: first launch of this kernel, forwarded to measure it".into());
                }
                if !d.split {
                    // first launch: run whole through clprism to measure it
                    configured = Some(kind.to_string());
                    devs = vec![h];
                    kind = SchedulerKind::Single(0);
                    sched = ChunkScheduler::new(&kind, &boyer, 1, units)?;
                }
            }
        }

        // 3. pre-launch contents and replicas
        let home = self
            .home_queue(job.app_context, job.app_device)
            .map_err(|e| e.to_string())?;
        let mut snapshots: Vec<Option<HostBytes>> = Vec::new();
        let mut upload_markers: Vec<cl_event> = Vec::new();
        let others = devs.iter().any(|d| Some(*d) != home_d);
        for b in &bufs {
            let epoch = job.epochs.get(&b.mem).copied().unwrap_or(1);
            let stale = (verify && b.written)
                || (others && (b.always_stale || (b.written && !skip_baseline(b, &model))))
                // a buffer the kernel only writes needs no valid replica at all
                || (!skip_baseline(b, &model)
                    && devs.iter().filter(|d| Some(**d) != home_d).any(|d| {
                    self.replicas
                        .get(&(b.mem, slot(*d, home_d)))
                        .map(|r| r.epoch != epoch)
                        .unwrap_or(true)
                }));
            if stale {
                let t_read = Instant::now();
                // SAFETY: `home` is clprism's queue in the app's context, alive for the process.
                let mut v = unsafe {
                    self.host_pool
                        .take(b.mem, Role::Snapshot, b.size, job.app_context, home)
                };
                // SAFETY: reading the app's (retained) buffer on clprism's queue.
                unsafe { cl::read(home, b.mem as cl_mem, 0, &mut v) }
                    .map_err(|e| format!("reading the app's buffer: {e}"))?;
                let ns = t_read.elapsed().as_nanos() as f64;
                // (a fresh pinned area's first use also pays the driver's page-locking)
                if b.size >= 1 << 20 && ns > 0.0 && self.host_pool.last_reused() {
                    let r = b.size as f64 / ns;
                    self.host_rate = Some(self.host_rate.map_or(r, |old| 0.5 * old + 0.5 * r));
                }
                snapshots.push(Some(v));
            } else {
                snapshots.push(None);
            }
        }
        marks.push(("snapshot", t0.elapsed().as_nanos() as u64));
        let mut dropped = Vec::new();
        // Where each device's chunks run: (context, queue, kernel).
        let mut targets: FxHashMap<usize, (cl_context, cl_command_queue, cl_kernel)> =
            FxHashMap::default();
        for &d in &devs {
            let dev = &engine.devices[d];
            let is_home = Some(d) == home_d;
            let r = (|| -> Result<(), ClError> {
                let (ctx, queue, kernel) = if is_home {
                    (
                        job.app_context,
                        self.home_exec_queue(job.app_context, job.app_device)?,
                        self.home_kernel(job)?,
                    )
                } else {
                    let built = self.kernels[&key][d].as_ref().unwrap();
                    (dev.context, dev.queue, built.kernel)
                };
                targets.insert(d, (ctx, queue, kernel));
                for (b, snap) in bufs.iter().zip(&snapshots) {
                    let epoch = job.epochs.get(&b.mem).copied().unwrap_or(1);
                    let at = (b.mem, slot(d, home_d));
                    let rep = match self.replicas.get_mut(&at) {
                        Some(r) if r.size == b.size => r,
                        _ => {
                            // SAFETY: clprism-owned buffer in the device's context.
                            let mem = unsafe { cl::create_buffer(ctx, b.size)? };
                            if let Some(old) = self.replicas.insert(
                                at,
                                Replica {
                                    mem,
                                    epoch: 0,
                                    size: b.size,
                                },
                            ) {
                                // SAFETY: clprism's own replica of another size.
                                unsafe { cl::release_mem(old.mem) };
                            }
                            self.replicas.get_mut(&at).unwrap()
                        }
                    };
                    if rep.epoch != epoch || b.written || b.always_stale {
                        if is_home {
                            if rep.epoch != epoch
                                || b.always_stale
                                || (b.written && !skip_baseline(b, &model))
                            {
                                // SAFETY: device-side copy from the app's buffer (its commands
                                // have completed) into clprism's replica, same context.
                                unsafe { cl::copy(queue, b.mem as cl_mem, rep.mem, 0, 0, b.size)? };
                            }
                        } else if let Some(s) = snap {
                            // SAFETY: the snapshot outlives the transfer (upload markers are
                            // waited for before it is dropped).
                            unsafe { cl::write(queue, rep.mem, 0, &s[..], false)? };
                        }
                        rep.epoch = if b.written { 0 } else { epoch };
                    }
                }
                // SAFETY: clprism's queue.
                unsafe {
                    upload_markers.push(cl::marker(queue, &[])?);
                    for (i, a) in job.args.iter().enumerate() {
                        match a {
                            KernelArg::Local(n) => {
                                cl::set_arg(kernel, i as u32, *n, std::ptr::null())?
                            }
                            KernelArg::Value(v) => {
                                if let Some(m) =
                                    buffer_of(a).filter(|m| bufs.iter().any(|b| b.mem == *m))
                                {
                                    let rep = self.replicas[&(m, slot(d, home_d))].mem;
                                    cl::set_arg(
                                        kernel,
                                        i as u32,
                                        std::mem::size_of::<cl_mem>(),
                                        (&rep as *const cl_mem).cast(),
                                    )?;
                                } else {
                                    cl::set_arg(
                                        kernel,
                                        i as u32,
                                        v.as_slice().len(),
                                        v.as_slice().as_ptr().cast(),
                                    )?;
                                }
                            }
                        }
                    }
                    cl::flush(queue)?;
                }
                Ok(())
            })();
            if let Err(e) = r {
                crate::config::warn(&format!(
                    "balance: device {} dropped from this launch: {e}",
                    dev.name
                ));
                dropped.push(d);
            }
        }
        if !dropped.is_empty() {
            devs.retain(|d| !dropped.contains(d));
            if devs.is_empty() {
                wait_release(&upload_markers);
                return Err("every device failed while preparing the launch".into());
            }
            sched = ChunkScheduler::new(&kind, &boyer, devs.len(), units)?;
        }

        // A straggler whose abandoned chunk completes may be given work again only when no
        // written buffer is read by the kernel (its replica now holds that chunk's output).
        let readmit_safe = model
            .as_ref()
            .is_some_and(|m| m.written.iter().all(|w| !w.read_by_kernel));

        // Early read-back (footprint merge): as soon as a chunk of another device than the
        // app's completes, the bytes it wrote are read into host staging on that device's
        // second queue, overlapping the transfer with the chunks still running. Staging holds
        // one buffer-sized area per written argument (allocated zeroed, so only what is read
        // costs memory); completed chunks write disjoint ranges of it. `early` is declared
        // after `staging`, so its reads are waited for before the staging is freed.
        let home_sched = home_d.and_then(|h| devs.iter().position(|d| *d == h));
        let mut staging: FxHashMap<Key, HostBytes> = FxHashMap::default();
        if let Some(m) = &model {
            if devs.len() > 1 && !verify {
                for b in bufs.iter().filter(|b| b.written) {
                    if m.written.iter().any(|w| w.arg == b.index as u32) {
                        // SAFETY: as for the snapshots.
                        let area = unsafe {
                            self.host_pool.take(
                                b.mem,
                                Role::ReadBack,
                                b.size,
                                job.app_context,
                                home,
                            )
                        };
                        staging.insert(b.mem, area);
                    }
                }
            }
        }
        let mut early = PendingReads(Vec::new());
        let mut early_chunks: rustc_hash::FxHashSet<u64> = Default::default();

        // 4. chunks
        let launch_id = NEXT_LAUNCH.fetch_add(1, Ordering::Relaxed);
        let now = |t0: Instant| t0.elapsed().as_nanos() as u64;
        let mut chunk_log: FxHashMap<u64, Value> = FxHashMap::default();
        let mut enqueued_at: FxHashMap<u64, u64> = FxHashMap::default();
        // per device, when its latest chunk completed: a chunk queued behind a running one
        // starts only then, and Ω (§4.3.1) counts processing time, not the wait in the queue
        let mut device_free_at: Vec<u64> = vec![0; devs.len()];
        let history_key = (job.kernel_id(), units, devs.clone());
        let warm_streak = self.history.get(&history_key).map_or(0, |h| h.1);
        let warm = warm_streak < WARM_STREAK_MAX
            && self
                .history
                .get(&history_key)
                .is_some_and(|h| sched.seed_history(&h.0));
        // whole waves for the warm start (sched::boyer::BoyerState::wave_units)
        let wg_items: u64 = job.local[..dim].iter().map(|x| *x as u64).product();
        let local_bytes = job.dynamic_local_bytes();
        let registers: Vec<Option<u32>> = devs
            .iter()
            .map(|&d| self.kernels[&key][d].as_ref().and_then(|b| b.registers))
            .collect();
        let wave_wgs: Vec<u64> = devs
            .iter()
            .zip(&registers)
            .map(|(&d, &r)| {
                self.best
                    .wave_work_groups(engine, d, wg_items, local_bytes, r)
            })
            .collect();
        sched.set_wave_units(
            &wave_wgs
                .iter()
                .map(|w| w.div_ceil(wgs_per_unit.max(1)))
                .collect::<Vec<_>>(),
        );
        let mut actions = sched.start(now(t0));
        let deadline_free = Duration::from_millis(20);
        let mut last_progress = Instant::now();
        // Chunks whose completion is also polled: NVIDIA's driver delivers event callbacks
        // up to ~20 ms late (a 0.4 ms chunk on an H200 was reported after 18 ms,
        // results/gpu-2026-11-22e), which left devices idle between chunks.
        let mut inflight = InflightChunks(Vec::new());
        let mut arrived: std::collections::VecDeque<ChunkDone> = Default::default();
        loop {
            for a in std::mem::take(&mut actions) {
                match a {
                    Action::Assign {
                        device,
                        chunk_id,
                        first_wg,
                        count,
                    } => {
                        let d = devs[device];
                        let dev = &engine.devices[d];
                        let (_, queue, kernel) = targets[&d];
                        let mut off = job.offset;
                        let mut glob = job.global;
                        off[split] = job.offset[split] + first_wg as usize * job.local[split];
                        glob[split] = count as usize * job.local[split];
                        let t_enq = now(t0);
                        let claimed = Arc::new(AtomicBool::new(false));
                        let tag = ChunkTag {
                            launch: launch_id,
                            chunk: chunk_id,
                            device,
                            global_device: d,
                            claimed: claimed.clone(),
                        };
                        let r = enqueue_chunk(
                            dev,
                            (queue, kernel),
                            dim,
                            &off[..dim],
                            &glob[..dim],
                            &job.local[..dim],
                            tag,
                        );
                        chunk_log.insert(chunk_id, json!({"device": device, "first_wg": first_wg, "count": count, "work_groups": count * wgs_per_unit, "enqueue_ns": t_enq}));
                        enqueued_at.insert(chunk_id, t_enq);
                        if let Ok(ev) = r {
                            inflight.0.push(Inflight {
                                ev,
                                chunk: chunk_id,
                                device,
                                global_device: d,
                                claimed,
                            });
                        }
                        if let Err(e) = r {
                            crate::config::warn(&format!(
                                "balance: chunk enqueue on {} failed ({e}); its work is reassigned",
                                dev.name
                            ));
                            chunk_log.get_mut(&chunk_id).unwrap()["failed"] = json!(e.code);
                            actions.extend(sched.on_chunk_failed(device, chunk_id, now(t0))?);
                        }
                    }
                    Action::Abandon { device, chunk_id } => {
                        let d = devs[device];
                        engine.devices[d]
                            .stale_chunks
                            .fetch_add(1, Ordering::AcqRel);
                        if let Some(c) = chunk_log.get_mut(&chunk_id) {
                            c["abandoned"] = json!(true);
                        }
                    }
                }
            }
            match sched.state() {
                SchedState::Complete => break,
                SchedState::Stuck => {
                    wait_release(&upload_markers);
                    return Err(
                        "every device failed or stalled; the scheduler could not finish".into(),
                    );
                }
                SchedState::Running => {}
            }
            if !actions.is_empty() {
                continue;
            }
            let longest = if inflight.0.is_empty() {
                deadline_free
            } else {
                POLL_INTERVAL
            };
            let wait = sched
                .next_poll_ns()
                .map(|p| Duration::from_nanos(p.saturating_sub(now(t0))))
                .unwrap_or(longest)
                .clamp(Duration::from_micros(20), longest);
            if arrived.is_empty() {
                arrived.extend(done_rx.recv_timeout(wait));
                arrived.extend(done_rx.try_iter());
                arrived.extend(inflight.poll(launch_id));
            }
            // one completion at a time: the scheduler's actions for it (an abandonment, say)
            // are applied before the next one is looked at
            let Some(done) = arrived.pop_front() else {
                if last_progress.elapsed() > STALL_LIMIT {
                    wait_release(&upload_markers);
                    return Err(format!(
                        "no chunk completed for {} s; devices may hang",
                        STALL_LIMIT.as_secs()
                    ));
                }
                actions.extend(sched.poll(now(t0)));
                continue;
            };
            // counted once: by the callback's report or by the poll, whichever came first
            if done.claimed.swap(true, Ordering::AcqRel) {
                continue;
            }
            {
                {
                    last_progress = Instant::now();
                    if done.launch != launch_id {
                        // a late chunk of an earlier launch: an abandoned straggler draining
                        if let Some(d) = engine.devices.get(done.global_device) {
                            d.stale_chunks.fetch_sub(1, Ordering::AcqRel);
                        }
                        continue;
                    }
                    let t = now(t0);
                    let began = enqueued_at
                        .get(&done.chunk)
                        .copied()
                        .unwrap_or(0)
                        .max(device_free_at.get(done.device).copied().unwrap_or(0));
                    let elapsed = t.saturating_sub(began);
                    if let Some(f) = device_free_at.get_mut(done.device) {
                        *f = (*f).max(t);
                    }
                    if let Some(c) = chunk_log.get_mut(&done.chunk) {
                        c["end_ns"] = json!(t);
                        if let Some(dn) = done.device_ns {
                            c["device_ns"] = json!(dn);
                            c["start_ns"] = json!(t.saturating_sub(dn));
                        }
                    }
                    let is_abandoned = chunk_log
                        .get(&done.chunk)
                        .map(|c| c["abandoned"] == json!(true))
                        .unwrap_or(false);
                    if is_abandoned {
                        engine.devices[devs[done.device]]
                            .stale_chunks
                            .fetch_sub(1, Ordering::AcqRel);
                    }
                    if done.status < 0 {
                        if !is_abandoned {
                            actions.extend(sched.on_chunk_failed(done.device, done.chunk, t)?);
                        }
                    } else if is_abandoned && !readmit_safe {
                        // The straggler's late chunk changed its replica; when the kernel
                        // reads what it writes (in place), later chunks on that device would
                        // compute from those bytes, so it is not re-admitted in this launch.
                    } else {
                        if !is_abandoned && Some(done.device) != home_sched && !staging.is_empty() {
                            let (first, count) = chunk_log.get(&done.chunk).map_or((0, 0), |c| {
                                (
                                    c["first_wg"].as_u64().unwrap_or(0),
                                    c["count"].as_u64().unwrap_or(0),
                                )
                            });
                            let d = devs[done.device];
                            if count > 0
                                && self.read_early(
                                    engine,
                                    d,
                                    model.as_deref(),
                                    &bufs,
                                    &mut staging,
                                    (first, count),
                                    &mut early.0,
                                )
                            {
                                early_chunks.insert(done.chunk);
                            }
                        }
                        actions.extend(sched.on_chunk_done(done.device, done.chunk, t, elapsed)?);
                    }
                }
            }
        }
        drop(inflight);
        let makespan = now(t0);
        marks.push(("chunks", makespan));

        // 5. merge: take from each device the bytes it wrote
        let done_chunks = sched.completed_chunks();
        let mut per_dev_wgs = vec![0u64; devs.len()];
        let mut finish = vec![None::<u64>; devs.len()];
        for c in &done_chunks {
            per_dev_wgs[c.device] += c.count;
            let end = chunk_log
                .get(&c.id)
                .and_then(|v| v["end_ns"].as_u64())
                .unwrap_or(0);
            finish[c.device] = Some(finish[c.device].map_or(end, |f: u64| f.max(end)));
        }
        let mut merged_bytes = 0u64;
        // (app buffer, ranges to write, bytes): a footprint merge writes only the ranges
        let mut results: Vec<(Key, Vec<[u64; 2]>, HostBytes)> = Vec::new();
        // (app buffer, replica of the app's device, ranges it wrote): device-side copies
        let mut device_copies: Vec<(Key, cl_mem, Vec<[u64; 2]>)> = Vec::new();
        let contributors: Vec<usize> = (0..devs.len()).filter(|i| per_dev_wgs[*i] > 0).collect();
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        for (b, snap) in bufs.iter().zip(&snapshots) {
            if !b.written {
                continue;
            }
            if let Some(w) = model
                .as_ref()
                .and_then(|m| m.written.iter().find(|w| w.arg == b.index as u32))
            {
                let early_chunks = &early_chunks;
                let pieces = done_chunks
                    .iter()
                    .flat_map(|c| {
                        let read = early_chunks.contains(&c.id);
                        w.chunk_ranges(c.first_wg, c.count)
                            .into_iter()
                            .map(move |r| (r, c.device, read))
                    })
                    .collect::<Vec<_>>();
                // the early reads must have landed before their bytes are used
                wait_release(&std::mem::take(&mut early.0));
                let staged = match staging.remove(&b.mem) {
                    Some(s) => Some(s),
                    // SAFETY: as for the snapshots.
                    // (no area when the app's device wrote everything: nothing is read)
                    None if pieces.iter().all(|p| !p.2)
                        && pieces.iter().any(|p| Some(p.1) != home_sched) =>
                    {
                        Some(unsafe {
                            self.host_pool.take(
                                b.mem,
                                Role::ReadBack,
                                b.size,
                                job.app_context,
                                home,
                            )
                        })
                    }
                    None => None,
                };
                match self.read_pieces(engine, &devs, home_sched, b, pieces, staged) {
                    Ok((ranges, bytes, n, on_device)) => {
                        merged_bytes += n;
                        if let Some(h) = home_d {
                            let rep = self.replicas[&(b.mem, slot(h, home_d))].mem;
                            device_copies.push((b.mem, rep, on_device));
                        }
                        results.push((b.mem, ranges, bytes));
                    }
                    Err(e) => {
                        wait_release(&upload_markers);
                        return Err(format!("argument {}: {e}", b.index));
                    }
                }
                continue;
            }
            let Some(base) = snap.as_ref() else {
                wait_release(&upload_markers);
                return Err(format!(
                    "argument {}: no pre-launch copy to diff against",
                    b.index
                ));
            };
            // read every contributing device's replica concurrently, into page-locked
            // areas kept for the next launch (a fresh heap area reads at a fraction of the
            // bus rate: 64 MiB took 70-80 ms on 4 H200s, results/gpu-2026-11-22g)
            let mut copies: Vec<HostBytes> = contributors
                .iter()
                .map(|&i| {
                    // SAFETY: as for the snapshots.
                    unsafe {
                        self.host_pool
                            .take(b.mem, Role::DiffCopy(i), b.size, job.app_context, home)
                    }
                })
                .collect();
            let mut reads = Vec::new();
            for (&i, copy) in contributors.iter().zip(copies.iter_mut()) {
                let d = devs[i];
                // SAFETY: non-blocking read on clprism's in-order queue (after the device's
                // chunks) into `copy`, which outlives the wait below.
                match unsafe {
                    cl::read_async(
                        engine.devices[d].queue,
                        self.replicas[&(b.mem, d)].mem,
                        0,
                        copy,
                    )
                } {
                    Ok(ev) => reads.push(ev),
                    Err(e) => {
                        wait_release(&reads);
                        wait_release(&upload_markers);
                        return Err(format!("reading back from {}: {e}", engine.devices[d].name));
                    }
                }
            }
            // SAFETY: waiting on clprism's own read events.
            let waited = unsafe { cl::wait(&reads) };
            wait_release(&reads);
            if let Err(e) = waited {
                wait_release(&upload_markers);
                return Err(format!("reading back: {e}"));
            }
            let result = if copies.len() == 1 {
                copies.pop().unwrap_or_else(|| HostBytes::heap(0))
            } else {
                // SAFETY: as for the snapshots.
                let mut out = unsafe {
                    self.host_pool
                        .take(b.mem, Role::ReadBack, b.size, job.app_context, home)
                };
                let refs: Vec<&[u8]> = copies.iter().map(|c| &c[..]).collect();
                let merged = super::merge::diff_merge_into(&mut out, &base[..], &refs, threads);
                for (&i, c) in contributors.iter().zip(copies) {
                    self.host_pool.give(b.mem, Role::DiffCopy(i), c);
                }
                if let Err(j) = merged {
                    wait_release(&upload_markers);
                    return Err(format!("argument {}: two devices wrote different values to byte {j} (work-groups overlap)", b.index));
                }
                out
            };
            merged_bytes += result.len() as u64;
            let len = result.len() as u64;
            results.push((b.mem, vec![[0, len]], result));
        }
        wait_release(&upload_markers);
        marks.push(("read_back", t0.elapsed().as_nanos() as u64));
        // Only now, with every buffer merged without conflict, touch the app's data.
        for (mem, ranges, bytes) in &results {
            for r in ranges {
                let piece = &bytes[r[0] as usize..r[1] as usize];
                // SAFETY: non-blocking write from `bytes`, which outlives the finish below.
                unsafe { cl::write(home, *mem as cl_mem, r[0] as usize, piece, false) }
                    .map_err(|e| format!("writing the merged result: {e}"))?;
            }
        }
        for (mem, replica, ranges) in &device_copies {
            for r in ranges {
                let (off, len) = (r[0] as usize, (r[1] - r[0]) as usize);
                // SAFETY: device-side copy between buffers of the app's context; the chunks
                // that wrote the replica have completed.
                unsafe { cl::copy(home, *replica, *mem as cl_mem, off, off, len) }
                    .map_err(|e| format!("copying the app device's result: {e}"))?;
            }
        }
        // SAFETY: clprism's own queue in the app's context.
        unsafe { cl::finish(home) }.map_err(|e| format!("writing the merged result: {e}"))?;
        marks.push(("write_back", t0.elapsed().as_nanos() as u64));
        // The app's buffer changed without an app command bumping its epoch: no replica of
        // it, on any device (also those that sat this launch out), is valid any more.
        for (mem, _, _) in &results {
            for ((m, _), r) in self.replicas.iter_mut() {
                if m == mem {
                    r.epoch = 0;
                }
            }
        }

        // Ω per device for the next launch's warm start
        let streak = if warm { warm_streak + 1 } else { 0 };
        self.history
            .insert(history_key, (sched.measured_omegas(), streak));
        // measured speed per device (for `best`)
        {
            let m = self
                .measured
                .entry(job.kernel_id())
                .or_insert_with(|| vec![None; engine.devices.len()]);
            for (i, &d) in devs.iter().enumerate() {
                let ns: u64 = done_chunks
                    .iter()
                    .filter(|c| c.device == i)
                    .filter_map(|c| chunk_log.get(&c.id)?["device_ns"].as_u64())
                    .sum();
                if per_dev_wgs[i] > 0 && ns > 0 {
                    m[d] = Some(ns as f64 / (per_dev_wgs[i] * wgs_per_unit) as f64);
                }
            }
            // for `sched::split`: the whole run on the app's device, or a split's merge cost
            if devs.len() == 1 && Some(devs[0]) == app_d {
                if let Some(t) = m[devs[0]] {
                    self.whole.insert(job.kernel_id(), t);
                }
            } else if devs.len() > 1 {
                let phase = |name: &str| {
                    marks
                        .iter()
                        .position(|(n, _)| *n == name)
                        .map(|i| marks[i].1 - if i > 0 { marks[i - 1].1 } else { 0 })
                };
                if let (Some(r), Some(w)) = (phase("read_back"), phase("write_back")) {
                    self.merge_cost.insert(job.kernel_id(), (r + w) as f64);
                }
            }
        }
        let ends: Vec<u64> = finish.iter().flatten().copied().collect();
        let idle_tail = match (ends.iter().min(), ends.iter().max()) {
            (Some(a), Some(b)) => b - a,
            _ => 0,
        };
        let total: u64 = per_dev_wgs.iter().sum();
        let mut chunks: Vec<(u64, Value)> = chunk_log.into_iter().collect();
        chunks.sort_by_key(|c| c.0);
        let schedule = json!({
            "scheduler": configured.clone().unwrap_or_else(|| kind.to_string()),
            "warm_start": warm,
            "split_decision": split_log,
            "devices_excluded": excluded,
            "devices": devs.iter().map(|d| json!({"index": engine.devices[*d].index, "name": engine.devices[*d].name})).collect::<Vec<_>>(),
            "split_dim": split,
            "work_groups": units,
            "wgs_per_unit": wgs_per_unit,
            "wave_work_groups": wave_wgs,
            "registers_per_work_item": registers,
            "chunks": chunks.into_iter().map(|c| c.1).collect::<Vec<_>>(),
            "share": per_dev_wgs.iter().map(|w| if total > 0 { *w as f64 / total as f64 } else { 0.0 }).collect::<Vec<_>>(),
            "idle_tail_ns": idle_tail,
            "makespan_ns": makespan,
            "merge": if model.is_some() { "footprint" } else { "diff" },
            "merged_bytes": merged_bytes,
            "early_read_chunks": early_chunks.len(),
            "pinned_staging_bytes": StagingPool::pinned_bytes(),
            "footprint": footprint_log,
            "app_device_direct": home_d.is_some(),
            "phases": marks.iter().scan(0u64, |start, (name, end)| {
                let p = json!({"name": name, "start_ns": *start, "end_ns": *end});
                *start = *end;
                Some(p)
            }).collect::<Vec<_>>(),
            "local_chosen": !job.local_given,
            "fallback": Value::Null,
            "best": best_log,
        });
        let mut schedule = schedule;
        if crate::config::get().verify {
            schedule["verify"] = self.verify(
                job,
                &bufs
                    .iter()
                    .zip(&snapshots)
                    .filter(|(b, _)| b.written)
                    .filter_map(|(b, s)| Some((b.index, b.mem, s.as_ref()?.to_vec())))
                    .collect::<Vec<_>>(),
            );
        }
        for b in &bufs {
            let epoch = job.epochs.get(&b.mem).copied().unwrap_or(1);
            self.last_epochs.insert((job.kernel_id(), b.mem), epoch);
        }
        // keep the staging areas for the next launch (their transfers have all completed)
        for (b, snap) in bufs.iter().zip(snapshots) {
            if let Some(h) = snap {
                self.host_pool.give(b.mem, Role::Snapshot, h);
            }
        }
        for (mem, _, h) in results {
            self.host_pool.give(mem, Role::ReadBack, h);
        }
        Ok(Outcome {
            makespan_ns: makespan,
            schedule,
        })
    }

    /// Reads each `(range, device)` piece of one buffer from that device's replica into one
    /// host copy of the buffer, concurrently on every device's queue. Returns the merged
    /// ranges, the bytes (valid inside the ranges) and the number of bytes read.
    ///
    /// Errors: overlapping pieces (two devices would write the same bytes), a piece outside
    /// the buffer, a failed read.
    /// Enqueues non-blocking reads of the bytes that units `[first, first + count)` wrote on
    /// balance device `d` (per the footprint `model`) into `staging`, on the device's second
    /// queue; their events go to `events`. Returns false (the merge then reads them itself)
    /// when a read could not be enqueued.
    #[allow(clippy::too_many_arguments)]
    fn read_early(
        &mut self,
        engine: &Engine,
        d: usize,
        model: Option<&FootprintModel>,
        bufs: &[BufArg],
        staging: &mut FxHashMap<Key, HostBytes>,
        (first, count): (u64, u64),
        events: &mut Vec<cl_event>,
    ) -> bool {
        let Some(m) = model else { return false };
        let Ok(q) = self.read_queue(engine, d) else {
            return false;
        };
        let mut ok = true;
        for b in bufs.iter().filter(|b| b.written) {
            let (Some(w), Some(stage), Some(rep)) = (
                m.written.iter().find(|w| w.arg == b.index as u32),
                staging.get_mut(&b.mem),
                self.replicas.get(&(b.mem, d)),
            ) else {
                continue;
            };
            for r in w.chunk_ranges(first, count) {
                let (lo, hi) = (r[0] as usize, r[1] as usize);
                let Some(piece) = stage.get_mut(lo..hi) else {
                    return false;
                };
                // SAFETY: non-blocking read on clprism's queue into `piece`; the chunk that
                // wrote these bytes has completed, and `staging` outlives `events` (waited
                // for before it is used or dropped).
                match unsafe { cl::read_async(q, rep.mem, lo, piece) } {
                    Ok(ev) => events.push(ev),
                    Err(_) => ok = false,
                }
            }
        }
        if ok {
            // SAFETY: clprism's queue.
            let _ = unsafe { cl::flush(q) };
        }
        ok
    }

    /// Collects the bytes that completed chunks wrote to `buf`: `pieces` are (byte range,
    /// scheduler device, already read early into `staged`). Ranges of the app's own device
    /// stay on it (returned for device-side copies); the others are read back now unless
    /// read early. Errors: overlapping footprints, a range past the buffer, a failed read.
    fn read_pieces(
        &self,
        engine: &Engine,
        devs: &[usize],
        home_sched: Option<usize>,
        buf: &BufArg,
        mut pieces: Vec<([u64; 2], usize, bool)>,
        staged: Option<HostBytes>,
    ) -> Result<ReadBack, String> {
        let (mem, size) = (buf.mem, buf.size);
        pieces.sort_unstable_by_key(|p| p.0);
        let mut end = 0u64;
        for (r, _, _) in &pieces {
            if r[0] < end {
                return Err(format!(
                    "chunks on different devices write byte {} (footprints overlap)",
                    r[0]
                ));
            }
            end = r[1];
        }
        if end > size as u64 {
            return Err(format!(
                "the footprint reaches byte {end} of a {size}-byte buffer"
            ));
        }
        let (on_device, pieces): (Vec<_>, Vec<_>) =
            pieces.into_iter().partition(|p| Some(p.1) == home_sched);
        let on_device = footprint::normalise(on_device.into_iter().map(|p| p.0).collect());
        // pieces already read back early are in `staged`
        let mut bytes = match staged {
            Some(v) if v.len() == size => v,
            // the app's device wrote every piece in place: nothing to read (a zeroed heap
            // area of the buffer's size cost 1-7 ms per 16 MiB, results/gpu-2026-11-22o)
            _ if pieces.is_empty() => HostBytes::heap(0),
            _ => {
                if pieces.iter().any(|p| p.2) {
                    return Err("early read-back lost its staging buffer".into());
                }
                HostBytes::heap(size)
            }
        };
        let mut reads = Vec::new();
        let mut total: u64 = on_device.iter().map(|r| r[1] - r[0]).sum();
        let mut rest: &mut [u8] = &mut bytes;
        let mut pos = 0u64;
        for (r, d, early) in &pieces {
            if *early {
                total += r[1] - r[0];
                continue;
            }
            let tail = std::mem::take(&mut rest);
            let (_, tail) = tail.split_at_mut((r[0] - pos) as usize);
            let (piece, tail) = tail.split_at_mut((r[1] - r[0]) as usize);
            rest = tail;
            pos = r[1];
            let dev = &engine.devices[devs[*d]];
            // SAFETY: non-blocking read on clprism's in-order queue (after the device's
            // chunks) into `piece`, which outlives the wait below.
            match unsafe {
                cl::read_async(
                    dev.queue,
                    self.replicas[&(mem, devs[*d])].mem,
                    r[0] as usize,
                    piece,
                )
            } {
                Ok(ev) => reads.push(ev),
                Err(e) => {
                    wait_release(&reads);
                    return Err(format!("reading back from {}: {e}", dev.name));
                }
            }
            total += r[1] - r[0];
        }
        // SAFETY: waiting on clprism's own read events.
        let waited = unsafe { cl::wait(&reads) };
        wait_release(&reads);
        waited.map_err(|e| format!("reading back: {e}"))?;
        let ranges = footprint::normalise(pieces.into_iter().map(|p| p.0).collect());
        Ok((ranges, bytes, total, on_device))
    }

    /// `CLPRISM_VERIFY=1`: runs the launch natively on copies of the written buffers (their
    /// pre-launch contents) and compares every byte with the merged result.
    fn verify(&mut self, job: &Job, written: &[(usize, Key, Vec<u8>)]) -> Value {
        let r = (|| -> Result<Value, ClError> {
            let q = self.home_queue(job.app_context, job.app_device)?;
            // SAFETY: clprism-owned scratch buffers and kernel in the app's context.
            unsafe {
                let k = cl::create_kernel(job.app_program, &job.kernel)?;
                let mut scratch = Vec::new();
                for (i, a) in job.args.iter().enumerate() {
                    if let Some((_, _, pre)) = written
                        .iter()
                        .find(|w| w.0 == i || buffer_of(a) == Some(w.1))
                    {
                        let m = cl::create_buffer(job.app_context, pre.len())?;
                        cl::write(q, m, 0, pre, true)?;
                        cl::set_arg(
                            k,
                            i as u32,
                            std::mem::size_of::<cl_mem>(),
                            (&m as *const cl_mem).cast(),
                        )?;
                        scratch.push((i, m));
                    } else {
                        match a {
                            KernelArg::Value(b) => cl::set_arg(
                                k,
                                i as u32,
                                b.as_slice().len(),
                                b.as_slice().as_ptr().cast(),
                            )?,
                            KernelArg::Local(n) => cl::set_arg(k, i as u32, *n, std::ptr::null())?,
                        }
                    }
                }
                let d = job.work_dim as usize;
                let ev = cl::enqueue_ndrange(
                    q,
                    k,
                    job.work_dim,
                    &job.offset[..d],
                    &job.global[..d],
                    &job.local[..d],
                    &[],
                )?;
                cl::wait(&[ev])?;
                cl::release_event(ev);
                let mut differing = 0u64;
                for (i, m) in &scratch {
                    let mem = buffer_of(&job.args[*i]).unwrap_or(0);
                    let len = written
                        .iter()
                        .find(|w| w.1 == mem)
                        .map(|w| w.2.len())
                        .unwrap_or(0);
                    let mut native = vec![0u8; len];
                    let mut merged = vec![0u8; len];
                    cl::read(q, *m, 0, &mut native)?;
                    cl::read(q, mem as cl_mem, 0, &mut merged)?;
                    differing += native.iter().zip(&merged).filter(|(a, b)| a != b).count() as u64;
                    cl::release_mem(*m);
                }
                cl::release_kernel(k);
                if differing > 0 {
                    crate::config::warn(&format!("CLPRISM_VERIFY: kernel {} launch {}: {differing} bytes differ from the native run", job.kernel, job.rec.seq));
                }
                Ok(json!({"differing_bytes": differing}))
            }
        })();
        r.unwrap_or_else(|e| json!({"error": e.to_string()}))
    }
}

fn wait_release(evs: &[cl_event]) {
    // SAFETY: clprism's own marker events.
    unsafe {
        let _ = cl::wait(evs);
        for e in evs {
            cl::release_event(*e);
        }
    }
}

/// The application buffer an argument value names, if any.
pub(super) fn buffer_of(a: &KernelArg) -> Option<Key> {
    match a {
        KernelArg::Value(b) if b.as_slice().len() == std::mem::size_of::<cl_mem>() => {
            let mut x = [0u8; 8];
            x.copy_from_slice(b.as_slice());
            let k = usize::from_ne_bytes(x);
            (k != 0 && TABLES.buffers.with(k, |_| ()).is_some()).then_some(k)
        }
        _ => None,
    }
}

/// Enqueues one chunk of `k` on `queue` (the device's queue, or clprism's queue in the app's
/// context for the app's own device), with the device's fault injection.
fn enqueue_chunk(
    dev: &Device,
    (queue, k): (cl_command_queue, cl_kernel),
    dim: usize,
    off: &[usize],
    g: &[usize],
    l: &[usize],
    tag: ChunkTag,
) -> Result<cl_event, ClError> {
    if dev.inject_fail {
        return Err(ClError {
            call: "clEnqueueNDRangeKernel (CLPRISM_FAULT)",
            code: CL_OUT_OF_RESOURCES,
        });
    }
    let wait: Vec<cl_event> = dev.block_event.into_iter().collect();
    // SAFETY: clprism's kernel and queue; the tag is reclaimed by the callback.
    unsafe {
        let ev = cl::enqueue_ndrange(queue, k, dim as u32, off, g, l, &wait)?;
        // one reference for the launch loop's polling, one owned by the callback
        if let Err(e) = cl::retain_event(ev) {
            cl::release_event(ev);
            return Err(e);
        }
        let tag = Box::into_raw(Box::new(tag));
        if let Err(e) = cl::on_complete(ev, chunk_callback, tag as *mut c_void) {
            drop(Box::from_raw(tag));
            cl::release_event(ev);
            cl::release_event(ev);
            return Err(e);
        }
        if let Err(e) = cl::flush(queue) {
            // the chunk is enqueued and its callback will report it; only polling is lost
            cl::release_event(ev);
            return Err(e);
        }
        Ok(ev)
    }
}

/// How often the launch loop polls the events of running chunks.
const POLL_INTERVAL: Duration = Duration::from_micros(100);

/// A running chunk whose event the launch loop polls.
struct Inflight {
    ev: cl_event,
    chunk: u64,
    device: usize,
    global_device: usize,
    claimed: Arc<AtomicBool>,
}

/// The launch's running chunks; their event references are released on drop.
struct InflightChunks(Vec<Inflight>);

impl InflightChunks {
    /// Completions found by polling (each removed from the set).
    fn poll(&mut self, launch: u64) -> Vec<ChunkDone> {
        let mut out = Vec::new();
        self.0.retain(|c| {
            // SAFETY: the launch loop's own reference to the chunk's event.
            let status = match unsafe { cl::event_status(c.ev) } {
                Ok(s) => s,
                Err(_) => return true, // the callback will report it
            };
            if status > CL_COMPLETE as cl_int {
                return true;
            }
            out.push(ChunkDone {
                launch,
                chunk: c.chunk,
                device: c.device,
                global_device: c.global_device,
                status,
                device_ns: if status == CL_COMPLETE as cl_int {
                    super::event_device_ns(c.ev)
                } else {
                    None
                },
                claimed: c.claimed.clone(),
            });
            // SAFETY: releasing the loop's own reference.
            unsafe { cl::release_event(c.ev) };
            false
        });
        out
    }
}

impl Drop for InflightChunks {
    fn drop(&mut self) {
        for c in &self.0 {
            // SAFETY: the loop's own references (callbacks hold theirs).
            unsafe { cl::release_event(c.ev) };
        }
    }
}

/// Cache key of a launch's write footprints: the program variant and kernel, the NDRange,
/// every by-value and `__local` argument, and the buffer sizes (buffer handles do not
/// matter, their sizes do).
fn footprint_key(
    key: &(String, String),
    job: &Job,
    kinds: &[ArgKind],
    bufs: &[(Key, usize)],
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
    for (a, kind) in job.args.iter().zip(kinds) {
        match (a, buffer_of(a)) {
            (_, Some(m)) => {
                let size = bufs.iter().find(|b| b.0 == m).map_or(0, |b| b.1);
                let _ = write!(k, "b{size},");
            }
            (KernelArg::Local(n), None) => {
                let _ = write!(k, "l{n},");
            }
            (KernelArg::Value(v), None) => {
                let _ = write!(k, "v{kind:?}{:?},", v.as_slice());
            }
        }
    }
    k
}

/// The emulator's arguments for a launch, every buffer zero-filled at its size (allocated
/// zeroed, so untouched pages cost nothing); a buffer argument that is not a tracked buffer
/// is NULL.
pub(super) fn zero_args(job: &Job, kinds: &[ArgKind]) -> Vec<crate::emu::ArgValue> {
    use crate::emu::ArgValue;
    job.args
        .iter()
        .zip(kinds)
        .map(|(a, kind)| match (a, buffer_of(a)) {
            (_, Some(m)) => match TABLES.buffers.get(m) {
                Some(i) => ArgValue::Buffer(vec![0; i.size]),
                None => ArgValue::Scalar(vec![0; 8]),
            },
            (KernelArg::Local(n), None) => ArgValue::Local(*n),
            (KernelArg::Value(v), None) => {
                if matches!(kind, ArgKind::Global { .. } | ArgKind::Constant) {
                    ArgValue::Scalar(vec![0; 8])
                } else {
                    ArgValue::Scalar(v.as_slice().to_vec())
                }
            }
        })
        .collect()
}
