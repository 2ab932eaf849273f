//! Accuracy of projections against measured times (Panwar et al. §V-B; Wang et al. §V).
//!
//! * Relative-performance error (Panwar §V-B.1): the kernel's times on the `n` devices
//!   form a vector; with `T'` the unit-length version of `T`,
//!   `‖T'_actual − T'_projected‖ / √2`, in [0, 1] (√2 is the largest distance between
//!   unit vectors with non-negative coordinates).
//! * Device-selection penalty (Panwar §V-B.1): `|T(B) − T(A)| / T(A)` with `A` the actual
//!   best device and `B` the projected best, both in actual times.
//! * Absolute percentage error `|projected − actual| / actual` per device, and its mean
//!   (MAPE, Wang §V).
//!
//! All results are fractions (0.15 = 15 %).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// Invalid input to a metric.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum MetricsError {
    /// No devices / no kernels.
    Empty,
    /// Vectors of different lengths.
    LengthMismatch {
        /// Length of the actual times.
        actual: usize,
        /// Length of the projected times (or device names).
        other: usize,
    },
    /// A time that is negative, NaN or infinite, or an actual time of 0 (ns).
    BadTime {
        /// Position in its vector.
        index: usize,
        /// The value.
        value: f64,
    },
    /// All times are 0, so the vector has no direction.
    ZeroVector,
}

impl fmt::Display for MetricsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MetricsError::Empty => write!(f, "no values"),
            MetricsError::LengthMismatch { actual, other } => {
                write!(
                    f,
                    "{actual} actual times but {other} projected times / devices"
                )
            }
            MetricsError::BadTime { index, value } => {
                write!(f, "time #{index} = {value} is not a valid duration")
            }
            MetricsError::ZeroVector => write!(f, "all times are 0"),
        }
    }
}

impl std::error::Error for MetricsError {}

fn check(actual: &[f64], projected: &[f64]) -> Result<(), MetricsError> {
    if actual.is_empty() {
        return Err(MetricsError::Empty);
    }
    if actual.len() != projected.len() {
        return Err(MetricsError::LengthMismatch {
            actual: actual.len(),
            other: projected.len(),
        });
    }
    for (i, &a) in actual.iter().enumerate() {
        if !(a.is_finite() && a > 0.0) {
            return Err(MetricsError::BadTime { index: i, value: a });
        }
    }
    for (i, &p) in projected.iter().enumerate() {
        if !(p.is_finite() && p >= 0.0) {
            return Err(MetricsError::BadTime { index: i, value: p });
        }
    }
    Ok(())
}

/// `v / ‖v‖₂`.
///
/// Errors: [`MetricsError::Empty`], [`MetricsError::ZeroVector`].
pub fn unit_normalise(v: &[f64]) -> Result<Vec<f64>, MetricsError> {
    if v.is_empty() {
        return Err(MetricsError::Empty);
    }
    let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
    if norm == 0.0 || !norm.is_finite() {
        return Err(MetricsError::ZeroVector);
    }
    Ok(v.iter().map(|x| x / norm).collect())
}

/// Relative-performance error of Panwar §V-B.1, `‖T'_actual − T'_projected‖ / √2`, a
/// fraction in [0, 1]. `actual[i]` and `projected[i]` are times (ns) of the same kernel on
/// device `i`.
///
/// Errors: empty or mismatched vectors, non-positive actual times, negative projections,
/// all-zero projections.
pub fn relative_performance_error(actual: &[f64], projected: &[f64]) -> Result<f64, MetricsError> {
    check(actual, projected)?;
    let a = unit_normalise(actual)?;
    let p = unit_normalise(projected)?;
    let d = a
        .iter()
        .zip(&p)
        .map(|(x, y)| (x - y) * (x - y))
        .sum::<f64>()
        .sqrt();
    Ok(d / std::f64::consts::SQRT_2)
}

/// Outcome of picking the projected-best device (Panwar §V-B.1).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BestPick {
    /// Index of the device with the smallest projected time (first on ties).
    pub projected_best: usize,
    /// Index of the device with the smallest actual time (first on ties).
    pub actual_best: usize,
    /// True when the projected-best device's actual time equals the best actual time.
    pub picked_best: bool,
    /// `actual[projected_best] / actual[actual_best] − 1` (0 when picked).
    pub penalty: f64,
}

fn argmin(v: &[f64]) -> usize {
    let mut best = 0;
    for (i, &x) in v.iter().enumerate() {
        if x < v[best] {
            best = i;
        }
    }
    best
}

/// Whether the projected-best device is the actual best, and the selection penalty.
///
/// Errors: as [`relative_performance_error`].
pub fn best_pick(actual: &[f64], projected: &[f64]) -> Result<BestPick, MetricsError> {
    check(actual, projected)?;
    let pb = argmin(projected);
    let ab = argmin(actual);
    let penalty = actual[pb] / actual[ab] - 1.0;
    Ok(BestPick {
        projected_best: pb,
        actual_best: ab,
        picked_best: actual[pb] <= actual[ab],
        penalty,
    })
}

/// `|projected − actual| / actual`.
///
/// Errors: [`MetricsError::BadTime`] when `actual` is not > 0 or `projected` is negative or
/// not finite.
pub fn absolute_percentage_error(actual: f64, projected: f64) -> Result<f64, MetricsError> {
    check(&[actual], &[projected])?;
    Ok((projected - actual).abs() / actual)
}

/// Mean absolute percentage error over `(actual, projected)` pairs.
///
/// Errors: [`MetricsError::Empty`] or a bad pair.
pub fn mape(pairs: &[(f64, f64)]) -> Result<f64, MetricsError> {
    if pairs.is_empty() {
        return Err(MetricsError::Empty);
    }
    let mut sum = 0.0;
    for (i, &(a, p)) in pairs.iter().enumerate() {
        sum += absolute_percentage_error(a, p).map_err(|e| match e {
            MetricsError::BadTime { value, .. } => MetricsError::BadTime { index: i, value },
            e => e,
        })?;
    }
    Ok(sum / pairs.len() as f64)
}

/// All metrics of one kernel across devices (one row of `clprism accuracy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelAccuracy {
    /// Kernel name.
    pub kernel: String,
    /// Device names, in the order of the time vectors.
    pub devices: Vec<String>,
    /// Measured times, ns.
    pub actual_ns: Vec<f64>,
    /// Projected times, ns.
    pub projected_ns: Vec<f64>,
    /// Panwar relative-performance error (fraction).
    pub relative_error: f64,
    /// Best-device pick and penalty.
    pub best: BestPick,
    /// Absolute percentage error per device (fraction).
    pub ape: Vec<f64>,
}

impl KernelAccuracy {
    /// Compute every metric for one kernel.
    ///
    /// Errors: mismatched lengths (devices, actual, projected) or bad times.
    pub fn new(
        kernel: &str,
        devices: &[String],
        actual_ns: &[f64],
        projected_ns: &[f64],
    ) -> Result<KernelAccuracy, MetricsError> {
        if devices.len() != actual_ns.len() {
            return Err(MetricsError::LengthMismatch {
                actual: actual_ns.len(),
                other: devices.len(),
            });
        }
        let relative_error = relative_performance_error(actual_ns, projected_ns)?;
        let best = best_pick(actual_ns, projected_ns)?;
        let ape = actual_ns
            .iter()
            .zip(projected_ns)
            .map(|(&a, &p)| absolute_percentage_error(a, p))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(KernelAccuracy {
            kernel: kernel.to_string(),
            devices: devices.to_vec(),
            actual_ns: actual_ns.to_vec(),
            projected_ns: projected_ns.to_vec(),
            relative_error,
            best,
            ape,
        })
    }
}

/// Averages over kernels (the last lines of `clprism accuracy`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccuracySummary {
    /// Kernels summarised.
    pub kernels: usize,
    /// Mean relative-performance error (fraction).
    pub mean_relative_error: f64,
    /// Share of kernels whose projected-best device is the actual best (fraction).
    pub best_picked_share: f64,
    /// Mean selection penalty over all kernels (0 for correct picks).
    pub mean_penalty: f64,
    /// Largest selection penalty.
    pub max_penalty: f64,
    /// MAPE over all (kernel, device) pairs.
    pub mape: f64,
    /// MAPE per device name.
    pub mape_per_device: BTreeMap<String, f64>,
}

impl AccuracySummary {
    /// Summarise per-kernel metrics.
    ///
    /// Errors: [`MetricsError::Empty`] when `ks` is empty.
    pub fn from_kernels(ks: &[KernelAccuracy]) -> Result<AccuracySummary, MetricsError> {
        if ks.is_empty() {
            return Err(MetricsError::Empty);
        }
        let n = ks.len() as f64;
        let mut per_dev: BTreeMap<String, (f64, usize)> = BTreeMap::new();
        let mut all = (0.0, 0usize);
        for k in ks {
            for (d, e) in k.devices.iter().zip(&k.ape) {
                let s = per_dev.entry(d.clone()).or_insert((0.0, 0));
                s.0 += e;
                s.1 += 1;
                all.0 += e;
                all.1 += 1;
            }
        }
        Ok(AccuracySummary {
            kernels: ks.len(),
            mean_relative_error: ks.iter().map(|k| k.relative_error).sum::<f64>() / n,
            best_picked_share: ks.iter().filter(|k| k.best.picked_best).count() as f64 / n,
            mean_penalty: ks.iter().map(|k| k.best.penalty).sum::<f64>() / n,
            max_penalty: ks.iter().map(|k| k.best.penalty).fold(0.0, f64::max),
            mape: if all.1 > 0 { all.0 / all.1 as f64 } else { 0.0 },
            mape_per_device: per_dev
                .into_iter()
                .map(|(d, (s, c))| (d, s / c as f64))
                .collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn identical_direction_has_zero_error() {
        // Projected = 3 × actual: same relative performance.
        let e = relative_performance_error(&[1.0, 2.0, 4.0], &[3.0, 6.0, 12.0]).unwrap();
        assert!(e.abs() < 1e-12, "{e}");
    }

    #[test]
    fn orthogonal_vectors_have_full_error() {
        // T'_a = (1,0), T'_p = (0,1): distance √2 → 100 %.
        let e = relative_performance_error(&[1.0, 0.0 + 1e-300], &[0.0, 5.0]).unwrap();
        assert!((e - 1.0).abs() < 1e-9, "{e}");
    }

    #[test]
    fn hand_computed_relative_error() {
        // actual (3,4) → (0.6, 0.8); projected (4,3) → (0.8, 0.6);
        // distance = sqrt(0.04 + 0.04) = 0.2·√2 → error 0.2.
        let e = relative_performance_error(&[3.0, 4.0], &[4.0, 3.0]).unwrap();
        assert!(close(e, 0.2), "{e}");
    }

    #[test]
    fn best_pick_and_penalty() {
        // Device 1 is actually fastest (2 ns); the model picks device 0 (actual 3 ns):
        // penalty = 3/2 − 1 = 0.5.
        let b = best_pick(&[3.0, 2.0, 5.0], &[1.0, 4.0, 9.0]).unwrap();
        assert_eq!(b.projected_best, 0);
        assert_eq!(b.actual_best, 1);
        assert!(!b.picked_best);
        assert!(close(b.penalty, 0.5));
        let g = best_pick(&[3.0, 2.0, 5.0], &[7.0, 4.0, 9.0]).unwrap();
        assert!(g.picked_best);
        assert!(close(g.penalty, 0.0));
    }

    #[test]
    fn ape_and_mape() {
        assert!(close(absolute_percentage_error(100.0, 80.0).unwrap(), 0.2));
        assert!(close(absolute_percentage_error(100.0, 130.0).unwrap(), 0.3));
        // (0.2 + 0.3 + 0.1) / 3 = 0.2
        let m = mape(&[(100.0, 80.0), (100.0, 130.0), (50.0, 55.0)]).unwrap();
        assert!(close(m, 0.2), "{m}");
    }

    #[test]
    fn bad_inputs_are_errors() {
        assert_eq!(
            relative_performance_error(&[1.0], &[1.0, 2.0]),
            Err(MetricsError::LengthMismatch {
                actual: 1,
                other: 2
            })
        );
        assert_eq!(
            relative_performance_error(&[], &[]),
            Err(MetricsError::Empty)
        );
        assert!(matches!(
            absolute_percentage_error(0.0, 1.0),
            Err(MetricsError::BadTime { .. })
        ));
        assert_eq!(
            relative_performance_error(&[1.0, 2.0], &[0.0, 0.0]),
            Err(MetricsError::ZeroVector)
        );
        assert_eq!(mape(&[]), Err(MetricsError::Empty));
    }

    #[test]
    fn summary_averages() {
        let devs = vec!["a".to_string(), "b".to_string()];
        // Kernel 1: picked right, APEs 0.5 and 0.0, rel. error of (1,2) vs (0.5,2).
        let k1 = KernelAccuracy::new("k1", &devs, &[1.0, 2.0], &[0.5, 2.0]).unwrap();
        // Kernel 2: picked wrong, penalty 1.0 (actual 4 vs 2); APEs 1.0 and 0.5.
        let k2 = KernelAccuracy::new("k2", &devs, &[2.0, 4.0], &[4.0, 2.0]).unwrap();
        let s = AccuracySummary::from_kernels(&[k1.clone(), k2.clone()]).unwrap();
        assert_eq!(s.kernels, 2);
        assert!(close(s.best_picked_share, 0.5));
        assert!(close(s.mean_penalty, 0.5));
        assert!(close(s.max_penalty, 1.0));
        assert!(close(s.mape, (0.5 + 0.0 + 1.0 + 0.5) / 4.0));
        assert!(close(s.mape_per_device["a"], 0.75));
        assert!(close(s.mape_per_device["b"], 0.25));
        assert!(close(
            s.mean_relative_error,
            (k1.relative_error + k2.relative_error) / 2.0
        ));
        // k2: (2,4)/√20 vs (4,2)/√20 → distance √(2·(2/√20)²) = 2√2/√20 → error 2/√20.
        assert!(close(k2.relative_error, 2.0 / 20f64.sqrt()));
    }
}
