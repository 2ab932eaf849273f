//! End-of-run summary: one row per kernel name with launches and device time.

use super::LaunchRecord;
use std::collections::BTreeMap;
use std::fmt::Write as _;

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
}

/// Aggregates launch records per kernel name.
#[derive(Debug, Default)]
pub struct Summary {
    /// Per kernel name.
    pub kernels: BTreeMap<String, KernelTotals>,
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
    }

    /// True when no launch was recorded.
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// Renders the table: kernel, launches, total/mean/min/max device time (ms, µs) and the
    /// share of the total device time, sorted by total time.
    pub fn render(&self) -> String {
        let grand: u64 = self.kernels.values().map(|k| k.total_ns).sum();
        let mut rows: Vec<_> = self.kernels.iter().collect();
        rows.sort_by(|a, b| b.1.total_ns.cmp(&a.1.total_ns).then(a.0.cmp(b.0)));
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
        for (name, k) in rows {
            let mean = if k.timed > 0 {
                k.total_ns as f64 / k.timed as f64 / 1e3
            } else {
                f64::NAN
            };
            let share = if grand > 0 {
                100.0 * k.total_ns as f64 / grand as f64
            } else {
                0.0
            };
            let _ = writeln!(
                s,
                "{:<w$} {:>8} {:>12.3} {:>11.1} {:>11.1} {:>11.1} {:>6.1}%",
                name,
                k.launches,
                k.total_ns as f64 / 1e6,
                mean,
                k.min_ns as f64 / 1e3,
                k.max_ns as f64 / 1e3,
                share
            );
        }
        let _ = write!(
            s,
            "{:<w$} {:>8} {:>12.3}",
            "total",
            self.kernels.values().map(|k| k.launches).sum::<u64>(),
            grand as f64 / 1e6
        );
        s
    }
}
