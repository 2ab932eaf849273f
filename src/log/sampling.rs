//! Adaptive device timing (`CLPRISM_DEVICE_TIMING=adaptive`, the default): which launches of
//! a kernel get a profiling event, and how the summary estimates a kernel's total device time
//! with a confidence interval from the timed ones.
//!
//! # The rule
//!
//! Per kernel (program hash and function name), launch `t` (1, 2, …) is timed with
//! probability
//!
//! ```text
//! π_t = min(1, c / t),   c = max(NEW, n₀ / 2),   n₀ = (z · CV / ε)²
//! ```
//!
//! drawn independently per launch (Poisson sampling) before the launch runs, where `ε` is the
//! target relative half-width of the 95 % confidence interval (`z` = 1.96) of the kernel's
//! total device time (5 % by default), `CV` the coefficient of variation of the device times
//! timed so far and `NEW` = 32: the first `c` launches (at least the first 32, "while the
//! kernel is new") are all timed. `n₀` is Cochran's sample size for estimating a total to a
//! relative error `ε` by simple random sampling (Cochran, *Sampling Techniques*, 3rd ed.,
//! 1977, §4.4, eq. 4.2). With `π_t = c/t` the variance of the estimated total `T̂` over `N`
//! launches is about `σ² Σ_{t>c} (t/c − 1) ≈ σ² N² / (2c)`, so its relative half-width
//! `z · CV / √(2c)` equals `ε` at `c = n₀ / 2` whatever `N` is, and about
//! `c · (1 + ln(N / c))` launches are timed: the sample keeps spreading over the whole run
//! (a kernel whose time drifts is still sampled late), at a rate that falls as `c / t`.
//! Until 8 timed launches have completed, `CV` is taken as 1/3 ([`PRIOR_CV`]).
//!
//! # The estimate
//!
//! The summary weights each timed launch by `1/π` (the Hájek estimator of a total with a known
//! population size `N`; Särndal, Swensson & Wretman, *Model Assisted Survey Sampling*, 1992,
//! §5.7): `T̂ = N · Σ(x/π) / Σ(1/π)`, with the linearized variance for Poisson sampling
//! `V̂ = (N / N̂)² Σ (1 − π)/π² · (x − ȳ)²` (`N̂ = Σ 1/π`, `ȳ = T̂ / N`), and prints
//! `T̂ ± 1.96 √V̂`. Launches timed with `π = 1` add no variance, so with every launch timed
//! the total is exact. Because `π_t` depends only on launches before `t`, never on launch
//! `t`'s own time, each `1/π` weight is unbiased (the sample is drawn before the time is
//! known), also when `CV` is re-estimated along the way.
//!
//! Launches that balance mode measures itself are always timed, and so is every launch in
//! project mode (the projections are compared with measured times).

use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// Launches of a kernel timed while it is new (also the smallest `c`).
pub const NEW: f64 = 32.0;
/// The coefficient of variation assumed until [`PILOT`] timed launches have completed.
pub const PRIOR_CV: f64 = 1.0 / 3.0;
/// Completed timed launches needed before their CV replaces the prior.
pub const PILOT: u64 = 8;
/// Normal quantile of a two-sided 95 % interval.
pub const Z95: f64 = 1.959_964;

/// One kernel's sampling state, shared by the launching threads (which read `c` and count
/// launches) and the log writer (which adds each completed timed launch).
#[derive(Debug)]
pub struct Sampler {
    /// Launches so far.
    launches: AtomicU64,
    /// `c` of the rule, f64 bits.
    c: AtomicU64,
    /// Target relative half-width ε.
    target: f64,
    /// Device times of the completed timed launches (Welford's running mean and M2).
    stats: Mutex<Running>,
}

#[derive(Debug, Default)]
struct Running {
    /// The kernel's first completed timed launch was seen (and left out, see `observe`).
    first_seen: bool,
    n: u64,
    mean: f64,
    m2: f64,
}

impl Sampler {
    /// A sampler aiming at a 95 % half-width of `target` (relative) on the kernel's total.
    pub fn new(target: f64) -> Sampler {
        Sampler {
            launches: AtomicU64::new(0),
            c: AtomicU64::new(Self::c_for(PRIOR_CV, target).to_bits()),
            target,
            stats: Mutex::new(Running::default()),
        }
    }

    /// Counts one launch and draws whether it is timed; returns (timed, π).
    pub fn draw(&self) -> (bool, f64) {
        let t = self.launches.fetch_add(1, Ordering::Relaxed) + 1;
        let p = Self::probability(f64::from_bits(self.c.load(Ordering::Relaxed)), t);
        (p >= 1.0 || uniform() < p, p)
    }

    /// `π_t = min(1, c/t)`, and 1 for the first [`NEW`] launches.
    pub fn probability(c: f64, t: u64) -> f64 {
        let t = t as f64;
        if t <= NEW.max(c) {
            1.0
        } else {
            c / t
        }
    }

    /// `c` for a coefficient of variation `cv` and target `target`.
    pub fn c_for(cv: f64, target: f64) -> f64 {
        let n0 = (Z95 * cv / target).powi(2);
        (n0 / 2.0).max(NEW)
    }

    /// Adds the device time of a completed timed launch and updates `c` (log writer).
    pub fn observe(&self, ns: u64) {
        let mut s = self.stats.lock();
        if !s.first_seen {
            // the kernel's first launch pays cold caches and the driver's first-use work
            // (on an H100 many times a warm launch): its time would inflate the CV that
            // plans the sample for a long while; it still counts in the estimated total
            s.first_seen = true;
            return;
        }
        let x = ns as f64;
        s.n += 1;
        let d = x - s.mean;
        s.mean += d / s.n as f64;
        s.m2 += d * (x - s.mean);
        if s.n >= PILOT && s.mean > 0.0 {
            let cv = (s.m2 / (s.n - 1) as f64).sqrt() / s.mean;
            let c = Self::c_for(cv, self.target);
            self.c.store(c.to_bits(), Ordering::Relaxed);
        }
    }
}

/// A uniform draw in [0, 1) from a per-thread xorshift64* generator.
fn uniform() -> f64 {
    thread_local! {
        static STATE: Cell<u64> = const { Cell::new(0) };
    }
    STATE.with(|s| {
        let mut x = s.get();
        if x == 0 {
            // seed: thread id and clock, never 0
            x = (crate::log::thread_id() ^ crate::log::unix_ns().rotate_left(17))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        s.set(x);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    })
}

/// The sampler of kernel `name` of program `program` (one per pair in the process, so that
/// kernel objects created again and again for the same kernel share one).
pub fn sampler(program: &Arc<str>, name: &Arc<str>, target: f64) -> Arc<Sampler> {
    type Map = FxHashMap<Arc<str>, FxHashMap<Arc<str>, Arc<Sampler>>>;
    static MAP: once_cell::sync::Lazy<Mutex<Map>> =
        once_cell::sync::Lazy::new(|| Mutex::new(Map::default()));
    let mut m = MAP.lock();
    if let Some(s) = m.get(&**program).and_then(|k| k.get(&**name)) {
        return s.clone();
    }
    m.entry(program.clone())
        .or_default()
        .entry(name.clone())
        .or_insert_with(|| Arc::new(Sampler::new(target)))
        .clone()
}

/// Hájek estimate of a kernel's total device time from its timed launches (see the module
/// documentation), accumulated one launch at a time.
#[derive(Debug, Default, Clone)]
pub struct Estimate {
    /// Launches in the population: timed (with a time) and untimed ones.
    pub population: u64,
    /// Σ 1/π over the timed launches.
    sum_w: f64,
    /// Σ x/π, x shifted by `shift`.
    sum_wx: f64,
    /// Σ (1−π)/π², Σ (1−π)/π² x, Σ (1−π)/π² x² (x shifted).
    sum_a: f64,
    sum_ax: f64,
    sum_axx: f64,
    /// The first timed value (shift against cancellation).
    shift: Option<f64>,
    /// Whether any timed launch had π < 1.
    pub sampled: bool,
}

impl Estimate {
    /// Adds an untimed launch (one that could have been timed).
    pub fn add_untimed(&mut self) {
        self.population += 1;
    }

    /// Adds a timed launch of device time `ns`, timed with probability `p`.
    pub fn add_timed(&mut self, ns: u64, p: f64) {
        let p = if p > 0.0 && p <= 1.0 { p } else { 1.0 };
        let shift = *self.shift.get_or_insert(ns as f64);
        let x = ns as f64 - shift;
        self.population += 1;
        self.sum_w += 1.0 / p;
        self.sum_wx += x / p;
        if p < 1.0 {
            self.sampled = true;
            let a = (1.0 - p) / (p * p);
            self.sum_a += a;
            self.sum_ax += a * x;
            self.sum_axx += a * x * x;
        }
    }

    /// Estimated mean device time per launch, ns (`None` without a timed launch).
    pub fn mean_ns(&self) -> Option<f64> {
        (self.sum_w > 0.0).then(|| self.sum_wx / self.sum_w + self.shift.unwrap_or(0.0))
    }

    /// Estimated total device time, ns, and the half-width of its 95 % confidence interval
    /// (0 when every launch was timed).
    pub fn total_ns(&self) -> Option<(f64, f64)> {
        let mean = self.mean_ns()?;
        let n = self.population as f64;
        let ybar = mean - self.shift.unwrap_or(0.0);
        let ss = (self.sum_axx - 2.0 * ybar * self.sum_ax + ybar * ybar * self.sum_a).max(0.0);
        let var = (n / self.sum_w).powi(2) * ss;
        Some((n * mean, Z95 * var.sqrt()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_launch_timed_is_exact() {
        let mut e = Estimate::default();
        for x in [10, 20, 30] {
            e.add_timed(x, 1.0);
        }
        assert_eq!(e.total_ns(), Some((60.0, 0.0)));
        assert!(!e.sampled);
    }

    #[test]
    fn probability_follows_the_rule() {
        assert_eq!(Sampler::probability(32.0, 1), 1.0);
        assert_eq!(Sampler::probability(32.0, 32), 1.0);
        assert_eq!(Sampler::probability(32.0, 64), 0.5);
        assert_eq!(Sampler::probability(100.0, 100), 1.0);
        assert_eq!(Sampler::probability(100.0, 400), 0.25);
        // CV 0.1 at 2 %: n0 = 96.04, c = 48
        assert!((Sampler::c_for(0.1, 0.02) - 48.02).abs() < 0.01);
        assert_eq!(Sampler::c_for(0.0, 0.02), NEW);
    }

    /// The rule on a synthetic kernel: the 95 % interval covers the true total in about 95 %
    /// of runs, its width is near the target, and few launches are timed.
    #[test]
    fn interval_covers_the_truth_at_the_target_width() {
        let (n, runs, target) = (20_000u64, 200, 0.02);
        let mut rng = 0x1234_5678_9abc_def1u64;
        let mut next = || {
            rng ^= rng >> 12;
            rng ^= rng << 25;
            rng ^= rng >> 27;
            (rng.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
        };
        let (mut covered, mut width, mut timed) = (0, 0.0, 0u64);
        for _ in 0..runs {
            // device times: mean 6000 ns, CV ~0.3 (uniform ±52 %) plus a slow drift
            let xs: Vec<u64> = (0..n)
                .map(|i| (6000.0 * (1.0 + 1.04 * (next() - 0.5)) + i as f64 * 0.05) as u64)
                .collect();
            let truth: f64 = xs.iter().map(|&x| x as f64).sum();
            let s = Sampler::new(target);
            let mut e = Estimate::default();
            for &x in &xs {
                let t = s.launches.fetch_add(1, Ordering::Relaxed) + 1;
                let p = Sampler::probability(f64::from_bits(s.c.load(Ordering::Relaxed)), t);
                if p >= 1.0 || next() < p {
                    s.observe(x);
                    e.add_timed(x, p);
                    timed += 1;
                } else {
                    e.add_untimed();
                }
            }
            let (tot, half) = e.total_ns().unwrap();
            covered += ((tot - truth).abs() <= half) as u32;
            width += half / tot;
        }
        let (cover, width, timed) = (
            covered as f64 / runs as f64,
            width / runs as f64,
            timed as f64 / runs as f64,
        );
        assert!(cover >= 0.9, "coverage {cover}");
        assert!(width < 1.3 * target, "mean relative half-width {width}");
        assert!(timed < 0.25 * n as f64, "timed {timed} of {n}");
    }
}
