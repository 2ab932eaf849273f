//! The snapshot byte budget (`CLPRISM_EMU_SNAPSHOT_MAX`) and the bounded wait for it (issue
//! 19 item 1).
//!
//! Every device-side snapshot copy project mode holds (eager copies at a launch, later
//! copies of deferred buffers before a write) is counted here while it lives. When a copy
//! does not fit, the app's thread may wait for held bytes to come back instead of giving the
//! launch up at once, but only
//!
//! * while something is held that an emulation will release: the worker releases every
//!   snapshot when its emulation ends, and every command it waits for (eager copies, the
//!   marker after a launch, later copies) was flushed on the app's queue before the app's
//!   thread could get here, so the wait needs nothing more from the waiting thread. Only a
//!   command behind an event the app has yet to set (a user event) could keep the worker
//!   waiting on the waiting thread: the bounds below end that wait;
//! * at most [`WAIT_ONE`] per copy;
//! * at most [`WAIT_FLOOR`] plus [`WAIT_SHARE`] of the time since the budget was created,
//!   summed over every wait of the process, so a device far behind the app (the worker
//!   waits for the device, the app would be serialized with it) costs the app a bounded
//!   share of its run time, not a stall per launch.
//!
//! Nothing here runs when a copy fits: the fast path is one atomic add.

use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Longest wait for one copy.
pub(super) const WAIT_ONE: Duration = Duration::from_secs(2);
/// Wait time every process may spend, whatever its run time.
pub(super) const WAIT_FLOOR: Duration = Duration::from_secs(1);
/// Further wait time: this share of the time since the budget was created.
pub(super) const WAIT_SHARE: f64 = 0.10;
/// Time every process may hold app commands back on the device for deferred buffers
/// (`snapshot::WriteHold`), whatever its run time; plus [`WAIT_SHARE`] of its run.
pub(super) const HOLD_FLOOR: Duration = Duration::from_secs(10);
/// Longest sleep between two looks at the condition (a deferred buffer finished by the
/// emulation also ends a wait).
const POLL: Duration = Duration::from_millis(20);

/// Bytes of snapshots held, and the means to wait for them to fall.
pub(super) struct Budget {
    held: AtomicU64,
    /// Bumped (and waiters woken) whenever bytes come back or a deferred buffer finishes.
    released: Mutex<u64>,
    cv: Condvar,
    /// Nanoseconds waited by all waits so far.
    waited_ns: AtomicU64,
    /// Nanoseconds app commands were held back so far (`snapshot::WriteHold`).
    held_back_ns: AtomicU64,
    created: Instant,
}

/// The outcome of [`Budget::hold_waiting`]; each carries the time waited.
#[derive(Debug, PartialEq)]
pub(super) enum Hold {
    /// The bytes are held (give them back with [`Budget::unhold`]).
    Held(Duration),
    /// The copy is no longer needed (`needed` turned false); nothing held.
    NotNeeded(Duration),
    /// Still no room: the bytes held by others when giving up.
    Full(u64, Duration),
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            held: AtomicU64::new(0),
            released: Mutex::new(0),
            cv: Condvar::new(),
            waited_ns: AtomicU64::new(0),
            held_back_ns: AtomicU64::new(0),
            created: Instant::now(),
        }
    }
}

impl Budget {
    /// Bytes held now.
    #[cfg(test)]
    pub(super) fn held(&self) -> u64 {
        self.held.load(Ordering::Acquire)
    }

    /// Holds `size` bytes when they fit under `cap`; else `Err` with the bytes held by
    /// others.
    pub(super) fn try_hold(&self, size: u64, cap: u64) -> Result<(), u64> {
        let before = self.held.fetch_add(size, Ordering::AcqRel);
        if before + size <= cap {
            return Ok(());
        }
        self.unhold(size);
        Err(before)
    }

    /// Gives `bytes` back and wakes the waiters.
    pub(super) fn unhold(&self, bytes: u64) {
        if bytes == 0 {
            return;
        }
        self.held.fetch_sub(bytes, Ordering::AcqRel);
        self.wake();
    }

    /// Wakes the waiters (bytes came back, or a deferred buffer was finished).
    pub(super) fn wake(&self) {
        *self.released.lock() += 1;
        self.cv.notify_all();
    }

    /// Holds `size` bytes under `cap`, waiting (bounded, see the module docs) for held
    /// bytes to come back while `needed()` stays true.
    pub(super) fn hold_waiting(&self, size: u64, cap: u64, needed: &dyn Fn() -> bool) -> Hold {
        let start = Instant::now();
        loop {
            let gen = *self.released.lock();
            let others = match self.try_hold(size, cap) {
                Ok(()) => return Hold::Held(self.account(start)),
                Err(others) => others,
            };
            if !needed() {
                return Hold::NotNeeded(self.account(start));
            }
            let Some(left) = self.wait_left(size, cap, others, start) else {
                return Hold::Full(others, self.account(start));
            };
            let mut g = self.released.lock();
            if *g == gen {
                self.cv.wait_for(&mut g, left.min(POLL));
            }
        }
    }

    /// How much longer a wait begun at `start` may last, `None` when it must end now: the
    /// copy can never fit, nothing is held that could come back, or a bound is reached.
    fn wait_left(&self, size: u64, cap: u64, others: u64, start: Instant) -> Option<Duration> {
        if size > cap || others == 0 {
            return None;
        }
        let spent = Duration::from_nanos(self.waited_ns.load(Ordering::Relaxed));
        let allowed = WAIT_FLOOR + self.created.elapsed().mul_f64(WAIT_SHARE);
        let process_left = allowed.checked_sub(spent + start.elapsed())?;
        let one_left = WAIT_ONE.checked_sub(start.elapsed())?;
        let left = process_left.min(one_left);
        (!left.is_zero()).then_some(left)
    }

    /// How long an app command may be held back now: at most `one`, and what is left of
    /// [`HOLD_FLOOR`] plus [`WAIT_SHARE`] of the time since the budget was created after the
    /// holds so far; `None` when nothing is left.
    pub(super) fn hold_limit(&self, one: Duration) -> Option<Duration> {
        let spent = Duration::from_nanos(self.held_back_ns.load(Ordering::Relaxed));
        let allowed = HOLD_FLOOR + self.created.elapsed().mul_f64(WAIT_SHARE);
        let left = allowed.checked_sub(spent)?.min(one);
        (!left.is_zero()).then_some(left)
    }

    /// Counts `d` of holding an app command back.
    pub(super) fn held_back(&self, d: Duration) {
        self.held_back_ns
            .fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Adds the time since `start` to the process's waited time and returns it.
    fn account(&self, start: Instant) -> Duration {
        let d = start.elapsed();
        self.waited_ns
            .fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn fits_at_once_without_waiting() {
        let b = Budget::default();
        assert!(matches!(b.hold_waiting(10, 10, &|| true), Hold::Held(_)));
        assert_eq!(b.held(), 10);
        assert_eq!(b.try_hold(1, 10), Err(10));
        b.unhold(10);
        assert_eq!(b.held(), 0);
    }

    #[test]
    fn never_waits_for_what_cannot_fit_or_come_back() {
        let b = Budget::default();
        let t = Instant::now();
        assert!(matches!(b.hold_waiting(11, 10, &|| true), Hold::Full(0, _)));
        assert!(t.elapsed() < Duration::from_millis(50));
    }

    #[test]
    fn waits_for_bytes_given_back_by_another_thread() {
        let b = Arc::new(Budget::default());
        b.try_hold(8, 10).unwrap();
        let b2 = b.clone();
        let h = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            b2.unhold(8);
        });
        match b.hold_waiting(6, 10, &|| true) {
            Hold::Held(d) => assert!(d >= Duration::from_millis(50), "waited {d:?}"),
            other => panic!("{other:?}"),
        }
        h.join().unwrap();
        assert_eq!(b.held(), 6);
    }

    #[test]
    fn ends_when_the_copy_is_no_longer_needed() {
        let b = Budget::default();
        b.try_hold(8, 10).unwrap();
        let t = Instant::now();
        let needed = || t.elapsed() < Duration::from_millis(60);
        assert!(matches!(b.hold_waiting(6, 10, &needed), Hold::NotNeeded(_)));
        assert_eq!(b.held(), 8);
    }

    #[test]
    fn gives_up_within_the_bounds() {
        let b = Budget::default();
        b.try_hold(8, 10).unwrap();
        let t = Instant::now();
        assert!(matches!(b.hold_waiting(6, 10, &|| true), Hold::Full(8, _)));
        // a fresh budget allows WAIT_FLOOR (plus its share of a few ms)
        let took = t.elapsed();
        assert!(
            took >= WAIT_FLOOR.mul_f64(0.9) && took < WAIT_ONE,
            "{took:?}"
        );
        // the process budget is spent: the next wait ends (almost) at once
        let t = Instant::now();
        assert!(matches!(b.hold_waiting(6, 10, &|| true), Hold::Full(8, _)));
        assert!(
            t.elapsed() < Duration::from_millis(300),
            "{:?}",
            t.elapsed()
        );
    }
}
