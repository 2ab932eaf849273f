//! Device-side halo gates for launches issued ahead ([`super::ahead`]): a halo read on its
//! source device's chunk queue completes only when the running chunk there ends, and its
//! write to another device (another context: no event of the read's context may be in its
//! wait list) waits for a user event of the destination's context instead of for the host.
//! A relay thread polls the reads and sets each user event when its read completes (with the
//! read's status), so the launch thread enqueues the halo writes and the chunks behind them
//! at once and the destination starts as soon as its halos are in. Before, the launch
//! thread waited for the reads on the host, then enqueued the writes and two chunks: on
//! 2 H200s fdtd-2d's kernel 3 started ~0.1 ms after kernel 2 ended
//! (results/session26-2026-11-28 `b/debug-timeline.txt`).
//!
//! NVIDIA's driver delivers event callbacks up to ~20 ms late (`chunks::GPU_POLL_INTERVAL`'s
//! doc), so the relay polls instead.

use crate::exec::cl;
use crossbeam_channel::{unbounded, Receiver, Sender};
use opencl_sys::*;
use std::time::Duration;

/// How often the relay polls pending reads.
const POLL: Duration = Duration::from_micros(10);

/// A read and the user event to set once it completes; both references are the relay's.
struct Gate {
    read: cl_event,
    user: cl_event,
}

// SAFETY: OpenCL handles are thread-safe.
unsafe impl Send for Gate {}

/// The relay's input; the thread starts with the first gate (`Err`: it could not start).
#[derive(Default)]
pub(super) struct GateRelay {
    tx: Option<Result<Sender<Gate>, ()>>,
}

impl GateRelay {
    /// Sets `user` when `read` completes (`CL_COMPLETE`, or the read's negative status).
    /// Takes both references. `Err`: no relay thread; nothing was taken.
    ///
    /// # Safety
    /// `read` and `user` are clprism's own references to valid events, `user` a user event.
    pub unsafe fn open_after(&mut self, read: cl_event, user: cl_event) -> Result<(), ()> {
        let tx = self.tx.get_or_insert_with(|| {
            let (tx, rx) = unbounded::<Gate>();
            std::thread::Builder::new()
                .name("clprism-gates".into())
                .spawn(move || relay(rx))
                .map(|_| tx)
                .map_err(|_| ())
        });
        match tx {
            Ok(tx) => tx.send(Gate { read, user }).map_err(|_| ()),
            Err(()) => Err(()),
        }
    }
}

/// The relay thread: polls pending reads, sets their user events, releases both.
fn relay(rx: Receiver<Gate>) {
    // sleeps of a few µs last a few µs (the default timer slack is 50 µs)
    // SAFETY: changes only this thread's timer slack.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000) };
    let mut pending: Vec<Gate> = Vec::new();
    loop {
        if pending.is_empty() {
            match rx.recv() {
                Ok(g) => pending.push(g),
                Err(_) => return,
            }
        }
        pending.extend(rx.try_iter());
        if crate::exec::background::get().exiting() {
            // the driver may be torn down: touch nothing more
            std::mem::forget(pending);
            return;
        }
        pending.retain(|g| {
            // SAFETY: the relay's own references.
            let status = match unsafe { cl::event_status(g.read) } {
                Ok(s) if s > CL_COMPLETE as cl_int => return true,
                Ok(s) => s,
                Err(e) => e.code,
            };
            // SAFETY: as above; each gate is set and released once.
            unsafe {
                let _ = cl::set_user_event(g.user, status.min(CL_COMPLETE as cl_int));
                cl::release_event(g.user);
                cl::release_event(g.read);
            }
            false
        });
        if !pending.is_empty() {
            std::thread::sleep(POLL);
        }
    }
}
