//! Per-kernel aggregation of launch records: measured time, projection (Panwar et al. §IV),
//! emulation overhead, balance (Boyer ch. 4: share of work per device, idle tail, speedup
//! against a single-device baseline) and the comparison of two runs.

use super::load::{Launch, LoadedLog};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Measured time of one kernel (a name in one program).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KernelRow {
    /// Kernel function name, with its program when the name is in several
    /// ([`Launch::label`]).
    pub kernel: String,
    /// The program (its identity in the log: content and build options).
    pub program: String,
    /// Launch records (any status).
    pub launches: u64,
    /// Launches with a measured time ([`Launch::measured_ns`]).
    pub timed: u64,
    /// Sum of measured times, ns; where only a sample of the launches was timed
    /// (`CLPRISM_DEVICE_TIMING=adaptive` or `sample:N`), each timed launch weighs
    /// `1 / timing_p`, so this estimates the total of all launches (Horvitz-Thompson).
    pub total_ns: u64,
    /// The total is estimated from a sample of the launches (some `timing_p` below 1).
    pub estimated: bool,
    /// Sum of the timed launches' weights `1 / timing_p` (the launches they stand for).
    #[serde(skip)]
    pub weight: f64,
    /// Mean measured time, ns (weighted as `total_ns`; None when no launch was timed).
    pub mean_ns: Option<f64>,
    /// Smallest measured time, ns.
    pub min_ns: Option<u64>,
    /// Largest measured time, ns.
    pub max_ns: Option<u64>,
    /// Fraction (0..1) of the log's total measured time.
    pub share: f64,
    /// Launches per status.
    pub statuses: BTreeMap<String, u64>,
    /// Launches per device index.
    pub devices: BTreeMap<String, u64>,
}

/// Totals over all kernels.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    /// Launch records.
    pub launches: u64,
    /// Timed launches.
    pub timed: u64,
    /// Sum of measured times, ns.
    pub total_ns: u64,
}

/// Projection of one kernel on one device profile, averaged over its projected launches.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ProjectionRow {
    /// Kernel function name.
    pub kernel: String,
    /// Device profile name.
    pub device: String,
    /// Launches projected on this device.
    pub launches: u64,
    /// Mean projected time of the pure model, ns.
    pub mean_projected_ns: Option<f64>,
    /// Timed launches anchored on their own device's measured time
    /// ([`crate::log::schema::Projection::anchored`]).
    pub anchored_launches: u64,
    /// Mean anchored time over those launches, ns: the launch device's measured time × the
    /// model's ratio of this device to it (on the launch device, its measured time; Habitat).
    /// The ranking is the model's: anchoring scales every device by one factor.
    pub mean_anchored_ns: Option<f64>,
    /// Mean compute time, ns.
    pub mean_t_compute_ns: Option<f64>,
    /// Mean global memory time, ns.
    pub mean_t_global_ns: Option<f64>,
    /// Mean local memory time, ns.
    pub mean_t_local_ns: Option<f64>,
    /// Most frequent bound (ties: alphabetical).
    pub bound: String,
    /// Launches per bound.
    pub bounds: BTreeMap<String, u64>,
    /// Mean rank (1 = fastest).
    pub mean_rank: Option<f64>,
    /// Launches for which this device was `best`.
    pub best: u64,
}

/// Mini-emulation cost of one kernel.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct EmulationRow {
    /// Kernel function name.
    pub kernel: String,
    /// Launches carrying an `emulation` record.
    pub launches: u64,
    /// Of those, reused from an earlier emulation.
    pub reused: u64,
    /// Of those, the budget ran out.
    pub budget_exhausted: u64,
    /// Of those, the emulation failed.
    pub errors: u64,
    /// Failures per reason.
    pub error_reasons: BTreeMap<String, u64>,
    /// Mean emulation time over the records that report one, ns.
    pub mean_emulation_ns: Option<f64>,
    /// Sum of emulation times, ns.
    pub total_emulation_ns: u64,
    /// `total_emulation_ns` / measured time of the same launches (None if none timed).
    pub overhead: Option<f64>,
}

/// Balance results of one kernel (Boyer ch. 4).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BalanceRow {
    /// Kernel function name.
    pub kernel: String,
    /// Launches with a schedule other than `single`.
    pub launches: u64,
    /// Launches per scheduler.
    pub schedulers: BTreeMap<String, u64>,
    /// Launches that fell back to one device.
    pub fallbacks: u64,
    /// Fallbacks per reason.
    pub fallback_reasons: BTreeMap<String, u64>,
    /// Mean chunks per launch (launches that did not fall back).
    pub mean_chunks: Option<f64>,
    /// Mean idle tail, ns: time between the first and the last device finishing.
    pub mean_idle_tail_ns: Option<f64>,
    /// Mean measured time of the balanced launches, ns.
    pub mean_ns: Option<f64>,
    /// Balanced launches with a baseline of the same kernel and global size.
    pub matched: u64,
    /// Baseline launches available for those (kernel, global) keys.
    pub baseline_launches: u64,
    /// Σ baseline mean / Σ measured over the matched launches (> 1: balancing is faster).
    pub speedup: Option<f64>,
}

/// Share of one kernel's work done by one device, averaged over balanced launches.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ShareRow {
    /// Kernel function name.
    pub kernel: String,
    /// `index name` of the device.
    pub device: String,
    /// Mean fraction (0..1) of the work-groups (0 for a launch the device took no part in).
    pub mean_share: f64,
    /// Work-groups done by the device (non-abandoned chunks).
    pub work_groups: u64,
    /// Chunks given to the device.
    pub chunks: u64,
    /// Of those, abandoned.
    pub abandoned: u64,
}

/// The report of one log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Report {
    /// File name.
    pub file: String,
    /// Launch records read.
    pub records: u64,
    /// Lines skipped as malformed.
    pub malformed: u64,
    /// Launches whose emulation/projection/schedule object was unreadable.
    pub unreadable_extras: u64,
    /// Process ids seen.
    pub pids: Vec<u32>,
    /// Launches per mode.
    pub modes: BTreeMap<String, u64>,
    /// Per kernel, by total measured time (largest first).
    pub kernels: Vec<KernelRow>,
    /// Totals.
    pub total: Totals,
    /// Projection per kernel and device profile (project mode).
    pub projection: Vec<ProjectionRow>,
    /// Emulation overhead per kernel (project mode).
    pub emulation: Vec<EmulationRow>,
    /// Balance per kernel (balance mode).
    pub balance: Vec<BalanceRow>,
    /// Work share per kernel and device (balance mode).
    pub shares: Vec<ShareRow>,
}

/// Mean time per (kernel, global size) of single-device launches, to compare balanced ones
/// against.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    samples: HashMap<(String, Vec<u64>), (u64, u64)>,
}

impl Baseline {
    /// Adds the baseline launches of a log: those with `schedule.scheduler == "single"`, and
    /// when `log_mode_too`, also mode `log` launches (no schedule). Only timed launches count.
    pub fn add(&mut self, launches: &[Launch], log_mode_too: bool) {
        for l in launches {
            let single = l
                .schedule
                .as_ref()
                .is_some_and(|s| s.scheduler.as_deref() == Some("single"));
            let logged = log_mode_too && l.schedule.is_none() && l.mode == "log";
            if !(single || logged) {
                continue;
            }
            if let Some(ns) = l.measured_ns() {
                let e = self
                    .samples
                    .entry((l.label.clone(), l.global.clone()))
                    .or_default();
                e.0 += ns;
                e.1 += 1;
            }
        }
    }

    /// Adds the timed launches for which `pred` holds, whatever their mode or scheduler.
    pub fn add_where(&mut self, launches: &[Launch], pred: impl Fn(&Launch) -> bool) {
        for l in launches.iter().filter(|l| pred(l)) {
            if let Some(ns) = l.measured_ns() {
                let e = self
                    .samples
                    .entry((l.label.clone(), l.global.clone()))
                    .or_default();
                e.0 += ns;
                e.1 += 1;
            }
        }
    }

    /// Mean baseline time (ns) and sample count for a kernel and global size.
    pub fn get(&self, kernel: &str, global: &[u64]) -> Option<(f64, u64)> {
        self.samples
            .get(&(kernel.to_string(), global.to_vec()))
            .filter(|(_, n)| *n > 0)
            .map(|(t, n)| (*t as f64 / *n as f64, *n))
    }
}

fn mean(sum: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| sum / n as f64)
}

/// Running mean of optional values.
#[derive(Default)]
struct Acc {
    sum: f64,
    n: u64,
}

impl Acc {
    fn add(&mut self, v: Option<f64>) {
        if let Some(v) = v {
            self.sum += v;
            self.n += 1;
        }
    }
    fn mean(&self) -> Option<f64> {
        mean(self.sum, self.n)
    }
}

fn kernel_rows(launches: &[Launch]) -> (Vec<KernelRow>, Totals) {
    let mut map: BTreeMap<&str, KernelRow> = BTreeMap::new();
    for l in launches {
        let k = map.entry(&l.label).or_insert_with(|| KernelRow {
            kernel: l.label.clone(),
            program: l.program.clone(),
            ..Default::default()
        });
        k.launches += 1;
        *k.statuses.entry(l.status.to_string()).or_default() += 1;
        let dev = l.device_label();
        if !dev.is_empty() {
            *k.devices.entry(dev).or_default() += 1;
        }
        if let Some(ns) = l.measured_ns() {
            let p = l.timing_p.filter(|p| *p > 0.0 && *p < 1.0).unwrap_or(1.0);
            k.timed += 1;
            k.total_ns += (ns as f64 / p).round() as u64;
            k.weight += 1.0 / p;
            k.estimated |= p < 1.0;
            k.min_ns = Some(k.min_ns.map_or(ns, |m| m.min(ns)));
            k.max_ns = Some(k.max_ns.map_or(ns, |m| m.max(ns)));
        }
    }
    let mut rows: Vec<KernelRow> = map.into_values().collect();
    let total = Totals {
        launches: rows.iter().map(|r| r.launches).sum(),
        timed: rows.iter().map(|r| r.timed).sum(),
        total_ns: rows.iter().map(|r| r.total_ns).sum(),
    };
    for r in &mut rows {
        r.mean_ns = (r.weight > 0.0).then(|| r.total_ns as f64 / r.weight);
        r.share = if total.total_ns > 0 {
            r.total_ns as f64 / total.total_ns as f64
        } else {
            0.0
        };
    }
    rows.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.kernel.cmp(&b.kernel)));
    (rows, total)
}

fn projection_rows(launches: &[Launch], order: &[String]) -> Vec<ProjectionRow> {
    #[derive(Default)]
    struct P {
        launches: u64,
        projected: Acc,
        anchored: Acc,
        compute: Acc,
        global: Acc,
        local: Acc,
        rank: Acc,
        bounds: BTreeMap<String, u64>,
        best: u64,
    }
    let mut map: BTreeMap<(&str, &str), P> = BTreeMap::new();
    for l in launches {
        let Some(p) = &l.projection else { continue };
        let best = p.best_device();
        let anchored = p.anchored(l.device_ns.map(|t| t as f64));
        for (d, a) in p.set.devices.iter().zip(&anchored) {
            let e = map.entry((&l.label, &d.device)).or_default();
            e.launches += 1;
            e.projected.add(Some(d.projected_ns));
            e.anchored.add(a.anchored_ns);
            e.compute.add(Some(d.t_compute_ns));
            e.global.add(Some(d.t_global_ns));
            e.local.add(Some(d.t_local_ns));
            e.rank.add(Some(f64::from(d.rank)));
            *e.bounds.entry(d.bound.to_string()).or_default() += 1;
            if best.as_deref() == Some(d.device.as_str()) {
                e.best += 1;
            }
        }
    }
    let mut rows: Vec<ProjectionRow> = map
        .into_iter()
        .map(|((k, d), p)| ProjectionRow {
            kernel: k.to_string(),
            device: d.to_string(),
            launches: p.launches,
            mean_projected_ns: p.projected.mean(),
            anchored_launches: p.anchored.n,
            mean_anchored_ns: p.anchored.mean(),
            mean_t_compute_ns: p.compute.mean(),
            mean_t_global_ns: p.global.mean(),
            mean_t_local_ns: p.local.mean(),
            bound: p
                .bounds
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(b, _)| b.clone())
                .unwrap_or_default(),
            bounds: p.bounds,
            mean_rank: p.rank.mean(),
            best: p.best,
        })
        .collect();
    let pos = |k: &str| order.iter().position(|o| o == k).unwrap_or(usize::MAX);
    rows.sort_by(|a, b| {
        pos(&a.kernel)
            .cmp(&pos(&b.kernel))
            .then(
                a.mean_rank
                    .unwrap_or(f64::MAX)
                    .total_cmp(&b.mean_rank.unwrap_or(f64::MAX)),
            )
            .then(a.device.cmp(&b.device))
    });
    rows
}

fn emulation_rows(launches: &[Launch], order: &[String]) -> Vec<EmulationRow> {
    let mut map: BTreeMap<&str, (EmulationRow, Acc, u64)> = BTreeMap::new();
    for l in launches {
        let Some(e) = &l.emulation else { continue };
        let (r, acc, measured) = map.entry(&l.label).or_insert_with(|| {
            (
                EmulationRow {
                    kernel: l.label.clone(),
                    ..Default::default()
                },
                Acc::default(),
                0,
            )
        });
        r.launches += 1;
        r.reused += e.reused as u64;
        r.budget_exhausted += e.budget_exhausted() as u64;
        if let Some(reason) = e.failure() {
            r.errors += 1;
            *r.error_reasons.entry(reason).or_default() += 1;
        }
        if let Some(ns) = e.wall_ns() {
            acc.add(Some(ns as f64));
            r.total_emulation_ns += ns;
        }
        *measured += l.measured_ns().unwrap_or(0);
    }
    let mut rows: Vec<EmulationRow> = map
        .into_values()
        .map(|(mut r, acc, measured)| {
            r.mean_emulation_ns = acc.mean();
            r.overhead = (measured > 0).then(|| r.total_emulation_ns as f64 / measured as f64);
            r
        })
        .collect();
    let pos = |k: &str| order.iter().position(|o| o == k).unwrap_or(usize::MAX);
    rows.sort_by_key(|r| pos(&r.kernel));
    rows
}

/// The share (0..1) of a balanced launch's work-groups each of its devices ran, indexed like
/// `schedule.devices`: the logged `share` when it has one entry per device, else computed from
/// the non-abandoned chunks.
pub fn schedule_shares(s: &crate::log::schema::Schedule) -> Vec<f64> {
    let done_wg: u64 = s
        .chunks
        .iter()
        .filter(|c| !c.abandoned)
        .map(|c| c.count)
        .sum();
    let total_wg = s.work_groups.filter(|&w| w > 0).unwrap_or(done_wg);
    let n_dev = s
        .devices
        .len()
        .max(s.chunks.iter().map(|c| c.device + 1).max().unwrap_or(0));
    match &s.share {
        Some(v) if v.len() == n_dev => v.clone(),
        _ => (0..n_dev)
            .map(|i| {
                let wg: u64 = s
                    .chunks
                    .iter()
                    .filter(|c| c.device == i && !c.abandoned)
                    .map(|c| c.count)
                    .sum();
                if total_wg > 0 {
                    wg as f64 / total_wg as f64
                } else {
                    0.0
                }
            })
            .collect(),
    }
}

fn balance_rows(
    launches: &[Launch],
    order: &[String],
    baseline: &Baseline,
) -> (Vec<BalanceRow>, Vec<ShareRow>) {
    #[derive(Default)]
    struct B {
        row: BalanceRow,
        chunks: Acc,
        idle: Acc,
        time: Acc,
        base_sum: f64,
        matched_sum: f64,
        base_keys: BTreeSet<Vec<u64>>,
        /// device label -> (share sum, work-groups, chunks, abandoned)
        devices: BTreeMap<String, (f64, u64, u64, u64)>,
        shared: u64,
    }
    let mut map: BTreeMap<&str, B> = BTreeMap::new();
    for l in launches {
        if !l.is_balanced() {
            continue;
        }
        let Some(s) = &l.schedule else { continue };
        let b = map.entry(&l.label).or_default();
        b.row.kernel = l.label.clone();
        b.row.launches += 1;
        *b.row
            .schedulers
            .entry(s.scheduler.clone().unwrap_or_default())
            .or_default() += 1;
        b.time.add(l.measured_ns().map(|n| n as f64));
        if let (Some(ns), Some((base, n))) = (l.measured_ns(), baseline.get(&l.label, &l.global)) {
            b.row.matched += 1;
            b.base_sum += base;
            b.matched_sum += ns as f64;
            if b.base_keys.insert(l.global.clone()) {
                b.row.baseline_launches += n;
            }
        }
        if let Some(reason) = &s.fallback {
            b.row.fallbacks += 1;
            *b.row
                .fallback_reasons
                .entry(reason.to_string())
                .or_default() += 1;
            continue;
        }
        b.chunks.add(Some(s.chunks.len() as f64));
        b.idle.add(s.idle_tail_ns.map(|n| n as f64));
        let label = |i: usize| {
            s.devices
                .get(i)
                .map(|d| format!("{} {}", d.index, d.name).trim().to_string())
                .unwrap_or_else(|| format!("#{i}"))
        };
        let shares = schedule_shares(s);
        b.shared += 1;
        for (i, share) in shares.iter().enumerate() {
            b.devices.entry(label(i)).or_default().0 += share;
        }
        for c in &s.chunks {
            let e = b.devices.entry(label(c.device)).or_default();
            e.2 += 1;
            if c.abandoned {
                e.3 += 1;
            } else {
                e.1 += c.count;
            }
        }
    }
    let pos = |k: &str| order.iter().position(|o| o == k).unwrap_or(usize::MAX);
    let mut rows = Vec::new();
    let mut shares = Vec::new();
    let mut entries: Vec<_> = map.into_values().collect();
    entries.sort_by_key(|b| pos(&b.row.kernel));
    for mut b in entries {
        b.row.mean_chunks = b.chunks.mean();
        b.row.mean_idle_tail_ns = b.idle.mean();
        b.row.mean_ns = b.time.mean();
        b.row.speedup =
            (b.row.matched > 0 && b.matched_sum > 0.0).then(|| b.base_sum / b.matched_sum);
        for (dev, (share_sum, wg, chunks, abandoned)) in b.devices {
            shares.push(ShareRow {
                kernel: b.row.kernel.clone(),
                device: dev,
                mean_share: if b.shared > 0 {
                    share_sum / b.shared as f64
                } else {
                    0.0
                },
                work_groups: wg,
                chunks,
                abandoned,
            });
        }
        rows.push(b.row);
    }
    (rows, shares)
}

/// Builds the report of one log. `baseline` holds single-device launches to compare balanced
/// launches against; the log's own `single` and `log`-mode launches are added to it.
pub fn build(log: &LoadedLog, baseline: &Baseline) -> Report {
    let (kernels, total) = kernel_rows(&log.launches);
    let order: Vec<String> = kernels.iter().map(|k| k.kernel.clone()).collect();
    let mut base = baseline.clone();
    base.add(&log.launches, true);
    let (balance, shares) = balance_rows(&log.launches, &order, &base);
    let mut modes = BTreeMap::new();
    let mut pids = BTreeSet::new();
    for l in &log.launches {
        *modes.entry(l.mode.to_string()).or_default() += 1;
        if let Some(p) = l.pid() {
            pids.insert(p);
        }
    }
    Report {
        file: log.name.clone(),
        records: log.launches.len() as u64,
        malformed: log.malformed as u64,
        unreadable_extras: log.unreadable_extras as u64,
        pids: pids.into_iter().collect(),
        modes,
        projection: projection_rows(&log.launches, &order),
        emulation: emulation_rows(&log.launches, &order),
        kernels,
        total,
        balance,
        shares,
    }
}

/// One kernel in the comparison of two runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CompareRow {
    /// Kernel function name (`total` for the totals row).
    pub kernel: String,
    /// Launches in run A.
    pub a_launches: u64,
    /// Launches in run B.
    pub b_launches: u64,
    /// Total measured time in A, ns (None when the kernel is absent from A).
    pub a_total_ns: Option<u64>,
    /// Total measured time in B, ns (None when the kernel is absent from B).
    pub b_total_ns: Option<u64>,
    /// `b_total_ns / a_total_ns` (None when either is absent or A's is 0).
    pub ratio: Option<f64>,
}

/// Comparison of two runs, with each run's own report (balanced launches of one run are
/// compared against the single-device launches of the other).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Comparison {
    /// Report of run A.
    pub a: Report,
    /// Report of run B.
    pub b: Report,
    /// Per kernel present in either run, by kernel name.
    pub kernels: Vec<CompareRow>,
    /// Totals.
    pub total: CompareRow,
}

fn ratio(a: Option<u64>, b: Option<u64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) if a > 0 => Some(b as f64 / a as f64),
        _ => None,
    }
}

/// Compares run B against run A.
pub fn compare(a: &LoadedLog, b: &LoadedLog) -> Comparison {
    let mut base_a = Baseline::default();
    base_a.add(&a.launches, true);
    let mut base_b = Baseline::default();
    base_b.add(&b.launches, true);
    let ra = build(a, &base_b);
    let rb = build(b, &base_a);
    let mut names: BTreeSet<&str> = BTreeSet::new();
    names.extend(ra.kernels.iter().map(|k| k.kernel.as_str()));
    names.extend(rb.kernels.iter().map(|k| k.kernel.as_str()));
    let find = |r: &Report, n: &str| {
        r.kernels
            .iter()
            .find(|k| k.kernel == n)
            .map_or((0, None), |k| (k.launches, Some(k.total_ns)))
    };
    let kernels: Vec<CompareRow> = names
        .iter()
        .map(|n| {
            let (al, at) = find(&ra, n);
            let (bl, bt) = find(&rb, n);
            CompareRow {
                kernel: n.to_string(),
                a_launches: al,
                b_launches: bl,
                a_total_ns: at,
                b_total_ns: bt,
                ratio: ratio(at, bt),
            }
        })
        .collect();
    let total = CompareRow {
        kernel: "total".into(),
        a_launches: ra.total.launches,
        b_launches: rb.total.launches,
        a_total_ns: Some(ra.total.total_ns),
        b_total_ns: Some(rb.total.total_ns),
        ratio: ratio(Some(ra.total.total_ns), Some(rb.total.total_ns)),
    };
    Comparison {
        a: ra,
        b: rb,
        kernels,
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::load::parse_log;

    #[test]
    fn baseline_matches_kernel_and_global_size_only() {
        let text = concat!(
            r#"{"kernel":"k","mode":"log","global":[64],"device_ns":100}"#,
            "\n",
            r#"{"kernel":"k","mode":"log","global":[64],"device_ns":300}"#,
            "\n",
            r#"{"kernel":"k","mode":"log","global":[128],"device_ns":null}"#,
            "\n",
            r#"{"kernel":"k","mode":"balance","global":[64],"schedule":{"scheduler":"single","wall_ns":500}}"#,
            "\n",
            r#"{"kernel":"k","mode":"balance","global":[64],"schedule":{"scheduler":"boyer","wall_ns":50}}"#,
        );
        let log = parse_log("t", text);
        let mut only_single = Baseline::default();
        only_single.add(&log.launches, false);
        assert_eq!(only_single.get("k", &[64]), Some((500.0, 1)));
        let mut b = Baseline::default();
        b.add(&log.launches, true);
        assert_eq!(b.get("k", &[64]), Some((300.0, 3)));
        assert_eq!(b.get("k", &[128]), None, "untimed launches are no baseline");
        assert_eq!(b.get("other", &[64]), None);
        // the boyer launch is 6x faster than the mean of the three baselines
        let r = build(&log, &Baseline::default());
        assert_eq!(r.balance.len(), 1);
        assert_eq!(r.balance[0].launches, 1);
        assert_eq!(r.balance[0].speedup, Some(300.0 / 50.0));
    }

    #[test]
    fn shares_from_chunks_skip_abandoned_work() {
        let text = r#"{"kernel":"k","mode":"balance","global":[640],"schedule":{"scheduler":"boyer","devices":[{"index":"0:0","name":"a"},{"index":"0:1","name":"b"}],"chunks":[{"device":0,"first_wg":0,"count":6},{"device":1,"first_wg":6,"count":4,"abandoned":true},{"device":0,"first_wg":6,"count":4}],"work_groups":10,"idle_tail_ns":7,"wall_ns":9}}"#;
        let r = build(&parse_log("t", text), &Baseline::default());
        assert_eq!(r.shares.len(), 2);
        assert_eq!(r.shares[0].device, "0:0 a");
        assert_eq!(r.shares[0].mean_share, 1.0);
        assert_eq!(r.shares[0].work_groups, 10);
        assert_eq!(r.shares[1].mean_share, 0.0);
        assert_eq!((r.shares[1].chunks, r.shares[1].abandoned), (1, 1));
        assert_eq!(r.balance[0].mean_idle_tail_ns, Some(7.0));
        assert_eq!(r.balance[0].speedup, None);
    }

    #[test]
    fn sampled_launches_weigh_one_over_their_timing_probability() {
        // CLPRISM_DEVICE_TIMING=adaptive: two launches timed for sure, two of four others
        // timed with probability 1/2 (each stands for two), two untimed
        let text = concat!(
            r#"{"kernel":"k","mode":"log","global":[64],"device_ns":100}"#,
            "\n",
            r#"{"kernel":"k","mode":"log","global":[64],"device_ns":100}"#,
            "\n",
            r#"{"kernel":"k","mode":"log","global":[64],"device_ns":120,"timing_p":0.5}"#,
            "\n",
            r#"{"kernel":"k","mode":"log","global":[64],"device_ns":80,"timing_p":0.5}"#,
            "\n",
            r#"{"kernel":"k","mode":"log","global":[64],"status":"untimed"}"#,
            "\n",
            r#"{"kernel":"k","mode":"log","global":[64],"status":"untimed"}"#,
        );
        let r = build(&parse_log("t", text), &Baseline::default());
        let k = &r.kernels[0];
        assert_eq!((k.launches, k.timed), (6, 4));
        assert_eq!(k.total_ns, 100 + 100 + 240 + 160);
        assert!(k.estimated);
        assert_eq!(k.mean_ns, Some(600.0 / 6.0));
        assert_eq!(r.total.total_ns, 600);
    }
}
