//! The baselines Boyer compares against (dissertation §4.2, §4.5.1): static partition, chunk
//! self-scheduling (CSS), guided self-scheduling (GSS), trapezoid self-scheduling (TSS), and
//! a single device. All are self-contained policies over the shared `Core`; work returned by
//! a failed enqueue is reassigned to the remaining live devices. None of them abandons a
//! straggler (the paper's point in §4.5.6: a purely static scheduler waits forever on a
//! blocked device).

use super::{Action, Core};

/// Static partition (largest-remainder rounding) of `w` work-groups by non-negative
/// `fractions` (normalised by their sum; all-zero means equal shares). Sums to `w`.
pub fn static_partition(w: u64, fractions: &[f64]) -> Vec<u64> {
    let n = fractions.len();
    if n == 0 {
        return Vec::new();
    }
    let clean: Vec<f64> = fractions
        .iter()
        .map(|&f| if f.is_finite() && f > 0.0 { f } else { 0.0 })
        .collect();
    let s: f64 = clean.iter().sum();
    let shares: Vec<f64> = if s > 0.0 {
        clean.iter().map(|f| f / s * w as f64).collect()
    } else {
        vec![w as f64 / n as f64; n]
    };
    let mut out: Vec<u64> = shares.iter().map(|x| (x.floor() as u64).min(w)).collect();
    let mut sum: u64 = out.iter().sum();
    while sum > w {
        let i = (0..n).max_by_key(|&i| out[i]).unwrap_or(0);
        out[i] -= 1;
        sum -= 1;
    }
    // hand the remainder to the largest fractional parts (ties: lowest index)
    let mut order: Vec<usize> = (0..n).filter(|&i| shares[i] > 0.0).collect();
    order.sort_by(|&a, &b| {
        let fa = shares[a] - shares[a].floor();
        let fb = shares[b] - shares[b].floor();
        fb.total_cmp(&fa).then(a.cmp(&b))
    });
    let mut k = 0;
    while sum < w && !order.is_empty() {
        out[order[k % order.len()]] += 1;
        sum += 1;
        k += 1;
    }
    out
}

/// CSS chunk size: ⌈frac · W⌉ work-groups, at least 1 (Kruskal & Weiss).
pub fn css_chunk_wgs(total_wgs: u64, frac: f64) -> u64 {
    ((frac * total_wgs as f64).ceil() as u64).max(1)
}

/// GSS chunk size (Polychronopoulos & Kuck): ⌈R/P⌉ for R remaining work-groups and P
/// devices, at least `min_wgs` (and at least 1), at most R.
pub fn gss_chunk_wgs(remaining: u64, devices: usize, min_wgs: u64) -> u64 {
    if remaining == 0 {
        return 0;
    }
    let p = devices.max(1) as u64;
    remaining.div_ceil(p).max(min_wgs).max(1).min(remaining)
}

/// TSS parameters (Tzen & Ni 1993): first chunk F = ⌈W/(2P)⌉, last chunk L (≥ 1, ≤ F),
/// number of chunks C = ⌈2W/(F+L)⌉, decrement D = (F−L)/(C−1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tss {
    /// F, first chunk (work-groups).
    pub first: u64,
    /// L, last chunk (work-groups).
    pub last: u64,
    /// C, planned number of chunks.
    pub chunks: u64,
    /// D, decrement between successive chunks (work-groups, real).
    pub step: f64,
}

impl Tss {
    /// TSS plan for `w` work-groups on `p` devices with last chunk `last_wgs` (0 → 1).
    pub fn new(w: u64, p: usize, last_wgs: u64) -> Self {
        let p = p.max(1) as u64;
        let first = w.div_ceil(2 * p).max(1);
        let last = last_wgs.max(1).min(first);
        let chunks = (2 * w).div_ceil(first + last).max(1);
        let step = if chunks > 1 {
            (first - last) as f64 / (chunks - 1) as f64
        } else {
            0.0
        };
        Tss {
            first,
            last,
            chunks,
            step,
        }
    }

    /// Size of chunk `k` (0-based): max(L, ⌊F − k·D⌋) — Tzen & Ni truncate; never below L.
    pub fn chunk_wgs(&self, k: u64) -> u64 {
        let x = self.first as f64 - k as f64 * self.step;
        if x <= self.last as f64 {
            self.last
        } else {
            (x.floor() as u64).max(self.last)
        }
    }
}

/// State of a baseline policy.
#[derive(Debug, Clone)]
pub(crate) enum Baseline {
    Static { fractions: Vec<f64> },
    Css { chunk: u64 },
    Gss { min_chunk: u64 },
    Tss { plan: Tss, next: u64 },
    Single { device: usize },
}

impl Baseline {
    pub(crate) fn start(&mut self, core: &mut Core, now: u64, out: &mut Vec<Action>) {
        match self {
            Baseline::Static { fractions } => {
                let live: Vec<usize> = core.live_devices().collect();
                let f: Vec<f64> = live
                    .iter()
                    .map(|&d| fractions.get(d).copied().unwrap_or(0.0))
                    .collect();
                let parts = static_partition(core.pool.len(), &f);
                for (i, &d) in live.iter().enumerate() {
                    core.claim(d, parts[i], now, out);
                }
            }
            _ => self.dispatch(core, now, out),
        }
    }

    pub(crate) fn dispatch(&mut self, core: &mut Core, now: u64, out: &mut Vec<Action>) {
        if core.pool.is_empty() {
            return;
        }
        match self {
            Baseline::Static { fractions } => {
                // only reached with returned work (failed enqueue): re-partition it over the
                // live devices by their fractions
                let live: Vec<usize> = core.live_devices().collect();
                let f: Vec<f64> = live
                    .iter()
                    .map(|&d| fractions.get(d).copied().unwrap_or(0.0))
                    .collect();
                let parts = static_partition(core.pool.len(), &f);
                for (i, &d) in live.iter().enumerate() {
                    core.claim(d, parts[i], now, out);
                }
            }
            Baseline::Single { device } => {
                let d = if core.devices.get(*device).is_some_and(|x| x.live) {
                    Some(*device)
                } else {
                    core.live_devices().next()
                };
                if let Some(d) = d {
                    *device = d;
                    let n = core.pool.len();
                    core.claim(d, n, now, out);
                }
            }
            _ => {
                let idle: Vec<usize> = core
                    .live_devices()
                    .filter(|&d| core.devices[d].outstanding.is_empty())
                    .collect();
                let p = core.live_devices().count();
                for d in idle {
                    let r = core.pool.len();
                    if r == 0 {
                        break;
                    }
                    let size = match self {
                        Baseline::Css { chunk } => *chunk,
                        Baseline::Gss { min_chunk } => gss_chunk_wgs(r, p, *min_chunk),
                        Baseline::Tss { plan, next } => {
                            let s = plan.chunk_wgs(*next);
                            *next += 1;
                            s
                        }
                        _ => r,
                    };
                    core.claim(d, size, now, out);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn static_partition_sums_and_rounds() {
        assert_eq!(static_partition(10, &[0.6, 0.4]), vec![6, 4]);
        assert_eq!(static_partition(10, &[3.0, 1.0]), vec![8, 2]); // 7.5/2.5 -> tie to 0
        assert_eq!(static_partition(7, &[1.0, 1.0, 1.0]), vec![3, 2, 2]);
        assert_eq!(static_partition(5, &[0.0, 0.0]), vec![3, 2]);
        assert_eq!(static_partition(5, &[0.0, 1.0]), vec![0, 5]);
        for w in 0..50 {
            let p = static_partition(w, &[0.13, 0.5, 0.37, 0.0]);
            assert_eq!(p.iter().sum::<u64>(), w);
            assert_eq!(p[3], 0);
        }
    }

    #[test]
    fn gss_sequence_is_remaining_over_p() {
        // W = 100, P = 2: ⌈100/2⌉=50, ⌈50/2⌉=25, 13, 6, 3, 2, 1
        let mut r = 100;
        let mut seq = Vec::new();
        while r > 0 {
            let c = gss_chunk_wgs(r, 2, 0);
            seq.push(c);
            r -= c;
        }
        assert_eq!(seq, vec![50, 25, 13, 6, 3, 2, 1]);
        assert_eq!(gss_chunk_wgs(10, 4, 6), 6);
        assert_eq!(gss_chunk_wgs(3, 4, 6), 3);
    }

    #[test]
    fn tss_matches_tzen_ni_example() {
        // Tzen & Ni's example: N = 1000 iterations, P = 4 → F = 125, L = 1, C = 16, D = 8.27
        let t = Tss::new(1000, 4, 0);
        assert_eq!((t.first, t.last, t.chunks), (125, 1, 16));
        assert!((t.step - 124.0 / 15.0).abs() < 1e-12);
        let seq: Vec<u64> = (0..4).map(|k| t.chunk_wgs(k)).collect();
        assert_eq!(seq, vec![125, 116, 108, 100]);
        // the C planned chunks cover (about) the whole range: trapezoid area = C(F+L)/2 ≥ W
        let covered: u64 = (0..t.chunks).map(|k| t.chunk_wgs(k)).sum();
        assert!(
            covered + t.chunks >= 1000 && covered <= 1000 + t.first,
            "{covered}"
        );
        assert_eq!(t.chunk_wgs(1000), 1);
    }

    #[test]
    fn css_chunk() {
        assert_eq!(css_chunk_wgs(1000, 0.21), 210);
        assert_eq!(css_chunk_wgs(3, 0.01), 1);
    }
}
