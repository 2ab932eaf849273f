//! End-of-run summary: one row per kernel name with launches and device time, and in
//! project mode the projected ranking of the devices per kernel (Panwar et al. §IV-D)
//! beside the measured time, with the mean emulation time (Panwar §IV-C).

use super::LaunchRecord;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;

/// Device-time statistics of one kernel name.
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
}

/// Aggregates launch records per kernel name.
#[derive(Debug, Default)]
pub struct Summary {
    /// Per kernel name.
    pub kernels: BTreeMap<String, KernelTotals>,
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
        let k = self.kernels.entry(rec.kernel.to_string()).or_default();
        k.launches += 1;
        if let Some(ns) = rec.device_ns {
            if k.timed == 0 || ns < k.min_ns {
                k.min_ns = ns;
            }
            k.max_ns = k.max_ns.max(ns);
            k.timed += 1;
            k.total_ns += ns;
        }
        let c = match (&rec.shared_extra, rec.extra.is_empty()) {
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
            .kernels
            .iter()
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
            let measured = if k.timed > 0 {
                format!("{:.1}", k.total_ns as f64 / k.timed as f64 / 1e3)
            } else {
                "-".into()
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

    /// Device time of a kernel in ns: the measured sum, or, when only some launches were
    /// timed (`CLPRISM_DEVICE_TIMING=sample:N`), the mean of the timed ones × launches.
    /// The flag says whether it is extrapolated.
    fn total_ns(k: &KernelTotals) -> (f64, bool) {
        if k.timed > 0 && k.timed < k.launches {
            (k.total_ns as f64 / k.timed as f64 * k.launches as f64, true)
        } else {
            (k.total_ns as f64, false)
        }
    }

    /// True when no launch was recorded.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// Renders the table: kernel, launches, total/mean/min/max device time (ms, µs) and the
    /// share of the total device time, sorted by total time. Totals extrapolated from sampled
    /// launches are marked `~` and explained under the table.
    pub fn render(&self) -> String {
        let grand: f64 = self.kernels.values().map(|k| Self::total_ns(k).0).sum();
        let mut rows: Vec<_> = self.kernels.iter().collect();
        rows.sort_by(|a, b| {
            Self::total_ns(b.1)
                .0
                .total_cmp(&Self::total_ns(a.1).0)
                .then(a.0.cmp(b.0))
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
            "{:<w$} {:>8} {:>12} {:>11} {:>11} {:>11} {:>7}",
            "kernel", "launches", "total ms", "mean us", "min us", "max us", "share"
        );
        let (mut timed, mut launches, mut approx_any) = (0u64, 0u64, false);
        for (name, k) in rows {
            let mean = if k.timed > 0 {
                k.total_ns as f64 / k.timed as f64 / 1e3
            } else {
                f64::NAN
            };
            let (total, approx) = Self::total_ns(k);
            approx_any |= approx;
            timed += k.timed;
            launches += k.launches;
            let share = if grand > 0.0 {
                100.0 * total / grand
            } else {
                0.0
            };
            let total = format!("{}{:.3}", if approx { "~" } else { "" }, total / 1e6);
            let _ = writeln!(
                s,
                "{:<w$} {:>8} {:>12} {:>11.1} {:>11.1} {:>11.1} {:>6.1}%",
                name,
                k.launches,
                total,
                mean,
                k.min_ns as f64 / 1e3,
                k.max_ns as f64 / 1e3,
                share
            );
        }
        let _ = write!(
            s,
            "{:<w$} {:>8} {:>12}",
            "total",
            launches,
            format!("{}{:.3}", if approx_any { "~" } else { "" }, grand / 1e6)
        );
        if approx_any {
            let _ = write!(
                s,
                "\n~ extrapolated: mean of the {timed} timed launches x launches \
                 (CLPRISM_DEVICE_TIMING)"
            );
        }
        s
    }
}
