//! Step 1 of a balanced launch, pure of the app's data: what runs where. The kernel built on
//! the devices, its buffer arguments, the NDRange cut into units along the split dimension,
//! the scheduler, the write footprints and the split decision (DESIGN.md §7; Boyer ch. 4).

use super::{BufArg, WorkerState};
use crate::exec::footprint::{self, FootprintModel};
use crate::exec::program::{self, ArgKind};
use crate::exec::{Engine, Forward, Job};
use crate::log::schema::{BestChoice, ExcludedDevice, FootprintLog, Nullable, SplitDecisionLog};
use crate::registry::tables::{buffer_named_by, KernelArg, ProgramOrigin};
use crate::registry::TABLES;
use crate::sched::{self, ChunkScheduler, SchedulerKind};
use opencl_sys::*;
use rustc_hash::FxHashMap;
use std::sync::Arc;
use std::time::Instant;

/// The NDRange as the scheduler sees it: units are work-groups along the split dimension
/// (the slowest-varying one with more than one work-group); each unit holds `wgs_per_unit`
/// work-groups of the other dimensions.
#[derive(Debug, Clone)]
pub(super) struct Shape {
    /// NDRange dimensions.
    pub dim: usize,
    /// Work-groups per dimension.
    pub groups: Vec<usize>,
    /// The split dimension.
    pub split: usize,
    /// Work-groups along the split dimension (the scheduler's units).
    pub units: u64,
    /// Work-groups per unit.
    pub wgs_per_unit: u64,
}

impl Shape {
    pub fn of(job: &Job) -> Shape {
        let dim = job.work_dim as usize;
        let groups: Vec<usize> = (0..dim).map(|d| job.global[d] / job.local[d]).collect();
        let split = (0..dim).rev().find(|d| groups[*d] > 1).unwrap_or(0);
        let wgs_per_unit = groups
            .iter()
            .enumerate()
            .filter(|(d, _)| *d != split)
            .map(|(_, g)| *g as u64)
            .product();
        Shape {
            dim,
            split,
            units: groups[split] as u64,
            wgs_per_unit,
            groups,
        }
    }
}

/// What the steps of one balanced launch decided; read by every later step.
pub(super) struct Plan {
    /// (program variant, kernel name): the builds in [`WorkerState::kernels`].
    pub key: (String, String),
    /// Kinds of the kernel's arguments.
    pub kinds: Vec<ArgKind>,
    /// The buffer arguments (one per distinct buffer).
    pub bufs: Vec<BufArg>,
    pub shape: Shape,
    /// Participating devices (indices in [`Engine::devices`]).
    pub devs: Vec<usize>,
    /// Devices that sit this launch out, with why (`schedule.devices_excluded`).
    pub excluded: Vec<ExcludedDevice>,
    /// The scheduler that runs the chunks.
    pub kind: SchedulerKind,
    /// The configured scheduler when a first launch runs whole to be measured.
    pub configured: Option<String>,
    /// The `best` scheduler's record (`null`: another scheduler).
    pub best_log: Nullable<BestChoice>,
    /// Write footprints, when every written buffer has one.
    pub model: Option<Arc<FootprintModel>>,
    /// `schedule.footprint` (`null`: a model from memory).
    pub footprint_log: Nullable<FootprintLog>,
    /// The app's own device when its chunks run in the app's context (direct).
    pub home_d: Option<usize>,
    /// The app's device among the participating devices.
    pub app_d: Option<usize>,
    /// `schedule.split_decision` (`null`: not consulted).
    pub split_log: Nullable<SplitDecisionLog>,
    /// `CLPRISM_VERIFY`, or the kernel's agreement check ([`Plan::check_agreement`]).
    pub verify: bool,
    /// The kernel's first split over devices that may compute other bytes than the app's
    /// device (another device model or driver): the merged result is compared with a whole
    /// run on the app's device, and the app gets the whole run's bytes if they differ
    /// ([`WorkerState::agreement`]).
    pub check_agreement: bool,
    /// Phase boundaries, ns since the launch started (`schedule.phases`).
    pub marks: Vec<(&'static str, u64)>,
    /// What the chunks write stays on their devices (the buffer directory,
    /// [`Plan::keeps_resident`]); otherwise it is gathered into the app's buffers at once.
    pub resident: bool,
}

/// Where device `d`'s replicas live, `home_d` being the app's own device when its chunks
/// run in the app's context ([`Plan::slot`]).
pub fn slot(home_d: Option<usize>, d: usize) -> usize {
    if Some(d) == home_d {
        usize::MAX - d
    } else {
        d
    }
}

impl Plan {
    /// A buffer the kernel only writes and never reads needs no pre-launch copy.
    pub fn skip_baseline(&self, b: &BufArg) -> bool {
        !self.verify
            && b.written
            && self.model.as_ref().is_some_and(|m| {
                m.written
                    .iter()
                    .any(|w| w.arg == b.index as u32 && !w.read_by_kernel)
            })
    }

    /// Where device `d`'s replicas live: the app's own device (direct) keeps its replicas
    /// in the app's context, apart from those in clprism's context there.
    pub fn slot(&self, d: usize) -> usize {
        slot(self.home_d, d)
    }

    /// The direct device's index among the participating devices.
    pub fn home_sched(&self) -> Option<usize> {
        self.home_d
            .and_then(|h| self.devs.iter().position(|d| *d == h))
    }

    /// Whether what this launch writes may stay on the devices (`CLPRISM_BALANCE_GATHER=lazy`):
    /// every written buffer has a write footprint, nothing compares the result with a whole
    /// run (verification, the agreement check: both read the app's buffers at once), no
    /// buffer's host memory is the app's (`CL_MEM_USE_HOST_PTR`), and every participating
    /// device has a holder bit in the directory.
    pub fn keeps_resident(&self, lazy: bool) -> bool {
        lazy && self.model.is_some()
            && !self.verify
            && !self.check_agreement
            && self.devs.len() >= 2
            && self.bufs.iter().all(|b| !b.always_stale)
            && self
                .devs
                .iter()
                .all(|d| crate::exec::directory::holder_of_slot(self.slot(*d)).is_some())
    }

    pub fn mark(&mut self, name: &'static str, t0: Instant) {
        self.marks.push((name, t0.elapsed().as_nanos() as u64));
    }
}

/// The buffer arguments of `job` (arguments bound to one buffer are merged under the first
/// index). Errors: an image or other opaque argument, an unknown buffer, a sub-buffer.
pub(super) fn classify_args(job: &Job, kinds: &[ArgKind]) -> Result<Vec<BufArg>, String> {
    let mut bufs: Vec<BufArg> = Vec::new();
    for (i, (kind, a)) in kinds.iter().zip(&job.args).enumerate() {
        match kind {
            ArgKind::Opaque => {
                return Err(format!("argument {i} is an image, sampler, pipe or queue"))
            }
            ArgKind::Global { .. } | ArgKind::Constant => {
                let Some(m) = buffer_named_by(a) else {
                    if matches!(a, KernelArg::Value(b) if b.as_slice().iter().all(|x| *x == 0)) {
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
    Ok(bufs)
}

/// What a footprint model changes: arguments the kernel never writes need no merge, and a
/// buffer the kernel only writes needs no pre-launch copy. Returns whether the model covers
/// every written buffer (otherwise the merge diffs whole buffers).
fn apply_model(bufs: &mut [BufArg], m: &FootprintModel) -> bool {
    for b in bufs.iter_mut() {
        if b.written && b.bindings == 1 && m.read_only.contains(&(b.index as u32)) {
            b.written = false;
        }
    }
    bufs.iter()
        .filter(|b| b.written)
        .all(|b| b.bindings == 1 && m.written.iter().any(|w| w.arg == b.index as u32))
}

/// The devices of `devs` that may compute other bytes than the app's device for the same
/// kernel: another device name or driver version (another compiler, another rounding of
/// division and math built-ins, another FMA contraction). PoCL 5.0's basic and pthread
/// devices already differ: Rodinia gaussian's output natively on each has other bytes
/// (results/session14-2026-11-27/pocl5-devices-differ.txt). Identical devices of one driver
/// (several H200s, two pthread devices) compile alike.
fn unlike_devices(engine: &Engine, job: &Job, devs: &[usize]) -> Vec<usize> {
    if devs.iter().all(|&d| engine.devices[d].id == job.app_device) {
        return Vec::new();
    }
    // the app's device as a balance device knows its name and driver; otherwise ask the driver
    let app = match engine.devices.iter().find(|d| d.id == job.app_device) {
        Some(d) => (d.name.clone(), Some(d.driver_version.clone())),
        None => (
            crate::registry::device::describe(job.app_device)
                .name
                .clone(),
            crate::exec::devices::driver_version(job.app_device),
        ),
    };
    devs.iter()
        .copied()
        .filter(|&d| {
            let d = &engine.devices[d];
            d.id != job.app_device && (&d.name, Some(&d.driver_version)) != (&app.0, app.1.as_ref())
        })
        .collect()
}

impl WorkerState {
    /// Step 1: the plan of one balanced launch. `Err`: the launch is forwarded (nothing of
    /// the app's data was touched).
    pub(super) fn plan(
        &mut self,
        engine: &Engine,
        job: &Job,
        t0: Instant,
    ) -> Result<Plan, Forward> {
        if let Some(why) = self.float_whole.get(&*job.id) {
            return Err(why.clone().into());
        }
        if let Some(why) = self.float_whole_before_build(engine, job) {
            return Err(why.into());
        }
        let (variant, devs, excluded) = self.build(engine, job)?;
        let cfg = crate::config::get();
        // Only the app's own device can take chunks (it is the only balance device, or the
        // others sit out now): the launch goes to the driver as the app made it, not through
        // the replicas and the merge (Black-Scholes on one H200: 1.7 ms per launch that way
        // against 0.2 ms forwarded, results/gpu-2026-11-22p; Rodinia streamcluster on an H200
        // plus PoCL's CPU: 6.1x native, session 15).
        if devs.len() == 1 && engine.devices[devs[0]].id == job.app_device && !cfg.verify {
            if excluded.is_empty() {
                return Err("kept whole on the app's device: it is the only balance device".into());
            }
            let why: Vec<String> = excluded
                .iter()
                .map(|e| format!("{}: {}", e.index, e.reason))
                .collect();
            return Err(format!(
                "kept whole on the app's device: no other device can take chunks now ({})",
                why.join("; ")
            )
            .into());
        }
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
            )
            .into());
        }
        let bufs = classify_args(job, &kinds)?;
        let mut plan = Plan {
            key,
            kinds,
            bufs,
            shape: Shape::of(job),
            devs,
            excluded,
            kind: engine.scheduler.clone(),
            configured: None,
            best_log: Some(None),
            model: None,
            footprint_log: Some(None),
            home_d: None,
            app_d: None,
            split_log: Some(None),
            verify: cfg.verify,
            check_agreement: false,
            marks: vec![("build", t0.elapsed().as_nanos() as u64)],
            resident: false,
        };
        if let Some(&n) = self.agreement.get(&plan.key) {
            if n > 0 {
                return Err(format!(
                    "kept whole on the app's device: at its first split the other devices' \
                     result differed from the app's device in {n} bytes (their compilers round \
                     or contract floating point differently), so no split is byte-identical"
                )
                .into());
            }
        } else {
            self.keep_byte_identity(engine, job, &mut plan)?;
        }
        self.choose_scheduler(engine, job, &mut plan)?;
        // refused setups (a scheduler for another device count) end here, before any copy
        ChunkScheduler::new(&plan.kind, &engine.boyer, plan.devs.len(), plan.shape.units)?;
        if let Some(why) = self.footprints_for(job, &mut plan) {
            return Err(format!("kept whole on the app's device: {why}").into());
        }
        plan.mark("footprint", t0);
        crate::config::debug(|| {
            format!(
                "launch {}: build {:.3} ms, footprint {:.3} ms",
                job.rec.seq,
                plan.marks[0].1 as f64 / 1e6,
                (plan.marks[1].1 - plan.marks[0].1) as f64 / 1e6
            )
        });
        plan.home_d = home_device(engine, job, &plan);
        plan.app_d = plan
            .devs
            .iter()
            .copied()
            .find(|&d| engine.devices[d].id == job.app_device);
        self.split_decision(job, &mut plan)?;
        plan.resident = plan.keeps_resident(cfg.balance_gather);
        Ok(plan)
    }

    /// Keeps a split byte-identical to a whole run on the app's device when other devices
    /// compile the kernel with another compiler ([`unlike_devices`]): a kernel that does
    /// floating-point arithmetic ([`crate::emu::KernelInfo::float_arithmetic`]) leaves them
    /// out (`CLPRISM_BALANCE_FLOAT=like`), and its launch stays whole when fewer than two
    /// devices are left; any other kernel's first split over them is checked against a whole
    /// run (`CLPRISM_BALANCE_AGREEMENT`). Design change of session 15: the agreement check
    /// alone let Rodinia gaussian, hotspot and hotspot3D on PoCL 5.0 agree at their first
    /// split and differ later (results/session14-2026-11-27/agreement-4b9f67d.txt).
    fn keep_byte_identity(
        &mut self,
        engine: &Engine,
        job: &Job,
        plan: &mut Plan,
    ) -> Result<(), Forward> {
        let unlike = unlike_devices(engine, job, &plan.devs);
        if unlike.is_empty() {
            return Ok(());
        }
        let cfg = crate::config::get();
        if !cfg.float_on_unlike {
            if let Some(why) = self.float_reason(job) {
                for &d in &unlike {
                    plan.excluded.push(ExcludedDevice {
                        index: engine.devices[d].index.clone(),
                        reason: format!(
                            "{why}, which its compiler may round or contract otherwise than the \
                             app's device's (CLPRISM_BALANCE_FLOAT=any allows it)"
                        ),
                    });
                }
                plan.devs.retain(|d| !unlike.contains(d));
                if plan.devs.len() < 2 {
                    // like devices exist but sit out now (a kernel with none at all stayed
                    // whole for good before the build: `float_whole_before_build`)
                    let others: Vec<String> = plan
                        .excluded
                        .iter()
                        .filter(|e| !unlike.iter().any(|&d| engine.devices[d].index == e.index))
                        .map(|e| format!("; {} sits out: {}", e.index, e.reason))
                        .collect();
                    let reason: std::sync::Arc<str> = format!(
                        "kept whole on the app's device: {why}, and no other balance device \
                         that compiles it as the app's device does can take part, so no split \
                         is byte-identical (CLPRISM_BALANCE_FLOAT=any splits it anyway){}",
                        others.concat()
                    )
                    .into();
                    return Err(reason.into());
                }
                return Ok(());
            }
        }
        if cfg.agreement {
            plan.verify = true;
            plan.check_agreement = true;
        }
        Ok(())
    }

    /// A floating-point kernel when no balance device but the app's compiles like the app's
    /// device ([`unlike_devices`] over all of them): it stays whole for good, decided before
    /// the program is built on the other devices, which it would never use. Deciding after the
    /// build made a cold CLBlast `clblast_test_xgemm` in `CLPRISM_SPLIT=always` wait 214 s for
    /// PoCL's builds of its 8 programs on a `pthread` device (app on `basic`; 4.4 s natively,
    /// session 16), and 4.1x native on an H200 plus PoCL's CPU.
    fn float_whole_before_build(
        &mut self,
        engine: &Engine,
        job: &Job,
    ) -> Option<std::sync::Arc<str>> {
        if crate::config::get().float_on_unlike {
            return None;
        }
        let all: Vec<usize> = (0..engine.devices.len()).collect();
        if all.len() - unlike_devices(engine, job, &all).len() >= 2 {
            return None;
        }
        let why = self.float_reason(job)?;
        let reason: std::sync::Arc<str> = format!(
            "kept whole on the app's device: {why}, and no other balance device compiles it as \
             the app's device does, so no split is byte-identical (CLPRISM_BALANCE_FLOAT=any \
             splits it anyway)"
        )
        .into();
        self.float_whole.insert(job.id.clone(), reason.clone());
        Some(reason)
    }

    /// Why the launch's kernel counts as floating point for [`Self::keep_byte_identity`],
    /// or `None` for a kernel without floating-point arithmetic. A kernel the emulator
    /// cannot load counts as floating point, with the reason.
    fn float_reason(&mut self, job: &Job) -> Option<String> {
        if let Some(v) = self.float_verdicts.get(&*job.id) {
            return v.clone();
        }
        let v = self.float_verdict(job);
        self.float_verdicts.insert(job.id.clone(), v.clone());
        v
    }

    /// [`Self::float_reason`] worked out: the kernel in the program's SPIR-V, else the
    /// program's text.
    fn float_verdict(&mut self, job: &Job) -> Option<String> {
        let source = match &job.program.origin {
            ProgramOrigin::Source(s) => s.clone(),
            _ => std::sync::Arc::from(""),
        };
        let t = Instant::now();
        let module = self.module(job, &source);
        crate::config::debug(|| {
            format!(
                "launch {}: floating-point check {:.3} ms",
                job.rec.seq,
                t.elapsed().as_secs_f64() * 1e3
            )
        });
        match module {
            Ok(m) => match m.module.kernel(&job.kernel) {
                Some(k) if !k.float_arithmetic => None,
                Some(_) => Some("the kernel does floating-point arithmetic".into()),
                None => Some("the kernel's floating-point check found no such kernel".into()),
            },
            // no SPIR-V (no toolchain here): the program's text decides, conservatively
            Err(e) => match crate::exec::program::inspected_text(
                &job.program.hash,
                &source,
                &job.program.options,
            ) {
                Ok(text) if !crate::exec::program::mentions_floating_point(&text) => None,
                _ => Some(format!(
                    "the kernel may do floating-point arithmetic (its program's text names \
                     floating point, and the SPIR-V check is unavailable: {e})"
                )),
            },
        }
    }

    /// The scheduler (`CLPRISM_SCHEDULER`, `CLPRISM_BOYER`: parsed once, when the engine
    /// started), adjusted to the participating devices; `best` picks one device here.
    fn choose_scheduler(
        &mut self,
        engine: &Engine,
        job: &Job,
        plan: &mut Plan,
    ) -> Result<(), String> {
        let n = plan.devs.len();
        if let SchedulerKind::Static(f) = &plan.kind {
            if f.len() == engine.devices.len() && f.len() != n {
                // one fraction per balance device: those left out of this launch (dead, or
                // not taking chunks now) give up theirs
                plan.kind = SchedulerKind::Static(plan.devs.iter().map(|&d| f[d]).collect());
            } else if f.len() != n {
                crate::config::warn_once_per(
                    &format!(
                        "CLPRISM_SCHEDULER: static partition has {} fractions for {n} \
                         devices; using boyer",
                        f.len()
                    ),
                    "static-len",
                );
                plan.kind = SchedulerKind::Boyer;
            }
        }
        if let SchedulerKind::Single(i) = plan.kind {
            if i >= n {
                return Err(format!("single:{i} but only {n} devices"));
            }
        }
        if plan.kind == SchedulerKind::Best {
            let mut state = std::mem::take(&mut self.best);
            let measured = self.measured.get(&job.kernel_id()).cloned();
            let source = match &job.program.origin {
                ProgramOrigin::Source(s) => s.to_string(),
                _ => String::new(),
            };
            let c = state.choose(
                engine,
                &plan.devs,
                job,
                &plan.kinds,
                measured.as_deref(),
                || self.module(job, &source).map(|m| m.module),
            );
            self.best = state;
            plan.best_log = Some(Some(c.record));
            plan.kind = SchedulerKind::Single(c.pick);
        }
        Ok(())
    }

    /// Step 2: the write footprints (cached per launch shape, in memory and on disk; derived
    /// on zero-filled buffers otherwise, see `derive_footprint`), applied to the plan.
    /// Finds (in memory, on disk) or derives the launch's footprint model and applies it to
    /// the plan. Returns why the launch must be kept whole when the model says its
    /// work-groups depend on each other's writes ([`FootprintModel::order_dependent`]).
    fn footprints_for(&mut self, job: &Job, plan: &mut Plan) -> Option<String> {
        let varying = self.varying_values(job, plan);
        let free: Vec<(u32, Vec<u32>)> = self
            .free_values(job, plan)
            .iter()
            .filter(|f| varying.contains(&f.0))
            .cloned()
            .collect();
        let fkey = super::footprint_key(
            &plan.key,
            job,
            &plan.kinds,
            &plan
                .bufs
                .iter()
                .map(|b| (b.mem, b.size))
                .collect::<Vec<_>>(),
            &free.iter().map(|f| f.0).collect::<Vec<_>>(),
        );
        let mut from_disk = false;
        if !self.footprints.contains_key(&fkey) {
            // a model saved by an earlier run of the same program and launch shape
            if let Some(m) = footprint::load_cached(&fkey) {
                self.footprints.insert(fkey.clone(), m.map(Arc::new));
                from_disk = true;
            }
        }
        let mut log: Option<FootprintLog> = None;
        if let Some(Ok(m)) = self.footprints.get(&fkey) {
            if let Some(why) = &m.order_dependent {
                return Some(why.clone());
            }
            if apply_model(&mut plan.bufs, m) {
                plan.model = Some(Arc::clone(m));
            }
        } else if !self.footprints.contains_key(&fkey) {
            let t = Instant::now();
            let (derived, kernel_verdict) = self.derive_footprint(job, plan, &free);
            self.note_derivation(job, t.elapsed().as_nanos() as f64);
            let mut l = FootprintLog {
                derived_ms: Some(t.elapsed().as_secs_f64() * 1e3),
                ..Default::default()
            };
            let order_dependent = derived
                .as_ref()
                .ok()
                .and_then(|m| m.order_dependent.clone());
            if let Some(m) = derived.as_ref().ok().filter(|_| order_dependent.is_none()) {
                l.sampled_groups = Some(m.sampled_groups as u64);
                l.skipped_loops = Some(m.skipped_loops);
                if apply_model(&mut plan.bufs, m) {
                    plan.model = Some(m.clone());
                }
            }
            // A failure past the toolchain is the kernel's own: saved, so later runs of the
            // same launch shape skip the derivation.
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
            if order_dependent.is_some() {
                return order_dependent;
            }
            log = Some(l);
        }
        if from_disk {
            log = Some(FootprintLog {
                from_cache: Some(true),
                ..Default::default()
            });
        }
        let reason = match (&plan.model, self.footprints.get(&fkey)) {
            (None, Some(Err(e))) => Some(e.clone()),
            (None, _) => {
                Some("a written buffer is bound to several arguments or has no footprint".into())
            }
            _ => None,
        };
        if reason.is_some() {
            log.get_or_insert_with(Default::default).reason = reason;
        }
        plan.footprint_log = Some(log);
        None
    }

    /// The by-value arguments of `job`'s kernel whose value changed between two of its
    /// launches (of any shape) so far, this one included. Only those are left out of the
    /// footprint's key, when free of its writes ([`Self::free_values`]): a model shared by
    /// every value loses the read hulls of the buffers such an argument indexes, which a
    /// constant argument (a size) keeps.
    fn varying_values(&mut self, job: &Job, plan: &Plan) -> Vec<u32> {
        let now: Vec<Option<Vec<u8>>> = job
            .args
            .iter()
            .zip(&plan.kinds)
            .map(|(a, k)| match (a, k) {
                (KernelArg::Value(v), ArgKind::Value) => Some(v.as_slice().to_vec()),
                _ => None,
            })
            .collect();
        let entry = self
            .value_history
            .entry(plan.key.clone())
            .or_insert_with(|| (now.clone(), Vec::new()));
        for (i, (was, is)) in entry.0.iter().zip(&now).enumerate() {
            if was != is && !entry.1.contains(&(i as u32)) {
                entry.1.push(i as u32);
            }
        }
        entry.0 = now;
        entry.1.clone()
    }

    /// The by-value arguments of `job`'s kernel whose value does not change its footprint,
    /// with the buffers whose reads they move (`emu::dataflow::value_params_free_of_writes`;
    /// found once per program variant and kernel; none when the module cannot be loaded).
    fn free_values(&mut self, job: &Job, plan: &Plan) -> super::FreeValues {
        let key = plan.key.clone();
        if let Some(f) = self.free_values.get(&key) {
            return f.clone();
        }
        let values: Vec<u32> = plan
            .kinds
            .iter()
            .enumerate()
            .filter(|(_, k)| matches!(k, ArgKind::Value))
            .map(|(i, _)| i as u32)
            .collect();
        let free = if values.is_empty() {
            Vec::new()
        } else {
            let source = match &job.program.origin {
                ProgramOrigin::Source(s) => s.to_string(),
                _ => String::new(),
            };
            self.module(job, &source)
                .ok()
                .and_then(|m| {
                    crate::emu::dataflow::value_params_free_of_writes(
                        &m.words,
                        &job.kernel,
                        &values,
                    )
                    .ok()
                })
                .unwrap_or_default()
        };
        crate::config::debug(|| {
            format!(
                "footprint: by-value arguments of {} free of its writes: {free:?} (of {values:?})",
                job.kernel
            )
        });
        let free = Arc::new(free);
        self.free_values.insert(key, free.clone());
        free
    }

    /// Derives the write footprints of `job` by emulating sampled work-groups. Returns the
    /// model or why not, and whether the verdict is the kernel's own (not the toolchain's).
    fn derive_footprint(
        &mut self,
        job: &Job,
        plan: &Plan,
        free: &[(u32, Vec<u32>)],
    ) -> (Result<Arc<FootprintModel>, String>, bool) {
        let source = match &job.program.origin {
            ProgramOrigin::Source(s) => s.to_string(),
            _ => String::new(),
        };
        let (dim, split) = (plan.shape.dim, plan.shape.split);
        let groups3 = [0, 1, 2].map(|d| plan.shape.groups.get(d).map_or(1, |g| *g as u64));
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
            let results = emulate_samples(&m.module, job, &plan.kinds, &shape, &samples);
            if results.iter().any(|r| r.is_none()) {
                kernel_verdict = false;
            }
            let mut by_group: FxHashMap<[u64; 3], _> = samples
                .into_iter()
                .zip(results.into_iter().map(|r| {
                    r.unwrap_or_else(|| Err("the emulator panicked on a sampled work-group".into()))
                }))
                .collect();
            let mut model = footprint::derive(groups3, split, |g| {
                by_group
                    .remove(&g)
                    .unwrap_or_else(|| Err(format!("work-group {g:?} was not sampled")))
            })?;
            model.reads_follow_ids = matches!(
                crate::emu::dataflow::data_dependent_reads(&m.words, &job.kernel),
                Ok(None)
            );
            // the model serves every value of the free by-value arguments: the buffers whose
            // loads they move may be read anywhere
            for r in free.iter().flat_map(|f| &f.1) {
                model.may_read_anywhere(*r);
            }
            Ok(Arc::new(model))
        });
        (derived, kernel_verdict)
    }

    /// Step 3: whether splitting pays for its transfers (`CLPRISM_SPLIT=auto`,
    /// `sched::split`). Kept whole → `Err` (forwarded, nothing of the app's data changed);
    /// a first launch with a direct device runs whole through clprism to be measured.
    ///
    /// A kernel's agreement check ([`Plan::check_agreement`]) is decided like any launch: it
    /// rides on the first split that pays. Until session 17 it skipped the decision, so in
    /// `auto` the first launch over unlike devices was split, and also run whole to compare,
    /// even where no split pays. The check costs about one whole run (Rodinia pathfinder on
    /// three PoCL devices, 2 cores: its checked launch took 1,875 ms against 843 ms whole;
    /// results/session17-2026-11-27). Only `CLPRISM_VERIFY` still balances every launch it
    /// can.
    fn split_decision(&mut self, job: &Job, plan: &mut Plan) -> Result<(), Forward> {
        let Some(h) = plan.app_d else { return Ok(()) };
        if crate::config::get().split != crate::config::SplitPolicy::Auto
            || plan.devs.len() < 2
            || (plan.verify && !plan.check_agreement)
            || matches!(plan.kind, SchedulerKind::Single(_))
        {
            return Ok(());
        }
        let kid = job.kernel_id();
        let work_groups = plan.shape.units * plan.shape.wgs_per_unit;
        let inputs = self.split_inputs(job, plan, h);
        let d = sched::split::decide(&inputs);
        self.split_memo.insert(kid.clone(), memo(plan, &inputs));
        let measured_first = d.est_home_ns.is_none() && plan.home_d.is_some();
        let (split, est_home, reason) = (d.split, d.est_home_ns, d.reason.clone());
        plan.split_log = Some(Some(SplitDecisionLog {
            decision: d,
            upload_bytes: Some(inputs.upload_bytes),
            host_rate_measured: Some(self.host_rate.is_some()),
        }));
        if !split && !measured_first {
            // Forwarded to the driver as it is: measured, the app's own launch is the
            // fastest way; or a first launch without a footprint (so no direct run on the
            // app's device), whose profiled event measures it.
            let unwritten = plan
                .bufs
                .iter()
                .filter(|b| !b.written)
                .map(|b| b.mem)
                .collect();
            if est_home.is_some() {
                return Err(Forward {
                    reason: format!("kept whole on the app's device: {reason}").into(),
                    unwritten,
                    measure: None,
                });
            }
            return Err(Forward {
                reason: "kept whole on the app's device: first launch of this kernel, forwarded to measure it".into(),
                unwritten,
                measure: Some((kid.into(), work_groups)),
            });
        }
        if !split {
            // first launch: run whole through clprism to measure it; with nothing split there
            // is nothing to check yet (the check waits for the kernel's first real split)
            if plan.check_agreement {
                plan.check_agreement = false;
                plan.verify = crate::config::get().verify;
            }
            plan.configured = Some(plan.kind.to_string());
            plan.devs = vec![h];
            plan.kind = SchedulerKind::Single(0);
        }
        Ok(())
    }

    /// The split model's inputs for `plan` with the app's device `h`.
    fn split_inputs(&self, job: &Job, plan: &Plan, h: usize) -> sched::split::SplitInputs {
        let kid = job.kernel_id();
        let measured = self.measured.get(&kid);
        let epoch_of = |b: &BufArg| job.epochs.get(&b.mem).copied().unwrap_or(1);
        // results left on the devices are neither merged nor uploaded at each launch; the
        // buffers the directory tracks are on the devices already (their chunks fetch halos);
        // inputs of such a kernel rewritten only by launches kept whole are moved once, the
        // early decision's rent rule priced them (`decide::RentPool`)
        let resident = plan.keeps_resident(crate::config::get().balance_gather);
        let upload: u64 = plan
            .bufs
            .iter()
            .filter(|b| !plan.skip_baseline(b) && !self.tracked(b.mem))
            .filter(|b| {
                b.always_stale
                    || (b.written && !resident)
                    || self
                        .last_epochs
                        .get(&(kid.clone(), b.mem))
                        .is_some_and(|(e, host)| {
                            *e != epoch_of(b)
                                && (!resident || *host != crate::exec::host_epoch(b.mem))
                        })
            })
            .map(|b| b.size as u64)
            .sum();
        let (host_bytes_per_ns, link_latency_ns) = self.transfer_figures(plan.devs.iter().copied());
        // (on CPU devices the full decision assumes no floor before a split measured one)
        let (floor_ns, floor_assumed) = if self.split_floor.measured()
            || crate::registry::device::is_gpu_like(job.app_device)
        {
            self.split_floor_or_prior(job.app_device)
        } else {
            (0.0, false)
        };
        sched::split::SplitInputs {
            work_groups: plan.shape.units * plan.shape.wgs_per_unit,
            home_whole_ns_per_work_group: self
                .whole
                .get(&kid)
                .copied()
                .or_else(|| crate::exec::forwarded_ns_per_work_group(&kid)),
            ns_per_work_group: plan
                .devs
                .iter()
                .map(|d| measured.and_then(|m| m.get(*d).copied().flatten()))
                .collect(),
            home: plan.devs.iter().position(|d| *d == h).unwrap_or(0),
            upload_bytes: upload,
            written_bytes: plan
                .bufs
                .iter()
                .filter(|b| b.written && !resident)
                .map(|b| b.size as u64)
                .sum(),
            host_bytes_per_ns,
            link_latency_ns,
            min_gain: 0.05,
            // (on CPU devices the full decision assumes no floor before a split measured one)
            split_floor_ns: floor_ns,
            split_floor_assumed: floor_assumed,
            merge_by_diff: plan.home_d.is_none(),
            measured_merge_ns: self.merge_cost.get(&kid).copied(),
        }
    }
}

/// What the early decision of the kernel's later launches needs from this full decision
/// ([`crate::exec::decide::SplitMemo`]).
fn memo(plan: &Plan, inputs: &sched::split::SplitInputs) -> crate::exec::decide::SplitMemo {
    crate::exec::decide::SplitMemo {
        // per argument index, from the kernel's signature and the footprint's read-only
        // analysis (not from `bufs`, which merges arguments bound to one buffer under its
        // first index)
        written_args: plan
            .kinds
            .iter()
            .enumerate()
            .filter(|(i, k)| {
                matches!(k, ArgKind::Global { writable: true })
                    && !plan
                        .model
                        .as_ref()
                        .is_some_and(|m| m.read_only.contains(&(*i as u32)))
            })
            .map(|(i, _)| i)
            .collect(),
        input_args: plan
            .bufs
            .iter()
            .filter(|b| !plan.skip_baseline(b))
            .map(|b| b.index)
            .collect(),
        merge_by_diff: inputs.merge_by_diff,
        resident: plan.keeps_resident(crate::config::get().balance_gather),
    }
}

/// The app's own device when its chunks can run in the app's context (replicas filled and
/// merged by device-side copies, no host round trip): footprints say what to copy and the
/// kernel needs no NDRange-query variant.
fn home_device(engine: &Engine, job: &Job, plan: &Plan) -> Option<usize> {
    plan.model.as_ref()?;
    let plain_source = match &job.program.origin {
        ProgramOrigin::Source(s) => {
            program::inspected_text(&job.program.hash, s, &job.program.options)
                .is_ok_and(|t| !program::uses_range_queries(&t))
        }
        _ => false,
    };
    if !plain_source {
        return None;
    }
    plan.devs.iter().copied().find(|&d| {
        let dv = &engine.devices[d];
        dv.id == job.app_device && dv.block_event.is_none() && !dv.inject_fail
    })
}

/// Emulates each sampled work-group on zero-filled buffers, in parallel; `None` where the
/// emulator panicked. Only the written ranges are wanted, so loops that cannot change them
/// are jumped over (`emu::dataflow::loop_skips`).
fn emulate_samples(
    module: &crate::emu::Module,
    job: &Job,
    kinds: &[ArgKind],
    shape: &crate::emu::LaunchShape,
    samples: &[[u64; 3]],
) -> Vec<Option<Result<crate::emu::stats::WorkGroupStats, String>>> {
    let kernel = job.kernel.as_str();
    std::thread::scope(|scope| {
        let handles: Vec<_> = samples
            .iter()
            .map(|&g| {
                let mut args = footprint::zero_args(job, kinds);
                scope.spawn(move || {
                    let cfg = crate::emu::EmuConfig {
                        skip_write_free_loops: true,
                        ..Default::default()
                    };
                    crate::emu::emulate(module, kernel, shape, g, &mut args, &cfg)
                        .map_err(|e| e.to_string())
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().ok()).collect()
    })
}
