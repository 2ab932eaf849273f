//! Static slabs sized for staggered starts: when devices start one after another (a host
//! that enqueues one chunk per device in turn: about 40 µs per device on NVIDIA), equal
//! slabs make every launch wait for the last device. Device `k` starting at `s_k` (ns) and
//! needing `r_k` ns per unit ends with the others over `U` units when
//! `u_k = (T − s_k) / r_k`, `T = (U + Σ s_k / r_k) / Σ 1 / r_k`: the form of Boyer's
//! equal-finish split (dissertation §4.3, eq. 4.3) with the devices' start offsets in place
//! of their running chunks' remaining time. Used by balance mode's owner-computes slabs
//! (`exec::launch::stagger`) and by `clprism simulate --replay --slabs stagger`.

/// The smallest predicted gain (share of the equal slabs' makespan) worth moving the slab
/// boundaries, and the data behind them, for.
pub const MIN_GAIN: f64 = 0.03;
/// Units per device below which the slabs stay equal (whole units could not follow the
/// sizes).
const MIN_UNITS_PER_DEVICE: u64 = 8;
/// No device gets less than this share of an equal slab.
const MIN_SHARE_OF_EQUAL: f64 = 0.25;

/// Fractions of `units` that make devices starting at `starts` (ns) with `ns_per_unit` end
/// together (the module's equation), each at least [`MIN_SHARE_OF_EQUAL`] of an equal
/// slab; `None` when a rate is not positive, there are fewer than [`MIN_UNITS_PER_DEVICE`]
/// units per device, or the predicted makespan is not at least
/// [`MIN_GAIN`] shorter than with equal slabs.
pub fn offset_fractions(starts: &[f64], ns_per_unit: &[f64], units: u64) -> Option<Vec<f64>> {
    let n = starts.len();
    if n < 2
        || units < MIN_UNITS_PER_DEVICE * n as u64
        || ns_per_unit.iter().any(|r| r.is_nan() || *r <= 0.0)
    {
        return None;
    }
    let u = units as f64;
    let inv: f64 = ns_per_unit.iter().map(|r| 1.0 / r).sum();
    let t = (u + starts
        .iter()
        .zip(ns_per_unit)
        .map(|(s, r)| s / r)
        .sum::<f64>())
        / inv;
    let raw: Vec<f64> = starts
        .iter()
        .zip(ns_per_unit)
        .map(|(s, r)| (t - s) / r / u)
        .collect();
    let fractions = with_floor(&raw, MIN_SHARE_OF_EQUAL / n as f64);
    let makespan = |f: &dyn Fn(usize) -> f64| {
        (0..n)
            .map(|k| starts[k] + ns_per_unit[k] * f(k) * u)
            .fold(0.0, f64::max)
    };
    let equal = makespan(&|_| 1.0 / n as f64);
    let sized = makespan(&|k| fractions[k]);
    (sized <= equal * (1.0 - MIN_GAIN)).then_some(fractions)
}

/// `raw` fractions (summing to 1, some maybe under `floor` or negative) with every one at
/// least `floor`, the others scaled down in proportion to make room.
fn with_floor(raw: &[f64], floor: f64) -> Vec<f64> {
    let mut floored = vec![false; raw.len()];
    loop {
        let room = 1.0 - floor * floored.iter().filter(|f| **f).count() as f64;
        let free: f64 = raw
            .iter()
            .zip(&floored)
            .filter(|(_, f)| !**f)
            .map(|(x, _)| x)
            .sum();
        let f: Vec<f64> = raw
            .iter()
            .zip(&floored)
            .map(|(x, fl)| if *fl { floor } else { x * room / free })
            .collect();
        match f.iter().zip(&floored).position(|(x, fl)| !fl && *x < floor) {
            Some(k) => floored[k] = true,
            None => return f,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4 H200s, fdtd-2d at 16384² (the module's figures): 2048 units of 512 work-groups,
    /// devices starting 41 µs after their enqueue, 272 µs per 512 units.
    #[test]
    fn later_devices_get_smaller_slabs_and_all_end_together() {
        let starts = [220e3, 261e3, 301e3, 342e3];
        let r = [272e3 / 512.0; 4];
        let f = offset_fractions(&starts, &r, 2048).expect("a gain of ~10 %");
        assert!(f.windows(2).all(|w| w[0] > w[1]), "{f:?}");
        assert!((f.iter().sum::<f64>() - 1.0).abs() < 1e-9);
        let ends: Vec<f64> = (0..4).map(|k| starts[k] + r[k] * f[k] * 2048.0).collect();
        let spread = ends.iter().cloned().fold(0.0, f64::max)
            - ends.iter().cloned().fold(f64::MAX, f64::min);
        assert!(spread < 1.0, "ends {ends:?}");
        // 614 µs with equal slabs (the measured makespan), ~554 µs sized
        assert!((ends[0] - 553.5e3).abs() < 1e3, "{ends:?}");
    }

    #[test]
    fn devices_starting_together_keep_equal_slabs() {
        let r = [500.0; 3];
        assert_eq!(offset_fractions(&[10e3, 11e3, 12e3], &r, 3000), None);
    }

    #[test]
    fn a_very_late_device_keeps_its_floor() {
        let f = offset_fractions(&[0.0, 5e6], &[1000.0, 1000.0], 1000).expect("a gain");
        assert!((f[1] - 0.125).abs() < 1e-9, "{f:?}");
        assert!((f[0] - 0.875).abs() < 1e-9, "{f:?}");
    }
}
