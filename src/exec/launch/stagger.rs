//! Owner-computes slabs sized for the enqueue stagger (issue 31; DESIGN.md §7, "Owner
//! computes"): the launch thread enqueues one chunk per device, one after the other, so on
//! NVIDIA each device starts about 40 µs after the one before it (4 H200s, fdtd-2d at
//! 16384², median over 14,403 split launches: enqueued at 179, 221, 260 and 301 µs into the
//! launch, each running 272 µs; results/session24-2026-11-28/README.md). With equal slabs
//! the last device ends 120 µs after the first, and every launch waits for it.
//!
//! Devices of one name keep equal slabs by measured throughput (following their finish
//! times skewed four H200s' slabs to 0.36/0.32/0.21/0.12, results/session19). Here the
//! slabs are sized once, from what the device order costs ([`crate::sched::stagger`]: each
//! device's start and rate, the equal-finish split of Boyer's eq. 4.3), measured over
//! [`SAMPLES`] launches (medians) and then kept for good, so that slab boundaries, and the
//! data the devices own, move once.

/// Launches of one shape whose starts are sampled before the slabs are sized.
pub(super) const SAMPLES: usize = 8;

/// Per-device starts (ns since the launch's start) and device time per unit (ns) of the
/// sampled launches of one shape, until the slabs are sized ([`Self::note`]).
#[derive(Default)]
pub(super) struct StartSamples {
    starts: Vec<Vec<f64>>,
    ns_per_unit: Vec<Vec<f64>>,
    /// Sized (or judged not worth it): nothing more is sampled.
    pub settled: bool,
}

impl StartSamples {
    /// Notes one launch's per-device `(start ns, ns per unit)` (`None` for a device without
    /// a measured chunk: the launch is not counted). After [`SAMPLES`] launches, returns the
    /// fractions that end the devices together over `units` units, or `None` (also when the
    /// gain is under [`crate::sched::stagger::MIN_GAIN`]); either way the samples are then settled.
    pub fn note(&mut self, launch: &[Option<(f64, f64)>], units: u64) -> Option<Vec<f64>> {
        if self.settled || launch.iter().any(Option::is_none) {
            return None;
        }
        let n = launch.len();
        self.starts.resize(n, Vec::new());
        self.ns_per_unit.resize(n, Vec::new());
        for (k, m) in launch.iter().flatten().enumerate() {
            self.starts[k].push(m.0);
            self.ns_per_unit[k].push(m.1);
        }
        if self.starts[0].len() < SAMPLES {
            return None;
        }
        self.settled = true;
        let s: Vec<f64> = self.starts.iter_mut().map(|v| median(v)).collect();
        let r: Vec<f64> = self.ns_per_unit.iter_mut().map(|v| median(v)).collect();
        crate::sched::stagger::offset_fractions(&s, &r, units)
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_waits_for_the_samples_and_happens_once() {
        let mut s = StartSamples::default();
        let launch = [
            Some((220e3, 531.0)),
            Some((261e3, 531.0)),
            Some((301e3, 531.0)),
            Some((342e3, 531.0)),
        ];
        for _ in 0..SAMPLES - 1 {
            assert_eq!(s.note(&launch, 2048), None);
        }
        // a launch with a device unmeasured is not counted
        assert_eq!(
            s.note(
                &[None, Some((1.0, 1.0)), Some((1.0, 1.0)), Some((1.0, 1.0))],
                2048
            ),
            None
        );
        assert!(!s.settled);
        assert!(s.note(&launch, 2048).is_some());
        assert!(s.settled);
        assert_eq!(s.note(&launch, 2048), None, "sized once, for good");
    }
}
