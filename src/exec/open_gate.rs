//! Keeps clprism's context creations on the balance devices apart from the application's
//! program compiles, with the app first.
//!
//! On NVIDIA's driver (4 × H200), creating contexts on one thread while the app compiled a
//! program on another crashed the process in 11 of 25 runs (results/gpu-2026-11-22f). Until
//! session 30 the app's `clBuildProgram` therefore waited for the whole opening of the
//! balance devices (four contexts, 0.53-0.58 s), which `CLPRISM_BALANCE_OPEN=context` put
//! right before an app's first build (BabelStream: 8.33 → 9.39 s wall, session 29 call f).
//!
//! The gate keeps the same guarantee, no context creation of clprism's in flight during an
//! app's compile, at a smaller price:
//! * an app compile waits only for the creations already in flight, never for those not
//!   begun;
//! * a creation of clprism's does not begin while an app compile runs or waits;
//! * at most [`OpenGate::max_parallel`] creations run at once (1: the compile then waits for
//!   one context, about 0.13 s on an H200, and not for four).
//!
//! One object, owned by balance mode's state (`exec::Balance`), passed down to the opener.

use parking_lot::{Condvar, Mutex};
use std::time::Duration;

/// Who is inside the driver now.
#[derive(Debug, Default)]
struct Inside {
    /// App compiles (`clBuildProgram`, `clCompileProgram`, `clLinkProgram`) running.
    app_compiles: usize,
    /// App compiles waiting for a creation in flight to end.
    app_waiting: usize,
    /// Context creations of clprism's running.
    creations: usize,
}

/// The gate (see the module doc).
#[derive(Debug)]
pub struct OpenGate {
    inside: Mutex<Inside>,
    changed: Condvar,
    max_parallel: usize,
}

impl Default for OpenGate {
    fn default() -> Self {
        Self::new(1)
    }
}

impl OpenGate {
    /// A gate letting at most `max_parallel` (≥ 1) context creations run at once.
    pub fn new(max_parallel: usize) -> Self {
        Self {
            inside: Mutex::new(Inside::default()),
            changed: Condvar::new(),
            max_parallel: max_parallel.max(1),
        }
    }

    /// How many context creations may run at once.
    pub fn max_parallel(&self) -> usize {
        self.max_parallel
    }

    /// Runs the app's compile `call` once no context creation of clprism's is in flight.
    /// Returns `call`'s result and how long it waited.
    pub fn app_compile<T>(&self, call: impl FnOnce() -> T) -> (T, Duration) {
        let t = std::time::Instant::now();
        {
            let mut g = self.inside.lock();
            g.app_waiting += 1;
            while g.creations > 0 {
                self.changed.wait(&mut g);
            }
            g.app_waiting -= 1;
            g.app_compiles += 1;
        }
        let waited = t.elapsed();
        let _leave = Leave(self, |i: &mut Inside| i.app_compiles -= 1);
        (call(), waited)
    }

    /// Runs clprism's context creation `call` once no app compile runs or waits and fewer
    /// than [`Self::max_parallel`] creations are in flight. `None` without running `call`
    /// when `give_up()` turns true while waiting (the process is exiting); it is asked at
    /// least every 10 ms.
    pub fn creation<T>(&self, give_up: impl Fn() -> bool, call: impl FnOnce() -> T) -> Option<T> {
        {
            let mut g = self.inside.lock();
            while g.app_compiles > 0 || g.app_waiting > 0 || g.creations >= self.max_parallel {
                if give_up() {
                    return None;
                }
                self.changed.wait_for(&mut g, Duration::from_millis(10));
            }
            g.creations += 1;
        }
        let _leave = Leave(self, |i: &mut Inside| i.creations -= 1);
        Some(call())
    }
}

/// Undoes one entry into the gate when dropped (also when the call unwinds).
struct Leave<'a, F: Fn(&mut Inside)>(&'a OpenGate, F);

impl<F: Fn(&mut Inside)> Drop for Leave<'_, F> {
    fn drop(&mut self) {
        (self.1)(&mut self.0.inside.lock());
        self.0.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Records the largest number of app compiles and creations seen inside at once.
    #[derive(Default)]
    struct Overlap {
        compiles: AtomicUsize,
        creations: AtomicUsize,
        both_seen: AtomicUsize,
        max_creations: AtomicUsize,
    }

    impl Overlap {
        fn enter(&self, creation: bool) {
            let (mine, other) = if creation {
                (&self.creations, &self.compiles)
            } else {
                (&self.compiles, &self.creations)
            };
            let now = mine.fetch_add(1, Ordering::SeqCst) + 1;
            if creation {
                self.max_creations.fetch_max(now, Ordering::SeqCst);
            }
            if other.load(Ordering::SeqCst) > 0 {
                self.both_seen.fetch_add(1, Ordering::SeqCst);
            }
            std::thread::sleep(Duration::from_millis(15));
            mine.fetch_sub(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn compiles_and_creations_never_overlap_and_creations_run_one_at_a_time() {
        let gate = Arc::new(OpenGate::new(1));
        let seen = Arc::new(Overlap::default());
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let (gate, seen) = (gate.clone(), seen.clone());
                std::thread::spawn(move || {
                    for _ in 0..4 {
                        if i % 2 == 0 {
                            gate.app_compile(|| seen.enter(false));
                        } else {
                            gate.creation(|| false, || seen.enter(true)).unwrap();
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(seen.both_seen.load(Ordering::SeqCst), 0);
        assert_eq!(seen.max_creations.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn an_app_compile_waits_for_the_creation_in_flight_only() {
        let gate = Arc::new(OpenGate::new(1));
        let finished = Arc::new(AtomicUsize::new(0));
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let release_rx = Arc::new(Mutex::new(release_rx));
        let creators: Vec<_> = (0..3)
            .map(|_| {
                let (gate, finished) = (gate.clone(), finished.clone());
                let (started_tx, release_rx) = (started_tx.clone(), release_rx.clone());
                std::thread::spawn(move || {
                    gate.creation(
                        || false,
                        || {
                            started_tx.send(()).unwrap();
                            release_rx.lock().recv().unwrap();
                            finished.fetch_add(1, Ordering::SeqCst);
                        },
                    )
                })
            })
            .collect();
        started_rx.recv().unwrap();
        let (g2, f2) = (gate.clone(), finished.clone());
        let app = std::thread::spawn(move || g2.app_compile(|| f2.load(Ordering::SeqCst)).0);
        while gate.inside.lock().app_waiting == 0 {
            std::thread::yield_now();
        }
        for _ in 0..3 {
            release_tx.send(()).unwrap();
        }
        // one creation was in flight and two waited: the compile ran after the first only
        assert_eq!(app.join().unwrap(), 1);
        for c in creators {
            assert_eq!(c.join().unwrap(), Some(()));
        }
        assert_eq!(finished.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_creation_gives_up_while_a_compile_runs_and_the_process_exits() {
        let gate = Arc::new(OpenGate::new(1));
        let (inside_tx, inside_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let g2 = gate.clone();
        let app = std::thread::spawn(move || {
            g2.app_compile(|| {
                inside_tx.send(()).unwrap();
                release_rx.recv().unwrap();
            })
        });
        inside_rx.recv().unwrap();
        assert_eq!(gate.creation(|| true, || 1), None);
        release_tx.send(()).unwrap();
        app.join().unwrap();
        assert_eq!(gate.creation(|| false, || 2), Some(2));
    }
}
