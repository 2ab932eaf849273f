//! Asynchronous balanced launches (issue 31 item 4; DESIGN.md §7, "Ordering"): the app's
//! `clEnqueueNDRangeKernel` returns at once, and clprism's launch thread runs the launch.
//!
//! What the hook enqueues on the app's queue, in order:
//! 1. a **start barrier** (the launch's wait list, or every earlier command): the launch
//!    thread waits for it before it reads any of the app's buffers;
//! 2. an **end barrier** gated by a **user event** of the app's context, the event the app
//!    gets: later commands of the queue, the app's waits, `clFinish`, blocking reads and
//!    callbacks wait for it, and the launch thread sets the user event once the launch is
//!    done (its chunks, its merge or the directory's bookkeeping, or the whole launch run
//!    on the app's device when it is not split).
//!
//! The launch thread takes launches in the order the app made them (one FIFO for the
//! process, as the engine's lock serialised them before), so the next launch is planned and
//! its chunks enqueued as soon as the previous one ends, while the app's thread goes on.
//!
//! Where the driver does not hold later commands behind a user-event barrier, the launch runs
//! synchronously as before ([`holds_behind_user_event`]): PoCL 3.1 with a `basic` device
//! lets a read pass such a barrier (results/pocl-user-event).
//!
//! clprism's own hooks do not rely on the barrier alone: every app command that touches a
//! buffer through them (reads, writes, maps, copies, fills, a forwarded launch, a release)
//! first waits until the launch thread has finished every launch submitted before it
//! ([`Pipeline::settle`]), since a launch still queued may leave bytes on the devices that
//! the command needs gathered first.

use super::cl;
use super::Job;
use crate::log::schema::ProbeLog;
use crate::registry::tables::{buffer_named_by, Key};
use crossbeam_channel::{unbounded, Receiver, Sender};
use once_cell::sync::OnceCell;
use opencl_sys::*;
use parking_lot::{Condvar, Mutex};
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A launch handed to the launch thread.
pub struct Submitted {
    /// The launch.
    pub job: Job,
    /// The start barrier on the app's queue (clprism's reference); null when the queue was
    /// quiet and does not profile (nothing to wait for, no times to read).
    pub start: cl_event,
    /// The user event the end barrier waits for (clprism's reference).
    pub gate: cl_event,
    /// The end barrier: the app's event (not retained by clprism; only its handle is kept,
    /// for [`Pipeline::note_span`]).
    pub end: cl_event,
    /// The early decision already said "consider a split" on the app's thread; when not, the
    /// launch thread takes it.
    pub decided: bool,
    /// Wait for the start barrier: false when the app enqueued nothing on the queue since
    /// the previous launch the launch thread ran from it and the launch has no wait list
    /// (the start barrier then waits only for that launch, which the launch thread finished
    /// first).
    pub wait_start: bool,
    /// A probe chunk that ran on the app's thread before the rest (`exec::early`).
    pub probe: Option<ProbeLog>,
    /// Buffers of the arguments, the app's program and context, retained until the launch
    /// is done (the app may release them right after the enqueue).
    held: Held,
    /// The pipeline that took the launch: counts its gate as opened ([`Pipeline::finish_early`]).
    pipeline: &'static Pipeline,
}

// SAFETY: OpenCL handles are thread-safe.
unsafe impl Send for Submitted {}

/// Handles retained for a launch in flight; released on drop.
#[derive(Default)]
struct Held {
    mems: Vec<cl_mem>,
    program: Option<cl_program>,
    context: Option<cl_context>,
}

impl Drop for Held {
    fn drop(&mut self) {
        // SAFETY: references taken by `Held::take`, released once.
        unsafe {
            for m in self.mems.drain(..) {
                cl::release_mem(m);
            }
            if let Some(p) = self.program.take() {
                cl::release_program(p);
            }
            if let Some(c) = self.context.take() {
                cl::release_context(c);
            }
        }
    }
}

impl Held {
    /// Retains the job's buffers, program and context.
    ///
    /// # Safety
    /// The job's handles are valid now (the app just enqueued the launch with them).
    unsafe fn take(job: &Job) -> Held {
        let mut h = Held::default();
        for m in job.args.iter().filter_map(buffer_named_by) {
            if cl::retain_mem(m as cl_mem).is_ok() {
                h.mems.push(m as cl_mem);
            }
        }
        if cl::retain_program(job.app_program).is_ok() {
            h.program = Some(job.app_program);
        }
        if cl::retain_context(job.app_context).is_ok() {
            h.context = Some(job.app_context);
        }
        h
    }
}

/// The launch thread's queue and what the app's threads know of it; owned by the engine.
#[derive(Default)]
pub struct Pipeline {
    /// The launch thread's input, made with the thread at the first submission (`Err`: the
    /// thread could not be started; launches then run synchronously).
    tx: OnceCell<Result<Sender<Submitted>, String>>,
    /// Launches submitted and not finished.
    in_flight: AtomicUsize,
    /// Guards the wait for `in_flight` to reach 0.
    lock: Mutex<()>,
    idle: Condvar,
    /// App context → whether its driver holds later commands behind a user-event barrier.
    holds: Mutex<FxHashMap<Key, bool>>,
    /// The app queue (as an integer) of the latest launch submitted, and whether the app
    /// enqueued nothing else on it since (`note_app_command` clears it).
    last_queue: AtomicUsize,
    quiet: std::sync::atomic::AtomicBool,
    /// The launch thread's input as the launch thread itself reads it ahead
    /// ([`Pipeline::take_next`]).
    rx: OnceCell<Receiver<Submitted>>,
    /// A launch the launch thread took from its input ahead of its turn and put back
    /// ([`Pipeline::put_back`]): the next one it runs.
    next: Mutex<Option<Submitted>>,
    /// The latest launches' spans for the app's profiling queries ([`Pipeline::span_of`]),
    /// by app event, with the events in the order noted (the oldest is dropped first).
    spans: Mutex<(FxHashMap<usize, Span>, std::collections::VecDeque<usize>)>,
    /// Launches submitted, and launches whose gate was opened (their end barrier's user event
    /// set), since the start: [`Pipeline::finish_early`] waits for the second to reach the
    /// first.
    submitted: AtomicUsize,
    opened: AtomicUsize,
    /// App queues (as integers) on which the app got a balanced launch's event since its last
    /// `clFinish` that went to the driver: the driver may still hold such an event as
    /// submitted for a while after its gate opened, so `clFinish` there goes to the driver.
    handed_events: Mutex<rustc_hash::FxHashSet<usize>>,
    /// The app's `clFinish` calls served by [`Pipeline::finish_early`], and those that went
    /// to the driver (`CLPRISM_DEBUG=1` prints both at exit).
    finishes_served: AtomicUsize,
    finishes_driver: AtomicUsize,
    /// Every balance device is a GPU or an accelerator: the launch thread and a served
    /// `clFinish` poll before they sleep ([`SPIN`]); on CPU devices the polling would take
    /// the cores the kernels run on.
    spin: std::sync::atomic::AtomicBool,
}

/// How long the launch thread polls for the app's next launch after one ends before sleeping,
/// on GPU-only engines: a thread woken from a sleep starts 30-45 µs later on the H200 hosts
/// (the hand-off to the launch thread, `bench/timeline.py`, results/session28-2026-11-28 call
/// b), once per time step of an app that waits at each; its next launch came 45-90 µs after
/// the last one's end there.
pub const SPIN: std::time::Duration = std::time::Duration::from_micros(300);

/// How long a served `clFinish` polls for the gates before sleeping, on GPU-only engines: the
/// app waits there for the whole of its latest launch (0.3-1 ms per launch for PolyBench-ACC's
/// stencils at 16384² over 2-4 H200s), and its wake-up after the launch's end took 44 µs from
/// a sleep (results/session28-2026-11-28 call b). The driver's own `clFinish` polls too.
pub const FINISH_SPIN: std::time::Duration = std::time::Duration::from_millis(2);

/// Polls `ready` with `yield_now` for at most `budget`; returns whether it became true.
fn poll_for(budget: std::time::Duration, mut ready: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + budget;
    loop {
        if ready() {
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        std::thread::yield_now();
    }
}

/// A launch's start on the app's device clock, for the profiling queries of the event the
/// app got (an end barrier, which starts and ends when the launch ends): the start barrier's
/// `QUEUED`, `SUBMIT` and `END` (ns).
#[derive(Clone, Copy, Debug)]
pub struct Span {
    /// `CL_PROFILING_COMMAND_QUEUED` to report, ns.
    pub queued: u64,
    /// `CL_PROFILING_COMMAND_SUBMIT` to report, ns.
    pub submit: u64,
    /// `CL_PROFILING_COMMAND_START` to report, ns.
    pub start: u64,
}

/// Launch spans kept for the app's profiling queries: the latest ones (an app reads a
/// launch's times soon after it completes); an event handle the driver reuses later is
/// told apart by its times ([`Pipeline::span_of`]).
const SPANS_KEPT: usize = 4096;

impl Pipeline {
    /// The app enqueued a command of its own on queue `q`.
    pub fn note_app_command(&self, q: usize) {
        if self.last_queue.load(Ordering::Acquire) == q {
            self.quiet.store(false, Ordering::Release);
        }
    }

    /// Every balance device is a GPU or an accelerator (set once the engine is open).
    pub fn set_spin(&self, gpus_only: bool) {
        self.spin.store(gpus_only, Ordering::Relaxed);
    }

    /// The app got the event of a launch it enqueued on queue `q`.
    pub fn note_event_handed(&self, q: usize) {
        self.handed_events.lock().insert(q);
    }

    /// A `clFinish` of queue `q` returned from the driver: every event of the queue is
    /// complete.
    pub fn note_driver_finish(&self, q: usize) {
        self.finishes_driver.fetch_add(1, Ordering::Relaxed);
        if let Some(mut h) = self.handed_events.try_lock() {
            h.remove(&q);
        }
    }

    /// Serves the app's `clFinish` of queue `q` without the driver when it can: the app's
    /// latest command on `q` is a launch handed to the launch thread and it enqueued nothing
    /// else on `q` since (the quiet queue), it got none of those launches' events, and every
    /// launch submitted so far has opened its gate. Each launch's start barrier made it wait
    /// for the commands before it, so what the queue still holds in the driver is clprism's
    /// barriers whose user events are set; the driver's own `clFinish` would wait for the
    /// user events' delivery (about 60 µs per wait on NVIDIA's driver, session 20's
    /// `c-ue-block.txt`), which an app that waits at every time step (PolyBench-ACC
    /// fdtd-2d, jacobi-2d) pays at each step. Returns whether the finish was served; false:
    /// call the driver.
    pub fn finish_early(&self, q: usize) -> bool {
        let quiet =
            || self.last_queue.load(Ordering::Acquire) == q && self.quiet.load(Ordering::Acquire);
        if !quiet() || self.handed_events.lock().contains(&q) {
            return false;
        }
        let target = self.submitted.load(Ordering::Acquire);
        let done = || self.opened.load(Ordering::Acquire) >= target || !self.busy();
        if !(self.spin.load(Ordering::Relaxed) && poll_for(FINISH_SPIN, done)) {
            let mut g = self.lock.lock();
            while self.opened.load(Ordering::Acquire) < target && self.busy() {
                self.idle.wait(&mut g);
            }
        }
        // every gate open, and nothing enqueued on the queue meanwhile (another app thread)
        let served = self.opened.load(Ordering::Acquire) >= target && quiet();
        if served {
            self.finishes_served.fetch_add(1, Ordering::Relaxed);
        }
        served
    }

    /// The app's `clFinish` calls served by clprism and those that went to the driver (and
    /// returned `CL_SUCCESS`), so far.
    pub fn finish_counts(&self) -> (usize, usize) {
        (
            self.finishes_served.load(Ordering::Relaxed),
            self.finishes_driver.load(Ordering::Relaxed),
        )
    }

    /// A launch's gate was opened.
    fn gate_opened(&self) {
        let _g = self.lock.lock();
        self.opened.fetch_add(1, Ordering::AcqRel);
        self.idle.notify_all();
    }

    /// Whether launches are in flight on the launch thread.
    pub fn busy(&self) -> bool {
        self.in_flight.load(Ordering::Acquire) > 0
    }

    /// Waits until every launch submitted so far is done (returns at once when none is).
    pub fn settle(&self) {
        if !self.busy() {
            return;
        }
        let mut g = self.lock.lock();
        while self.busy() {
            self.idle.wait(&mut g);
        }
    }

    /// Notes the span of the launch whose app event is `end_event`, from its completed start
    /// barrier `start` (nothing when the app's queue does not profile). Both are clprism's
    /// own handles to events of a queue it enqueued on; only the driver reads them.
    #[allow(clippy::not_unsafe_ptr_arg_deref)]
    pub fn note_span(&self, end_event: cl_event, start: cl_event) {
        let f = match crate::loader::table().and_then(|t| t.clGetEventProfilingInfo) {
            Some(f) => f,
            None => return,
        };
        let read = |param| {
            // SAFETY: a cl_ulong output of clprism's reference to a completed event.
            unsafe { cl::info::<u64>(|n, p, r| f(start, param, n, p, r)) }
        };
        let (Some(queued), Some(submit), Some(start)) = (
            read(CL_PROFILING_COMMAND_QUEUED),
            read(CL_PROFILING_COMMAND_SUBMIT),
            read(CL_PROFILING_COMMAND_END),
        ) else {
            return;
        };
        let mut g = self.spans.lock();
        let (map, order) = &mut *g;
        if order.len() == SPANS_KEPT {
            if let Some(old) = order.pop_front() {
                map.remove(&old);
            }
        }
        let key = end_event as usize;
        order.push_back(key);
        map.insert(
            key,
            Span {
                queued,
                submit,
                start,
            },
        );
    }

    /// The span of the launch whose app event is `ev`, if one of the latest: its `QUEUED`,
    /// `SUBMIT` and `START` are the start barrier's (the event's own `END` stays the
    /// driver's). `ev_end` reads the event's own `END` (asked only for a known handle), to
    /// tell a handle the driver reused for a later event apart.
    pub fn span_of(&self, ev: cl_event, ev_end: impl FnOnce() -> Option<u64>) -> Option<Span> {
        let s = self.spans.lock().0.get(&(ev as usize)).copied()?;
        (s.start <= ev_end()?).then_some(s)
    }

    /// The next launch submitted after the one the launch thread runs, when one is already
    /// waiting (only the launch thread calls this); give it back with [`Pipeline::put_back`]:
    /// the launch thread runs it next.
    pub fn take_next(&self) -> Option<Submitted> {
        if let Some(s) = self.next.lock().take() {
            return Some(s);
        }
        self.rx.get()?.try_recv().ok()
    }

    /// Gives back the launch [`Pipeline::take_next`] handed out: the launch thread runs it
    /// next.
    pub fn put_back(&self, s: Submitted) {
        *self.next.lock() = Some(s);
    }

    /// One launch is done.
    fn finished(&self) {
        let _g = self.lock.lock();
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
        self.idle.notify_all();
    }

    /// Whether launches on `ctx`'s device `dev` may run asynchronously: `CLPRISM_BALANCE_ASYNC`
    /// is on and the driver holds later commands behind a user-event barrier
    /// ([`holds_behind_user_event`], found once per context).
    pub fn allowed(&self, ctx: cl_context, dev: cl_device_id) -> bool {
        if !crate::config::get().balance_async {
            return false;
        }
        if let Some(v) = self.holds.lock().get(&(ctx as Key)) {
            return *v;
        }
        let v = holds_behind_user_event(dev);
        if !v {
            crate::config::debug(|| {
                "balance: the driver lets commands pass a barrier gated by a user event; \
                 balanced launches run on the app's thread"
                    .into()
            });
        }
        self.holds.lock().insert(ctx as Key, v);
        v
    }

    /// The app's next launch when it comes within [`SPIN`] (GPU-only engines; `None` at once
    /// otherwise): the launch thread then starts it without a wake-up.
    fn poll_next(&self, rx: &Receiver<Submitted>) -> Option<Submitted> {
        if !self.spin.load(Ordering::Relaxed) {
            return None;
        }
        let mut next = None;
        poll_for(SPIN, || {
            next = rx.try_recv().ok();
            next.is_some()
        });
        next
    }

    /// The launch thread's input, starting the thread at the first call. `run` runs one
    /// submitted launch (on the launch thread).
    fn sender(
        &'static self,
        run: fn(Submitted),
    ) -> Result<&'static Sender<Submitted>, &'static str> {
        self.tx
            .get_or_init(|| {
                let (tx, rx) = unbounded::<Submitted>();
                let _ = self.rx.set(rx.clone());
                std::thread::Builder::new()
                    .name("clprism-launches".into())
                    .spawn(move || {
                        // sleeps of a few µs last a few µs (the default slack is 50 µs): the
                        // launch loop polls running chunks every 15 µs on GPUs
                        // SAFETY: changes only this thread's timer slack.
                        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1000) };
                        loop {
                            let put_back = self.next.lock().take();
                            let Some(s) = put_back
                                .or_else(|| self.poll_next(&rx))
                                .or_else(|| rx.recv().ok())
                            else {
                                break;
                            };
                            let _ =
                                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(s)));
                            self.finished();
                        }
                    })
                    .map(|_| tx)
                    .map_err(|e| format!("the launch thread could not start: {e}"))
            })
            .as_ref()
            .map_err(|e| e.as_str())
    }

    /// Enqueues the start and end barriers of `job` on the app's queue `q` (after `wait`)
    /// and hands the launch to the launch thread, which runs it with `run`. Returns the end
    /// barrier's event (the app's), or why not ([`Refused`]).
    ///
    /// # Safety
    /// `q` and `wait` are the app's valid queue and wait list; the job's handles are valid.
    pub unsafe fn submit(
        &'static self,
        job: Job,
        q: cl_command_queue,
        wait: &[cl_event],
        (decided, probe): (bool, Option<ProbeLog>),
        run: fn(Submitted),
    ) -> Result<cl_event, Refused> {
        let Ok(tx) = self.sender(run) else {
            return Err(Refused::Synchronous(Box::new(job)));
        };
        // the queue is quiet: its previous command is the end barrier of the launch the
        // launch thread runs just before this one (a launch refused below is run on the app's
        // thread, which notes it as an app command)
        let quiet = wait.is_empty()
            && self.last_queue.swap(q as usize, Ordering::AcqRel) == q as usize
            && self.quiet.swap(true, Ordering::AcqRel);
        // nothing to wait for on a quiet queue: the start barrier is left out unless the
        // app's profiling queries need its times ([`Pipeline::note_span`])
        let profiles = || {
            crate::registry::TABLES
                .queues
                .with(q as Key, |i| {
                    i.app_properties & CL_QUEUE_PROFILING_ENABLE != 0
                })
                .unwrap_or(true)
        };
        let start = if quiet && !profiles() {
            std::ptr::null_mut()
        } else {
            cl::barrier(q, wait).map_err(|e| Refused::Driver(e.code))?
        };
        let release_start = || {
            if !start.is_null() {
                cl::release_event(start);
            }
        };
        let gate = match cl::user_event(job.app_context) {
            Ok(g) => g,
            Err(_) => {
                release_start();
                return Err(Refused::Synchronous(Box::new(job)));
            }
        };
        let end = match cl::barrier(q, &[gate]) {
            Ok(e) => e,
            Err(_) => {
                let _ = cl::set_user_event(gate, CL_COMPLETE);
                cl::release_event(gate);
                release_start();
                return Err(Refused::Synchronous(Box::new(job)));
            }
        };
        let _ = cl::flush(q);
        let held = Held::take(&job);
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        self.submitted.fetch_add(1, Ordering::AcqRel);
        let s = Submitted {
            job,
            start,
            gate,
            end,
            decided,
            wait_start: !quiet,
            probe,
            held,
            pipeline: self,
        };
        if let Err(e) = tx.send(s) {
            // the thread is gone: run it here (the barriers are already enqueued)
            run(e.into_inner());
            self.finished();
        }
        Ok(end)
    }
}

/// Why a launch was not handed to the launch thread.
pub enum Refused {
    /// Nothing was enqueued: run it on the app's thread.
    Synchronous(Box<Job>),
    /// The driver refused the start barrier: its verdict on the wait list or the queue, for
    /// the app.
    Driver(cl_int),
}

impl Submitted {
    /// Lets the app's queue go on: the end barrier completes with `status` (`CL_COMPLETE`, or
    /// a negative code when the launch failed), and the handles retained for the launch are
    /// released. The launch's span is noted first ([`Pipeline::note_span`]).
    pub fn open_gate(self, pipeline: Option<&Pipeline>, status: cl_int) {
        // the start barrier has completed: the launch thread finished the launch before
        if let (Some(p), false) = (pipeline, self.start.is_null()) {
            p.note_span(self.end, self.start);
        }
        // SAFETY: clprism's user event and start barrier references, released once.
        unsafe {
            let _ = cl::set_user_event(self.gate, status);
            cl::release_event(self.gate);
            if !self.start.is_null() {
                cl::release_event(self.start);
            }
        }
        self.pipeline.gate_opened();
        drop(self.held);
    }
}

/// Waits for `ev` to complete, polling, so that the process's exit is never held up by an
/// event the app will not complete any more (`Err`: the process is exiting, or the event
/// failed: its status). `ev` is clprism's own reference; only the driver reads it.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn wait_polling(ev: cl_event) -> Result<(), cl_int> {
    // yield for the first 200 us (a sleep lasts at least the timer slack, ~50 us), then sleep
    let spin_until = std::time::Instant::now() + std::time::Duration::from_micros(200);
    let mut pause = std::time::Duration::from_micros(20);
    loop {
        // SAFETY: clprism's reference to the event.
        match unsafe { cl::event_status(ev) } {
            Ok(s) if s == CL_COMPLETE => return Ok(()),
            Ok(s) if s < 0 => return Err(s),
            Ok(_) => {}
            Err(e) => return Err(e.code),
        }
        if super::background::get().exiting() {
            return Err(CL_INVALID_OPERATION);
        }
        if std::time::Instant::now() < spin_until {
            std::thread::yield_now();
            continue;
        }
        std::thread::sleep(pause);
        pause = (pause * 2).min(std::time::Duration::from_micros(200));
    }
}

/// Whether the driver of `dev` holds later commands of a queue behind a barrier gated by a
/// user event until the event is set. Every driver is trusted to, except PoCL 3.1 with a
/// `basic` device in the platform (its devices' names start with `basic-`): there a read
/// passes such a barrier (results/pocl-user-event), and setting a user event that a
/// pending barrier waits for deadlocked inside PoCL (`pocl_update_event_running`, seen
/// here while checking the driver with such a barrier at run time, so no run-time check is
/// made).
pub fn holds_behind_user_event(dev: cl_device_id) -> bool {
    !crate::registry::device::platform_has_device_named(dev, "basic-")
}
