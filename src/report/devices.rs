//! The devices view of `clprism report --devices LOG...` (issue 21): one row per kernel over
//! any number of logs of one application, whatever their modes:
//!
//! - **native**: launches that ran unchanged on the app's own device and were timed (log mode
//!   and the `single` baseline scheduler of balance mode; project mode for a kernel that has
//!   none of those, since its emulation shares the host CPU with CPU devices): their mean
//!   measured time and the device;
//! - **balance**: launches of balance mode: their mean measured time, how many were split,
//!   the speedup against the native launches of the same kernel and global size, and the mean
//!   share of the work-groups each balance device ran in the split launches (Boyer ch. 4);
//! - **projection** (project mode): the projected-best device profile, and per kernel the
//!   ranking of every profiled device by projected time (Panwar et al. §IV-D), with the
//!   measured native time next to the profile of the app's own device;
//! - optionally an **output check**: two output files (e.g. an app's `--dump` from a native
//!   and from a balanced run) compared byte for byte.

use super::aggregate::{schedule_shares, Baseline};
use super::load::{Launch, LoadedLog};
use super::render::{col, Cell, Kind, Table};
use crate::log::schema::Schedule;
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::Path;

/// One kernel of the devices view.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct KernelDevices {
    /// Kernel function name.
    pub kernel: String,
    /// Timed launches that ran unchanged on the app's device: those of log mode and of the
    /// `single` scheduler, else (none of those for this kernel) those of project mode.
    pub native_launches: u64,
    /// Which of the two `native_launches` are: `log` (log mode or `single`) or `project`.
    pub native_mode: Option<String>,
    /// Their mean measured time, ns.
    pub native_mean_ns: Option<f64>,
    /// Their device (`index`, the most frequent one).
    pub native_device: Option<String>,
    /// Balance-mode launches (split or forwarded to the app's device).
    pub balance_launches: u64,
    /// Of those, split over the balance devices (no fallback).
    pub split_launches: u64,
    /// Mean measured time of the balance-mode launches, ns (`device_ns`, else the schedule's
    /// `wall_ns`).
    pub balance_mean_ns: Option<f64>,
    /// Balance-mode launches kept whole on one device, per fallback reason.
    pub kept_whole: BTreeMap<String, u64>,
    /// Balance-mode launches with native launches of the same kernel and global size.
    pub matched: u64,
    /// Σ native mean / Σ balance-mode time over the matched launches (> 1: balance is faster).
    pub speedup: Option<f64>,
    /// Mean share (0..1) of the work-groups per balance device `index`, over the split
    /// launches (0 for a launch a device took no part in).
    pub shares: BTreeMap<String, f64>,
    /// Profile the projection named best most often (ties: the better mean rank).
    pub projected_best: Option<String>,
    /// Profile of the app's own device (`projection.launch_device_profile`), if any.
    pub own_profile: Option<String>,
}

/// One device profile in one kernel's projected ranking.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RankRow {
    /// Kernel function name.
    pub kernel: String,
    /// Position in the kernel's ranking (1 = projected fastest), by mean rank.
    pub rank: u64,
    /// Device profile name.
    pub device: String,
    /// Launches projected on this profile.
    pub launches: u64,
    /// Mean projected time, ns.
    pub projected_ns: Option<f64>,
    /// Launches for which this profile was the projected best.
    pub best: u64,
    /// True for the profile of the app's own device.
    pub own: bool,
    /// On the app's own profile: the measured native mean time, ns.
    pub measured_ns: Option<f64>,
}

/// Byte comparison of two output files.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct OutputCheck {
    /// How the files were compared (`cmp`: byte for byte).
    pub check: String,
    /// First file.
    pub a: String,
    /// Second file.
    pub b: String,
    /// Size of the first file, bytes.
    pub a_bytes: Option<u64>,
    /// Size of the second file, bytes.
    pub b_bytes: Option<u64>,
    /// True when both files were read and are byte-identical.
    pub identical: bool,
    /// Offset of the first differing byte (the shorter length when one is a prefix).
    pub first_difference: Option<u64>,
    /// Why a file could not be read.
    pub error: Option<String>,
}

impl OutputCheck {
    /// Compares two files byte for byte; an unreadable file gives `identical: false` and an
    /// `error`.
    pub fn compare(a: &Path, b: &Path) -> OutputCheck {
        let mut c = OutputCheck {
            check: "cmp".into(),
            a: a.display().to_string(),
            b: b.display().to_string(),
            ..Default::default()
        };
        let read = |p: &Path| std::fs::read(p).map_err(|e| format!("{}: {e}", p.display()));
        match (read(a), read(b)) {
            (Ok(x), Ok(y)) => {
                c.a_bytes = Some(x.len() as u64);
                c.b_bytes = Some(y.len() as u64);
                c.first_difference = x
                    .iter()
                    .zip(&y)
                    .position(|(p, q)| p != q)
                    .or_else(|| (x.len() != y.len()).then(|| x.len().min(y.len())))
                    .map(|i| i as u64);
                c.identical = c.first_difference.is_none();
            }
            (x, y) => {
                c.error = [x.err(), y.err()]
                    .into_iter()
                    .flatten()
                    .reduce(|p, q| format!("{p}; {q}"));
            }
        }
        c
    }

    /// One-word verdict with detail: `identical`, `DIFFERENT at byte N`, `ERROR ...`.
    pub fn verdict(&self) -> String {
        if let Some(e) = &self.error {
            format!("ERROR {e}")
        } else if self.identical {
            "identical".into()
        } else {
            format!("DIFFERENT at byte {}", self.first_difference.unwrap_or(0))
        }
    }
}

/// The devices view of a set of logs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DevicesView {
    /// Log files, as given.
    pub files: Vec<String>,
    /// Launch records read, over all files.
    pub records: u64,
    /// Launches per mode.
    pub modes: BTreeMap<String, u64>,
    /// Balance devices seen in split launches: `index` -> name.
    pub devices: BTreeMap<String, String>,
    /// Per kernel, by total measured time (largest first).
    pub kernels: Vec<KernelDevices>,
    /// Balance-mode launches with a native match, over all kernels.
    pub matched: u64,
    /// Σ native mean / Σ balance-mode time over all matched launches.
    pub speedup: Option<f64>,
    /// Per kernel and profile, the projected ranking (kernels in the order of `kernels`).
    pub ranking: Vec<RankRow>,
    /// `--cmp A B`: the output files compared.
    pub output_check: Option<OutputCheck>,
}

/// For a launch that ran unchanged on the app's device, its tier: 0 for log mode and the
/// `single` scheduler, 1 for project mode (whose emulation runs on the host CPU beside the
/// launch, which slows CPU devices down: used only where no tier-0 launch exists).
fn native_tier(l: &Launch) -> Option<usize> {
    match &l.schedule {
        Some(s) => (s.scheduler.as_deref() == Some("single")).then_some(0),
        None if l.mode == "log" => Some(0),
        None if l.mode == "project" => Some(1),
        None => None,
    }
}

/// True for a balance-mode launch (split, or forwarded with a fallback reason).
fn is_balance(l: &Launch) -> bool {
    l.is_balanced()
}

fn split(s: &Schedule) -> bool {
    s.fallback.is_none() && !s.chunks.is_empty()
}

#[derive(Default)]
struct Acc {
    /// per tier ([`native_tier`]): launches, Σ ns, launches per device
    native: [(u64, f64, BTreeMap<String, u64>); 2],
    balance_n: u64,
    balance_timed: u64,
    balance_sum: f64,
    split_n: u64,
    kept_whole: BTreeMap<String, u64>,
    share_sum: BTreeMap<String, f64>,
    matched: u64,
    base_sum: f64,
    matched_sum: f64,
    own: BTreeMap<String, u64>,
    /// profile -> (launches, Σ projected, Σ rank, best count)
    proj: BTreeMap<String, (u64, f64, f64, u64)>,
    total_ns: u64,
}

/// Builds the devices view of `logs` (one application, any modes).
pub fn build(logs: &[LoadedLog]) -> DevicesView {
    let mut base = [Baseline::default(), Baseline::default()];
    for log in logs {
        for (tier, b) in base.iter_mut().enumerate() {
            b.add_where(&log.launches, |l| native_tier(l) == Some(tier));
        }
    }
    let mut view = DevicesView {
        files: logs.iter().map(|l| l.name.clone()).collect(),
        ..Default::default()
    };
    let mut map: BTreeMap<String, Acc> = BTreeMap::new();
    let (mut all_base, mut all_bal) = (0.0, 0.0);
    for l in logs.iter().flat_map(|l| l.launches.iter()) {
        view.records += 1;
        *view.modes.entry(l.mode.to_string()).or_default() += 1;
        let a = map.entry(l.label.clone()).or_default();
        a.total_ns += l.measured_ns().unwrap_or(0);
        if let (Some(tier), Some(ns)) = (native_tier(l), l.measured_ns()) {
            let n = &mut a.native[tier];
            n.0 += 1;
            n.1 += ns as f64;
            let d = l.device_label();
            if !d.is_empty() {
                *n.2.entry(d).or_default() += 1;
            }
        }
        if is_balance(l) {
            a.balance_n += 1;
            if let Some(ns) = l.measured_ns() {
                a.balance_timed += 1;
                a.balance_sum += ns as f64;
                let native = base[0]
                    .get(&l.label, &l.global)
                    .or_else(|| base[1].get(&l.label, &l.global));
                if let Some((mean, _)) = native {
                    a.matched += 1;
                    a.base_sum += mean;
                    a.matched_sum += ns as f64;
                    all_base += mean;
                    all_bal += ns as f64;
                    view.matched += 1;
                }
            }
            if let Some(reason) = l.schedule.as_ref().and_then(|s| s.fallback.as_ref()) {
                *a.kept_whole.entry(reason.to_string()).or_default() += 1;
            }
            if let Some(s) = l.schedule.as_ref().filter(|s| split(s)) {
                a.split_n += 1;
                for (i, share) in schedule_shares(s).into_iter().enumerate() {
                    let (index, name) = s.devices.get(i).map_or_else(
                        || (format!("#{i}"), String::new()),
                        |d| {
                            let ix = if d.index.is_empty() {
                                format!("#{i}")
                            } else {
                                d.index.clone()
                            };
                            (ix, d.name.clone())
                        },
                    );
                    view.devices.entry(index.clone()).or_insert(name);
                    *a.share_sum.entry(index).or_default() += share;
                }
            }
        }
        if let Some(p) = &l.projection {
            if let Some(own) = &p.launch_device_profile {
                *a.own.entry(own.clone()).or_default() += 1;
            }
            let best = p.best_device();
            for d in &p.set.devices {
                let e = a.proj.entry(d.device.clone()).or_default();
                e.0 += 1;
                e.1 += d.projected_ns;
                e.2 += f64::from(d.rank);
                if best.as_deref() == Some(d.device.as_str()) {
                    e.3 += 1;
                }
            }
        }
    }
    let most = |m: &BTreeMap<String, u64>| {
        m.iter()
            .max_by(|x, y| x.1.cmp(y.1).then(y.0.cmp(x.0)))
            .map(|(k, _)| k.clone())
    };
    let mut order: Vec<(String, Acc)> = map.into_iter().collect();
    order.sort_by(|x, y| y.1.total_ns.cmp(&x.1.total_ns).then(x.0.cmp(&y.0)));
    for (kernel, a) in order {
        let tier = usize::from(a.native[0].0 == 0);
        let (native_n, native_sum, native_devices) = &a.native[tier];
        let native_mean = (*native_n > 0).then(|| native_sum / *native_n as f64);
        let own = most(&a.own);
        // ranking: by mean rank, then mean projected time, then name
        let mut profs: Vec<(String, (u64, f64, f64, u64))> = a.proj.into_iter().collect();
        let mean_rank = |p: &(u64, f64, f64, u64)| p.2 / p.0.max(1) as f64;
        profs.sort_by(|x, y| {
            mean_rank(&x.1)
                .total_cmp(&mean_rank(&y.1))
                .then((x.1 .1 / x.1 .0.max(1) as f64).total_cmp(&(y.1 .1 / y.1 .0.max(1) as f64)))
                .then(x.0.cmp(&y.0))
        });
        let best = profs
            .iter()
            .enumerate()
            .filter(|(_, p)| p.1 .3 > 0)
            .max_by(|x, y| x.1 .1 .3.cmp(&y.1 .1 .3).then(y.0.cmp(&x.0)))
            .map(|(_, p)| p.0.clone());
        for (i, (dev, (n, sum, _, b))) in profs.into_iter().enumerate() {
            let is_own = own.as_deref() == Some(dev.as_str());
            view.ranking.push(RankRow {
                kernel: kernel.clone(),
                rank: i as u64 + 1,
                device: dev,
                launches: n,
                projected_ns: (n > 0).then(|| sum / n as f64),
                best: b,
                own: is_own,
                measured_ns: if is_own { native_mean } else { None },
            });
        }
        view.kernels.push(KernelDevices {
            kernel,
            native_launches: *native_n,
            native_mode: (*native_n > 0).then(|| ["log", "project"][tier].to_string()),
            native_mean_ns: native_mean,
            native_device: most(native_devices),
            balance_launches: a.balance_n,
            split_launches: a.split_n,
            balance_mean_ns: (a.balance_timed > 0).then(|| a.balance_sum / a.balance_timed as f64),
            kept_whole: a.kept_whole,
            matched: a.matched,
            speedup: (a.matched > 0 && a.matched_sum > 0.0).then(|| a.base_sum / a.matched_sum),
            shares: a
                .share_sum
                .into_iter()
                .map(|(d, s)| (d, s / a.split_n.max(1) as f64))
                .collect(),
            projected_best: best,
            own_profile: own,
        });
    }
    // a device absent from some split launches of a kernel still gets a 0 share there
    let devs: Vec<String> = view.devices.keys().cloned().collect();
    for k in &mut view.kernels {
        if k.split_launches > 0 {
            for d in &devs {
                k.shares.entry(d.clone()).or_insert(0.0);
            }
        }
    }
    view.speedup = (view.matched > 0 && all_bal > 0.0).then(|| all_base / all_bal);
    view
}

/// The `devices` table: one row per kernel, a `share INDEX` column per balance device, and an
/// `all kernels` footer (launch counts and the overall speedup).
pub fn devices_table(v: &DevicesView) -> Table {
    let mut cols = vec![
        col("kernel", "kernel", Kind::Text),
        col("native n", "native_launches", Kind::Int),
        col("device", "native_device", Kind::Text),
        col("native us", "native_mean_ns", Kind::Us),
        col("balance n", "balance_launches", Kind::Int),
        col("split", "split_launches", Kind::Int),
        col("balance us", "balance_mean_ns", Kind::Us),
        col("speedup", "speedup", Kind::Ratio),
    ];
    for d in v.devices.keys() {
        cols.push(col(format!("share {d}"), format!("share {d}"), Kind::Pct));
    }
    cols.push(col("projected best", "projected_best", Kind::Text));
    let mut t = Table::new("devices", cols);
    for k in &v.kernels {
        let mut row: Vec<Cell> = vec![
            k.kernel.clone().into(),
            k.native_launches.into(),
            k.native_device.clone().into(),
            k.native_mean_ns.into(),
            k.balance_launches.into(),
            k.split_launches.into(),
            k.balance_mean_ns.into(),
            k.speedup.into(),
        ];
        for d in v.devices.keys() {
            row.push(k.shares.get(d).copied().into());
        }
        row.push(k.projected_best.clone().into());
        t.rows.push(row);
    }
    let mut foot: Vec<Cell> = vec![
        "all kernels".into(),
        v.kernels
            .iter()
            .map(|k| k.native_launches)
            .sum::<u64>()
            .into(),
        Cell::None,
        Cell::None,
        v.kernels
            .iter()
            .map(|k| k.balance_launches)
            .sum::<u64>()
            .into(),
        v.kernels
            .iter()
            .map(|k| k.split_launches)
            .sum::<u64>()
            .into(),
        Cell::None,
        v.speedup.into(),
    ];
    foot.extend(v.devices.keys().map(|_| Cell::None));
    foot.push(Cell::None);
    t.footer = Some(foot);
    t
}

/// The profiles of the ranking, fastest first by mean position over the kernels.
pub fn profiles_in_order(v: &DevicesView) -> Vec<String> {
    let mut pos: BTreeMap<&str, (f64, u64)> = BTreeMap::new();
    for r in &v.ranking {
        let e = pos.entry(&r.device).or_default();
        e.0 += r.rank as f64;
        e.1 += 1;
    }
    let mut p: Vec<(&str, f64)> = pos
        .into_iter()
        .map(|(d, (s, n))| (d, s / n.max(1) as f64))
        .collect();
    p.sort_by(|x, y| x.1.total_cmp(&y.1).then(x.0.cmp(y.0)));
    p.into_iter().map(|(d, _)| d.to_string()).collect()
}

/// The `projected ranking` table: one row per projected kernel, the projected-best profile,
/// the app's own profile with its rank and the measured native time, then one column per
/// profile with its mean projected time (columns fastest first over all kernels; the rank of
/// each profile per kernel is in the JSON output's `ranking`).
pub fn ranking_table(v: &DevicesView) -> Table {
    let profiles = profiles_in_order(v);
    let mut cols = vec![
        col("kernel", "kernel", Kind::Text),
        col("best", "projected_best", Kind::Text),
        col("app's profile", "app_profile", Kind::Text),
        col("its rank", "app_profile_rank", Kind::Int),
        col("measured us", "measured_ns", Kind::Us),
    ];
    for p in &profiles {
        cols.push(col(
            format!("{p} us"),
            format!("projected_ns {p}"),
            Kind::Us,
        ));
    }
    let mut t = Table::new("projected ranking", cols);
    for k in &v.kernels {
        let rows: Vec<&RankRow> = v.ranking.iter().filter(|r| r.kernel == k.kernel).collect();
        if rows.is_empty() {
            continue;
        }
        let own = rows.iter().find(|r| r.own);
        let mut row: Vec<Cell> = vec![
            k.kernel.clone().into(),
            k.projected_best.clone().into(),
            k.own_profile.clone().into(),
            own.map(|r| r.rank).into(),
            k.native_mean_ns.into(),
        ];
        for p in &profiles {
            row.push(
                rows.iter()
                    .find(|r| &r.device == p)
                    .and_then(|r| r.projected_ns)
                    .into(),
            );
        }
        t.rows.push(row);
    }
    t
}

/// The `kept whole` table: per kernel and fallback reason, the balance-mode launches that
/// were not split (empty when every balance-mode launch was split).
pub fn kept_whole_table(v: &DevicesView) -> Table {
    let mut t = Table::new(
        "kept whole",
        vec![
            col("kernel", "kernel", Kind::Text),
            col("launches", "launches", Kind::Int),
            col("reason", "reason", Kind::Text),
        ],
    );
    for k in &v.kernels {
        for (reason, n) in &k.kept_whole {
            t.rows.push(vec![
                k.kernel.clone().into(),
                (*n).into(),
                reason.clone().into(),
            ]);
        }
    }
    t
}

/// The `output check` table (one row), when `--cmp` was given.
pub fn output_table(c: &OutputCheck) -> Table {
    let mut t = Table::new(
        "output check",
        vec![
            col("check", "check", Kind::Text),
            col("A", "a", Kind::Text),
            col("B", "b", Kind::Text),
            col("bytes A", "a_bytes", Kind::Int),
            col("bytes B", "b_bytes", Kind::Int),
            col("result", "result", Kind::Text),
        ],
    );
    t.rows.push(vec![
        "cmp (byte for byte)".into(),
        c.a.clone().into(),
        c.b.clone().into(),
        c.a_bytes.into(),
        c.b_bytes.into(),
        c.verdict().into(),
    ]);
    t
}

/// The tables of the view: `devices`, `kept whole` (when a balance-mode launch was not
/// split), `projected ranking` (when any launch was projected), `output check` (with
/// `--cmp`).
pub fn tables(v: &DevicesView) -> Vec<Table> {
    let mut out = vec![devices_table(v)];
    for t in [kept_whole_table(v), ranking_table(v)] {
        if !t.rows.is_empty() {
            out.push(t);
        }
    }
    if let Some(c) = &v.output_check {
        out.push(output_table(c));
    }
    out
}

/// The text header: files, records per mode, balance devices.
pub fn header(v: &DevicesView) -> String {
    let modes: Vec<String> = v.modes.iter().map(|(m, n)| format!("{m}:{n}")).collect();
    let mut s = format!(
        "clprism report --devices: {}\nrecords: {}  modes: {}\n",
        v.files.join(" "),
        v.records,
        if modes.is_empty() {
            "-".to_string()
        } else {
            modes.join(" ")
        }
    );
    if !v.devices.is_empty() {
        let d: Vec<String> = v.devices.iter().map(|(i, n)| format!("{i} {n}")).collect();
        s.push_str(&format!("balance devices: {}\n", d.join(", ")));
    }
    s.push_str(
        "native: launches run unchanged on the app's device (log mode; project mode where a \
         kernel has no log-mode launch); balance: balance-mode launches; speedup: \
         native/balance time of the same kernel and size\n\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::load::parse_log;

    const LOG: &str = r#"{"kernel":"k","mode":"log","global":[64],"device":{"index":"0:0","name":"a"},"device_ns":300}
{"kernel":"k","mode":"project","global":[64],"device":{"index":"0:0","name":"a"},"device_ns":100,"projection":{"devices":[{"device":"gpu","t_compute_ns":1.0,"t_global_ns":10.0,"t_local_ns":0.0,"bound":"global","projected_ns":10.0,"rank":1},{"device":"cpu","t_compute_ns":1.0,"t_global_ns":250.0,"t_local_ns":0.0,"bound":"global","projected_ns":250.0,"rank":2}],"launch_device_profile":"cpu"}}
{"kernel":"k","mode":"balance","global":[64],"schedule":{"scheduler":"boyer","devices":[{"index":"0:0","name":"a"},{"index":"0:1","name":"b"}],"chunks":[{"device":0,"first_wg":0,"count":1},{"device":1,"first_wg":1,"count":3}],"work_groups":4,"wall_ns":100}}
{"kernel":"k","mode":"balance","global":[64],"device_ns":200,"schedule":{"scheduler":"boyer","fallback":"one work-group"}}
{"kernel":"j","mode":"balance","global":[8],"schedule":{"scheduler":"boyer","devices":[{"index":"0:1","name":"b"}],"chunks":[{"device":0,"first_wg":0,"count":2}],"work_groups":2,"wall_ns":5}}
"#;

    #[test]
    fn one_row_per_kernel_with_native_balance_shares_and_ranking() {
        let v = build(&[parse_log("t", LOG)]);
        assert_eq!(v.kernels.len(), 2);
        let k = &v.kernels[0];
        assert_eq!(k.kernel, "k");
        // the project-mode launch counts only where there is no log-mode one
        assert_eq!((k.native_launches, k.native_mean_ns), (1, Some(300.0)));
        assert_eq!(k.native_mode.as_deref(), Some("log"));
        assert_eq!(k.native_device.as_deref(), Some("0:0"));
        assert_eq!((k.balance_launches, k.split_launches), (2, 1));
        assert_eq!(k.kept_whole.values().sum::<u64>(), 1);
        assert_eq!(kept_whole_table(&v).rows.len(), 1);
        assert_eq!(k.balance_mean_ns, Some(150.0));
        // (300 + 300) / (100 + 200)
        assert_eq!(k.speedup, Some(2.0));
        assert_eq!(k.shares["0:0"], 0.25);
        assert_eq!(k.shares["0:1"], 0.75);
        assert_eq!(k.projected_best.as_deref(), Some("gpu"));
        assert_eq!(k.own_profile.as_deref(), Some("cpu"));
        let j = &v.kernels[1];
        assert_eq!(j.shares["0:1"], 1.0);
        assert_eq!(
            j.shares["0:0"], 0.0,
            "a device absent from a kernel's splits has 0"
        );
        assert_eq!(j.speedup, None);
        assert_eq!(v.ranking.len(), 2);
        assert_eq!(
            (v.ranking[0].rank, v.ranking[0].device.as_str()),
            (1, "gpu")
        );
        assert_eq!(v.ranking[1].measured_ns, Some(300.0));
        assert!(v.ranking[1].own && !v.ranking[0].own);
        let t = devices_table(&v).to_text();
        assert!(t.contains("share 0:0") && t.contains("share 0:1"), "{t}");
        assert!(t.contains("all kernels"), "{t}");
        let r = ranking_table(&v).to_text();
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines.len(), 3, "{r}");
        assert!(lines[1].ends_with("gpu us  cpu us"), "{r}");
        let cells: Vec<&str> = lines[2].split_whitespace().collect();
        assert_eq!(cells, ["k", "gpu", "cpu", "2", "0.3", "0.0", "0.2"], "{r}");
    }

    #[test]
    fn output_check_finds_the_first_difference() {
        let d = std::env::temp_dir().join(format!("clprism-devices-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        let (a, b, c) = (d.join("a"), d.join("b"), d.join("c"));
        std::fs::write(&a, b"abcd").unwrap();
        std::fs::write(&b, b"abcd").unwrap();
        std::fs::write(&c, b"abxd").unwrap();
        assert!(OutputCheck::compare(&a, &b).identical);
        let x = OutputCheck::compare(&a, &c);
        assert_eq!((x.identical, x.first_difference), (false, Some(2)));
        let y = OutputCheck::compare(&a, &d.join("missing"));
        assert!(!y.identical && y.error.is_some());
        assert!(y.verdict().starts_with("ERROR"));
        let _ = std::fs::remove_dir_all(&d);
    }
}
