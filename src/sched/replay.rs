//! Replay of a measured balance-mode run, projected to N GPUs with the buffer directory
//! (issue 31 item 5; DESIGN.md §7): `clprism simulate --replay LOG.jsonl --gpus 1,2,4,8`.
//!
//! Input: a clprism launch log (`docs/log-schema.md`, read through [`crate::log::schema`])
//! of a run in balance mode on M like GPUs. Every figure of the model comes from that log;
//! none is built in. Per kernel shape (kernel, program, global and local size,
//! [`ShapeKey`]) the log gives:
//!
//! * the whole-launch time on one GPU, ns ([`ShapeModel::whole_ns`]): the median
//!   `device_ns` of the shape's launches kept whole on the app's device, or, when none was
//!   timed, the compute line below at all the work-groups;
//! * the compute line, ns against work-groups rounded up to whole waves
//!   (`schedule.wave_work_groups` of the app's device): `a + b·x`, least squares over the
//!   median `device_ns` of the chunks of each size and the whole-launch median
//!   ([`ShapeModel::a_ns`], [`ShapeModel::b_ns_per_wg`]). Boyer (dissertation ch. 4,
//!   /work/shared/papers/) measures Ω, time per work-group of a chunk, the same way;
//! * the fixed costs of a split launch ([`SplitCosts`], medians over its steady split
//!   launches: those without a first-launch upload and whose fetches are halos): per launch
//!   the phases before the chunks (`pre_ns`: build, footprint, snapshot lookups) and after
//!   them (`post_ns` = `wall_ns − makespan_ns`: `keep_resident`, the barrier and marker on the
//!   app's queue); per device the host's enqueue (`issue_ns`, the spacing of the chunk
//!   enqueues in launches that fetched nothing), its enqueue-to-start latency with the
//!   completion detection (`start_ns − enqueue_ns`; the log does not separate the two), and
//!   per halo fetch (one side of one device boundary) the host time of the directory's
//!   read on the source GPU and write on the destination (`fetch_ns`, the extra enqueue
//!   spacing of launches that fetched, over 2(M−1) fetches of `fetched_bytes / 2(M−1)`
//!   bytes each);
//! * one-time costs of the shape's first split (build, footprint, `upload_ring`).
//!
//! Projection of one launch on N GPUs (owner computes, as resident launches run: one static
//! slab per device, equal for like devices): the simulator ([`super::sim`]) runs the
//! static scheduler with equal fractions on N devices whose chunk cost is the compute line
//! and whose lead ([`SimDevice::lead_ns`]) is `pre + Σ_{j≤k}(issue + f·nb_j·fetch) + latency`
//! for the k-th device (the host serves the devices one after the other, as the logs show:
//! the enqueues of one launch are 0.05-0.3 ms apart), with nb_j its boundaries (1 at the
//! ends, 2 inside) and f the fraction of the shape's steady launches that fetched. The
//! launch ends at the simulated makespan plus `post` (plus, for a split whose results are
//! merged rather than kept resident, the merge phases scaled by the share of the work the
//! other devices did). Like `CLPRISM_SPLIT=auto`, a launch is split on N GPUs only when
//! its projected split time is below its whole time, and a shape is split at all only when
//! what the splits save exceeds its one-time cost.
//!
//! Limits (docs/multi-gpu-projection.md): the opening of the devices, the gathers at the
//! app's reads and slab moves between devices are not projected; the enqueue and halo costs
//! per device are those of the measured host (its PCIe topology, its CPU); a kernel that
//! reads whole buffers (a reduction) is modelled as halos that grow with the boundaries.

use super::sim::{simulate, ChunkCost, SimConfig, SimDevice};
use super::{BoyerParams, SchedulerKind};
use crate::log::schema::{read_text, Launch, LaunchStatus, Merge, TextLine};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A kernel shape: launches of one key run the same work.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ShapeKey {
    /// Kernel function name.
    pub kernel: String,
    /// Program identity (16 hex digits).
    pub program: String,
    /// Global size, work-items.
    pub global: Vec<u64>,
    /// Local size, work-items (`None`: the driver chose).
    pub local: Option<Vec<u64>>,
}

impl ShapeKey {
    fn of(l: &Launch) -> ShapeKey {
        ShapeKey {
            kernel: l.kernel.clone(),
            program: l.program.clone(),
            global: l.global.clone(),
            local: l.local.clone(),
        }
    }

    /// `kernel global/local`, e.g. `runJacobi2D_kernel1 16384x16384/32x8`.
    pub fn label(&self) -> String {
        let dims = |v: &[u64]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join("x")
        };
        format!(
            "{} {}/{}",
            self.kernel,
            dims(&self.global),
            self.local.as_deref().map_or("-".into(), dims)
        )
    }
}

/// Fixed costs of a split launch of one shape, measured on `devices` GPUs (ns; medians over
/// the shape's steady split launches, see the module doc).
#[derive(Debug, Clone, PartialEq)]
pub struct SplitCosts {
    /// M: devices the measured splits ran on.
    pub devices: usize,
    /// Steady split launches the medians come from (0: only first splits, whose fetches are
    /// uploads; halos then unknown, taken as none).
    pub launches: usize,
    /// Host phases before the chunks (start of the `chunks` phase), ns.
    pub pre_ns: f64,
    /// After the last chunk: `wall_ns − makespan_ns` (`keep_resident`, barrier, marker), ns.
    pub post_ns: f64,
    /// Host time to enqueue one device's chunk, ns.
    pub issue_ns: f64,
    /// Host time of one halo fetch (read on the source GPU, write on the destination), ns.
    pub fetch_ns: f64,
    /// Bytes of one halo fetch: `fetched_bytes / 2(M−1)`.
    pub halo_bytes: f64,
    /// Fraction of the steady launches that fetched anything.
    pub fetch_frac: f64,
    /// Enqueue to start (completion detection included) on the app's device, ns.
    pub latency_app_ns: f64,
    /// The same on the other devices, ns.
    pub latency_other_ns: f64,
    /// Merge phases (`read_back`, `write_back`) of a split whose results are not kept
    /// resident, on M devices, ns (0 for resident splits).
    pub merge_ns: f64,
    /// Build and footprint phases of the shape's first split (once per run), ns.
    pub first_fixed_ns: f64,
    /// `upload_ring` of the shape's first split (once per run, on M devices), ns.
    pub first_upload_ns: f64,
}

/// What the log tells of one kernel shape.
#[derive(Debug, Clone, PartialEq)]
pub struct ShapeModel {
    /// The shape.
    pub key: ShapeKey,
    /// Units along the split dimension (`schedule.work_groups`).
    pub units: u64,
    /// Work-groups per unit.
    pub wgs_per_unit: u64,
    /// Work-groups one wave of the app's device holds (0: unknown).
    pub wave: u64,
    /// Whole-launch time on one GPU, ns.
    pub whole_ns: f64,
    /// Where `whole_ns` comes from.
    pub whole_from: String,
    /// Compute line: intercept, ns.
    pub a_ns: f64,
    /// Compute line: slope, ns per work-group (whole waves).
    pub b_ns_per_wg: f64,
    /// Split costs, when the log has split launches of the shape.
    pub split: Option<SplitCosts>,
}

impl ShapeModel {
    /// Work-groups of the whole launch.
    pub fn total_wgs(&self) -> u64 {
        self.units * self.wgs_per_unit
    }

    /// Work-groups rounded up to whole waves.
    fn waves_up(&self, wgs: u64) -> u64 {
        if self.wave > 0 {
            wgs.div_ceil(self.wave) * self.wave
        } else {
            wgs
        }
    }

    /// Compute time of a chunk of `wgs` work-groups, ns (the compute line at whole waves).
    pub fn compute_ns(&self, wgs: u64) -> f64 {
        if wgs == 0 {
            return 0.0;
        }
        self.a_ns + self.b_ns_per_wg * self.waves_up(wgs) as f64
    }

    /// The compute line as a simulator chunk cost in units (at most 4096 points: one per
    /// wave boundary when there are fewer waves, else the two ends).
    fn chunk_cost(&self) -> ChunkCost {
        let wpu = self.wgs_per_unit.max(1);
        let total = self.total_wgs();
        let mut pts: Vec<(u64, f64)> = Vec::new();
        let waves = if self.wave > 0 {
            total.div_ceil(self.wave)
        } else {
            u64::MAX
        };
        if waves <= 4096 {
            for j in 1..=waves {
                let u = (j * self.wave).div_ceil(wpu).min(self.units).max(1);
                if pts.last().is_none_or(|p| p.0 < u) {
                    pts.push((u, self.compute_ns(u * wpu)));
                }
            }
        } else {
            pts.push((1, self.compute_ns(wpu)));
            if self.units > 1 {
                pts.push((self.units, self.compute_ns(total)));
            }
        }
        ChunkCost::new(pts).unwrap_or_default()
    }
}

/// One launch of the log as it ran.
#[derive(Debug, Clone, PartialEq)]
pub struct RanLaunch {
    /// Index into [`Replay::shapes`].
    pub shape: usize,
    /// `Some(wall_ns)`: split across devices; `None`: ran whole.
    pub split_wall_ns: Option<u64>,
    /// Its own `device_ns` when it ran whole and was timed.
    pub whole_device_ns: Option<u64>,
    /// A split that uploaded (first split of the shape).
    pub first: bool,
    /// A split that fetched more than halos (a slab move).
    pub moved: bool,
    /// The launch logged before it was split, and the app enqueued this one before that one
    /// had ended (it waited on the launch thread's queue): a launch that
    /// [`Replay::pipeline`] may issue while its predecessor runs. From `time_ns`,
    /// `schedule.started_ns` and `schedule.wall_ns`; false where the log lacks them.
    pub queued_ahead: bool,
}

/// A log read for replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Replay {
    /// The shapes, sorted by key.
    pub shapes: Vec<ShapeModel>,
    /// The complete launches in log order.
    pub launches: Vec<RanLaunch>,
    /// Launches left out: failed, or of a shape never timed.
    pub skipped: usize,
    /// Host transfer rate of slab moves, bytes per ns (GB/s), when the log has any.
    pub move_rate: Option<f64>,
    /// The network link every device but the app's sits behind in the projection (issue 33
    /// item 5); `None`: the devices are the logged host's GPUs.
    pub link: Option<Link>,
    /// Project the host's calls as `CLPRISM_BALANCE_ISSUE=parallel` issues them
    /// (`exec::launch::issue`): the halo reads of each source GPU, then the halo writes and
    /// the chunk of each destination, each GPU's from a thread of its own, the GPUs at once.
    /// The logged host issued them one after the other; this projects a driver that lets
    /// contexts issue in parallel (the best case: a driver lock would bring back the serial
    /// figure). `false`: as logged.
    pub parallel_issue: bool,
    /// Project owner-computes slabs sized for the devices' staggered starts, as balance mode
    /// sizes them on GPUs of one name after 8 launches of a shape ([`super::stagger`]);
    /// `false`: equal slabs, as the logs before 2026-11-28 ran.
    pub stagger_slabs: bool,
    /// Project consecutive split launches pipelined (not built; docs/balance.md): a split
    /// launch the app enqueued before its predecessor ended ([`RanLaunch::queued_ahead`])
    /// is planned, has its halos moved and its chunks enqueued while the predecessor's
    /// chunks run, so it takes [`SplitProjection::pipelined_ns`] instead of
    /// [`SplitProjection::split_ns`]. `false`: one launch at a time, as logged.
    pub pipeline: bool,
}

/// A network link between the app's host and each server (one device per server): what a
/// PoCL-Remote device adds to the logged costs ([`Replay::project_split`]). A user-given
/// figure of the network projected to, not a measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Link {
    /// Bandwidth, bytes per ns (GB/s): `--link 25:50` is 25 Gb/s, 3.125 bytes per ns.
    pub bytes_per_ns: f64,
    /// One-way latency, ns.
    pub latency_ns: f64,
}

impl Link {
    /// `GBITS:LATENCY_US` (`25:50`: 25 Gb/s, 50 µs one way). Errors: a malformed or
    /// non-positive figure (latency may be 0).
    pub fn parse(s: &str) -> Result<Link, String> {
        let bad = || format!("--link '{s}': expected GBITS_PER_S:LATENCY_US, e.g. 25:50");
        let (g, l) = s.split_once(':').ok_or_else(bad)?;
        let g: f64 = g.trim().parse().map_err(|_| bad())?;
        let l: f64 = l.trim().parse().map_err(|_| bad())?;
        if !(g > 0.0 && l >= 0.0 && g.is_finite() && l.is_finite()) {
            return Err(bad());
        }
        Ok(Link {
            bytes_per_ns: g / 8.0,
            latency_ns: l * 1e3,
        })
    }

    /// One crossing of `bytes`, ns.
    fn crossing_ns(&self, bytes: f64) -> f64 {
        self.latency_ns + bytes / self.bytes_per_ns
    }
}

/// One launch projected on N devices (ns).
#[derive(Debug, Clone, PartialEq)]
pub struct SplitProjection {
    /// Devices.
    pub n: usize,
    /// The slowest device's compute.
    pub compute_ns: f64,
    /// Halo fetches on the host (all before the last device's enqueue).
    pub halo_ns: f64,
    /// The rest: phases before and after the chunks, enqueues, latencies, merge.
    pub fixed_ns: f64,
    /// The whole split launch.
    pub split_ns: f64,
    /// The same launch issued while its predecessor runs ([`Replay::pipeline`]): the longer
    /// of the launch thread's work for it (phases before and after the chunks, halo calls,
    /// chunk enqueues) and its devices' (the slowest device's compute, plus, for a launch
    /// that fetches halos, the wait for them: the completion of the read on the source GPU
    /// seen by the host, the write and the chunk's enqueue on the destination); at most
    /// [`Self::split_ns`].
    pub pipelined_ns: f64,
}

fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        0.5 * (v[m - 1] + v[m])
    })
}

fn phase_ns(l: &Launch, name: &str) -> Option<f64> {
    let p = l.schedule.as_ref()?.phases.as_ref()?;
    let d: u64 = p
        .iter()
        .filter(|p| p.name == name)
        .map(|p| p.end_ns.saturating_sub(p.start_ns))
        .sum();
    p.iter().any(|p| p.name == name).then_some(d as f64)
}

fn chunks_start_ns(l: &Launch) -> Option<f64> {
    let p = l.schedule.as_ref()?.phases.as_ref()?;
    p.iter()
        .find(|p| p.name == "chunks")
        .map(|p| p.start_ns as f64)
}

/// Whether a launch ran split (chunks on more than one device, each with its times).
fn is_split(l: &Launch) -> bool {
    l.schedule.as_ref().is_some_and(|s| {
        s.fallback.is_none()
            && s.wall_ns.is_some()
            && s.devices.len() > 1
            && !s.chunks.is_empty()
            && s.chunks.iter().any(|c| c.device > 0)
    })
}

/// Per-device host enqueue spacing of a split: the first device's enqueue after the start of
/// the `chunks` phase, then each next enqueue after the previous one (chunks in enqueue
/// order, the first chunk of each device).
fn enqueue_spacing(l: &Launch) -> Vec<f64> {
    let Some(s) = &l.schedule else { return vec![] };
    let mut firsts: Vec<u64> = Vec::new();
    let mut seen = Vec::new();
    for c in &s.chunks {
        if seen.contains(&c.device) {
            continue;
        }
        seen.push(c.device);
        if let Some(e) = c.enqueue_ns {
            firsts.push(e);
        }
    }
    firsts.sort_unstable();
    let mut prev = chunks_start_ns(l).unwrap_or(0.0);
    let mut out = Vec::new();
    for e in firsts {
        out.push((e as f64 - prev).max(0.0));
        prev = e as f64;
    }
    out
}

/// Least-squares line `t = a + b·x` over points; `a ≥ 0`, `b > 0` (else through the origin).
fn fit_line(pts: &[(f64, f64)]) -> (f64, f64) {
    let through_origin = |pts: &[(f64, f64)]| {
        let sxx: f64 = pts.iter().map(|p| p.0 * p.0).sum();
        let sxt: f64 = pts.iter().map(|p| p.0 * p.1).sum();
        (0.0, if sxx > 0.0 { sxt / sxx } else { 0.0 })
    };
    if pts.len() < 2 {
        return through_origin(pts);
    }
    let n = pts.len() as f64;
    let mx = pts.iter().map(|p| p.0).sum::<f64>() / n;
    let mt = pts.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = pts.iter().map(|p| (p.0 - mx) * (p.0 - mx)).sum();
    let sxt: f64 = pts.iter().map(|p| (p.0 - mx) * (p.1 - mt)).sum();
    if sxx <= 0.0 {
        return through_origin(pts);
    }
    let b = sxt / sxx;
    let a = mt - b * mx;
    if a < 0.0 || b <= 0.0 {
        through_origin(pts)
    } else {
        (a, b)
    }
}

impl Replay {
    /// Reads a log text (JSONL). Errors: no complete launch of a timed shape.
    pub fn from_text(text: &str) -> Result<Replay, String> {
        let (lines, _) = read_text(text);
        let launches: Vec<Launch> = lines
            .into_iter()
            .filter_map(|(_, t)| match t {
                TextLine::Launch(l, _) => Some(*l),
                _ => None,
            })
            .collect();
        Self::from_launches(&launches)
    }

    /// Builds the model from launch records (see the module doc).
    pub fn from_launches(all: &[Launch]) -> Result<Replay, String> {
        let done: Vec<&Launch> = all
            .iter()
            .filter(|l| {
                matches!(
                    l.status,
                    LaunchStatus::Complete | LaunchStatus::Untimed | LaunchStatus::NoProfiling
                )
            })
            .collect();
        let mut by_shape: BTreeMap<ShapeKey, Vec<&Launch>> = BTreeMap::new();
        for l in &done {
            by_shape.entry(ShapeKey::of(l)).or_default().push(l);
        }
        // one enqueue per device where nothing was fetched: the host's per-device cost,
        // shared by every shape (it does not depend on the kernel)
        let issue_all: Vec<f64> = done
            .iter()
            .filter(|l| is_split(l) && l.schedule.as_ref().unwrap().fetched_bytes == Some(0))
            .filter(|l| phase_ns(l, "upload_ring").is_none())
            .flat_map(|l| enqueue_spacing(l))
            .collect();
        let issue_global = median(issue_all);
        let mut shapes = Vec::new();
        let mut index = BTreeMap::new();
        let mut move_rates = Vec::new();
        for (key, ls) in &by_shape {
            if let Some(m) = Self::shape_model(key, ls, issue_global, &mut move_rates) {
                index.insert(key.clone(), shapes.len());
                shapes.push(m);
            }
        }
        let mut launches = Vec::new();
        let mut skipped = all.len() - done.len();
        let mut previous_end: Option<u64> = None;
        for l in &done {
            let s = l.schedule.as_ref();
            let queued_ahead = previous_end.is_some_and(|end| l.time_ns < end);
            // without `started_ns` (logs before session 23) the launch counts as started when
            // the app enqueued it: an earlier end, so fewer launches count as queued ahead
            previous_end = s
                .and_then(|s| Some(l.time_ns + s.started_ns.unwrap_or(0) + s.wall_ns?))
                .filter(|_| is_split(l));
            let Some(&shape) = index.get(&ShapeKey::of(l)) else {
                skipped += 1;
                continue;
            };
            let split = is_split(l);
            let halo = shapes[shape].split.as_ref().map_or(0, |c| {
                (c.halo_bytes * 2.0 * (c.devices as f64 - 1.0)).round() as u64
            });
            launches.push(RanLaunch {
                shape,
                split_wall_ns: if split {
                    s.and_then(|s| s.wall_ns)
                } else {
                    None
                },
                whole_device_ns: if split { None } else { l.device_ns },
                first: split && phase_ns(l, "upload_ring").is_some(),
                moved: split
                    && s.and_then(|s| s.fetched_bytes)
                        .is_some_and(|f| f != 0 && f != halo),
                queued_ahead,
            });
        }
        if launches.is_empty() {
            return Err("no complete launch of a timed kernel in the log".into());
        }
        Ok(Replay {
            shapes,
            launches,
            skipped,
            move_rate: median(move_rates),
            link: None,
            parallel_issue: false,
            stagger_slabs: false,
            pipeline: false,
        })
    }

    fn shape_model(
        key: &ShapeKey,
        ls: &[&Launch],
        issue_global: Option<f64>,
        move_rates: &mut Vec<f64>,
    ) -> Option<ShapeModel> {
        let whole: Vec<f64> = ls
            .iter()
            .filter(|l| !is_split(l))
            .filter_map(|l| l.device_ns)
            .map(|d| d as f64)
            .collect();
        let n_whole = whole.len();
        let whole_med = median(whole);
        let splits: Vec<&Launch> = ls.iter().copied().filter(|l| is_split(l)).collect();
        let Some(s0) = splits.first().and_then(|l| l.schedule.as_ref()) else {
            // never split: whole only
            let w = whole_med?;
            return Some(ShapeModel {
                key: key.clone(),
                units: 0,
                wgs_per_unit: 0,
                wave: 0,
                whole_ns: w,
                whole_from: format!("{n_whole} kept-whole launches"),
                a_ns: 0.0,
                b_ns_per_wg: 0.0,
                split: None,
            });
        };
        let units = s0.work_groups.unwrap_or(0);
        let wpu = s0.wgs_per_unit.unwrap_or(1).max(1);
        let wave = s0
            .wave_work_groups
            .as_ref()
            .and_then(|w| w.first().copied())
            .unwrap_or(0);
        let mut m = ShapeModel {
            key: key.clone(),
            units,
            wgs_per_unit: wpu,
            wave,
            whole_ns: 0.0,
            whole_from: String::new(),
            a_ns: 0.0,
            b_ns_per_wg: 0.0,
            split: None,
        };
        let devices = median(
            splits
                .iter()
                .map(|l| l.schedule.as_ref().unwrap().devices.len() as f64)
                .collect(),
        )
        .unwrap_or(2.0)
        .round() as usize;
        let bounds = 2.0 * (devices as f64 - 1.0);
        // halos: the most frequent nonzero fetch of the splits without upload (a stencil's
        // halo rows are the same bytes every launch; slab moves vary), when at least a
        // quarter of those splits fetched exactly that; steady = no upload, fetched 0 or that
        let fetched = |l: &Launch| l.schedule.as_ref().unwrap().fetched_bytes.unwrap_or(0);
        let no_upload: Vec<&Launch> = splits
            .iter()
            .copied()
            .filter(|l| phase_ns(l, "upload_ring").is_none())
            .collect();
        let mut counts: BTreeMap<u64, usize> = BTreeMap::new();
        for l in &no_upload {
            if fetched(l) > 0 {
                *counts.entry(fetched(l)).or_default() += 1;
            }
        }
        let halo_fetch = counts
            .iter()
            .max_by_key(|(f, c)| (**c, std::cmp::Reverse(**f)))
            .filter(|(_, c)| 4 * **c >= no_upload.len())
            .map_or(0, |(f, _)| *f);
        let steady: Vec<&Launch> = no_upload
            .iter()
            .copied()
            .filter(|l| fetched(l) == 0 || fetched(l) == halo_fetch)
            .collect();
        let basis: Vec<&Launch> = if steady.is_empty() {
            splits.clone()
        } else {
            steady.clone()
        };
        // compute line from the chunks (median per size) and the whole launches
        let mut by_x: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for l in &basis {
            for c in &l.schedule.as_ref().unwrap().chunks {
                if c.lost() {
                    continue;
                }
                if let (Some(w), Some(d)) = (c.work_groups, c.device_ns) {
                    by_x.entry(m.waves_up(w)).or_default().push(d as f64);
                }
            }
        }
        if let Some(w) = whole_med {
            by_x.entry(m.waves_up(m.total_wgs())).or_default().push(w);
        }
        let pts: Vec<(f64, f64)> = by_x
            .into_iter()
            .filter_map(|(x, v)| median(v).map(|t| (x as f64, t)))
            .collect();
        let (a, b) = fit_line(&pts);
        m.a_ns = a;
        m.b_ns_per_wg = b;
        (m.whole_ns, m.whole_from) = match whole_med {
            Some(w) => (w, format!("{n_whole} kept-whole launches")),
            None => (
                m.compute_ns(m.total_wgs()),
                "chunks, scaled by work-groups".into(),
            ),
        };
        // fixed costs
        let med = |f: &dyn Fn(&Launch) -> Option<f64>| {
            median(basis.iter().filter_map(|l| f(l)).collect()).unwrap_or(0.0)
        };
        // before the chunks; a first split's build, footprint and upload are one-time
        // costs (counted apart), not part of every launch
        let pre = med(&|l: &Launch| {
            let once = ["build", "footprint", "upload_ring"]
                .iter()
                .map(|p| phase_ns(l, p).unwrap_or(0.0))
                .sum::<f64>();
            let once = if phase_ns(l, "upload_ring").is_some() {
                once
            } else {
                0.0
            };
            chunks_start_ns(l).map(|c| (c - once).max(0.0))
        });
        let post = med(&|l: &Launch| {
            let s = l.schedule.as_ref()?;
            Some(s.wall_ns? as f64 - s.makespan_ns? as f64).filter(|x| *x >= 0.0)
        });
        let merge = med(&|l: &Launch| {
            (l.schedule.as_ref()?.merge != Some(Merge::Resident)).then(|| {
                phase_ns(l, "read_back").unwrap_or(0.0) + phase_ns(l, "write_back").unwrap_or(0.0)
            })
        });
        let resident = basis
            .iter()
            .all(|l| l.schedule.as_ref().unwrap().merge == Some(Merge::Resident));
        let latency = |app: bool| {
            median(
                basis
                    .iter()
                    .flat_map(|l| l.schedule.as_ref().unwrap().chunks.iter())
                    .filter(|c| (c.device == 0) == app && !c.lost())
                    .filter_map(|c| Some(c.start_ns? as f64 - c.enqueue_ns? as f64))
                    .map(|x| x.max(0.0))
                    .collect(),
            )
            .unwrap_or(0.0)
        };
        let own_issue = median(
            basis
                .iter()
                .filter(|l| fetched(l) == 0)
                .flat_map(|l| enqueue_spacing(l))
                .collect(),
        );
        let fetching: Vec<&&Launch> = basis.iter().filter(|l| fetched(l) > 0).collect();
        let all_spacing = median(basis.iter().flat_map(|l| enqueue_spacing(l)).collect());
        let issue = own_issue.or(issue_global).or(all_spacing).unwrap_or(0.0);
        let fetch_ns = if bounds > 0.0 {
            median(
                fetching
                    .iter()
                    .map(|l| {
                        let sp = enqueue_spacing(l);
                        ((sp.iter().sum::<f64>() - sp.len() as f64 * issue) / bounds).max(0.0)
                    })
                    .collect(),
            )
            .unwrap_or(0.0)
        } else {
            0.0
        };
        let fetch_frac = if basis.is_empty() {
            0.0
        } else {
            fetching.len() as f64 / basis.len() as f64
        };
        // slab moves: the host rate of the bytes beyond the halos
        for l in &no_upload {
            let f = fetched(l);
            if f == 0 || f == halo_fetch {
                continue;
            }
            let sp = enqueue_spacing(l);
            let t = sp.iter().sum::<f64>() - sp.len() as f64 * issue - bounds * fetch_ns;
            if t > 0.0 {
                move_rates.push((f - halo_fetch) as f64 / t);
            }
        }
        let first = splits.iter().find(|l| phase_ns(l, "upload_ring").is_some());
        m.split = Some(SplitCosts {
            devices,
            launches: steady.len(),
            pre_ns: pre,
            post_ns: post,
            issue_ns: issue,
            fetch_ns,
            halo_bytes: if bounds > 0.0 {
                halo_fetch as f64 / bounds
            } else {
                0.0
            },
            fetch_frac,
            latency_app_ns: latency(true),
            latency_other_ns: latency(false),
            merge_ns: if resident { 0.0 } else { merge },
            first_fixed_ns: first.map_or(0.0, |l| {
                phase_ns(l, "build").unwrap_or(0.0) + phase_ns(l, "footprint").unwrap_or(0.0)
            }),
            first_upload_ns: first.map_or(0.0, |l| phase_ns(l, "upload_ring").unwrap_or(0.0)),
        });
        Some(m)
    }

    /// One launch of `shape` split over `n ≥ 2` GPUs (owner computes), through the
    /// simulator; `None` when the shape was never split or `n < 2`.
    pub fn project_split(&self, shape: usize, n: usize) -> Option<SplitProjection> {
        let m = &self.shapes[shape];
        let c = m.split.as_ref()?;
        if n < 2 || m.units == 0 {
            return None;
        }
        let n = n.min(m.units as usize);
        let cost = m.chunk_cost();
        let mut host = c.pre_ns;
        let mut leads = Vec::with_capacity(n);
        let mut halo_ns = 0.0;
        // parallel issue: every GPU's reads at once, then each GPU's writes and chunk
        let read_phase = (0..n)
            .map(|k| c.fetch_frac * self.halo_reads_ns(c, k, n))
            .fold(0.0, f64::max);
        if self.parallel_issue {
            halo_ns = read_phase;
        }
        for k in 0..n {
            if self.parallel_issue {
                let writes = c.fetch_frac * self.halo_writes_ns(c, k, n);
                halo_ns = halo_ns.max(read_phase + writes);
                host = c.pre_ns + read_phase + writes + c.issue_ns;
            } else {
                // serial: the halo batch (every device's fetches) comes first, then the
                // chunks are enqueued one after the other (`exec::launch::resident`'s
                // `prefetch_slabs`)
                if k == 0 {
                    halo_ns = (0..n)
                        .map(|j| c.fetch_frac * self.halo_fetches_ns(c, j, n))
                        .sum();
                    host += halo_ns;
                }
                host += c.issue_ns;
            }
            let lat = match (k, self.link) {
                (0, _) => c.latency_app_ns,
                // the command goes to the server and its completion comes back
                (_, Some(l)) => c.latency_other_ns + 2.0 * l.latency_ns,
                (_, None) => c.latency_other_ns,
            };
            leads.push(host + lat);
        }
        let ns_per_unit = m.b_ns_per_wg * m.wgs_per_unit as f64;
        let devices = leads
            .iter()
            .map(|lead| {
                SimDevice::from_ns_per_wg(ns_per_unit)
                    .with_cost(cost.clone())
                    .with_lead(lead.round() as u64)
            })
            .collect();
        let slabs = self
            .stagger_slabs
            .then(|| super::stagger::offset_fractions(&leads, &vec![ns_per_unit; n], m.units))
            .flatten()
            .unwrap_or_else(|| vec![1.0; n]);
        let cfg = SimConfig::new(devices, m.units, 0);
        let r = simulate(&SchedulerKind::Static(slabs), &BoyerParams::default(), &cfg).ok()?;
        let makespan = r.makespan_ns? as f64;
        let compute_ns = r
            .per_device
            .iter()
            .map(|d| m.compute_ns(d.wgs_done * m.wgs_per_unit))
            .fold(0.0, f64::max);
        let mf = c.devices as f64;
        let merge = if c.devices > 1 {
            c.merge_ns * ((n as f64 - 1.0) / n as f64) / ((mf - 1.0) / mf)
        } else {
            0.0
        };
        let split_ns = makespan + c.post_ns + merge;
        let halo_host_ns: f64 = (0..n)
            .map(|j| c.fetch_frac * self.halo_fetches_ns(c, j, n))
            .sum();
        let host_busy_ns = c.pre_ns + halo_host_ns + n as f64 * c.issue_ns + c.post_ns + merge;
        let halo_wait_ns = c.fetch_frac * (c.latency_other_ns + c.fetch_ns / 2.0 + c.issue_ns);
        let pipelined_ns = host_busy_ns.max(compute_ns + halo_wait_ns).min(split_ns);
        Some(SplitProjection {
            n,
            compute_ns,
            halo_ns,
            fixed_ns: split_ns - compute_ns - halo_ns,
            split_ns,
            pipelined_ns,
        })
    }

    /// The halo fetches of device `k` of `n` (one per neighbour slab), ns. On the logged
    /// host each costs the measured `fetch_ns` (a read on one GPU and a write on the other,
    /// half each); behind a [`Link`] each side that is a server costs a crossing of the
    /// halo's bytes on top of its half (clprism moves a range through the app's host: server
    /// to host, host to server; the driver's calls remain).
    fn halo_fetches_ns(&self, c: &SplitCosts, k: usize, n: usize) -> f64 {
        let side = |d: usize| self.halo_side_ns(c, d);
        let neighbours = [k.checked_sub(1), (k + 1 < n).then_some(k + 1)];
        neighbours
            .iter()
            .flatten()
            .map(|&j| side(j) + side(k))
            .sum()
    }

    /// The host's share of the halo reads device `k` of `n` serves (one per neighbour slab,
    /// read on `k`), ns: half of each fetch's measured cost, as [`Self::halo_fetches_ns`].
    fn halo_reads_ns(&self, c: &SplitCosts, k: usize, n: usize) -> f64 {
        let neighbours = usize::from(k > 0) + usize::from(k + 1 < n);
        neighbours as f64 * self.halo_side_ns(c, k)
    }

    /// The host's share of the halo writes into device `k` of `n` (one per neighbour slab),
    /// ns.
    fn halo_writes_ns(&self, c: &SplitCosts, k: usize, n: usize) -> f64 {
        self.halo_reads_ns(c, k, n)
    }

    /// One side (the read or the write) of a halo fetch on device `d`, ns.
    fn halo_side_ns(&self, c: &SplitCosts, d: usize) -> f64 {
        match self.link {
            Some(l) if d > 0 => c.fetch_ns / 2.0 + l.crossing_ns(c.halo_bytes),
            _ => c.fetch_ns / 2.0,
        }
    }

    /// One-time cost of splitting `shape` on `n` GPUs: build and footprint, and the upload
    /// scaled by the devices other than the app's, (n−1)/(M−1), ns.
    pub fn one_time_ns(&self, shape: usize, n: usize) -> f64 {
        match &self.shapes[shape].split {
            Some(c) if n >= 2 => {
                let up = if c.devices > 1 {
                    c.first_upload_ns * (n as f64 - 1.0) / (c.devices as f64 - 1.0)
                } else {
                    c.first_upload_ns
                };
                c.first_fixed_ns + up
            }
            _ => 0.0,
        }
    }

    /// The whole-launch time of a logged launch, ns: its own `device_ns` when it ran whole
    /// and was timed, else its shape's.
    fn whole_of(&self, l: &RanLaunch) -> f64 {
        l.whole_device_ns
            .map_or(self.shapes[l.shape].whole_ns, |d| d as f64)
    }

    /// Totals of the run on `n` GPUs, ns.
    pub fn totals(&self, n: usize) -> Totals {
        let proj: Vec<Option<SplitProjection>> = (0..self.shapes.len())
            .map(|s| self.project_split(s, n))
            .collect();
        let mut t = Totals {
            n,
            ..Default::default()
        };
        // auto: per shape, split the launches a split makes faster, if what they save
        // exceeds the one-time cost
        let mut saved = vec![0.0; self.shapes.len()];
        for l in &self.launches {
            if let Some(p) = &proj[l.shape] {
                saved[l.shape] += (self.whole_of(l) - p.split_ns).max(0.0);
            }
        }
        let split_shape: Vec<bool> = (0..self.shapes.len())
            .map(|s| saved[s] > 0.0 && saved[s] > self.one_time_ns(s, n))
            .collect();
        let mut always_shapes = vec![false; self.shapes.len()];
        // pipelining needs the launch before to have been split too
        let (mut prev_always_split, mut prev_auto_split) = (false, false);
        for l in &self.launches {
            let w = self.whole_of(l);
            t.whole_ns += w;
            match &proj[l.shape] {
                Some(p) => {
                    let ahead = self.pipeline && l.queued_ahead;
                    let split_ns = |prev: bool| {
                        if ahead && prev {
                            p.pipelined_ns
                        } else {
                            p.split_ns
                        }
                    };
                    t.always_ns += split_ns(prev_always_split);
                    prev_always_split = true;
                    always_shapes[l.shape] = true;
                    if split_shape[l.shape] && p.split_ns < w {
                        t.auto_ns += split_ns(prev_auto_split);
                        t.auto_split += 1;
                        prev_auto_split = true;
                    } else {
                        t.auto_ns += w;
                        prev_auto_split = false;
                    }
                }
                None => {
                    t.always_ns += w;
                    t.auto_ns += w;
                    prev_always_split = false;
                    prev_auto_split = false;
                }
            }
        }
        for s in 0..self.shapes.len() {
            if split_shape[s] {
                t.auto_ns += self.one_time_ns(s, n);
            }
            if always_shapes[s] {
                t.always_ns += self.one_time_ns(s, n);
            }
        }
        t
    }

    /// The devices the log's splits ran on (the largest M of its shapes).
    pub fn measured_devices(&self) -> Option<usize> {
        self.shapes
            .iter()
            .filter_map(|s| s.split.as_ref().map(|c| c.devices))
            .max()
    }

    /// The run as logged, replayed on its own M devices: each split launch projected on M
    /// (the shape's one-time cost on its first split), each whole launch as measured. With
    /// the log's own sum, this compares the model with the measurement launch by launch.
    pub fn as_run(&self) -> Option<AsRun> {
        let m = self.measured_devices()?;
        let mut r = AsRun {
            n: m,
            ..Default::default()
        };
        let proj: Vec<Option<SplitProjection>> = (0..self.shapes.len())
            .map(|s| self.project_split(s, m))
            .collect();
        for l in &self.launches {
            match (l.split_wall_ns, &proj[l.shape]) {
                (Some(wall), Some(p)) => {
                    let wall = wall as f64;
                    if l.first {
                        r.first_launches += 1;
                        r.first_measured_ns += wall;
                        r.first_projected_ns += p.split_ns + self.one_time_ns(l.shape, m);
                    } else if l.moved {
                        r.moved_launches += 1;
                        r.moved_ns += wall;
                    } else {
                        r.steady_launches += 1;
                        r.steady_measured_ns += wall;
                        r.steady_projected_ns += p.split_ns;
                    }
                }
                _ => r.whole_ns += self.whole_of(l),
            }
        }
        Some(r)
    }
}

/// Totals of a run projected on `n` GPUs (ns).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// GPUs.
    pub n: usize,
    /// Every launch whole on one GPU.
    pub whole_ns: f64,
    /// Every launch of a split-measured shape split (plus one-time costs).
    pub always_ns: f64,
    /// `auto`: split where it pays (plus one-time costs).
    pub auto_ns: f64,
    /// Launches `auto` splits.
    pub auto_split: usize,
}

/// The logged run replayed on its own devices (ns).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AsRun {
    /// M, the devices of the log's splits.
    pub n: usize,
    /// Steady split launches (no upload, halos only).
    pub steady_launches: usize,
    /// Σ `wall_ns` of the steady splits.
    pub steady_measured_ns: f64,
    /// Σ projected time of the same launches.
    pub steady_projected_ns: f64,
    /// First splits of a shape (with uploads).
    pub first_launches: usize,
    /// Σ `wall_ns` of the first splits.
    pub first_measured_ns: f64,
    /// Σ projected time of the first splits, one-time costs included.
    pub first_projected_ns: f64,
    /// Splits that moved slabs (fetches beyond halos): not projected.
    pub moved_launches: usize,
    /// Σ `wall_ns` of the moves.
    pub moved_ns: f64,
    /// Σ time of the launches that ran whole (measured, or the shape's median if untimed).
    pub whole_ns: f64,
}

impl AsRun {
    /// Σ measured: every launch as logged.
    pub fn measured_ns(&self) -> f64 {
        self.steady_measured_ns + self.first_measured_ns + self.moved_ns + self.whole_ns
    }

    /// Σ projected: splits projected, moves and whole launches as measured.
    pub fn projected_ns(&self) -> f64 {
        self.steady_projected_ns + self.first_projected_ns + self.moved_ns + self.whole_ns
    }
}

const USAGE: &str =
    "usage: clprism simulate --replay LOG.jsonl [--gpus 1,2,4,8] [--native-kernel-s X]
                        [--measured-kernel-s Y] [--link G:L] [--issue serial|parallel]
                        [--slabs equal|stagger] [--pipeline]
  Replays a balance-mode run's log and projects it to N GPUs with the buffer directory
  (owner computes, halos through host memory; docs/multi-gpu-projection.md). Every cost
  comes from the log. --native-kernel-s: the app's kernel time in a native run (scales the
  projected totals into the app's figure); --measured-kernel-s: the app's kernel time in the
  logged run, printed next to the projection for comparison. --link GBITS:LATENCY_US (e.g.
  25:50): every device but the app's is a PoCL-Remote server behind that link (halos cross
  it through the app's host, each command's start and completion cross it once); N then
  counts servers plus the app's device. --issue parallel: project the host's calls issued
  from a thread per GPU at once (CLPRISM_BALANCE_ISSUE=parallel; the best case, a driver
  that lets contexts issue in parallel; NVIDIA's does not); serial (default): one after the
  other, as logged. --slabs stagger: owner-computes slabs sized for the devices' staggered
  starts, as balance mode sizes them on GPUs of one name; equal (default): as logged before
  2026-11-28. --pipeline: project split launches that the app enqueued before the one
  before them ended as issued while it runs (not built: docs/balance.md), each taking the
  longer of the launch thread's work and its devices' (compute, and the wait for halos).";

fn ms(ns: f64) -> String {
    format!("{:.3}", ns / 1e6)
}

/// The report `clprism simulate --replay` prints.
pub fn format_report(
    r: &Replay,
    gpus: &[usize],
    native_kernel_s: Option<f64>,
    measured_kernel_s: Option<f64>,
) -> String {
    let mut o = String::new();
    let m = r.measured_devices();
    let n_split = r
        .launches
        .iter()
        .filter(|l| l.split_wall_ns.is_some())
        .count();
    let _ = writeln!(
        o,
        "launches {} ({} split on {} GPUs, {} left out: failed or never timed); kernel shapes {}",
        r.launches.len(),
        n_split,
        m.map_or("-".into(), |m| m.to_string()),
        r.skipped,
        r.shapes.len()
    );
    if let Some(rate) = r.move_rate {
        let _ = writeln!(o, "host transfer rate of slab moves: {rate:.2} GB/s");
    }
    if r.pipeline {
        let ahead = r.launches.iter().filter(|l| l.queued_ahead).count();
        let _ = writeln!(
            o,
            "pipelined (--pipeline): {ahead} launches were enqueued before the one before them ended; \
             each of those that follows a split launch is projected issued while it runs"
        );
    }
    if let Some(l) = r.link {
        let _ = writeln!(
            o,
            "projected with every device but the app's behind a link of {:.1} Gb/s and {:.1} us \
             one way (N: the app's device and N-1 servers); the first split's uploads are the \
             logged host's, not the link's",
            l.bytes_per_ns * 8.0,
            l.latency_ns / 1e3
        );
    }
    for (i, s) in r.shapes.iter().enumerate() {
        let count = r.launches.iter().filter(|l| l.shape == i).count();
        let _ = writeln!(
            o,
            "\n{}: {count} launches, whole on 1 GPU {} ms (from {})",
            s.key.label(),
            ms(s.whole_ns),
            s.whole_from
        );
        let Some(c) = &s.split else {
            let _ = writeln!(o, "  never split in the log: kept whole at every N");
            continue;
        };
        let _ = writeln!(
            o,
            "  measured on {} GPUs ({} steady splits): compute {:.0} ns + {:.4} ns/wg (waves of {}), \
             {} units x {} wg; pre {} ms, post {} ms, enqueue {} ms/device, enqueue->start {} ms (app device) / {} ms (others), \
             halo fetch {} ms per {:.0} B in {:.0}% of launches, merge {} ms; one-time {} ms + upload {} ms",
            c.devices,
            c.launches,
            s.a_ns,
            s.b_ns_per_wg,
            s.wave,
            s.units,
            s.wgs_per_unit,
            ms(c.pre_ns),
            ms(c.post_ns),
            ms(c.issue_ns),
            ms(c.latency_app_ns),
            ms(c.latency_other_ns),
            ms(c.fetch_ns),
            c.halo_bytes,
            100.0 * c.fetch_frac,
            ms(c.merge_ns),
            ms(c.first_fixed_ns),
            ms(c.first_upload_ns)
        );
        if c.launches == 0 {
            let _ = writeln!(
                o,
                "  no steady split in the log: costs from first splits, halos unknown (none \
                 projected, optimistic); replay an `always` log for them"
            );
        }
        let _ = writeln!(
            o,
            "  {:>4} {:>11} {:>9} {:>9} {:>9} {:>9} {:>8}",
            "gpus", "compute_ms", "halo_ms", "fixed_ms", "split_ms", "whole_ms", "split?"
        );
        for &n in gpus {
            match r.project_split(i, n) {
                Some(p) => {
                    let _ = writeln!(
                        o,
                        "  {:>4} {:>11} {:>9} {:>9} {:>9} {:>9} {:>8}",
                        n,
                        ms(p.compute_ns),
                        ms(p.halo_ns),
                        ms(p.fixed_ns),
                        ms(p.split_ns),
                        ms(s.whole_ns),
                        if p.split_ns < s.whole_ns { "yes" } else { "no" }
                    );
                }
                None => {
                    let _ = writeln!(
                        o,
                        "  {:>4} {:>11} {:>9} {:>9} {:>9} {:>9} {:>8}",
                        n,
                        ms(s.whole_ns),
                        "-",
                        "-",
                        "-",
                        ms(s.whole_ns),
                        "whole"
                    );
                }
            }
        }
    }
    let _ = writeln!(
        o,
        "\nrun totals, s (whole: every launch on 1 GPU; always: every split-measured shape split; \
         auto: split where it pays, one-time costs included)"
    );
    let _ = writeln!(
        o,
        "{:>4} {:>10} {:>10} {:>10} {:>12} {:>13}{}",
        "gpus",
        "whole_s",
        "always_s",
        "auto_s",
        "auto_splits",
        "auto_speedup",
        if native_kernel_s.is_some() {
            "  app_kernel_s"
        } else {
            ""
        }
    );
    for &n in gpus {
        let t = r.totals(n);
        let sp = if t.auto_ns > 0.0 {
            t.whole_ns / t.auto_ns
        } else {
            0.0
        };
        let app = native_kernel_s.map_or(String::new(), |x| format!("  {:>12.3}", x / sp));
        let _ = writeln!(
            o,
            "{:>4} {:>10.3} {:>10.3} {:>10.3} {:>12} {:>13.3}{}",
            n,
            t.whole_ns / 1e9,
            t.always_ns / 1e9,
            t.auto_ns / 1e9,
            t.auto_split,
            sp,
            app
        );
    }
    // the logged run replayed: a comparison with the measurement, which a link changes
    if let Some(a) = r.as_run().filter(|_| r.link.is_none()) {
        let pct = |p: f64, m: f64| {
            if m > 0.0 {
                format!("{:+.1}%", 100.0 * (p / m - 1.0))
            } else {
                "-".into()
            }
        };
        let _ = writeln!(
            o,
            "\nas run on {} GPUs (each split launch projected on {}, the rest as measured), s:",
            a.n, a.n
        );
        let _ = writeln!(
            o,
            "  steady splits  {:>5}: measured {:>9.3}, projected {:>9.3} ({})",
            a.steady_launches,
            a.steady_measured_ns / 1e9,
            a.steady_projected_ns / 1e9,
            pct(a.steady_projected_ns, a.steady_measured_ns)
        );
        let _ = writeln!(
            o,
            "  first splits   {:>5}: measured {:>9.3}, projected {:>9.3} ({})",
            a.first_launches,
            a.first_measured_ns / 1e9,
            a.first_projected_ns / 1e9,
            pct(a.first_projected_ns, a.first_measured_ns)
        );
        let _ = writeln!(
            o,
            "  slab moves     {:>5}: measured {:>9.3} (not projected: {})",
            a.moved_launches,
            a.moved_ns / 1e9,
            if r.stagger_slabs {
                "the slabs' one-time move to their sized boundaries is left out"
            } else {
                "like devices keep equal slabs since 847b52d"
            }
        );
        let _ = writeln!(o, "  run whole           : {:>9.3}", a.whole_ns / 1e9);
        let whole = r.totals(1).whole_ns;
        let _ = write!(
            o,
            "  all launches        : measured {:>9.3}, projected {:>9.3} ({})",
            a.measured_ns() / 1e9,
            a.projected_ns() / 1e9,
            pct(a.projected_ns(), a.measured_ns())
        );
        if let Some(x) = native_kernel_s {
            let _ = write!(
                o,
                "; app kernel_s projected {:.3} (native x {:.3})",
                x * a.projected_ns() / whole,
                a.projected_ns() / whole
            );
        }
        if let Some(y) = measured_kernel_s {
            let _ = write!(o, ", measured {y:.3}");
        }
        let _ = writeln!(o);
    }
    o
}

/// `clprism simulate --replay LOG ...` (the arguments after `simulate`). Returns the exit
/// status: 0 ok, 2 usage error, 1 unreadable log.
pub fn replay_main(args: &[String]) -> i32 {
    let mut log: Option<String> = None;
    let mut gpus = vec![1usize, 2, 4, 8];
    let mut native: Option<f64> = None;
    let mut measured: Option<f64> = None;
    let mut link: Option<Link> = None;
    let mut parallel_issue = false;
    let mut stagger_slabs = false;
    let mut pipeline = false;
    let mut it = args.iter();
    let usage = |e: &str| {
        eprintln!("clprism simulate: {e}\n{USAGE}");
        2
    };
    while let Some(a) = it.next() {
        let (key, inline) = match a.split_once('=') {
            Some((k, v)) if k.starts_with("--") => (k.to_string(), Some(v.to_string())),
            _ => (a.clone(), None),
        };
        let mut val = || inline.clone().or_else(|| it.next().cloned());
        match key.as_str() {
            "-h" | "--help" => {
                println!("{USAGE}");
                return 0;
            }
            "--replay" => match val() {
                Some(v) => log = Some(v),
                None => return usage("--replay needs a log"),
            },
            "--gpus" => {
                let Some(v) = val() else {
                    return usage("--gpus needs a list");
                };
                match v
                    .split(',')
                    .map(|x| x.trim().parse::<usize>())
                    .collect::<Result<Vec<_>, _>>()
                {
                    Ok(g) if !g.is_empty() && g.iter().all(|&n| n >= 1) => gpus = g,
                    _ => return usage(&format!("--gpus '{v}': expected counts >= 1")),
                }
            }
            "--native-kernel-s" | "--measured-kernel-s" => {
                let Some(x) = val()
                    .and_then(|v| v.parse::<f64>().ok())
                    .filter(|x| *x > 0.0)
                else {
                    return usage(&format!("{key} needs a time in s > 0"));
                };
                if key == "--native-kernel-s" {
                    native = Some(x)
                } else {
                    measured = Some(x)
                }
            }
            "--link" => match val().map(|v| Link::parse(&v)) {
                Some(Ok(l)) => link = Some(l),
                Some(Err(e)) => return usage(&e),
                None => return usage("--link needs GBITS_PER_S:LATENCY_US"),
            },
            "--issue" => match val().as_deref() {
                Some("parallel") => parallel_issue = true,
                Some("serial") => parallel_issue = false,
                _ => return usage("--issue needs parallel or serial"),
            },
            "--slabs" => match val().as_deref() {
                Some("stagger") => stagger_slabs = true,
                Some("equal") => stagger_slabs = false,
                _ => return usage("--slabs needs equal or stagger"),
            },
            "--pipeline" => pipeline = true,
            other => return usage(&format!("unknown option '{other}'")),
        }
    }
    let Some(path) = log else {
        return usage("--replay LOG.jsonl is required");
    };
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("clprism simulate: {path}: {e}");
            return 1;
        }
    };
    match Replay::from_text(&text) {
        Ok(mut r) => {
            r.link = link;
            r.parallel_issue = parallel_issue;
            r.stagger_slabs = stagger_slabs;
            r.pipeline = pipeline;
            println!("replay of {path}");
            print!("{}", format_report(&r, &gpus, native, measured));
            0
        }
        Err(e) => {
            eprintln!("clprism simulate: {path}: {e}");
            1
        }
    }
}
