//! Step 5 of a balanced launch: the chunks, run on real devices by the chunk-driver loop the
//! simulator also runs ([`crate::sched::driver`]; Boyer ch. 4). This file is the loop's
//! [`ChunkDevices`] for OpenCL: enqueues with a completion callback, polls the events too,
//! and starts reading a completed chunk's output back while the others run.

use super::plan::Plan;
use super::replicas::Targets;
use super::{Ctx, InFlight, WorkerState};
use crate::exec::cl::{self, ClError};
use crate::exec::devices::Device;
use crate::exec::staging::EarlyAreas;
use crate::exec::{chunk_callback, ChunkDone, ChunkTag, Engine, Job};
use crate::log::schema::Chunk;
use crate::sched::driver::{self, ChunkDevices, Completion, DriveEnd, Wake};
use crate::sched::{ChunkId, ChunkRecord, ChunkScheduler, SchedulerKind};
use crossbeam_channel::Receiver;
use opencl_sys::*;
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static NEXT_LAUNCH: AtomicU64 = AtomicU64::new(1);

/// A chunk of an earlier launch (an abandoned straggler) completed: its device takes chunks
/// again once none of its stragglers is left.
fn straggler_drained(engine: &Engine, done: &ChunkDone) {
    if let Some(d) = engine.devices.get(done.global_device) {
        d.straggler_drained();
    }
}

/// Counts the completions of abandoned stragglers that arrived since the last launch ran
/// its chunks (called with the worker's state locked, before the devices are chosen: every
/// completion waiting then is of an earlier launch). Before this, only a later split
/// launch's wait loop drained them, and launches never split while a device waited for one:
/// Rodinia streamcluster on an H200 plus PoCL's CPU ran 3,933 launches on one device
/// "busy with 1 abandoned straggler chunks" (session 15).
/// Completions of launches in `unfinished` (issued, not yet waited for) are left to them:
/// dropped unclaimed, their launch finds them by polling its events.
pub(super) fn settle_stragglers(
    engine: &Engine,
    done_rx: &Receiver<ChunkDone>,
    unfinished: &[u64],
) {
    for done in done_rx.try_iter() {
        if unfinished.contains(&done.launch) {
            continue;
        }
        if !done.claimed.swap(true, Ordering::AcqRel) {
            straggler_drained(engine, &done);
        }
    }
    for d in &engine.devices {
        d.check_stragglers();
    }
}

/// A balanced launch in which no chunk completes for this long is given up (the scheduler
/// cannot tell a hung device from a slow one when no device has completed a chunk yet); the
/// launch then runs natively, nothing the hung chunks produce is ever merged, and the
/// devices whose chunks were still running are marked dead (`Device::mark_dead`).
pub(super) const STALL_LIMIT: Duration = Duration::from_secs(120);

/// How often the launch loop polls the events of running chunks.
const POLL_INTERVAL: Duration = Duration::from_micros(100);

/// The poll interval when every participating device is a GPU or an accelerator (its own
/// hardware: a waking launch thread takes no core from it). On 2 H200s the completion of
/// jacobi-2d's 0.45 ms chunks was seen 0.12-0.17 ms after their end with the 100 µs poll and
/// the thread's default 50 µs timer slack (results/session20-2026-11-27, call b): a sixth of
/// each split launch. The launch thread's timer slack is 1 µs (`exec::pipeline`).
const GPU_POLL_INTERVAL: Duration = Duration::from_micros(15);

/// The longest wait for a completion when no chunk is in flight.
const IDLE_WAIT: Duration = Duration::from_millis(20);

/// The participating devices of one launch, as the chunk-driver loop sees them.
pub(super) struct RealChunks<'a> {
    pub state: &'a mut WorkerState,
    pub engine: &'a Engine,
    pub job: &'a Job,
    pub plan: &'a Plan,
    pub targets: &'a Targets,
    pub done_rx: &'a Receiver<ChunkDone>,
    /// What the loop owns, kept apart so that a launch's chunks can be issued and waited
    /// for later ([`RealChunks::into_parts`]).
    pub p: ChunkParts,
}

/// What [`RealChunks`] owns, kept between [`WorkerState::start_chunks`] and
/// [`WorkerState::finish_chunks`] (the launch thread may plan and issue the app's next
/// launch in between, `CLPRISM_BALANCE_PIPELINE`).
pub(super) struct ChunkParts {
    /// The launch's start (the clock of every time here).
    pub t0: Instant,
    launch_id: u64,
    /// Every chunk, by id (`schedule.chunks`).
    pub chunks: FxHashMap<ChunkId, Chunk>,
    /// Per device, when its latest chunk completed: a chunk queued behind a running one
    /// starts only then, and Ω (§4.3.1) counts processing time, not the wait in the queue.
    device_free_at: Vec<u64>,
    /// Chunks whose completion is also polled: NVIDIA's driver delivers event callbacks
    /// up to ~20 ms late (a 0.4 ms chunk on an H200 was reported after 18 ms,
    /// results/gpu-2026-11-22e), which left devices idle between chunks.
    inflight: InflightChunks,
    arrived: VecDeque<ChunkDone>,
    last_progress: Instant,
    /// A chunk of this launch has completed.
    progressed: bool,
    /// Host areas the early read-back fills (see `WorkerState::early_staging`), with the
    /// reads into them in flight.
    pub staging: InFlight<EarlyAreas>,
    /// Chunks whose output was read early.
    pub early_chunks: FxHashSet<ChunkId>,
    /// A device whose abandoned chunk completed may take work again (no written buffer is
    /// read by the kernel, so its replica's late output cannot feed later chunks).
    readmit_safe: bool,
    /// Bytes the buffer directory copied onto devices before their chunks.
    pub fetched: u64,
    /// Every participating device is a GPU or an accelerator ([`GPU_POLL_INTERVAL`]).
    gpus_only: bool,
}

/// A launch's chunks as [`WorkerState::start_chunks`] left them: issued, not waited for.
pub(super) struct Started {
    sched: ChunkScheduler,
    parts: ChunkParts,
    /// How the driver's first pass ended: `Ok(None)`, waiting for completions.
    issued: Result<Option<DriveEnd>, String>,
    held_writes: super::resident::HeldWrites,
    owner_computes: bool,
    kind: SchedulerKind,
    partition_key: (u64, Vec<usize>),
    warm: bool,
    warm_streak: u32,
    wave_wgs: Vec<u64>,
    registers: Vec<Option<u32>>,
}

impl Started {
    /// Every unit is in a chunk enqueued without error, one slab per device (a static
    /// partition: owner computes, or `CLPRISM_SCHEDULER=static`) and the launch now only
    /// waits: its slabs, `(participating device, first unit, units)`. `None` for any other
    /// launch.
    pub fn issued_slabs(&self) -> Option<Vec<(usize, u64, u64)>> {
        let static_partition = matches!(self.kind, SchedulerKind::Static(_));
        if !static_partition || !matches!(self.issued, Ok(None)) {
            return None;
        }
        let chunks = &self.parts.chunks;
        if chunks.values().any(|c| c.failed.is_some()) {
            return None;
        }
        let mut slabs: Vec<(usize, u64, u64)> = chunks
            .values()
            .map(|c| (c.device, c.first_wg, c.count))
            .collect();
        slabs.sort_by_key(|s| s.1);
        Some(slabs)
    }
}

impl<'a> RealChunks<'a> {
    pub fn new(
        state: &'a mut WorkerState,
        cx: Ctx<'a>,
        targets: &'a Targets,
        done_rx: &'a Receiver<ChunkDone>,
        t0: Instant,
        staging: EarlyAreas,
    ) -> Self {
        let plan = cx.plan;
        let readmit_safe = plan
            .model
            .as_ref()
            .is_some_and(|m| m.written.iter().all(|w| !w.read_by_kernel));
        let p = ChunkParts {
            t0,
            launch_id: NEXT_LAUNCH.fetch_add(1, Ordering::Relaxed),
            chunks: FxHashMap::default(),
            device_free_at: vec![0; plan.devs.len()],
            inflight: InflightChunks(Vec::new()),
            arrived: VecDeque::new(),
            last_progress: Instant::now(),
            progressed: false,
            staging: InFlight::new(staging),
            early_chunks: FxHashSet::default(),
            readmit_safe,
            fetched: 0,
            gpus_only: WorkerState::gpus_of(cx.engine, plan),
        };
        Self::from_parts(state, cx, targets, done_rx, p)
    }

    /// What the loop owns, for [`Self::from_parts`] later.
    fn into_parts(self) -> ChunkParts {
        self.p
    }

    /// The loop again, from what [`Self::into_parts`] kept.
    fn from_parts(
        state: &'a mut WorkerState,
        cx: Ctx<'a>,
        targets: &'a Targets,
        done_rx: &'a Receiver<ChunkDone>,
        p: ChunkParts,
    ) -> Self {
        let Ctx { engine, job, plan } = cx;
        RealChunks {
            state,
            engine,
            job,
            plan,
            targets,
            done_rx,
            p,
        }
    }

    /// How long the launch waits with no chunk completing before the devices still running
    /// chunks count as dead: [`STALL_LIMIT`] until a chunk of the launch completed; after
    /// that, the bound a device's transfers get (`devices::response_bound`: 10 s plus 4× the
    /// launch's time up to its latest completion, so a slow device's long chunk behind fast
    /// ones still fits). A static partition (owner computes, whose started chunks are never
    /// abandoned) waited out the whole 120 s for a killed PoCL-Remote server's slab, longer
    /// than tests/remote.rs gives the app.
    fn stall_limit(&self) -> Duration {
        if !self.p.progressed {
            return STALL_LIMIT;
        }
        let busy = self.p.last_progress.saturating_duration_since(self.p.t0);
        crate::exec::devices::response_bound(0, busy).min(STALL_LIMIT)
    }

    /// A completion of this launch, or `None` for one to skip (a late chunk of an earlier
    /// launch, or one already counted by the other path).
    fn accept(&mut self, done: ChunkDone) -> Option<Completion> {
        // a chunk of a launch issued behind this one: its own loop polls it
        if done.launch != self.p.launch_id && self.state.unfinished.contains(&done.launch) {
            return None;
        }
        // counted once: by the callback's report or by the poll, whichever came first
        if done.claimed.swap(true, Ordering::AcqRel) {
            return None;
        }
        self.p.last_progress = Instant::now();
        if done.launch != self.p.launch_id {
            // a late chunk of an earlier launch: an abandoned straggler draining
            straggler_drained(self.engine, &done);
            return None;
        }
        self.p.progressed = true;
        let t = self.now_ns();
        let chunk = self.p.chunks.get_mut(&done.chunk);
        let began = chunk
            .as_ref()
            .and_then(|c| c.enqueue_ns)
            .unwrap_or(0)
            .max(self.p.device_free_at.get(done.device).copied().unwrap_or(0));
        if let Some(c) = chunk {
            c.completed(t, done.device_ns);
        }
        if let Some(f) = self.p.device_free_at.get_mut(done.device) {
            *f = (*f).max(t);
        }
        Some(Completion {
            device: done.device,
            chunk_id: done.chunk,
            at_ns: t,
            elapsed_ns: t.saturating_sub(began),
            ok: done.status >= 0,
        })
    }
}

impl RealChunks<'_> {
    /// What chunk `id` should take on device `d` (index in `Engine::devices`) by the
    /// kernel's measured ns per work-group there, ns (0 when not measured).
    fn predicted_ns(&self, d: usize, id: ChunkId) -> u64 {
        let wgs = self
            .p
            .chunks
            .get(&id)
            .and_then(|c| c.work_groups)
            .unwrap_or(0);
        let per_wg = self
            .state
            .measured
            .get(&self.job.kernel_id())
            .and_then(|m| m.get(d).copied().flatten())
            .unwrap_or(0.0);
        (wgs as f64 * per_wg) as u64
    }

    /// Completions that arrived (by callback or poll) but were not looked at before the
    /// launch ended: an abandoned chunk among them has drained. They were dropped before,
    /// and the device stayed "busy with 1 abandoned straggler chunks" for the rest of the
    /// run (Rodinia streamcluster on `pthread basic`, from its 1,201st launch on; on an H200
    /// plus PoCL's CPU, 3,933 launches; session 15).
    fn settle_arrived(&mut self) {
        for done in self.p.arrived.drain(..) {
            if done.launch != self.p.launch_id && self.state.unfinished.contains(&done.launch) {
                continue;
            }
            if done.claimed.swap(true, Ordering::AcqRel) {
                continue;
            }
            let abandoned = done.launch != self.p.launch_id
                || self.p.chunks.get(&done.chunk).is_some_and(|c| c.abandoned);
            if abandoned {
                straggler_drained(self.engine, &done);
            }
        }
    }
}

/// One chunk's driver calls, ready to issue ([`RealChunks::prepare_chunk`]).
#[derive(Clone)]
pub(super) struct ChunkIssue {
    device: usize,
    chunk_id: ChunkId,
    first_wg: u64,
    count: u64,
    global_device: usize,
    dev: *const Device,
    queue: cl_command_queue,
    kernel: cl_kernel,
    dim: usize,
    off: [usize; 3],
    glob: [usize; 3],
    local: [usize; 3],
    tag: ChunkTag,
    claimed: Arc<AtomicBool>,
    enqueued_ns: u64,
}

// SAFETY: OpenCL handles (`super::issue::Sendable`'s doc) and a device of the engine, which
// outlives the launch and is `Sync`.
unsafe impl Send for ChunkIssue {}

impl ChunkIssue {
    /// The chunk's enqueue, with its completion callback and flush ([`enqueue_chunk`]).
    fn run(&self) -> Result<cl_event, ClError> {
        // SAFETY: the engine's device, alive for the launch (see the type's `Send`).
        let dev = unsafe { &*self.dev };
        let dim = self.dim;
        enqueue_chunk(
            dev,
            (self.queue, self.kernel),
            dim,
            &self.off[..dim],
            &self.glob[..dim],
            &self.local[..dim],
            self.tag.clone(),
        )
    }
}

impl RealChunks<'_> {
    /// A chunk's fetches (the ranges it reads that are stale on its device,
    /// [`super::resident`]) and its enqueue's arguments. `Err`: a fetch failed (the chunk is
    /// recorded as failed; the scheduler reassigns its work).
    fn prepare_chunk(
        &mut self,
        device: usize,
        chunk_id: ChunkId,
        first_wg: u64,
        count: u64,
    ) -> Result<ChunkIssue, String> {
        let (job, plan) = (self.job, self.plan);
        let (split, dim) = (plan.shape.split, plan.shape.dim);
        let d = plan.devs[device];
        let dev = &self.engine.devices[d];
        let (_, queue, kernel) = self.targets[&d];
        let mut off = job.offset;
        let mut glob = job.global;
        off[split] = job.offset[split] + first_wg as usize * job.local[split];
        glob[split] = count as usize * job.local[split];
        match self.state.fetch_for_chunk(
            self.engine,
            plan,
            d,
            (first_wg, count),
            self.p.t0.elapsed(),
        ) {
            Ok(n) => self.p.fetched += n,
            Err(e) => {
                crate::config::warn(&format!(
                    "balance: {} could not take a chunk ({e}); its work is reassigned",
                    dev.name
                ));
                let mut entry = Chunk::enqueued(
                    device,
                    first_wg,
                    count,
                    plan.shape.wgs_per_unit,
                    self.now_ns(),
                );
                entry.failed = Some(CL_OUT_OF_RESOURCES);
                self.p.chunks.insert(chunk_id, entry);
                return Err(e);
            }
        }
        let claimed = Arc::new(AtomicBool::new(false));
        let tag = ChunkTag {
            launch: self.p.launch_id,
            chunk: chunk_id,
            device,
            global_device: d,
            claimed: claimed.clone(),
        };
        let mut local = [1usize; 3];
        local[..dim].copy_from_slice(&job.local[..dim]);
        let (mut o3, mut g3) = ([0usize; 3], [1usize; 3]);
        o3[..dim].copy_from_slice(&off[..dim]);
        g3[..dim].copy_from_slice(&glob[..dim]);
        Ok(ChunkIssue {
            device,
            chunk_id,
            first_wg,
            count,
            global_device: d,
            dev: dev as *const Device,
            queue,
            kernel,
            dim,
            off: o3,
            glob: g3,
            local,
            tag,
            claimed,
            enqueued_ns: self.now_ns(),
        })
    }

    /// Records an issued chunk: in flight when its enqueue succeeded, failed otherwise.
    fn record_chunk(&mut self, c: ChunkIssue, r: Result<cl_event, ClError>) -> Result<(), String> {
        let plan = self.plan;
        let mut entry = Chunk::enqueued(
            c.device,
            c.first_wg,
            c.count,
            plan.shape.wgs_per_unit,
            c.enqueued_ns,
        );
        let out = match r {
            Ok(ev) => {
                self.p.inflight.0.push(Inflight {
                    ev,
                    chunk: c.chunk_id,
                    device: c.device,
                    global_device: c.global_device,
                    claimed: c.claimed,
                });
                Ok(())
            }
            Err(e) => {
                crate::config::warn(&format!(
                    "balance: chunk enqueue on {} failed ({e}); its work is reassigned",
                    self.engine.devices[c.global_device].name
                ));
                entry.failed = Some(e.code);
                Err(e.to_string())
            }
        };
        self.p.chunks.insert(c.chunk_id, entry);
        out
    }
}

impl ChunkDevices for RealChunks<'_> {
    fn now_ns(&self) -> u64 {
        self.p.t0.elapsed().as_nanos() as u64
    }

    fn enqueue(
        &mut self,
        device: usize,
        chunk_id: ChunkId,
        first_wg: u64,
        count: u64,
    ) -> Result<(), String> {
        let issue = self.prepare_chunk(device, chunk_id, first_wg, count)?;
        let r = issue.run();
        self.record_chunk(issue, r)
    }

    /// [`Self::enqueue`] for chunks on devices of their own: the fetches and bookkeeping in
    /// order here, the driver calls from a thread per device (`CLPRISM_BALANCE_ISSUE`,
    /// [`super::issue`]).
    fn enqueue_many(&mut self, chunks: &[(usize, ChunkId, u64, u64)]) -> Vec<Result<(), String>> {
        if !super::issue::parallel(chunks.len(), self.state.issue.wide) {
            return driver::enqueue_each(self, chunks);
        }
        let prepared: Vec<Result<ChunkIssue, String>> = chunks
            .iter()
            .map(|&(device, id, first_wg, count)| self.prepare_chunk(device, id, first_wg, count))
            .collect();
        let ready: Vec<ChunkIssue> = prepared
            .iter()
            .filter_map(|p| p.as_ref().ok().cloned())
            .collect();
        let mut issued = self
            .state
            .issue
            .run(ready, |c| {
                let r = c.run();
                (c, super::issue::Sendable(r))
            })
            .into_iter();
        prepared
            .into_iter()
            .map(|p| {
                p?;
                match issued.next() {
                    Some((c, super::issue::Sendable(r))) => self.record_chunk(c, r),
                    None => Err("chunk not issued".to_string()),
                }
            })
            .collect()
    }

    fn abandon(&mut self, device: usize, chunk_id: ChunkId) {
        let d = self.plan.devs[device];
        let busy = self.now_ns().max(self.predicted_ns(d, chunk_id));
        self.engine.devices[d].abandoned(Duration::from_nanos(busy));
        if let Some(c) = self.p.chunks.get_mut(&chunk_id) {
            c.abandoned = true;
        }
    }

    fn wait(&mut self, poll_at_ns: Option<u64>) -> Result<Wake, String> {
        loop {
            let longest = if self.p.inflight.0.is_empty() {
                IDLE_WAIT
            } else if self.p.gpus_only {
                GPU_POLL_INTERVAL
            } else {
                POLL_INTERVAL
            };
            let wait = poll_at_ns
                .map(|p| Duration::from_nanos(p.saturating_sub(self.now_ns())))
                .unwrap_or(longest)
                .clamp(longest.min(Duration::from_micros(20)), longest);
            if self.p.arrived.is_empty() {
                self.p.arrived.extend(self.done_rx.recv_timeout(wait));
                self.p.arrived.extend(self.done_rx.try_iter());
                self.p
                    .arrived
                    .extend(self.p.inflight.poll(self.p.launch_id));
            }
            // one completion at a time: the scheduler's actions for it (an abandonment, say)
            // are applied before the next one is looked at
            let Some(done) = self.p.arrived.pop_front() else {
                let limit = self.stall_limit();
                if self.p.last_progress.elapsed() > limit {
                    let why = format!("no chunk completed for {:.0} s", limit.as_secs_f64());
                    for c in &self.p.inflight.0 {
                        self.engine.devices[c.global_device].mark_dead(&why);
                    }
                    return Err(format!("{why}; devices may hang"));
                }
                return Ok(Wake::Poll(self.now_ns()));
            };
            if let Some(c) = self.accept(done) {
                return Ok(Wake::Completed(c));
            }
        }
    }

    fn completed(&mut self, c: &Completion) {
        if Some(c.device) == self.plan.home_sched() || self.p.staging.is_empty() {
            return;
        }
        let (first, count) = self
            .p
            .chunks
            .get(&c.chunk_id)
            .map_or((0, 0), |x| (x.first_wg, x.count));
        let d = self.plan.devs[c.device];
        // a chunk completed before every read-back area was allocated is read at the merge
        let InFlight { area, pending, .. } = &mut self.p.staging;
        let Some(staging) = area.as_mut().and_then(|a| a.all_ready()) else {
            return;
        };
        if count > 0
            && self
                .state
                .read_early(self.engine, d, self.plan, staging, (first, count), pending)
        {
            self.p.early_chunks.insert(c.chunk_id);
        }
    }

    fn abandoned_completed(&mut self, c: &Completion) {
        self.engine.devices[self.plan.devs[c.device]].straggler_drained();
    }

    fn readmit_after_abandon(&self) -> bool {
        self.p.readmit_safe
    }
}

/// Warm starts of a kernel in a row after which one launch starts cold (Boyer's β chunks on
/// every device), so a device that the earlier Ω left without work is measured again (not
/// for a launch whose results stay on the devices, see [`WorkerState::run_chunks`]).
const WARM_STREAK_MAX: u32 = 8;

/// What running the chunks left for the merge and the record.
pub(super) struct ChunkRun {
    /// The scheduler's completed chunks (tile every unit once).
    pub done: Vec<ChunkRecord>,
    /// Every chunk in id order (`schedule.chunks`).
    pub chunks: Vec<Chunk>,
    /// Units each participating device completed.
    pub per_dev_units: Vec<u64>,
    /// When each participating device's last completed chunk ended, ns.
    pub finish: Vec<Option<u64>>,
    /// From the launch's start to the last completion, ns.
    pub makespan_ns: u64,
    /// The scheduler started from the previous launch's Ω (Boyer's warm start).
    pub warm: bool,
    /// Ω per device measured now, and warm starts in a row (for the next launch).
    pub history: (Vec<Option<f64>>, u32),
    /// Work-groups per wave, per participating device.
    pub wave_wgs: Vec<u64>,
    /// Registers per work-item, per participating device (NVIDIA builds).
    pub registers: Vec<Option<u32>>,
    /// Host areas the early reads fill, with those reads in flight.
    pub staging: InFlight<EarlyAreas>,
    /// Chunks read back early.
    pub early_chunks: FxHashSet<ChunkId>,
    /// Bytes the buffer directory copied onto devices before their chunks.
    pub fetched: u64,
    /// The static partition the launch ran instead of the plan's scheduler, when its shape
    /// has resident slabs (`WorkerState::update_partition`).
    pub owner_computes: Option<String>,
}

impl ChunkRun {
    /// How long a participating device's transfers of `bytes` after the chunks are waited
    /// for before it counts as dead (`devices::response_bound`, the makespan as the work
    /// they may queue behind).
    pub fn response_bound(&self, bytes: u64) -> Duration {
        crate::exec::devices::response_bound(bytes, Duration::from_nanos(self.makespan_ns))
    }
}

impl WorkerState {
    /// Step 5, first half: the scheduler for the launch (the static partition of owner
    /// computes where its shape has one), the halos of its slabs in one batch, and the chunks
    /// the scheduler assigns before it must wait for a completion, enqueued. Nothing is waited
    /// for here; [`Self::finish_chunks`] runs the launch to its end.
    ///
    /// Errors: the scheduler refused the plan's shape.
    pub(super) fn start_chunks(
        &mut self,
        cx: Ctx,
        done_rx: &Receiver<ChunkDone>,
        targets: &Targets,
        staging: EarlyAreas,
        t0: Instant,
    ) -> Result<Started, String> {
        let Ctx { engine, job, plan } = cx;
        let n = plan.devs.len();
        let partition_key = (plan.shape.units, plan.devs.clone());
        let kind = match self.resident_partitions.get(&partition_key) {
            Some(f) if plan.resident && plan.kind == SchedulerKind::Boyer => {
                SchedulerKind::Static(f.clone())
            }
            _ => plan.kind.clone(),
        };
        let owner_computes = kind != plan.kind;
        let mut sched = ChunkScheduler::new(&kind, &engine.boyer, n, plan.shape.units)?;
        // A resident launch that reads a buffer it writes overwrites, in place, bytes that
        // only the writing device may hold: a chunk taken back from a straggler could not
        // be redone elsewhere from the pre-launch bytes (PolyBench fdtd-2d on PoCL computed
        // other bytes than native before this), so started chunks are never abandoned.
        if plan.resident
            && plan
                .model
                .as_ref()
                .is_some_and(|m| m.written.iter().any(|w| w.read_by_kernel))
        {
            sched.keep_started_chunks();
        }
        let history_key = (job.kernel_id(), plan.shape.units, plan.devs.clone());
        let warm_streak = self.history.get(&history_key).map_or(0, |h| h.1);
        // A kernel whose results stay on the devices keeps warm starts (the same ranges on
        // the same devices launch after launch: only halos move); a cold start's β chunks go
        // to whichever device is free, and each then fetches the ranges it lacks.
        let warm = (warm_streak < WARM_STREAK_MAX || plan.resident)
            && self
                .history
                .get(&history_key)
                .is_some_and(|h| sched.seed_history(&h.0));
        let (wave_wgs, registers) = self.waves(engine, job, plan);
        let per_unit = plan.shape.wgs_per_unit.max(1);
        sched.set_wave_units(
            &wave_wgs
                .iter()
                .map(|w| w.div_ceil(per_unit))
                .collect::<Vec<_>>(),
        );
        crate::config::debug(|| {
            format!(
                "launch {}: scheduler ready at {:.1} us",
                job.rec.seq,
                t0.elapsed().as_nanos() as f64 / 1e3
            )
        });
        // a static partition (owner computes): every slab is known now, so the halos move in
        // one batch
        let (prefetched, held_writes) = match &kind {
            SchedulerKind::Static(f) if plan.resident => self.prefetch_owned(engine, plan, f),
            _ => (0, Default::default()),
        };
        crate::config::debug(|| {
            format!(
                "launch {}: chunks set up ({prefetched} bytes prefetched) at {:.1} us",
                job.rec.seq,
                t0.elapsed().as_nanos() as f64 / 1e3
            )
        });
        let mut devices = RealChunks::new(self, cx, targets, done_rx, t0, staging);
        devices.p.fetched += prefetched;
        let issued = driver::issue(&mut sched, &mut devices);
        let parts = devices.into_parts();
        self.unfinished.push(parts.launch_id);
        Ok(Started {
            sched,
            parts,
            issued,
            held_writes,
            owner_computes,
            kind,
            partition_key,
            warm,
            warm_streak,
            wave_wgs,
            registers,
        })
    }

    /// Step 5, second half: waits for the chunks [`Self::start_chunks`] issued, running the
    /// scheduler's later chunks, to the launch's end.
    ///
    /// Errors: every device failed or stalled (the app's data is unchanged).
    pub(super) fn finish_chunks(
        &mut self,
        cx: Ctx,
        done_rx: &Receiver<ChunkDone>,
        targets: &Targets,
        started: Started,
    ) -> Result<ChunkRun, String> {
        let Ctx { engine, plan, .. } = cx;
        let n = plan.devs.len();
        let Started {
            mut sched,
            parts,
            issued,
            held_writes,
            owner_computes,
            kind,
            partition_key,
            warm,
            warm_streak,
            wave_wgs,
            registers,
        } = started;
        self.unfinished.retain(|&l| l != parts.launch_id);
        let mut devices = RealChunks::from_parts(self, cx, targets, done_rx, parts);
        let end = match issued {
            Ok(Some(end)) => Ok(end),
            Ok(None) => driver::resume(&mut sched, &mut devices),
            Err(e) => Err(e),
        };
        let makespan_ns = devices.now_ns();
        devices.settle_arrived();
        let ChunkParts {
            chunks,
            staging,
            early_chunks,
            inflight,
            fetched,
            ..
        } = devices.into_parts();
        drop(inflight);
        for (key, area) in held_writes.finish() {
            self.halo_areas.give(key, area);
        }
        match end? {
            DriveEnd::Complete => {}
            DriveEnd::Stuck | DriveEnd::Idle => {
                return Err("every device failed or stalled; the scheduler could not finish".into())
            }
        }
        let done: Vec<ChunkRecord> = sched.completed_chunks().into_iter().cloned().collect();
        let mut per_dev_units = vec![0u64; n];
        let mut finish = vec![None::<u64>; n];
        for c in &done {
            per_dev_units[c.device] += c.count;
            let end = chunks.get(&c.id).and_then(|x| x.end_ns).unwrap_or(0);
            finish[c.device] = Some(finish[c.device].map_or(end, |f: u64| f.max(end)));
        }
        if plan.resident && plan.kind == SchedulerKind::Boyer {
            let starts = owner_computes.then(|| slab_starts(n, &done, &chunks));
            self.update_partition(engine, plan, partition_key, &per_dev_units, &finish, starts);
        }
        let mut chunks: Vec<(ChunkId, Chunk)> = chunks.into_iter().collect();
        chunks.sort_by_key(|c| c.0);
        let streak = if warm { warm_streak + 1 } else { 0 };
        Ok(ChunkRun {
            done,
            chunks: chunks.into_iter().map(|c| c.1).collect(),
            per_dev_units,
            finish,
            makespan_ns,
            warm,
            history: (sched.measured_omegas(), streak),
            wave_wgs,
            registers,
            staging,
            early_chunks,
            fetched,
            owner_computes: owner_computes.then(|| kind.to_string()),
        })
    }

    /// Owner computes (a deliberate change from Boyer's dynamic chunks, for launches whose
    /// results stay on the devices): after such a launch, each shape (units along the split
    /// dimension, participating devices) keeps one fraction per device, and its later
    /// launches, of every kernel, give each device one contiguous slab by those fractions
    /// (the static baseline). The slabs stay where the data is, so an iterative kernel moves
    /// only its halos, and a chain of kernels of one shape (STREAM's copy, mul, add, triad)
    /// none. On 4 H200s, Boyer's chunks moved by the measured speeds from launch to launch,
    /// and each launch fetched 1.6-2.6 GB of jacobi-2d's 1 GiB arrays (results/session19).
    /// The fractions are equal over devices of one name, except that GPUs of one name get
    /// them sized once for their staggered starts after [`super::stagger::SAMPLES`]
    /// owner-computes launches (`starts`: each device's start and device time per unit,
    /// [`super::stagger`]); otherwise they start from the launch's throughput (units over
    /// finish time, transfers included) and move halfway to the measured throughput when the
    /// slowest device finishes over 25 % after the fastest.
    fn update_partition(
        &mut self,
        engine: &Engine,
        plan: &Plan,
        key: (u64, Vec<usize>),
        units: &[u64],
        finish: &[Option<u64>],
        starts: Option<Vec<Option<(f64, f64)>>>,
    ) {
        let owner_computes = starts.is_some();
        let throughput: Vec<f64> = units
            .iter()
            .zip(finish)
            .map(|(&u, f)| match f {
                Some(t) if *t > 0 && u > 0 => u as f64 / *t as f64,
                _ => 0.0,
            })
            .collect();
        let total: f64 = throughput.iter().sum();
        if total <= 0.0 {
            return;
        }
        let measured: Vec<f64> = throughput.iter().map(|t| t / total).collect();
        let like = plan
            .devs
            .iter()
            .all(|&d| engine.devices[d].name == engine.devices[plan.devs[0]].name);
        let n = plan.devs.len();
        match self.resident_partitions.get_mut(&key) {
            None => {
                let start = if like {
                    vec![1.0 / n as f64; n]
                } else {
                    measured
                };
                self.resident_partitions.insert(key, start);
            }
            // devices of one name keep equal slabs: their finish times differ by enqueue
            // and completion latency, and following them skewed four H200s' slabs to
            // 0.36/0.32/0.21/0.12 over jacobi-2d's launches (results/session19)
            Some(f) if owner_computes && !like => {
                let ends: Vec<u64> = finish
                    .iter()
                    .flatten()
                    .copied()
                    .filter(|t| *t > 0)
                    .collect();
                let (lo, hi) = (ends.iter().min(), ends.iter().max());
                if let (Some(&lo), Some(&hi)) = (lo, hi) {
                    if hi as f64 > 1.25 * lo as f64 {
                        for (x, m) in f.iter_mut().zip(&measured) {
                            *x = 0.5 * *x + 0.5 * m;
                        }
                    }
                }
            }
            Some(f) if like && Self::gpus_of(engine, plan) => {
                let samples = self.partition_starts.entry(key).or_default();
                if let Some(sized) = starts.and_then(|s| samples.note(&s, plan.shape.units)) {
                    crate::config::debug(|| {
                        format!("balance: slabs sized for the enqueue stagger: {f:?} -> {sized:?}")
                    });
                    *f = sized;
                }
            }
            Some(_) => {}
        }
    }

    /// Whether every device of the launch is a GPU or an accelerator.
    pub(super) fn gpus_of(engine: &Engine, plan: &Plan) -> bool {
        plan.devs
            .iter()
            .all(|&d| matches!(engine.devices[d].kind.as_str(), "gpu" | "accelerator"))
    }

    /// Work-groups one wave holds on each participating device (for the warm start's whole
    /// waves, `sched::boyer::BoyerState::wave_units`), and the registers per work-item their
    /// builds report.
    fn waves(&mut self, engine: &Engine, job: &Job, plan: &Plan) -> (Vec<u64>, Vec<Option<u32>>) {
        let dim = plan.shape.dim;
        let wg_items: u64 = job.local[..dim].iter().map(|x| *x as u64).product();
        let local_bytes = job.dynamic_local_bytes();
        let registers: Vec<Option<u32>> = plan
            .devs
            .iter()
            .map(|&d| {
                self.kernels[&plan.key][d]
                    .as_ref()
                    .and_then(|b| b.registers)
            })
            .collect();
        let best = &mut self.best;
        let wave_wgs = plan
            .devs
            .iter()
            .zip(&registers)
            .map(|(&d, &r)| best.wave_work_groups(engine, d, wg_items, local_bytes, r))
            .collect();
        (wave_wgs, registers)
    }
}

impl WorkerState {
    /// [`WorkerState::prefetch_slabs`] over the slabs the static partition `fractions` gives
    /// the participating devices, in device order as `sched::baselines` claims them. A
    /// failure only warns in the debug output: each chunk then fetches what is still missing.
    fn prefetch_owned(
        &mut self,
        engine: &crate::exec::Engine,
        plan: &super::plan::Plan,
        fractions: &[f64],
    ) -> (u64, super::resident::HeldWrites) {
        let parts = crate::sched::baselines::static_partition(plan.shape.units, fractions);
        let mut first = 0;
        let mut slabs = Vec::new();
        for (&d, &n) in plan.devs.iter().zip(&parts) {
            if n > 0 {
                slabs.push((d, first, n));
            }
            first += n;
        }
        let (moved, held, failed) = self.prefetch_slabs(engine, plan, &slabs);
        crate::config::debug(|| {
            format!(
                "balance: {} slabs fetched {moved} bytes in one batch",
                slabs.len()
            )
        });
        if let Some(e) = failed {
            crate::config::debug(|| format!("balance: batched halo fetch failed ({e})"));
        }
        (moved, held)
    }
}

/// Each device's `(start ns since the launch's start, device ns per unit)` in an
/// owner-computes launch (one slab each), `None` for a device whose chunk has no measured
/// start or device time ([`super::stagger`]).
fn slab_starts(
    n: usize,
    done: &[ChunkRecord],
    chunks: &FxHashMap<ChunkId, Chunk>,
) -> Vec<Option<(f64, f64)>> {
    let mut out = vec![None; n];
    for c in done.iter().filter(|c| c.count > 0) {
        let Some(ch) = chunks.get(&c.id) else {
            continue;
        };
        if let (Some(start), Some(dev)) = (ch.start_ns, ch.device_ns) {
            out[c.device] = Some((start as f64, dev as f64 / c.count as f64));
        }
    }
    out
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
    let steps = EnqueueSteps::start();
    // SAFETY: clprism's kernel and queue; the tag is reclaimed by the callback.
    let ev = unsafe {
        let ev = cl::enqueue_ndrange(queue, k, dim as u32, off, g, l, &wait)?;
        steps.mark(0);
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
        steps.mark(1);
        if let Err(e) = cl::flush(queue) {
            // the chunk is enqueued and its callback will report it; only polling is lost
            cl::release_event(ev);
            return Err(e);
        }
        ev
    };
    steps.mark(2);
    steps.report(&dev.name);
    Ok(ev)
}

/// With `CLPRISM_DEBUG`, the time of each driver call of one chunk's enqueue (the
/// enqueue, the completion callback's registration and the flush), for one debug line.
struct EnqueueSteps(Option<(std::time::Instant, [std::cell::Cell<u64>; 3])>);

impl EnqueueSteps {
    fn start() -> Self {
        Self(
            crate::config::get()
                .debug
                .then(|| (std::time::Instant::now(), Default::default())),
        )
    }

    /// Step `i` ended now.
    fn mark(&self, i: usize) {
        if let Some((t, marks)) = &self.0 {
            marks[i].set(t.elapsed().as_nanos() as u64);
        }
    }

    fn report(&self, device: &str) {
        if let Some((_, m)) = &self.0 {
            let [a, b, c] = [m[0].get(), m[1].get(), m[2].get()];
            crate::config::debug(|| {
                format!(
                    "chunk enqueue on {device}: clEnqueueNDRangeKernel {:.1} us, callback {:.1} us, clFlush {:.1} us",
                    a as f64 / 1e3,
                    b.saturating_sub(a) as f64 / 1e3,
                    c.saturating_sub(b) as f64 / 1e3
                )
            });
        }
    }
}

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
                    crate::exec::event_device_ns(c.ev)
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
