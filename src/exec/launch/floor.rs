//! The split floor: the least wall time a split launch is estimated to take (the barrier on
//! the app's queue, an enqueue and a completion per device), below which `sched::split`
//! estimates no split (`SplitInputs::split_floor_ns`).
//!
//! It is the shortest split measured so far in this process, of two kinds: a kernel's first
//! split without its one-time phases (build, footprint, upload ring), which still holds the
//! driver's first enqueue of the kernel on each device, and later splits. Before enough
//! later splits were measured, a GPU app device keeps the prior
//! (`CLPRISM_BALANCE_SPLIT_FLOOR`) as a bound: the first later splits of an iterative
//! kernel come one at a time between launches kept whole, with nothing issued ahead, and
//! take two or three times a split in a run of them. On 2 H200s, jacobi-2d's first later
//! split took 2.19 ms against 0.97 ms whole, and as the floor it kept the 2,900 launches
//! after it whole (8 % slower than native), where a run whose first later split happened to
//! be quick split them all (1.16x native; results/session28-2026-11-28, call a).

/// Later splits measured before their shortest alone is the floor of a GPU app device.
pub(super) const LATER_SPLITS_TRUSTED: u32 = 4;

/// The shortest split launches measured so far (ns, 0 meaning none of that kind yet).
#[derive(Debug, Default, Clone)]
pub(super) struct SplitFloor {
    /// The shortest first split of a kernel without its one-time phases.
    first_ns: f64,
    /// The shortest later split.
    later_ns: f64,
    /// How many later splits were measured.
    later_count: u32,
}

impl SplitFloor {
    /// A split launch took `wall_ns` without its one-time work; `first`: it was its kernel's
    /// first split.
    pub(super) fn note(&mut self, first: bool, wall_ns: f64) {
        let floor = if first {
            &mut self.first_ns
        } else {
            self.later_count = self.later_count.saturating_add(1);
            &mut self.later_ns
        };
        if *floor == 0.0 || wall_ns < *floor {
            *floor = wall_ns;
        }
    }

    /// Whether a later split was measured (the full decision assumes no floor on CPU devices
    /// before one).
    pub(super) fn measured(&self) -> bool {
        self.later_ns > 0.0
    }

    /// The floor, ns, and whether it is a prior rather than a measured split. On a GPU or
    /// accelerator app device (`gpu`): the shortest split of either kind, bounded by
    /// `gpu_prior_ns` until [`LATER_SPLITS_TRUSTED`] later splits were measured. Otherwise
    /// the shorter of the later and the first splits once a later one was measured, else
    /// `decide::ASSUMED_SPLIT_FLOOR_NS`.
    pub(super) fn get(&self, gpu: bool, gpu_prior_ns: f64) -> (f64, bool) {
        let measured = [self.first_ns, self.later_ns]
            .into_iter()
            .filter(|&ns| ns > 0.0)
            .fold(f64::INFINITY, f64::min);
        if gpu && self.later_count < LATER_SPLITS_TRUSTED {
            return if measured < gpu_prior_ns {
                (measured, false)
            } else {
                (gpu_prior_ns, true)
            };
        }
        if self.later_ns > 0.0 {
            (measured, false)
        } else {
            (super::super::decide::ASSUMED_SPLIT_FLOOR_NS, true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn floor(first: &[f64], later: &[f64]) -> SplitFloor {
        let mut f = SplitFloor::default();
        first.iter().for_each(|&ns| f.note(true, ns));
        later.iter().for_each(|&ns| f.note(false, ns));
        f
    }

    /// On a GPU: the prior until a shorter split of either kind, or until enough later
    /// splits; then the shortest of both kinds.
    #[test]
    fn a_gpu_keeps_its_prior_as_a_bound_until_later_splits_add_up() {
        let prior = 0.5e6;
        assert_eq!(floor(&[], &[]).get(true, prior), (prior, true));
        assert_eq!(floor(&[0.3e6], &[]).get(true, prior), (0.3e6, false));
        assert_eq!(floor(&[3e6], &[]).get(true, prior), (prior, true));
        // one slow later split (jacobi-2d on 2 H200s) does not raise the floor
        assert_eq!(floor(&[38e6], &[2.19e6]).get(true, prior), (prior, true));
        let slow = [2.19e6, 1.9e6, 2.0e6];
        assert_eq!(floor(&[], &slow).get(true, prior), (prior, true));
        // four later splits: their shortest, even above the prior
        assert_eq!(
            floor(&[], &[2.19e6, 1.9e6, 2.0e6, 1.47e6]).get(true, prior),
            (1.47e6, false)
        );
        // a quicker first split still bounds it (fdtd-2d's kernel 3 on 4 H200s, session 22)
        assert_eq!(
            floor(&[0.63e6], &[1.37e6; 4]).get(true, prior),
            (0.63e6, false)
        );
    }

    /// Elsewhere: the assumed floor until a later split, then the shortest of both kinds.
    #[test]
    fn a_cpu_device_takes_the_first_later_split() {
        let assumed = crate::exec::decide::ASSUMED_SPLIT_FLOOR_NS;
        assert_eq!(floor(&[0.01e6], &[]).get(false, 1e6), (assumed, true));
        assert_eq!(floor(&[0.2e6], &[0.4e6]).get(false, 1e6), (0.2e6, false));
        assert_eq!(floor(&[], &[0.4e6]).get(false, 1e6), (0.4e6, false));
    }
}
