//! End-of-run summary: one row per kernel (a name in one program: its source and build
//! options; a name in several programs is shown as `name#program`) with launches and device
//! time, and in
//! project mode the projected ranking of the devices per kernel (Panwar et al. §IV-D)
//! beside the measured time, with the mean emulation time (Panwar §IV-C).

use super::LaunchRecord;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;

/// Device-time statistics of one kernel (a name in one program).
#[derive(Debug, Default, Clone)]
pub struct KernelTotals {
    /// Launches logged (any status).
    pub launches: u64,
    /// Launches with a measured device time.
    pub timed: u64,
    /// Sum of device times, ns.
    pub total_ns: u64,
    /// Smallest device time, ns.
    pub min_ns: u64,
    /// Largest device time, ns.
    pub max_ns: u64,
    /// Project mode: work-groups emulated (not reused) for this kernel.
    pub emulations: u64,
    /// Sum of their emulation wall times, ns.
    pub emulation_ns: u64,
    /// Project mode: per profiled device, (sum of projected times in ns, launches).
    pub projected: BTreeMap<String, (f64, u64)>,
    /// Profile of the device the launches ran on (the last one seen).
    pub launch_profile: Option<String>,
    /// Estimate of the total device time from the timed launches, weighted by the
    /// probability each was timed with (`CLPRISM_DEVICE_TIMING`, [`super::sampling`]).
    pub estimate: super::sampling::Estimate,
}

/// Aggregates launch records per kernel.
#[derive(Debug, Default)]
pub struct Summary {
    /// Per kernel: (name, program).
    pub kernels: BTreeMap<(Arc<str>, Arc<str>), KernelTotals>,
    /// Project mode's contributions of shared attachments ([`super::SharedExtra`], one per
    /// reused result and device), read from the typed records once, not per launch.
    /// Keyed by the address of the `Arc` held beside it (so the address is not reused).
    shared: HashMap<usize, (Arc<super::SharedExtra>, Contribution)>,
}

/// What a launch's `emulation` and `projection` records add to its kernel's totals.
#[derive(Debug, Default, Clone)]
struct Contribution {
    /// Wall time of an emulation run for this launch (not reused), ns.
    emulation_ns: Option<u64>,
    /// (profile, projected ns) per projected device.
    projected: Vec<(String, f64)>,
    /// Profile of the launch's device.
    launch_profile: Option<String>,
}

impl Contribution {
    fn of(rec: &LaunchRecord) -> Contribution {
        let emulation_ns = rec
            .emulation()
            .filter(|e| !e.reused)
            .and_then(|e| e.stats.map(|s| s.emulation_ns));
        let (projected, launch_profile) = match rec.projection() {
            Some(p) => (
                p.set
                    .devices
                    .into_iter()
                    .map(|d| (d.device, d.projected_ns))
                    .collect(),
                p.launch_device_profile,
            ),
            None => (Vec::new(), None),
        };
        Contribution {
            emulation_ns,
            projected,
            launch_profile,
        }
    }
}

impl Summary {
    /// Adds one launch.
    pub fn add(&mut self, rec: &LaunchRecord) {
        // the kernel's row, without a new String per launch
        let k = self
            .kernels
            .entry((rec.kernel.clone(), rec.program.clone()))
            .or_default();
        k.launches += 1;
        if let Some(ns) = rec.device_ns {
            if k.timed == 0 || ns < k.min_ns {
                k.min_ns = ns;
            }
            k.max_ns = k.max_ns.max(ns);
            k.timed += 1;
            k.total_ns += ns;
            k.estimate.add_timed(ns, rec.timing_p.unwrap_or(1.0));
        } else if rec.status == "untimed" {
            k.estimate.add_untimed();
        }
        let c = match (&rec.shared_extra, rec.extra.is_empty()) {
            // log mode: nothing attached, nothing to add
            (None, true) => return,
            (Some(sh), true) => {
                &self
                    .shared
                    .entry(Arc::as_ptr(sh) as usize)
                    .or_insert_with(|| (sh.clone(), Contribution::of(rec)))
                    .1
            }
            _ => &Contribution::of(rec),
        };
        if let Some(ns) = c.emulation_ns {
            k.emulations += 1;
            k.emulation_ns += ns;
        }
        for (name, t) in &c.projected {
            let e = k.projected.entry(name.clone()).or_default();
            e.0 += t;
            e.1 += 1;
        }
        if let Some(l) = &c.launch_profile {
            k.launch_profile = Some(l.clone());
        }
    }

    /// Project mode: per kernel, the measured mean device time, the mean emulation time,
    /// the projected time on the launch device's profile, and the three devices with the
    /// smallest mean projected time. Empty when no launch carried a projection.
    pub fn render_projection(&self) -> String {
        let rows: Vec<_> = self
            .named()
            .into_iter()
            .filter(|(_, k)| !k.projected.is_empty() || k.emulations > 0)
            .collect();
        if rows.is_empty() {
            return String::new();
        }
        let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(6).max(6);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "clprism projection: mean projected device time per kernel, fastest first (us)"
        );
        let _ = writeln!(
            s,
            "{:<w$} {:>11} {:>9} {:>24}  ranking",
            "kernel", "measured us", "emu ms", "launch device projected"
        );
        for (name, k) in rows {
            let measured = match k.estimate.mean_ns() {
                Some(m) => format!("{:.1}", m / 1e3),
                None => "-".into(),
            };
            let emu = if k.emulations > 0 {
                format!("{:.2}", k.emulation_ns as f64 / k.emulations as f64 / 1e6)
            } else {
                "-".into()
            };
            let mean = |d: &str| k.projected.get(d).map(|(t, n)| t / *n as f64 / 1e3);
            let own = match &k.launch_profile {
                Some(l) => match mean(l) {
                    Some(t) => format!("{l} {t:.1}"),
                    None => format!("{l} -"),
                },
                None => "no profile".into(),
            };
            let mut ranked: Vec<(&String, f64)> = k
                .projected
                .iter()
                .map(|(d, (t, n))| (d, t / *n as f64 / 1e3))
                .collect();
            ranked.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(b.0)));
            let top: Vec<String> = ranked
                .iter()
                .take(3)
                .enumerate()
                .map(|(i, (d, t))| format!("{}. {d} {t:.1}", i + 1))
                .collect();
            let _ = writeln!(
                s,
                "{:<w$} {:>11} {:>9} {:>24}  {}",
                name,
                measured,
                emu,
                own,
                top.join(", ")
            );
        }
        s.pop();
        s
    }

    /// Device time of a kernel in ns: the measured sum when every launch that could be timed
    /// was, else the estimate from the timed ones (`CLPRISM_DEVICE_TIMING`), with the
    /// half-width of its 95 % confidence interval. The flag says whether it is estimated.
    fn total_ns(k: &KernelTotals) -> (f64, f64, bool) {
        match k.estimate.total_ns() {
            Some((t, half)) if k.estimate.population > k.timed => (t, half, true),
            _ => (k.total_ns as f64, 0.0, false),
        }
    }

    /// True when no launch was recorded.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// The kernels by the names their rows show ([`crate::log::schema::KernelLabels`]).
    fn named(&self) -> Vec<(String, &KernelTotals)> {
        let names =
            super::schema::KernelLabels::new(self.kernels.keys().map(|(k, p)| (&**k, &**p)));
        self.kernels
            .iter()
            .map(|((k, p), t)| (names.label(k, p), t))
            .collect()
    }

    /// The totals of the kernel a row names `name` (tests).
    pub fn kernel(&self, name: &str) -> Option<&KernelTotals> {
        self.named()
            .into_iter()
            .find_map(|(n, t)| (n == name).then_some(t))
    }

    /// Renders the table: kernel, launches, timed launches, total device time (ms) with the
    /// half-width of its 95 % confidence interval when estimated from a sample, mean/min/max
    /// (µs) and the share of the total device time, sorted by total time. Estimated totals
    /// are marked `~` and each gets a line under the table.
    pub fn render(&self) -> String {
        let grand: f64 = self.kernels.values().map(|k| Self::total_ns(k).0).sum();
        let mut rows = self.named();
        rows.sort_by(|a, b| {
            Self::total_ns(b.1)
                .0
                .total_cmp(&Self::total_ns(a.1).0)
                .then(a.0.cmp(&b.0))
        });
        let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(6).max(6);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "clprism summary (pid {}): device time per kernel",
            super::pid()
        );
        let _ = writeln!(
            s,
            "{:<w$} {:>8} {:>8} {:>12} {:>7} {:>11} {:>11} {:>11} {:>7}",
            "kernel",
            "launches",
            "timed",
            "total ms",
            "+-95%",
            "mean us",
            "min us",
            "max us",
            "share"
        );
        let (mut launches, mut grand_var, mut notes) = (0u64, 0.0f64, Vec::new());
        for (name, k) in rows {
            let mean = match k.estimate.mean_ns() {
                Some(m) => m / 1e3,
                None if k.timed > 0 => k.total_ns as f64 / k.timed as f64 / 1e3,
                None => f64::NAN,
            };
            let (total, half, approx) = Self::total_ns(k);
            launches += k.launches;
            // kernels are sampled independently: variances add
            grand_var += (half / super::sampling::Z95).powi(2);
            let share = if grand > 0.0 {
                100.0 * total / grand
            } else {
                0.0
            };
            let ci = if approx {
                let rel = if total > 0.0 {
                    100.0 * half / total
                } else {
                    0.0
                };
                notes.push(format!(
                    "~ {name}: timed {} of {}, total {:.3} ms +- {:.1} %",
                    k.timed,
                    k.estimate.population,
                    total / 1e6,
                    rel
                ));
                format!("{rel:.1}%")
            } else {
                "-".into()
            };
            let total = format!("{}{:.3}", if approx { "~" } else { "" }, total / 1e6);
            let _ = writeln!(
                s,
                "{:<w$} {:>8} {:>8} {:>12} {:>7} {:>11.1} {:>11.1} {:>11.1} {:>6.1}%",
                name,
                k.launches,
                k.timed,
                total,
                ci,
                mean,
                k.min_ns as f64 / 1e3,
                k.max_ns as f64 / 1e3,
                share
            );
        }
        let approx_any = !notes.is_empty();
        let grand_ci = if approx_any && grand > 0.0 {
            format!(
                "{:.1}%",
                100.0 * super::sampling::Z95 * grand_var.sqrt() / grand
            )
        } else {
            "-".into()
        };
        let _ = write!(
            s,
            "{:<w$} {:>8} {:>8} {:>12} {:>7}",
            "total",
            launches,
            self.kernels.values().map(|k| k.timed).sum::<u64>(),
            format!("{}{:.3}", if approx_any { "~" } else { "" }, grand / 1e6),
            grand_ci
        );
        if approx_any {
            let _ = write!(
                s,
                "\n~ estimated from the timed launches (CLPRISM_DEVICE_TIMING), each weighted by \
                 1/(probability it was timed); +- : half-width of the 95 % confidence interval"
            );
            for n in notes {
                let _ = write!(s, "\n{n}");
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(ns: Option<u64>, p: Option<f64>) -> LaunchRecord {
        LaunchRecord {
            schema: super::super::SCHEMA,
            seq: 0,
            time_ns: 0,
            pid: 1,
            thread: 1,
            mode: "log",
            kernel: "k".into(),
            program: "p".into(),
            work_dim: 1,
            global: vec![1].into(),
            local: None,
            offset: None,
            device: Arc::new(super::super::DeviceRef {
                index: "0:0".into(),
                name: "d".into(),
                kind: "cpu".into(),
                ..Default::default()
            }),
            status: if ns.is_some() { "complete" } else { "untimed" },
            error_code: None,
            device_ns: ns,
            queued_ns: None,
            timing_p: p,
            extra: Default::default(),
            shared_extra: None,
            device_times: None,
            timed: ns.is_some(),
            sampler: None,
            forwarded: None,
        }
    }

    #[test]
    fn every_launch_timed_is_exact_and_unmarked() {
        let mut s = Summary::default();
        for ns in [1000, 2000, 3000] {
            s.add(&rec(Some(ns), None));
        }
        let t = s.render();
        assert!(!t.contains('~'), "{t}");
        assert!(t.contains("0.006"), "{t}");
    }

    #[test]
    fn sampled_totals_are_weighted_and_carry_an_interval() {
        let mut s = Summary::default();
        // two launches timed for sure, then 1 in 4 of 8 launches: 2 timed, 6 untimed
        s.add(&rec(Some(1000), None));
        s.add(&rec(Some(1000), None));
        s.add(&rec(Some(2000), Some(0.25)));
        s.add(&rec(Some(3000), Some(0.25)));
        for _ in 0..6 {
            s.add(&rec(None, None));
        }
        let k = s.kernel("k").unwrap();
        let (tot, half) = k.estimate.total_ns().unwrap();
        // Hájek: N Σ(x/π)/Σ(1/π) = 10 · (1000+1000+8000+12000)/10 = 22000
        assert!((tot - 22000.0).abs() < 1e-6, "{tot}");
        assert!(half > 0.0);
        let t = s.render();
        assert!(t.contains("~ k: timed 4 of 10, total 0.022 ms +- "), "{t}");
    }
}
