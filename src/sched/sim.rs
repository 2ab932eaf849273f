//! Discrete-event simulator of chunk scheduling on devices with given per-work-group rates
//! (DESIGN.md §7–8): plan and compare schedulers without OpenCL, and predict a run from
//! measured rates.
//!
//! Device model: each device runs its chunks in assignment order (an in-order queue). A
//! chunk starts when it is assigned or when the device's previous chunk ends, whichever is
//! later; it takes a fixed per-chunk overhead (launch + transfers, ns) and then its
//! work-groups at the device's rate, which may change over time (piecewise constant, in
//! work-groups per µs); a rate of 0 stalls the device from then on, and a blocked device
//! never completes anything. The elapsed time reported to the scheduler is the chunk's end
//! minus its start (overhead included, as Ω of Boyer §4.3.1 includes transfers).
//!
//! Metrics (Boyer ch. 4): makespan; efficiency = measured throughput / sum of the devices'
//! throughputs when each runs the whole launch alone (§4.1.1, footnote 1), i.e. the ideal
//! finish time where all devices finish together, 1/Σ(1/T_alone,i), divided by the makespan;
//! idle tail = time between the first and the last participating device finishing (§4.5.3,
//! Fig. 4.14). Boyer's efficiency can exceed 1 when rates change over time, so the
//! simulator also reports a true lower bound on the makespan ([`capacity_bound_ns`]).

use super::driver::{Completion, Wake};
use super::{BoyerParams, ChunkId, ChunkRecord, ChunkScheduler, Exclusion, SchedulerKind};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashSet};

/// A pending completion: (end time ns, sequence, device, chunk, elapsed ns).
type Event = (u64, u64, usize, ChunkId, u64);

/// A simulated device.
#[derive(Debug, Clone, PartialEq)]
pub struct SimDevice {
    /// Rate segments `(from_ns, work-groups per ns)`, sorted by `from_ns`, first at 0.
    segments: Vec<(u64, f64)>,
    /// Never completes anything (an enqueue that waits on an event that never fires, §4.5.6).
    pub blocked: bool,
    /// Work-groups the device runs at once (one wave); 0: none. A chunk then takes as long
    /// as its work-groups rounded up to whole waves (a GPU whose chunk cannot fill it).
    pub wave: u64,
    /// Measured chunk costs `(work-groups, ns)`, sorted by work-groups; empty: none. When
    /// set, a chunk's processing time is read from this curve ([`ChunkCost::ns`]) instead
    /// of the rate segments.
    pub cost: ChunkCost,
    /// Time before the device can start its first chunk, ns (0: at once). The replay of a
    /// measured run ([`super::replay`]) puts here what the host does before this device's
    /// chunk runs: the per-launch phases before the chunks, the enqueues and buffer-directory
    /// fetches (halos) of the devices served before it, its own, and its enqueue-to-start
    /// latency.
    pub lead_ns: u64,
}

/// A chunk's processing time as a function of its work-groups, measured on a real device:
/// piecewise linear between the points `(work-groups, ns)`, flat below the first point (the
/// latency of a chunk too small to fill the device), and extended past the last point along
/// the last segment's slope. Chunk-size sweeps such as GSS's halving chunks measure it; it
/// captures what a constant rate misses, e.g. an H200 running 5 N-body work-groups in the
/// same 45 ms as 160.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChunkCost(Vec<(u64, f64)>);

impl ChunkCost {
    /// From measured points `(work-groups, ns)`. Errors: no point, a point with 0
    /// work-groups or a non-finite or negative time, or two points of the same size.
    pub fn new(mut points: Vec<(u64, f64)>) -> Result<Self, String> {
        if points.is_empty() {
            return Err("a chunk-cost curve needs at least one point".into());
        }
        if points
            .iter()
            .any(|&(n, t)| n == 0 || !t.is_finite() || t < 0.0)
        {
            return Err("chunk-cost points need work-groups >= 1 and a finite time >= 0".into());
        }
        points.sort_by_key(|p| p.0);
        if points.windows(2).any(|w| w[0].0 == w[1].0) {
            return Err("chunk-cost points must have distinct work-group counts".into());
        }
        Ok(ChunkCost(points))
    }

    /// Whether the curve has no point (the rate applies).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Processing time of a chunk of `wgs` work-groups, ns (see the type's doc).
    pub fn ns(&self, wgs: u64) -> f64 {
        let p = &self.0;
        let Some(&(n0, t0)) = p.first() else {
            return 0.0;
        };
        if wgs <= n0 || p.len() == 1 {
            return if wgs <= n0 {
                t0
            } else {
                t0 * wgs as f64 / n0 as f64
            };
        }
        let i = p.partition_point(|&(n, _)| n < wgs).clamp(1, p.len() - 1);
        let ((na, ta), (nb, tb)) = (p[i - 1], p[i]);
        let slope = (tb - ta) / (nb - na) as f64;
        (ta + slope * (wgs as f64 - na as f64)).max(0.0)
    }
}

impl SimDevice {
    /// Constant rate in work-groups per µs (≥ 0; 0 = never finishes computing).
    pub fn constant(wg_per_us: f64) -> Self {
        SimDevice {
            segments: vec![(0, (wg_per_us / 1000.0).max(0.0))],
            blocked: false,
            wave: 0,
            cost: ChunkCost::default(),
            lead_ns: 0,
        }
    }

    /// Constant rate given as Ω, ns per work-group (> 0).
    pub fn from_ns_per_wg(ns_per_wg: f64) -> Self {
        let r = if ns_per_wg > 0.0 {
            1.0 / ns_per_wg
        } else {
            0.0
        };
        SimDevice {
            segments: vec![(0, r)],
            blocked: false,
            wave: 0,
            cost: ChunkCost::default(),
            lead_ns: 0,
        }
    }

    /// A device that never completes a chunk.
    pub fn blocked() -> Self {
        SimDevice {
            segments: vec![(0, 0.0)],
            blocked: true,
            wave: 0,
            cost: ChunkCost::default(),
            lead_ns: 0,
        }
    }

    /// From `at_ns` on, the rate is `wg_per_us` work-groups per µs (0 stalls the device).
    pub fn with_change(mut self, at_ns: u64, wg_per_us: f64) -> Self {
        let r = (wg_per_us / 1000.0).max(0.0);
        self.segments.retain(|&(t, _)| t != at_ns);
        let pos = self.segments.partition_point(|&(t, _)| t < at_ns);
        self.segments.insert(pos, (at_ns, r));
        self
    }

    /// The same device running `wgs` work-groups at once: every chunk takes as long as its
    /// work-groups rounded up to whole waves of `wgs`.
    pub fn with_wave(mut self, wgs: u64) -> Self {
        self.wave = wgs;
        self
    }

    /// The same device with chunk times from a measured curve instead of its rate (the rate
    /// still gives Ω for a warm start and the ideal finish).
    pub fn with_cost(mut self, cost: ChunkCost) -> Self {
        self.cost = cost;
        self
    }

    /// The same device, free only from `lead_ns` on (see the field).
    pub fn with_lead(mut self, lead_ns: u64) -> Self {
        self.lead_ns = lead_ns;
        self
    }

    /// Work-groups the device can process between `t0_ns` and `t1_ns` at its piecewise
    /// rate (0 if blocked).
    pub fn work_between(&self, t0_ns: f64, t1_ns: f64) -> f64 {
        if self.blocked || t1_ns <= t0_ns {
            return 0.0;
        }
        let n = self.segments.len();
        let mut w = 0.0;
        for i in 0..n {
            let a = (self.segments[i].0 as f64).max(t0_ns);
            let b = if i + 1 < n {
                (self.segments[i + 1].0 as f64).min(t1_ns)
            } else {
                t1_ns
            };
            if b > a {
                w += self.segments[i].1 * (b - a);
            }
        }
        w
    }

    /// When a chunk of `wgs` work-groups started at `start_ns` ends: `overhead_ns` first,
    /// then the work-groups at the piecewise rate. `None`: never (blocked or stalled).
    pub fn finish_ns(&self, start_ns: u64, wgs: u64, overhead_ns: u64) -> Option<u64> {
        if self.blocked {
            return None;
        }
        let mut t = start_ns.saturating_add(overhead_ns) as f64;
        if !self.cost.is_empty() {
            let f = t + self.cost.ns(wgs);
            return (f < u64::MAX as f64).then(|| f.ceil() as u64);
        }
        let wgs = if self.wave > 0 {
            wgs.div_ceil(self.wave) * self.wave
        } else {
            wgs
        };
        let mut rem = wgs as f64;
        if rem <= 0.0 {
            return Some(t.ceil() as u64);
        }
        let n = self.segments.len();
        for i in 0..n {
            let end = if i + 1 < n {
                self.segments[i + 1].0 as f64
            } else {
                f64::INFINITY
            };
            if end <= t {
                continue;
            }
            let r = self.segments[i].1;
            if r > 0.0 {
                let cap = r * (end - t);
                if cap >= rem {
                    let f = t + rem / r;
                    return if f < u64::MAX as f64 {
                        Some(f.ceil() as u64)
                    } else {
                        None
                    };
                }
                rem -= cap;
            }
            t = end;
        }
        None
    }
}

/// A simulation setup.
#[derive(Debug, Clone, PartialEq)]
pub struct SimConfig {
    /// The devices, indexed as the scheduler sees them.
    pub devices: Vec<SimDevice>,
    /// Work-groups along the split dimension.
    pub total_wgs: u64,
    /// Fixed cost of every chunk (launch + transfers), ns.
    pub overhead_ns: u64,
    /// Injected enqueue failures `(device, n)`: the n-th (0-based) chunk assigned to that
    /// device fails at enqueue (reported at once through `on_chunk_failed`).
    pub fail_enqueue: Vec<(usize, u32)>,
    /// Safety bound on simulated events.
    pub max_events: usize,
    /// Ω per device (ns per work-group) from an earlier launch, passed to
    /// [`ChunkScheduler::seed_history`] (Boyer's warm start); `None`: a first launch.
    pub history_ns: Option<Vec<Option<f64>>>,
    /// Units per wave of each device, passed to [`ChunkScheduler::set_wave_units`].
    pub wave_units: Option<Vec<u64>>,
}

impl SimConfig {
    /// Devices with the given work-groups/µs rates, no failures.
    pub fn new(devices: Vec<SimDevice>, total_wgs: u64, overhead_ns: u64) -> Self {
        SimConfig {
            devices,
            total_wgs,
            overhead_ns,
            fail_enqueue: Vec::new(),
            max_events: 10_000_000,
            history_ns: None,
            wave_units: None,
        }
    }
}

/// Per-device outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct SimDeviceReport {
    /// Work-groups in merged (completed, not abandoned) chunks.
    pub wgs_done: u64,
    /// Merged chunks.
    pub chunks_done: u32,
    /// When its last merged chunk ended (ns).
    pub finish_ns: Option<u64>,
    /// Whether and why the scheduler excluded it.
    pub excluded: Option<Exclusion>,
}

/// Result of one simulated launch.
#[derive(Debug, Clone, PartialEq)]
pub struct SimReport {
    /// Scheduler label.
    pub scheduler: String,
    /// Every work-group completed.
    pub complete: bool,
    /// Time at which the last merged chunk ended (ns), if complete.
    pub makespan_ns: Option<u64>,
    /// Ideal finish: 1/Σ(1/T_alone,i) (ns); `None` if no device can finish alone.
    pub ideal_ns: Option<f64>,
    /// ideal / makespan (Boyer §4.1.1 efficiency), if complete. With rates that change
    /// over time this can exceed 1 (a device's throughput alone is not its throughput
    /// early in the run); see `bound_efficiency`.
    pub efficiency: Option<f64>,
    /// Lower bound on any schedule's makespan: the time at which all devices, each starting
    /// at t = 0 and paying one overhead, finish together ([`capacity_bound_ns`]).
    pub bound_ns: Option<f64>,
    /// bound / makespan (≤ 1), if complete.
    pub bound_efficiency: Option<f64>,
    /// Last minus first finishing time over devices that did merged work (ns).
    pub idle_tail_ns: Option<u64>,
    /// Chunks assigned (including failed and abandoned ones).
    pub chunks_assigned: usize,
    /// Chunks abandoned.
    pub chunks_abandoned: usize,
    /// Chunks whose enqueue failed.
    pub chunks_failed: usize,
    /// Per device.
    pub per_device: Vec<SimDeviceReport>,
    /// Chunks the simulated caller merged `(device, first_wg, count)`, in completion order:
    /// derived from the actions alone, independent of the scheduler's own records.
    pub merged: Vec<(usize, u64, u64)>,
    /// The scheduler's records of all chunks.
    pub chunks: Vec<ChunkRecord>,
    /// Protocol violations seen by the simulated caller (should stay empty).
    pub violations: Vec<String>,
}

/// Simulated devices for [`super::driver::drive`]: chunk completions come from a heap of
/// finish times computed from each device's rate ([`SimDevice::finish_ns`]), and every
/// action is checked against the scheduler protocol (`violations`).
struct SimDevices<'a> {
    cfg: &'a SimConfig,
    now: u64,
    /// Poll times at or below this were served (a poll at `t` is served once).
    poll_floor: u64,
    /// (end time, sequence, device, chunk, elapsed)
    heap: BinaryHeap<Reverse<Event>>,
    seq: u64,
    /// When each device's queue is free; `None`: blocked for ever.
    free_at: Vec<Option<u64>>,
    assigned_per_dev: Vec<u32>,
    reported: HashSet<ChunkId>,
    ranges: Vec<Option<(usize, u64, u64)>>,
    merged: Vec<(usize, u64, u64)>,
    violations: Vec<String>,
    per_dev: Vec<SimDeviceReport>,
    events: usize,
}

impl super::driver::ChunkDevices for SimDevices<'_> {
    fn now_ns(&self) -> u64 {
        self.now
    }

    fn enqueue(
        &mut self,
        device: usize,
        chunk_id: ChunkId,
        first_wg: u64,
        count: u64,
    ) -> Result<(), String> {
        let id = chunk_id as usize;
        if self.ranges.len() <= id {
            self.ranges.resize(id + 1, None);
        }
        if self.ranges[id].is_some() {
            self.violations
                .push(format!("chunk {chunk_id} assigned twice"));
        }
        self.ranges[id] = Some((device, first_wg, count));
        if count == 0 {
            self.violations.push(format!("chunk {chunk_id} is empty"));
        }
        let nth = self.assigned_per_dev[device];
        self.assigned_per_dev[device] += 1;
        if self.cfg.fail_enqueue.contains(&(device, nth)) {
            return Err("injected enqueue failure".into());
        }
        let start = self.free_at[device].map(|f| f.max(self.now));
        let end = start
            .and_then(|st| self.cfg.devices[device].finish_ns(st, count, self.cfg.overhead_ns));
        self.free_at[device] = end;
        if let (Some(st), Some(e)) = (start, end) {
            self.heap
                .push(Reverse((e, self.seq, device, chunk_id, e - st)));
            self.seq += 1;
        }
        Ok(())
    }

    fn abandon(&mut self, device: usize, chunk_id: ChunkId) {
        if self.reported.contains(&chunk_id) {
            self.violations
                .push(format!("chunk {chunk_id} abandoned after completion"));
        }
        if self
            .ranges
            .get(chunk_id as usize)
            .copied()
            .flatten()
            .map(|r| r.0)
            != Some(device)
        {
            self.violations
                .push(format!("abandon of unknown chunk {chunk_id}"));
        }
    }

    fn wait(&mut self, poll_at_ns: Option<u64>) -> Result<Wake, String> {
        self.events += 1;
        if self.events > self.cfg.max_events {
            return Err(format!(
                "simulation exceeded {} events",
                self.cfg.max_events
            ));
        }
        let next_ev = self.heap.peek().map(|Reverse(e)| e.0);
        let next_poll = poll_at_ns.map(|t| t.max(self.poll_floor).max(self.now));
        match (next_ev, next_poll) {
            (None, None) => Ok(Wake::Idle),
            (ev, Some(p)) if ev.is_none_or(|e| p < e) => {
                self.now = p;
                self.poll_floor = p + 1;
                Ok(Wake::Poll(p))
            }
            _ => {
                let Some(Reverse((t, _, device, chunk_id, elapsed))) = self.heap.pop() else {
                    return Ok(Wake::Idle);
                };
                self.now = t;
                Ok(Wake::Completed(Completion {
                    device,
                    chunk_id,
                    at_ns: t,
                    elapsed_ns: elapsed,
                    ok: true,
                }))
            }
        }
    }

    fn completed(&mut self, c: &Completion) {
        self.reported.insert(c.chunk_id);
        if let Some(Some((_, first, count))) = self.ranges.get(c.chunk_id as usize) {
            self.merged.push((c.device, *first, *count));
            let r = &mut self.per_dev[c.device];
            r.wgs_done += count;
            r.chunks_done += 1;
            r.finish_ns = Some(c.at_ns);
        }
    }
}

/// Runs one launch of `kind` on `cfg`, through the chunk-driver loop balance mode runs
/// ([`super::driver::drive`]).
///
/// Errors: the scheduler refuses the setup (see [`ChunkScheduler::new`]), a scheduler call
/// returns an error, or `max_events` is exceeded.
pub fn simulate(
    kind: &SchedulerKind,
    params: &BoyerParams,
    cfg: &SimConfig,
) -> Result<SimReport, String> {
    let n = cfg.devices.len();
    let mut s = ChunkScheduler::new(kind, params, n, cfg.total_wgs)?;
    if let Some(h) = &cfg.history_ns {
        s.seed_history(h);
    }
    if let Some(w) = &cfg.wave_units {
        s.set_wave_units(w);
    }
    let mut devices = SimDevices {
        cfg,
        now: 0,
        poll_floor: 0,
        heap: BinaryHeap::new(),
        seq: 0,
        free_at: cfg.devices.iter().map(|d| Some(d.lead_ns)).collect(),
        assigned_per_dev: vec![0; n],
        reported: HashSet::new(),
        ranges: Vec::new(),
        merged: Vec::new(),
        violations: Vec::new(),
        per_dev: (0..n)
            .map(|_| SimDeviceReport {
                wgs_done: 0,
                chunks_done: 0,
                finish_ns: None,
                excluded: None,
            })
            .collect(),
        events: 0,
    };
    super::driver::drive(&mut s, &mut devices)?;
    let SimDevices {
        mut per_dev,
        merged,
        violations,
        ..
    } = devices;

    for (d, r) in per_dev.iter_mut().enumerate() {
        r.excluded = s.exclusion(d);
    }
    let complete = s.is_complete();
    let makespan = if complete {
        Some(
            per_dev
                .iter()
                .filter_map(|r| r.finish_ns)
                .max()
                .unwrap_or(0),
        )
    } else {
        None
    };
    let ideal = ideal_finish_ns(cfg);
    let bound = capacity_bound_ns(cfg);
    let bound_efficiency = match (makespan, bound) {
        (Some(m), Some(b)) if m > 0 => Some(b / m as f64),
        _ => None,
    };
    let efficiency = match (makespan, ideal) {
        (Some(m), Some(i)) if m > 0 => Some(i / m as f64),
        _ => None,
    };
    let finishes: Vec<u64> = per_dev
        .iter()
        .filter(|r| r.chunks_done > 0 && r.excluded.is_none())
        .filter_map(|r| r.finish_ns)
        .collect();
    let idle_tail = if complete {
        Some(finishes.iter().max().unwrap_or(&0) - finishes.iter().min().unwrap_or(&0))
    } else {
        None
    };
    debug_assert!(!complete || s.idle_tail_ns() == idle_tail);
    let chunks = s.chunks().to_vec();
    Ok(SimReport {
        scheduler: kind.to_string(),
        complete,
        makespan_ns: makespan,
        ideal_ns: ideal,
        efficiency,
        bound_ns: bound,
        bound_efficiency,
        idle_tail_ns: idle_tail,
        chunks_assigned: chunks.len(),
        chunks_abandoned: chunks
            .iter()
            .filter(|c| c.state == super::ChunkState::Abandoned)
            .count(),
        chunks_failed: chunks
            .iter()
            .filter(|c| c.state == super::ChunkState::Failed)
            .count(),
        per_device: per_dev,
        merged,
        chunks,
        violations,
    })
}

/// Ideal finish time 1/Σ(1/T_alone,i) (ns), where T_alone,i is device i running all
/// work-groups as one chunk from t = 0 (its `lead_ns` ignored) (Boyer's efficiency reference, §4.1.1 footnote 1).
/// `None` when no device can finish alone.
pub fn ideal_finish_ns(cfg: &SimConfig) -> Option<f64> {
    let s: f64 = cfg
        .devices
        .iter()
        .filter_map(|d| d.finish_ns(0, cfg.total_wgs, cfg.overhead_ns))
        .map(|t| 1.0 / (t.max(1) as f64))
        .sum();
    if s > 0.0 {
        Some(1.0 / s)
    } else {
        None
    }
}

/// The earliest time T at which the devices, all starting at t = 0 and each paying the
/// per-chunk overhead once, can together have processed every work-group:
/// Σ_i ∫_{overhead}^{T} rate_i(t) dt = W (all devices finish together). No schedule in the
/// simulator finishes earlier (a device processes nothing during its chunks' overheads), so
/// it is a lower bound on the makespan even when rates change over time. `None` when the
/// devices cannot process W work-groups at all. W = 0 gives 0.
pub fn capacity_bound_ns(cfg: &SimConfig) -> Option<f64> {
    let w = cfg.total_wgs as f64;
    if cfg.total_wgs == 0 {
        return Some(0.0);
    }
    let o = cfg.overhead_ns as f64;
    let cap = |t: f64| -> f64 { cfg.devices.iter().map(|d| d.work_between(o, t)).sum() };
    // an upper bound: the fastest device alone
    let mut hi = cfg
        .devices
        .iter()
        .filter_map(|d| d.finish_ns(0, cfg.total_wgs, cfg.overhead_ns))
        .min()? as f64
        + 1.0;
    let mut lo = o;
    if cap(hi) < w {
        hi *= 2.0; // rounding guard
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if cap(mid) >= w {
            hi = mid;
        } else {
            lo = mid;
        }
        if hi - lo < 1e-3 {
            break;
        }
    }
    Some(hi)
}

/// Boyer's efficiency (§4.1.1, footnote 1): measured throughput divided by the sum of the
/// devices' throughputs when executing separately, from times: `alone_ns[i]` is device i's
/// time for the whole launch alone, `measured_ns` the balanced time.
pub fn efficiency(measured_ns: f64, alone_ns: &[f64]) -> f64 {
    let s: f64 = alone_ns.iter().filter(|t| **t > 0.0).map(|t| 1.0 / t).sum();
    if measured_ns > 0.0 && s > 0.0 {
        (1.0 / measured_ns) / s
    } else {
        0.0
    }
}

/// Predicts a balanced launch from measured per-device rates: `ns_per_wg[i]` is device i's
/// time per work-group (kernel only, ns), `overhead_ns` the fixed per-chunk cost (launch +
/// transfers). For planning (e.g. choosing a scheduler, or devices on a remote PoCL
/// runtime, DESIGN.md §8) before running anything.
pub fn predict(
    kind: &SchedulerKind,
    params: &BoyerParams,
    ns_per_wg: &[f64],
    overhead_ns: u64,
    total_wgs: u64,
) -> Result<SimReport, String> {
    let devices = ns_per_wg
        .iter()
        .map(|&x| SimDevice::from_ns_per_wg(x))
        .collect();
    simulate(
        kind,
        params,
        &SimConfig::new(devices, total_wgs, overhead_ns),
    )
}

/// Index of the highest rate (the first one on ties).
fn fastest(rates: &[f64]) -> usize {
    let mut best = 0;
    for (i, &r) in rates.iter().enumerate() {
        if r > rates[best] {
            best = i;
        }
    }
    best
}

/// The schedulers `--scheduler all` compares for devices with initial rates `rates`
/// (work-groups/µs): boyer; static with fractions proportional to the rates (the best static
/// partition when rates stay fixed); CSS with Boyer's best two-device chunk of 21% (§4.5.1)
/// scaled by 2/N; GSS; TSS; single on the fastest device. (`simulate_main` adds Boyer
/// without clprism's extensions as `boyer(paper)`.)
pub fn comparison_set(rates: &[f64]) -> Vec<SchedulerKind> {
    let n = rates.len().max(1);
    let css = (0.21 * 2.0 / n as f64).min(1.0);
    let fastest = fastest(rates);
    let fr: Vec<f64> = if rates.iter().any(|&r| r > 0.0) {
        rates.to_vec()
    } else {
        vec![1.0; n]
    };
    vec![
        SchedulerKind::Boyer,
        SchedulerKind::Static(fr),
        SchedulerKind::Css(css),
        SchedulerKind::Gss { min_frac: 0.0 },
        SchedulerKind::Tss { last_frac: 0.0 },
        SchedulerKind::Single(fastest),
    ]
}

fn fmt_ms(ns: Option<u64>) -> String {
    ns.map(|x| format!("{:.3}", x as f64 / 1e6))
        .unwrap_or_else(|| "never".into())
}

/// Formats reports as a table (one row per scheduler): makespan; `bound_ms`, the capacity
/// lower bound (all devices finish together, [`capacity_bound_ns`]) and `eff`, bound /
/// makespan; `eff_boyer`, Boyer's efficiency (§4.1.1); idle tail; chunks; abandoned chunks;
/// excluded devices.
pub fn format_table(reports: &[SimReport]) -> String {
    let mut s = format!(
        "{:<24} {:>11} {:>9} {:>6} {:>9} {:>16} {:>6} {:>6} {:>8}\n",
        "scheduler",
        "makespan_ms",
        "bound_ms",
        "eff",
        "eff_boyer",
        "idle_tail_ms",
        "chunks",
        "aband",
        "excluded"
    );
    let f4 = |x: Option<f64>| x.map(|e| format!("{e:.4}")).unwrap_or_else(|| "-".into());
    for r in reports {
        let mut label = r.scheduler.clone();
        if label.len() > 24 {
            label.truncate(21);
            label.push_str("...");
        }
        let tail = match (r.idle_tail_ns, r.makespan_ns) {
            (Some(t), Some(m)) if m > 0 => {
                format!("{} ({:.1}%)", fmt_ms(Some(t)), 100.0 * t as f64 / m as f64)
            }
            _ => "-".into(),
        };
        let excl: Vec<String> = r
            .per_device
            .iter()
            .enumerate()
            .filter(|(_, d)| d.excluded.is_some())
            .map(|(i, _)| i.to_string())
            .collect();
        let mut excl = excl.join(",");
        if excl.is_empty() {
            excl.push('-');
        } else if excl.len() > 8 {
            excl.truncate(5);
            excl.push_str("...");
        }
        s.push_str(&format!(
            "{:<24} {:>11} {:>9} {:>6} {:>9} {:>16} {:>6} {:>6} {:>8}\n",
            label,
            fmt_ms(r.makespan_ns),
            r.bound_ns
                .map(|x| format!("{:.3}", x / 1e6))
                .unwrap_or_else(|| "-".into()),
            r.bound_efficiency
                .map(|e| format!("{e:.3}"))
                .unwrap_or_else(|| "-".into()),
            f4(r.efficiency),
            tail,
            r.chunks_assigned,
            r.chunks_abandoned,
            excl,
        ));
    }
    s
}

const USAGE: &str =
    "usage: clprism simulate [--devices N] [--rates r1,r2,...] [--wgs W] [--overhead-ns X]
                        [--scheduler boyer|static:f,..|css:f|gss|tss|single[:i]|all]
                        [--block i[,j..]] [--change dev:at_ns:rate]... [--fail dev:n]...
                        [--boyer beta=..,delta=..,gamma=..,overdue=..|off,early=on|off] [--chunks]
                        [--wave W] [--warm] [--chunk-cost WGS:US,...]
  rates are work-groups per microsecond (one value = the same for every device);
  --chunk-cost: every device's chunk of WGS work-groups takes US µs, measured (e.g. the
  halving chunks of a GSS run); linear between points, flat below the first, along the last
  slope past the last; replaces the rate for chunk times (not with --change; with --wave
  the wave then only tells the scheduler, the curve already holds what a wave costs);
  --wave W: every device runs W work-groups at once, so a chunk costs whole waves (the
  scheduler knows W, as balance mode does from model::occupancy); --warm: a repeated
  launch, Boyer's warm start from the Ω the devices' rates give;
  --block: device never completes; --change: rate from at_ns on (0 stalls it);
  --fail dev:n: the n-th (0-based) chunk enqueue on dev fails.
  bound = earliest time all devices (one overhead each) can finish W together; eff = bound/
  makespan; eff_boyer = throughput / sum of throughputs alone (Boyer ch.4 footnote 1; can
  exceed 1 when rates change); idle tail = last minus first device finishing.
  clprism simulate --replay LOG.jsonl [--gpus 1,2,4,8] [--native-kernel-s X]: replay a
  balance-mode run's log on N GPUs with the buffer directory (`--replay --help`).";

fn parse_num<T: std::str::FromStr>(what: &str, s: &str) -> Result<T, String> {
    s.trim()
        .parse()
        .map_err(|_| format!("{what}: '{s}' is not a valid number"))
}

struct Cli {
    all: bool,
    cfg: SimConfig,
    kinds: Vec<SchedulerKind>,
    params: BoyerParams,
    show_chunks: bool,
}

fn parse_cli(args: &[String]) -> Result<Option<Cli>, String> {
    let mut devices: Option<usize> = None;
    let mut rates: Option<Vec<f64>> = None;
    let mut wgs: u64 = 100_000;
    let mut overhead: u64 = 20_000;
    let mut sched = "all".to_string();
    let mut blocks: Vec<usize> = Vec::new();
    let mut changes: Vec<(usize, u64, f64)> = Vec::new();
    let mut fails: Vec<(usize, u32)> = Vec::new();
    let mut params = BoyerParams::default();
    let mut show_chunks = false;
    let mut wave: Option<u64> = None;
    let mut warm = false;
    let mut cost: Option<ChunkCost> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut val = || -> Result<String, String> {
            match &inline {
                Some(v) => Ok(v.clone()),
                None => it.next().cloned().ok_or(format!("{key} needs a value")),
            }
        };
        match key.as_str() {
            "-h" | "--help" => return Ok(None),
            "--devices" => devices = Some(parse_num("--devices", &val()?)?),
            "--rates" => {
                rates = Some(
                    val()?
                        .split(',')
                        .map(|x| parse_num::<f64>("--rates", x))
                        .collect::<Result<_, _>>()?,
                )
            }
            "--wgs" => wgs = parse_num("--wgs", &val()?)?,
            "--overhead-ns" => overhead = parse_num("--overhead-ns", &val()?)?,
            "--scheduler" => sched = val()?,
            "--block" => {
                for x in val()?.split(',') {
                    blocks.push(parse_num("--block", x)?);
                }
            }
            "--change" => {
                let v = val()?;
                let p: Vec<&str> = v.split(':').collect();
                if p.len() != 3 {
                    return Err(format!("--change '{v}': expected dev:at_ns:rate"));
                }
                changes.push((
                    parse_num("--change device", p[0])?,
                    parse_num("--change at_ns", p[1])?,
                    parse_num("--change rate", p[2])?,
                ));
            }
            "--fail" => {
                let v = val()?;
                let (d, k) = v
                    .split_once(':')
                    .ok_or(format!("--fail '{v}': expected dev:n"))?;
                fails.push((parse_num("--fail device", d)?, parse_num("--fail n", k)?));
            }
            "--boyer" => params = super::parse_boyer_params(&val()?)?,
            "--chunks" => show_chunks = true,
            "--wave" => {
                let w: u64 = parse_num("--wave", &val()?)?;
                if w == 0 {
                    return Err("--wave must be at least 1".into());
                }
                wave = Some(w);
            }
            "--warm" => warm = true,
            "--chunk-cost" => {
                let mut pts = Vec::new();
                for x in val()?.split(',') {
                    let (n, us) = x
                        .split_once(':')
                        .ok_or(format!("--chunk-cost '{x}': expected WGS:US"))?;
                    pts.push((
                        parse_num::<u64>("--chunk-cost work-groups", n)?,
                        parse_num::<f64>("--chunk-cost µs", us)? * 1000.0,
                    ));
                }
                cost = Some(ChunkCost::new(pts).map_err(|e| format!("--chunk-cost: {e}"))?);
            }
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    let n = devices.or(rates.as_ref().map(|r| r.len())).unwrap_or(2);
    if n == 0 {
        return Err("--devices must be at least 1".into());
    }
    let rates = match rates {
        None => vec![1.0; n],
        Some(r) if r.len() == 1 => vec![r[0]; n],
        Some(r) if r.len() == n => r,
        Some(r) => return Err(format!("--rates has {} values for {n} devices", r.len())),
    };
    if rates
        .iter()
        .any(|&r| r.is_nan() || r < 0.0 || !r.is_finite())
    {
        return Err("--rates must be finite and >= 0".into());
    }
    if cost.is_some() && !changes.is_empty() {
        return Err("--chunk-cost cannot be combined with --change".into());
    }
    let mut devs: Vec<SimDevice> = rates
        .iter()
        .map(|&r| {
            SimDevice::constant(r)
                .with_wave(wave.unwrap_or(0))
                .with_cost(cost.clone().unwrap_or_default())
        })
        .collect();
    for &(d, at, r) in &changes {
        let dev = devs.get_mut(d).ok_or(format!("--change: no device {d}"))?;
        *dev = dev.clone().with_change(at, r);
    }
    for &b in &blocks {
        let dev = devs.get_mut(b).ok_or(format!("--block: no device {b}"))?;
        dev.blocked = true;
    }
    for &(d, _) in &fails {
        if d >= n {
            return Err(format!("--fail: no device {d}"));
        }
    }
    let all = sched.trim().eq_ignore_ascii_case("all");
    let kinds = if all {
        comparison_set(&rates)
    } else {
        let k = super::parse_scheduler(&sched)?;
        if k == SchedulerKind::Best {
            // the projected-best device, here: the fastest by initial rate
            let fastest = fastest(&rates);
            vec![SchedulerKind::Single(fastest)]
        } else {
            vec![k]
        }
    };
    let mut cfg = SimConfig::new(devs, wgs, overhead);
    cfg.fail_enqueue = fails;
    cfg.wave_units = wave.map(|w| vec![w; n]);
    if warm {
        // Ω (ns per work-group) of a device at its rate (work-groups per µs)
        cfg.history_ns = Some(
            rates
                .iter()
                .map(|&r| (r > 0.0).then(|| 1000.0 / r))
                .collect(),
        );
    }
    Ok(Some(Cli {
        all,
        cfg,
        kinds,
        params,
        show_chunks,
    }))
}

/// `clprism simulate ...` (arguments after `simulate`): prints a comparison table to
/// stdout. Returns the process exit status: 0 ok, 2 usage error, 1 simulation error.
pub fn simulate_main(args: &[String]) -> i32 {
    if args
        .iter()
        .any(|a| a == "--replay" || a.starts_with("--replay="))
    {
        return super::replay::replay_main(args);
    }
    let cli = match parse_cli(args) {
        Ok(Some(c)) => c,
        Ok(None) => {
            println!("{USAGE}");
            return 0;
        }
        Err(e) => {
            eprintln!("clprism simulate: {e}\n{USAGE}");
            return 2;
        }
    };
    let c = &cli.cfg;
    println!(
        "devices={} wgs={} overhead_ns={} beta={} delta={} gamma={}",
        c.devices.len(),
        c.total_wgs,
        c.overhead_ns,
        cli.params.beta,
        cli.params.delta,
        cli.params.gamma
    );
    let mut reports = Vec::new();
    let mut status = 0;
    let paper = BoyerParams {
        overdue_factor: None,
        early_split: false,
        warm: None,
        ..cli.params
    };
    let mut runs: Vec<(SchedulerKind, BoyerParams, Option<&str>)> = cli
        .kinds
        .iter()
        .map(|k| (k.clone(), cli.params, None))
        .collect();
    if cli.all && paper != cli.params {
        // the paper's algorithm without clprism's extensions, for comparison
        runs.insert(1, (SchedulerKind::Boyer, paper, Some("boyer(paper)")));
    }
    for (k, p, label) in &runs {
        match simulate(k, p, c) {
            Ok(mut r) => {
                if let Some(l) = label {
                    r.scheduler = l.to_string();
                }
                reports.push(r)
            }
            Err(e) => {
                eprintln!("clprism simulate: {k}: {e}");
                status = 1;
            }
        }
    }
    print!("{}", format_table(&reports));
    if cli.show_chunks {
        for r in &reports {
            println!(
                "\n{}: chunks (id device first_wg count assigned_ms end_ms state)",
                r.scheduler
            );
            for ch in &r.chunks {
                println!(
                    "  {:>4} {:>4} {:>10} {:>9} {:>10.3} {:>10} {:?}",
                    ch.id,
                    ch.device,
                    ch.first_wg,
                    ch.count,
                    ch.assigned_ns as f64 / 1e6,
                    fmt_ms(ch.end_ns),
                    ch.state
                );
            }
        }
    }
    for r in &reports {
        if !r.violations.is_empty() {
            eprintln!(
                "clprism simulate: {}: protocol violations: {:?}",
                r.scheduler, r.violations
            );
            status = 1;
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn piecewise_rates() {
        let d = SimDevice::constant(1.0); // 1 wg/µs
        assert_eq!(d.finish_ns(0, 1000, 10_000), Some(1_010_000));
        assert_eq!(d.finish_ns(5, 0, 10), Some(15));
        // overhead 10 µs, 490 wgs until 500 µs, the other 510 at 0.5 wg/µs = 1,020 µs
        let d = SimDevice::constant(1.0).with_change(500_000, 0.5);
        assert_eq!(d.finish_ns(0, 1000, 10_000), Some(1_520_000));
        // a chunk starting after the change runs at the new rate only
        assert_eq!(d.finish_ns(600_000, 100, 0), Some(800_000));
        // stalled from 500 µs: a chunk that does not fit before never ends
        let s = SimDevice::constant(1.0).with_change(500_000, 0.0);
        assert_eq!(s.finish_ns(0, 400, 0), Some(400_000));
        assert_eq!(s.finish_ns(0, 600, 0), None);
        // ... unless the device resumes
        let r = s.clone().with_change(700_000, 1.0);
        assert_eq!(r.finish_ns(0, 600, 0), Some(800_000));
        assert_eq!(SimDevice::blocked().finish_ns(0, 1, 0), None);
        assert_eq!(
            SimDevice::from_ns_per_wg(250.0).finish_ns(0, 4, 0),
            Some(1000)
        );
    }

    #[test]
    fn ideal_and_efficiency() {
        // two devices: 1000 and 500 ns per work-group, no overhead, 3000 work-groups:
        // alone 3 ms and 1.5 ms, together 1/(1/3 + 1/1.5) = 1 ms
        let cfg = SimConfig::new(
            vec![
                SimDevice::from_ns_per_wg(1000.0),
                SimDevice::from_ns_per_wg(500.0),
            ],
            3000,
            0,
        );
        assert!((ideal_finish_ns(&cfg).unwrap() - 1e6).abs() < 1.0);
        assert!((efficiency(2e6, &[3e6, 1.5e6]) - 0.5).abs() < 1e-12);
        let st = simulate(
            &SchedulerKind::Static(vec![1.0, 2.0]),
            &BoyerParams::default(),
            &cfg,
        )
        .unwrap();
        assert_eq!(st.makespan_ns, Some(1_000_000));
        assert!((st.efficiency.unwrap() - 1.0).abs() < 1e-9);
        assert_eq!(st.idle_tail_ns, Some(0));
        // capacity bound: 1/1000 + 1/500 wg/ns together → 3000 work-groups in 1 ms
        assert!((capacity_bound_ns(&cfg).unwrap() - 1e6).abs() < 1.0);
        // with overhead o each device starts at o: T = o + W/Σr
        let mut c2 = cfg.clone();
        c2.overhead_ns = 7_000;
        assert!((capacity_bound_ns(&c2).unwrap() - 1_007_000.0).abs() < 1.0);
        // a rate change: device 0 doubles after 0.5 ms
        let c3 = SimConfig::new(
            vec![
                SimDevice::from_ns_per_wg(1000.0).with_change(500_000, 2.0),
                SimDevice::from_ns_per_wg(500.0),
            ],
            3000,
            0,
        );
        // by 0.5 ms: 500 + 1000 = 1500; then 4 wg/µs → 1500 more in 375 µs
        assert!((capacity_bound_ns(&c3).unwrap() - 875_000.0).abs() < 1.0);
    }

    #[test]
    fn chunk_cost_interpolates_measured_points() {
        // N-body 1310720 on an H200, GSS chunks (results/gpu-2026-11-22r): 160 work-groups
        // 45.9 ms, 2560 160.8 ms, 10240 579.7 ms
        let c = ChunkCost::new(vec![(10240, 579.7e6), (160, 45.9e6), (2560, 160.8e6)]).unwrap();
        assert_eq!(c.ns(5), 45.9e6); // flat below the first point
        assert_eq!(c.ns(2560), 160.8e6);
        let mid = 160.8e6 + (579.7e6 - 160.8e6) * (5120.0 - 2560.0) / (10240.0 - 2560.0);
        assert!((c.ns(5120) - mid).abs() < 1.0);
        let slope = (579.7e6 - 160.8e6) / (10240.0 - 2560.0);
        assert!((c.ns(20480) - (579.7e6 + slope * 10240.0)).abs() < 1.0); // last slope
        let d = SimDevice::constant(1.0).with_cost(c);
        assert_eq!(d.finish_ns(1000, 2560, 50), Some(1050 + 160_800_000));
        assert!(ChunkCost::new(vec![]).is_err());
        assert!(ChunkCost::new(vec![(0, 1.0)]).is_err());
        assert!(ChunkCost::new(vec![(4, 1.0), (4, 2.0)]).is_err());
        // one point: proportional above it
        assert_eq!(ChunkCost::new(vec![(10, 100.0)]).unwrap().ns(20), 200.0);
    }
}
