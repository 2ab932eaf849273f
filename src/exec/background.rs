//! Work clprism does off the application's threads (opening the balance devices, building
//! the app's programs on them) and how that work ends when the application exits.
//!
//! # Shutdown order
//! A background thread that is inside a driver call when the process runs its exit handlers
//! can crash the process: drivers register their own teardown (`atexit` or C++ static
//! destructors) lazily, e.g. NVIDIA's during the first context it creates, which for an app
//! that runs on PoCL's CPU device is clprism's own background context. Exit handlers run in
//! reverse order of registration, so such a teardown runs before any handler clprism
//! registered earlier, while clprism's thread is still in the driver (seen on an H100 + PoCL
//! CPU as SIGSEGV at exit, and as a thread stuck in the torn-down driver that an exit handler
//! then waited 10 s for).
//!
//! The rules here:
//! - every driver call made off the app's threads goes through [`Background::driver_call`],
//!   which holds a shared gate for the length of the call and refuses once shutdown began;
//! - after each such call the exit hook is registered again, so it runs before any teardown
//!   the driver registered during the call; and every exit handler registered on any thread
//!   once clprism is active (C++ static destructors of LLVM in PoCL's compiler, first used by
//!   the app's own build) is followed at once by clprism's exit work, through the
//!   `__cxa_atexit` interposer in `api::exit`, so that runs first;
//! - the exit hook ([`Background::shut_down`]) closes the gate for good: it waits for the
//!   driver calls in flight (never for whole threads, never for a fixed time) and no new
//!   one starts. Background threads are then left to end on their own; nothing joins them.

use parking_lot::RwLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The shutdown state of clprism's background work (one per process, see [`get`]).
pub struct Background {
    /// Set by the exit hook: no driver call starts any more.
    shutting_down: AtomicBool,
    /// Shared by every background driver call in flight; taken exclusively (and kept) by
    /// the exit hook.
    gate: RwLock<()>,
}

static BACKGROUND: Background = Background {
    shutting_down: AtomicBool::new(false),
    gate: RwLock::new(()),
};

/// The process's background-work state.
pub fn get() -> &'static Background {
    &BACKGROUND
}

impl Background {
    /// Runs `call` (one driver call, or a short sequence of them) unless the process is
    /// exiting, and registers the exit hook again afterwards (see the module doc).
    /// `None`: the process is exiting and `call` did not run.
    pub fn driver_call<T>(&self, call: impl FnOnce() -> T) -> Option<T> {
        let out = loop {
            if self.shutting_down.load(Ordering::Acquire) {
                return None;
            }
            // Bounded tries: once the exit hook holds the gate it never lets go.
            if let Some(_open) = self.gate.try_read_for(Duration::from_millis(10)) {
                if self.shutting_down.load(Ordering::Acquire) {
                    return None;
                }
                break call();
            }
        };
        register_exit_hook();
        Some(out)
    }

    /// Runs `call` on every item, each on its own thread and through [`Self::driver_call`]
    /// (one device each: opening, building); results in the items' order. `what` names the
    /// work in the error of a thread that panicked.
    pub fn in_parallel<I: Send, T: Send>(
        &self,
        what: &str,
        items: Vec<I>,
        call: impl Fn(I) -> Result<T, String> + Sync,
    ) -> Vec<Result<T, String>> {
        std::thread::scope(|scope| {
            let call = &call;
            let handles: Vec<_> = items
                .into_iter()
                .map(|item| {
                    scope.spawn(move || {
                        self.driver_call(|| call(item))
                            .unwrap_or_else(|| Err("the application is exiting".into()))
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| Err(format!("the {what} thread panicked")))
                })
                .collect()
        })
    }

    /// Whether the process has begun to exit (background work should stop).
    pub fn exiting(&self) -> bool {
        self.shutting_down.load(Ordering::Acquire)
    }

    /// Spawns `work` on a named thread; a panic in it is caught. The thread is never joined
    /// (see the module doc); it must make its driver calls through [`Self::driver_call`].
    pub fn spawn(&self, name: &str, work: impl FnOnce() + Send + 'static) {
        register_exit_hook();
        let spawned = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work));
            });
        if let Err(e) = spawned {
            crate::config::warn(&format!("cannot start the {name} thread: {e}"));
        }
    }

    /// The exit hook: waits for the background driver calls in flight and lets no new one
    /// start. Idempotent.
    pub fn shut_down(&self) {
        if self.shutting_down.swap(true, Ordering::AcqRel) {
            return;
        }
        crate::config::debug(|| "exit: waiting for background driver calls in flight".into());
        std::mem::forget(self.gate.write());
        crate::config::debug(|| "exit: no background driver call in flight".into());
    }
}

/// The exit hook (see the module doc; `api::exit` runs it first at exit).
pub extern "C" fn exit_hook() {
    let _ = std::panic::catch_unwind(|| get().shut_down());
}

/// Registers [`exit_hook`] with `atexit` (again). Each registration is one entry in glibc's
/// list; clprism makes a few per device and program, and the hook is idempotent.
fn register_exit_hook() {
    // SAFETY: a plain extern "C" function of this DSO, which stays loaded until exit.
    unsafe {
        libc::atexit(exit_hook);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_call_starts_after_shutdown_and_shutdown_waits_for_the_one_in_flight() {
        let bg: &'static Background = Box::leak(Box::new(Background {
            shutting_down: AtomicBool::new(false),
            gate: RwLock::new(()),
        }));
        let (entered_tx, entered_rx) = std::sync::mpsc::channel();
        let finished = std::sync::Arc::new(AtomicBool::new(false));
        let f2 = finished.clone();
        let worker = std::thread::spawn(move || {
            bg.driver_call(|| {
                entered_tx.send(()).unwrap();
                std::thread::sleep(Duration::from_millis(200));
                f2.store(true, Ordering::Release);
            })
        });
        entered_rx.recv().unwrap();
        bg.shut_down();
        assert!(
            finished.load(Ordering::Acquire),
            "shut_down returned while a driver call was in flight"
        );
        assert_eq!(worker.join().unwrap(), Some(()));
        assert_eq!(
            bg.driver_call(|| 1),
            None,
            "a driver call ran after shutdown"
        );
        assert!(bg.exiting());
        bg.shut_down(); // idempotent: does not wait for the gate again
    }
}
