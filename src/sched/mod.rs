//! Pure, event-driven chunk scheduling (Boyer, dissertation ch. 4) and its baselines, with a
//! discrete-event simulator. No OpenCL calls, no threads, no clocks: the caller passes every
//! time in ns (any monotonic origin).
//!
//! Work-groups are linear indices `0..W` along the split dimension (DESIGN.md §7). A chunk is
//! a contiguous range of whole work-groups given to one device. The caller drives one
//! [`ChunkScheduler`] per balanced launch:
//!
//! ```text
//! let mut s = ChunkScheduler::new(&kind, &params, n_devices, total_wgs)?;
//! perform(s.start(now));                       // Assign actions
//! loop until s.is_complete() (or s.state() == SchedState::Stuck):
//!     chunk done      -> perform(s.on_chunk_done(dev, id, now, elapsed_ns)?)
//!     enqueue failed  -> perform(s.on_chunk_failed(dev, id, now)?)
//!     timer (s.next_poll_ns()) -> perform(s.poll(now))
//! ```
//!
//! `perform` enqueues each `Action::Assign` on its device (in order: one device's chunks
//! are meant for an in-order queue) and, for `Action::Abandon`, stops waiting for that chunk
//! and never merges its output; its completion should still be reported (the scheduler may
//! re-admit the device). Every work-group ends up in exactly one chunk that completed and
//! was not abandoned; those chunks tile `0..W` ([`ChunkScheduler::completed_chunks`]).
//!
//! Known limit: if every chunk still outstanding sits on devices that never complete and no
//! device has completed a chunk yet (e.g. W = 1 on a blocked device), nothing can tell a
//! slow device from a stuck one; the state stays `Running`, so the caller needs an overall
//! timeout of its own.

pub mod baselines;
pub mod boyer;
pub mod driver;
pub mod parse;
pub mod pool;
pub mod replay;
pub mod sim;
pub mod split;
pub mod stagger;

pub use parse::{parse_boyer_params, parse_scheduler, BoyerParams, SchedulerKind};

use baselines::Baseline;
use boyer::BoyerState;
use pool::Pool;

/// Identifier of a chunk within one [`ChunkScheduler`] (0, 1, 2, ... in assignment order).
pub type ChunkId = u64;

/// What the caller must do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Enqueue work-groups `first_wg .. first_wg + count` (linear indices along the split
    /// dimension) on participating device `device` as chunk `chunk_id`, then report it with
    /// `on_chunk_done` or `on_chunk_failed`. Chunks sent to one device are meant to run in
    /// assignment order (an in-order queue).
    Assign {
        /// Index of the device among the participating devices.
        device: usize,
        /// The chunk's id.
        chunk_id: ChunkId,
        /// First work-group (linear index).
        first_wg: u64,
        /// Number of work-groups (≥ 1).
        count: u64,
    },
    /// Stop waiting for this chunk and never merge its output (straggler, §4.3.2): its work
    /// has been reassigned. It may still run on the device (OpenCL cannot cancel it).
    Abandon {
        /// Device the chunk was given to.
        device: usize,
        /// The chunk's id.
        chunk_id: ChunkId,
    },
}

/// Life of a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkState {
    /// Assigned, not yet reported.
    Running,
    /// Completed; its output counts.
    Done,
    /// Its enqueue failed; its work went back to the pool.
    Failed,
    /// Abandoned (straggler or overdue); its work went back to the pool.
    Abandoned,
}

/// One chunk, for logs and checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkRecord {
    /// Chunk id (= index in [`ChunkScheduler::chunks`]).
    pub id: ChunkId,
    /// Participating device index.
    pub device: usize,
    /// First work-group (linear index).
    pub first_wg: u64,
    /// Number of work-groups.
    pub count: u64,
    /// When the scheduler assigned it (ns, caller's clock).
    pub assigned_ns: u64,
    /// Current state.
    pub state: ChunkState,
    /// When it was reported done, failed or abandoned (ns).
    pub end_ns: Option<u64>,
    /// Elapsed time the caller reported at completion (ns, transfers included).
    pub elapsed_ns: Option<u64>,
}

/// Why a device no longer takes part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exclusion {
    /// An enqueue on it failed.
    EnqueueFailed,
    /// Straggler rule of §4.3.2 (no chunk completed when the last work was claimed).
    Straggler,
    /// Overdue extension (see [`BoyerParams::overdue_factor`]).
    Overdue,
}

/// Overall state of a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SchedState {
    /// Work is outstanding and some live device is working on it.
    Running,
    /// Every work-group is in a completed chunk.
    Complete,
    /// Work remains but no live device holds any: every device was excluded (the caller
    /// should fall back to running the launch natively).
    Stuck,
}

/// Per-device bookkeeping.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeviceState {
    pub live: bool,
    pub excluded: Option<Exclusion>,
    /// Outstanding (Running) chunks, in assignment order.
    pub outstanding: Vec<ChunkId>,
    /// Completed chunks.
    pub completed: u32,
    /// Ω: ns per work-group of the most recently completed chunk (§4.3.1).
    pub omega_ns: Option<f64>,
    /// When the most recent chunk completed.
    pub last_done_ns: Option<u64>,
    /// Number of claims (logical chunks) made, for the growth sequence.
    pub claims: u32,
    /// Abandoned chunks not yet reported back (the device may still be running them).
    pub abandoned_running: u32,
    /// Ω when the device last claimed work (what its outstanding work was sized with).
    pub omega_at_claim: Option<f64>,
}

/// Bookkeeping shared by all policies: the pool of unassigned work-groups, the chunk table
/// and the per-device state. Invariant: every work-group is in exactly one of the pool, a
/// Running chunk, or a Done chunk.
#[derive(Debug, Clone)]
pub(crate) struct Core {
    pub total_wgs: u64,
    pub pool: Pool,
    pub chunks: Vec<ChunkRecord>,
    pub devices: Vec<DeviceState>,
    pub done_wgs: u64,
}

impl Core {
    fn new(n_devices: usize, total_wgs: u64) -> Self {
        Core {
            total_wgs,
            pool: Pool::new(total_wgs),
            chunks: Vec::new(),
            devices: (0..n_devices)
                .map(|_| DeviceState {
                    live: true,
                    ..Default::default()
                })
                .collect(),
            done_wgs: 0,
        }
    }

    pub fn live_devices(&self) -> impl Iterator<Item = usize> + '_ {
        self.devices
            .iter()
            .enumerate()
            .filter(|(_, d)| d.live)
            .map(|(i, _)| i)
    }

    /// Gives device `d` up to `n` work-groups from the pool (one chunk per contiguous
    /// piece). Returns the number given.
    pub fn claim(&mut self, d: usize, n: u64, now: u64, out: &mut Vec<Action>) -> u64 {
        if n == 0 || d >= self.devices.len() || !self.devices[d].live {
            return 0;
        }
        let pieces = self.pool.take(n);
        let mut got = 0;
        for (first, count) in pieces {
            let id = self.chunks.len() as ChunkId;
            self.chunks.push(ChunkRecord {
                id,
                device: d,
                first_wg: first,
                count,
                assigned_ns: now,
                state: ChunkState::Running,
                end_ns: None,
                elapsed_ns: None,
            });
            self.devices[d].outstanding.push(id);
            out.push(Action::Assign {
                device: d,
                chunk_id: id,
                first_wg: first,
                count,
            });
            got += count;
        }
        if got > 0 {
            self.devices[d].claims += 1;
            self.devices[d].omega_at_claim = self.devices[d].omega_ns;
        }
        got
    }

    /// Work-groups in device `d`'s outstanding chunks (U_i of §4.3.1).
    pub fn outstanding_wgs(&self, d: usize) -> u64 {
        self.devices[d]
            .outstanding
            .iter()
            .map(|&c| self.chunks[c as usize].count)
            .sum()
    }

    /// Estimated start of device `d`'s running chunk: the later of its assignment and the
    /// device's previous completion (chunks on one device run in order).
    pub fn head_start_ns(&self, d: usize) -> Option<u64> {
        let dev = &self.devices[d];
        let head = *dev.outstanding.first()?;
        let a = self.chunks[head as usize].assigned_ns;
        Some(a.max(dev.last_done_ns.unwrap_or(0)))
    }

    /// λ_i = Ω_i·U_i − T_i (§4.3.1): expected remaining time of device `d`'s outstanding
    /// chunks (ns), 0 if idle, clamped at 0 when overdue; `None` without a measured Ω.
    pub fn lambda_ns(&self, d: usize, now: u64) -> Option<f64> {
        let omega = self.devices[d].omega_ns?;
        let Some(start) = self.head_start_ns(d) else {
            return Some(0.0);
        };
        let t = now.saturating_sub(start) as f64;
        Some((omega * self.outstanding_wgs(d) as f64 - t).max(0.0))
    }

    /// Splits the whole pool over `devs` (each with a measured Ω) by eq. 4.3.
    pub fn split_pool(&mut self, devs: &[usize], now: u64, out: &mut Vec<Action>) {
        if devs.is_empty() || self.pool.is_empty() {
            return;
        }
        let inputs: Vec<(f64, f64)> = devs
            .iter()
            .map(|&d| {
                (
                    self.devices[d].omega_ns.unwrap_or(f64::NAN),
                    self.lambda_ns(d, now).unwrap_or(0.0),
                )
            })
            .collect();
        let shares = boyer::optimal_split(self.pool.len(), &inputs);
        for (i, &d) in devs.iter().enumerate() {
            self.claim(d, shares[i], now, out);
        }
    }

    /// Abandons all of device `d`'s outstanding chunks (work back to the pool) and excludes it.
    pub fn exclude(&mut self, d: usize, why: Exclusion, out: &mut Vec<Action>) {
        let ids = std::mem::take(&mut self.devices[d].outstanding);
        for id in ids {
            let c = &mut self.chunks[id as usize];
            c.state = ChunkState::Abandoned;
            // cannot overlap: the chunk's range was taken from the pool
            let _ = self.pool.give_back(c.first_wg, c.count);
            self.devices[d].abandoned_running += 1;
            out.push(Action::Abandon {
                device: d,
                chunk_id: id,
            });
        }
        self.devices[d].live = false;
        self.devices[d].excluded = Some(why);
    }

    fn check_chunk(&self, device: usize, chunk_id: ChunkId) -> Result<(), String> {
        let c = self
            .chunks
            .get(chunk_id as usize)
            .ok_or_else(|| format!("unknown chunk {chunk_id}"))?;
        if c.device != device {
            return Err(format!(
                "chunk {chunk_id} belongs to device {}, reported by device {device}",
                c.device
            ));
        }
        Ok(())
    }
}

#[derive(Debug, Clone)]
enum Policy {
    Boyer(BoyerState),
    Base(Baseline),
}

/// One balanced launch's scheduler: Boyer's algorithm or a baseline, driven by events.
#[derive(Debug, Clone)]
pub struct ChunkScheduler {
    core: Core,
    policy: Policy,
    kind: SchedulerKind,
    started: bool,
}

impl ChunkScheduler {
    /// A scheduler of `kind` for `n_devices` participating devices (indices `0..n_devices`)
    /// and `total_wgs` work-groups. `boyer` is used only by [`SchedulerKind::Boyer`].
    ///
    /// Errors: no devices; `Best` (the caller resolves it to `Single(i)`); a static partition
    /// whose number of fractions differs from `n_devices`; `Single(i)` with `i ≥ n_devices`;
    /// out-of-range Boyer parameters.
    pub fn new(
        kind: &SchedulerKind,
        boyer: &BoyerParams,
        n_devices: usize,
        total_wgs: u64,
    ) -> Result<Self, String> {
        if n_devices == 0 {
            return Err("no devices to schedule on".into());
        }
        let policy = match kind {
            SchedulerKind::Boyer => {
                let ok =
                    boyer.beta > 0.0 && boyer.beta <= 1.0 && boyer.delta >= 1.0 && boyer.gamma > 0;
                if !ok {
                    return Err(format!("invalid Boyer parameters {boyer:?}"));
                }
                Policy::Boyer(BoyerState::new(*boyer, n_devices, total_wgs))
            }
            SchedulerKind::Static(f) => {
                if f.len() != n_devices {
                    return Err(format!(
                        "static partition has {} fractions for {n_devices} devices",
                        f.len()
                    ));
                }
                Policy::Base(Baseline::Static {
                    fractions: f.clone(),
                })
            }
            SchedulerKind::Css(frac) => Policy::Base(Baseline::Css {
                chunk: baselines::css_chunk_wgs(total_wgs, *frac),
            }),
            SchedulerKind::Gss { min_frac } => Policy::Base(Baseline::Gss {
                min_chunk: (min_frac * total_wgs as f64).ceil() as u64,
            }),
            SchedulerKind::Tss { last_frac } => Policy::Base(Baseline::Tss {
                plan: baselines::Tss::new(
                    total_wgs,
                    n_devices,
                    (last_frac * total_wgs as f64).ceil() as u64,
                ),
                next: 0,
            }),
            SchedulerKind::Single(i) => {
                if *i >= n_devices {
                    return Err(format!("single:{i} but only {n_devices} devices"));
                }
                Policy::Base(Baseline::Single { device: *i })
            }
            SchedulerKind::Best => {
                return Err("'best' is resolved by the caller to single:<device>".into())
            }
        };
        Ok(ChunkScheduler {
            core: Core::new(n_devices, total_wgs),
            policy,
            kind: kind.clone(),
            started: false,
        })
    }

    /// The kind this scheduler was built from.
    pub fn kind(&self) -> &SchedulerKind {
        &self.kind
    }

    /// Initial assignments (Boyer step 1). A second call returns nothing.
    pub fn start(&mut self, now_ns: u64) -> Vec<Action> {
        let mut out = Vec::new();
        if self.started {
            return out;
        }
        self.started = true;
        match &mut self.policy {
            Policy::Boyer(b) => b.dispatch(&mut self.core, now_ns, &mut out),
            Policy::Base(b) => b.start(&mut self.core, now_ns, &mut out),
        }
        out
    }

    fn dispatch(&mut self, now: u64, out: &mut Vec<Action>) {
        match &mut self.policy {
            Policy::Boyer(b) => b.dispatch(&mut self.core, now, out),
            Policy::Base(b) => b.dispatch(&mut self.core, now, out),
        }
    }

    /// Chunk `chunk_id` completed on `device` at `now_ns`; `elapsed_ns` is its total time from
    /// the start of its first command to the end of its last (input transfers, kernel,
    /// output transfers: Ω of §4.3.1 includes transfers). Returns the next actions.
    ///
    /// Report completions of abandoned chunks too: their output must not be merged, but a
    /// device excluded as a straggler (or overdue) that completes every chunk it was
    /// abandoned with is re-admitted (extension beyond §4.3.2: it is alive after all) and
    /// may receive work again. A completion of a failed chunk is ignored.
    /// Errors: unknown chunk, wrong device, chunk already completed.
    pub fn on_chunk_done(
        &mut self,
        device: usize,
        chunk_id: ChunkId,
        now_ns: u64,
        elapsed_ns: u64,
    ) -> Result<Vec<Action>, String> {
        self.core.check_chunk(device, chunk_id)?;
        let c = &mut self.core.chunks[chunk_id as usize];
        match c.state {
            ChunkState::Failed => return Ok(Vec::new()),
            ChunkState::Abandoned => {
                if c.elapsed_ns.is_some() {
                    return Err(format!("chunk {chunk_id} reported done twice"));
                }
                c.elapsed_ns = Some(elapsed_ns);
                let count = c.count;
                let mut out = Vec::new();
                let dev = &mut self.core.devices[device];
                dev.abandoned_running = dev.abandoned_running.saturating_sub(1);
                // A straggler or overdue device that finishes everything it was abandoned
                // with is alive after all: re-admit it (extension; its abandoned output is
                // still never merged, the work was reassigned).
                if dev.abandoned_running == 0
                    && matches!(
                        dev.excluded,
                        Some(Exclusion::Straggler | Exclusion::Overdue)
                    )
                {
                    dev.live = true;
                    dev.excluded = None;
                    dev.completed += 1;
                    dev.omega_ns = Some(elapsed_ns.max(1) as f64 / count.max(1) as f64);
                    dev.last_done_ns = Some(dev.last_done_ns.map_or(now_ns, |t| t.max(now_ns)));
                    self.dispatch(now_ns, &mut out);
                }
                return Ok(out);
            }
            ChunkState::Done => return Err(format!("chunk {chunk_id} reported done twice")),
            ChunkState::Running => {}
        }
        c.state = ChunkState::Done;
        c.end_ns = Some(now_ns);
        c.elapsed_ns = Some(elapsed_ns);
        let count = c.count;
        self.core.done_wgs += count;
        let dev = &mut self.core.devices[device];
        dev.outstanding.retain(|&x| x != chunk_id);
        dev.completed += 1;
        // Ω of the most recent chunk; an elapsed time of 0 is read as 1 ns
        dev.omega_ns = Some(elapsed_ns.max(1) as f64 / count.max(1) as f64);
        dev.last_done_ns = Some(dev.last_done_ns.map_or(now_ns, |t| t.max(now_ns)));
        let mut out = Vec::new();
        self.dispatch(now_ns, &mut out);
        Ok(out)
    }

    /// The enqueue of chunk `chunk_id` on `device` failed: its work returns to the pool, the
    /// device's other outstanding chunks are abandoned (`Action::Abandon`), the device is
    /// excluded, and the work is reassigned to live devices. If no live device remains,
    /// [`Self::state`] becomes `Stuck`. Errors: unknown chunk, wrong device, chunk not running.
    pub fn on_chunk_failed(
        &mut self,
        device: usize,
        chunk_id: ChunkId,
        now_ns: u64,
    ) -> Result<Vec<Action>, String> {
        self.core.check_chunk(device, chunk_id)?;
        let c = &mut self.core.chunks[chunk_id as usize];
        match c.state {
            ChunkState::Failed => return Ok(Vec::new()),
            ChunkState::Abandoned => {
                // its work was already reassigned; the device is broken, never re-admit it
                let dev = &mut self.core.devices[device];
                dev.abandoned_running = dev.abandoned_running.saturating_sub(1);
                if !dev.live {
                    dev.excluded = Some(Exclusion::EnqueueFailed);
                }
                return Ok(Vec::new());
            }
            ChunkState::Done => return Err(format!("chunk {chunk_id} failed after completing")),
            ChunkState::Running => {}
        }
        c.state = ChunkState::Failed;
        c.end_ns = Some(now_ns);
        let (first, count) = (c.first_wg, c.count);
        self.core.pool.give_back(first, count)?;
        self.core.devices[device]
            .outstanding
            .retain(|&x| x != chunk_id);
        let mut out = Vec::new();
        self.core
            .exclude(device, Exclusion::EnqueueFailed, &mut out);
        self.dispatch(now_ns, &mut out);
        Ok(out)
    }

    /// Timer hook for the overdue-straggler extension (Boyer only; baselines never act).
    /// Call it at [`Self::next_poll_ns`] (calling it earlier or more often is harmless).
    pub fn poll(&mut self, now_ns: u64) -> Vec<Action> {
        let mut out = Vec::new();
        if let Policy::Boyer(b) = &mut self.policy {
            b.poll(&mut self.core, now_ns, &mut out);
        }
        out
    }

    /// Earliest time (ns) at which [`Self::poll`] could act if no other event arrives;
    /// `None`: no timer needed.
    pub fn next_poll_ns(&self) -> Option<u64> {
        match &self.policy {
            Policy::Boyer(b) if !self.is_complete() => b.next_poll_ns(&self.core),
            _ => None,
        }
    }

    /// True when every work-group is in a completed chunk.
    pub fn is_complete(&self) -> bool {
        self.core.done_wgs >= self.core.total_wgs
    }

    /// Running / Complete / Stuck (see [`SchedState`]).
    pub fn state(&self) -> SchedState {
        if self.is_complete() {
            SchedState::Complete
        } else if self
            .core
            .live_devices()
            .any(|d| !self.core.devices[d].outstanding.is_empty())
        {
            SchedState::Running
        } else {
            SchedState::Stuck
        }
    }

    /// Seeds Boyer's warm start (see [`BoyerParams::warm`]) with the Ω (ns per work-group,
    /// transfers included) each device measured in an earlier launch of the same kernel and
    /// NDRange, e.g. [`Self::measured_omegas`] of that launch. Call before [`Self::start`].
    ///
    /// Returns true when the warm start will be used: a Boyer scheduler with `warm` on, not
    /// started, and a finite positive Ω for every device. Otherwise nothing changes (the
    /// paper's cold start; baselines ignore history).
    pub fn seed_history(&mut self, omega_ns: &[Option<f64>]) -> bool {
        let Policy::Boyer(b) = &mut self.policy else {
            return false;
        };
        if self.started || b.params.warm.is_none() || omega_ns.len() != self.core.devices.len() {
            return false;
        }
        let v: Option<Vec<f64>> = omega_ns
            .iter()
            .map(|o| o.filter(|x| x.is_finite() && *x > 0.0))
            .collect();
        b.history_ns = v;
        b.history_ns.is_some()
    }

    /// No chunk, once given to a device, is taken back: §4.3.2's straggler rule and the
    /// overdue extension are off. For launches whose chunks overwrite, in place, the only
    /// copy of bytes that a reassigned chunk would need (balance mode's buffer directory keeps
    /// a buffer's bytes on the device that wrote them last); a device that hangs then stops
    /// the launch at the caller's stall limit instead of being abandoned. Call before
    /// [`Self::start`]; the baselines never abandon anyway.
    pub fn keep_started_chunks(&mut self) {
        if let Policy::Boyer(b) = &mut self.policy {
            b.keep_started = true;
            b.params.overdue_factor = None;
        }
    }

    /// Per device, the units one wave of the device runs at once (compute units × resident
    /// work-groups per compute unit, divided by work-groups per unit, rounded up). Boyer's
    /// warm start then gives a device its whole share at once when the final phase would
    /// leave it less than a wave (see [`boyer::BoyerState::wave_units`]). Call before
    /// [`Self::start`]; ignored by the other policies and when `waves` has the wrong length.
    pub fn set_wave_units(&mut self, waves: &[u64]) {
        if let Policy::Boyer(b) = &mut self.policy {
            if !self.started && waves.len() == self.core.devices.len() {
                b.wave_units = Some(waves.to_vec());
            }
        }
    }

    /// Per device, Ω (ns per work-group, transfers included) of its most recent completed
    /// chunk in this launch (§4.3.1), for the next launch's [`Self::seed_history`]. A device
    /// that completed none keeps the Ω it was seeded with when it was not excluded (a warm
    /// start may give a slow device no work); otherwise `None`, so the next launch starts
    /// cold and tries it again.
    pub fn measured_omegas(&self) -> Vec<Option<f64>> {
        let seeded = match &self.policy {
            Policy::Boyer(b) if b.warm_started => b.history_ns.as_deref(),
            _ => None,
        };
        self.core
            .devices
            .iter()
            .enumerate()
            .map(|(i, d)| {
                if d.completed > 0 {
                    d.omega_ns
                } else if d.excluded.is_none() {
                    seeded.map(|h| h[i])
                } else {
                    None
                }
            })
            .collect()
    }

    /// Total work-groups of the launch.
    pub fn total_wgs(&self) -> u64 {
        self.core.total_wgs
    }

    /// Work-groups not yet given to any running chunk.
    pub fn unassigned_wgs(&self) -> u64 {
        self.core.pool.len()
    }

    /// Every chunk ever assigned, indexed by id.
    pub fn chunks(&self) -> &[ChunkRecord] {
        &self.core.chunks
    }

    /// The chunks whose output counts (state `Done`), sorted by first work-group. When the
    /// launch is complete they tile `0..W` exactly.
    pub fn completed_chunks(&self) -> Vec<&ChunkRecord> {
        let mut v: Vec<&ChunkRecord> = self
            .core
            .chunks
            .iter()
            .filter(|c| c.state == ChunkState::Done)
            .collect();
        v.sort_by_key(|c| c.first_wg);
        v
    }

    /// Per device, when its last merged (Done) chunk was reported (ns); `None` for devices
    /// that completed nothing.
    pub fn device_finish_ns(&self) -> Vec<Option<u64>> {
        let mut f = vec![None; self.core.devices.len()];
        for c in &self.core.chunks {
            if c.state == ChunkState::Done {
                let e = c.end_ns.unwrap_or(0);
                let slot: &mut Option<u64> = &mut f[c.device];
                *slot = Some(slot.map_or(e, |x: u64| x.max(e)));
            }
        }
        f
    }

    /// Idle tail (Boyer §4.5.3, Fig. 4.14): last minus first finishing time over the devices
    /// that completed merged work and are not excluded (ns). `None` before completion.
    pub fn idle_tail_ns(&self) -> Option<u64> {
        if !self.is_complete() {
            return None;
        }
        let f: Vec<u64> = self
            .device_finish_ns()
            .iter()
            .enumerate()
            .filter(|(d, _)| self.core.devices[*d].excluded.is_none())
            .filter_map(|(_, x)| *x)
            .collect();
        Some(f.iter().max().copied().unwrap_or(0) - f.iter().min().copied().unwrap_or(0))
    }

    /// Number of participating devices.
    pub fn n_devices(&self) -> usize {
        self.core.devices.len()
    }

    /// Why device `d` was excluded, if it was.
    pub fn exclusion(&self, d: usize) -> Option<Exclusion> {
        self.core.devices.get(d).and_then(|x| x.excluded)
    }

    /// Ω of device `d`: ns per work-group of its most recently completed chunk.
    pub fn omega_ns(&self, d: usize) -> Option<f64> {
        self.core.devices.get(d).and_then(|x| x.omega_ns)
    }

    /// True once Boyer's final split (step 3) has happened (false for baselines).
    pub fn in_final_phase(&self) -> bool {
        matches!(&self.policy, Policy::Boyer(b) if b.final_phase)
    }
}
