//! The pre-launch contents of a launch's buffer arguments, as project mode's emulation reads
//! them (issue 19 item 1).
//!
//! * A buffer the launch may write (the kernel stores through an argument naming it or a
//!   buffer sharing its storage, per [`crate::emu::writes`]) is copied *eagerly*: a
//!   `clEnqueueCopyBuffer` on the app's queue before the kernel, into a buffer clprism owns.
//!   The eager copies held at once are bounded by `CLPRISM_EMU_SNAPSHOT_MAX`.
//! * A buffer the launch only reads keeps its pre-launch contents after the launch until a
//!   later command may write it, so it is *deferred* (copy on write): no copy is taken, the
//!   emulation reads the app's buffer itself (on a queue of clprism's, after a marker that
//!   follows the launch on the app's queue), and the buffer is registered as pending. Every
//!   command that may write it later calls [`before_write`] before it is forwarded (the
//!   generated `writes:N` stubs, a kernel launch that may store through it,
//!   `clEnqueueMigrateMemObjects` with undefined contents): the copy is taken then, on that
//!   command's queue and ordered before it, bounded by the same cap. One copy per buffer and
//!   write serves every launch that read the buffer before that write and whose emulation
//!   has not ended (their bytes count once and come back when the last of them finishes).
//!   When it would exceed the cap, the app's thread waits, bounded ([`super::budget`]), for
//!   held bytes to come back or for those emulations to finish with the buffer; after that
//!   the writing command is *held back* on the device ([`WriteHold`]: a barrier before it
//!   waits for a user event clprism sets once those emulations are done with the buffer's
//!   pages, bounded), so no copy is needed (issue 32). Only when that fails or its bound
//!   passes is the buffer *lost* to the emulation (any page it still needs fails the
//!   emulation with the reason). The eager copies at a launch wait for room the same way. clprism retains the app's buffer while it is pending, so
//!   the app's last `clReleaseMemObject` does not destroy the contents. Buffers created with
//!   `CL_MEM_USE_HOST_PTR` (the host may change them without any OpenCL call) are copied
//!   eagerly.
//!
//! Reads of a deferred buffer and the switch to its later copy are serialized by the
//! buffer's lock, so no page is ever read from the app's buffer after the writing command
//! was forwarded.

use super::budget::Hold;
use super::projector;
use crate::emu;
use crate::registry::tables::Key;
use crate::registry::TABLES;
use opencl_sys::*;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Snapshots larger than this are read back page by page as the emulated work-group touches
/// them ([`emu::paged`]); smaller ones whole.
pub(super) const PAGED_MIN: usize = 1 << 20;
/// Longest wait of the worker for a snapshot copy or the launch (deferred buffers) to
/// finish.
const SNAPSHOT_WAIT: Duration = Duration::from_secs(60);

/// Byte counts of one launch's snapshots (the `emulation.snapshot_*` fields).
#[derive(Debug, Default)]
pub(super) struct Counters {
    /// Bytes read back to the host (whole buffers and fetched pages).
    pub read_back: AtomicU64,
    /// Bytes of buffers deferred (not copied at the launch).
    pub deferred: AtomicU64,
    /// Bytes of deferred buffers copied later, before the app wrote them.
    pub later: AtomicU64,
    /// Bytes of deferred buffers written by the app before the emulation ended and whose
    /// copy could not be taken.
    pub lost: AtomicU64,
    /// Nanoseconds the app's thread waited for room under the cap for this launch's copies
    /// (eager, or later copies of its deferred buffers).
    pub waited_ns: AtomicU64,
    /// Nanoseconds app commands writing this launch's deferred buffers were held back on the
    /// device until the emulation was done with the buffer ([`WriteHold`]).
    pub held_ns: AtomicU64,
}

impl Counters {
    fn waited(&self, d: Duration) {
        self.waited_ns
            .fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }
}

/// An eager device-side copy of one buffer argument.
pub(super) struct Eager {
    /// The app's buffer handle.
    pub src: Key,
    /// clprism's copy.
    pub copy: cl_mem,
    pub size: usize,
}

/// The snapshots of one launch.
#[derive(Default)]
pub(super) struct Snapshots {
    pub eager: Vec<Eager>,
    /// Buffers the kernel may write but never reads (handle, bytes): their pre-launch
    /// contents cannot change the emulation, so none are copied; the emulation gets zeros.
    pub blank: Vec<(Key, usize)>,
    /// Copy events of the eager copies.
    pub copy_events: Vec<cl_event>,
    /// Bytes of the eager copies (counted in `Projector::snapshot_bytes`).
    pub bytes: u64,
    pub deferred: Vec<Arc<Deferred>>,
    pub counters: Arc<Counters>,
}

/// The copy of a deferred buffer taken before one write, shared by every launch that read
/// the buffer before that write and whose emulation had not ended: one copy, its bytes
/// counted once under the cap and given back when the last of them finishes.
struct LaterCopy {
    mem: usize,
    /// The copy's event (on the writing command's queue).
    event: usize,
    bytes: u64,
}

impl Drop for LaterCopy {
    fn drop(&mut self) {
        // SAFETY: clprism's own handles, released once (the last reference).
        unsafe {
            crate::exec::cl::release_mem(self.mem as cl_mem);
            crate::exec::cl::release_event(self.event as cl_event);
        }
        projector().budget.unhold(self.bytes);
    }
}

/// What a deferred buffer's pages are read from.
enum State {
    /// The app's buffer (still as before the launch).
    App,
    /// clprism's copy taken before a write.
    Copied(Arc<LaterCopy>),
    /// Written by the app without a copy: why.
    Lost(String),
    /// The emulation no longer needs it.
    Done,
}

/// A buffer argument that the launch only reads, not copied at the launch.
pub(super) struct Deferred {
    /// The app's buffer (retained by clprism until [`Deferred::finish`]).
    app: usize,
    /// The buffer whose storage it is (itself, or a sub-buffer's parent).
    root: Key,
    pub size: usize,
    context: usize,
    /// A marker after the launch on the app's queue (set at registration).
    marker: Mutex<usize>,
    state: Mutex<State>,
    /// App commands held back until the emulation is done with this buffer (locked after
    /// `state` when both are).
    holds: Mutex<Vec<Arc<WriteHold>>>,
    counters: Arc<Counters>,
}

/// Deferred buffers pending per root buffer, and how many there are (the write hooks'
/// fast path).
static PENDING: once_cell::sync::Lazy<Mutex<HashMap<Key, Vec<Arc<Deferred>>>>> =
    once_cell::sync::Lazy::new(Default::default);
static PENDING_COUNT: AtomicUsize = AtomicUsize::new(0);

/// The buffer whose storage `m` is (its parent for a sub-buffer).
fn root_of(m: Key) -> Key {
    TABLES
        .buffers
        .with(m, |b| b.parent.map(|p| p.0))
        .flatten()
        .unwrap_or(m)
}

/// True when the host may change `m` without an OpenCL call (`CL_MEM_USE_HOST_PTR`, on it
/// or its parent) or clprism does not know it.
fn host_backed(m: Key) -> bool {
    let flags = |b: Key| TABLES.buffers.with(b, |i| i.flags);
    match (flags(m), flags(root_of(m))) {
        (Some(a), Some(b)) => (a | b) & CL_MEM_USE_HOST_PTR as cl_mem_flags != 0,
        _ => true,
    }
}

/// Takes the snapshots of a launch on `q` (the app's queue, `wait` its wait list): the
/// buffers named by `args` whose index `written` marks (all when `None`) eagerly, the others
/// deferred when `defer`. `Err` with the reason when the eager copies do not fit under the
/// cap, or a copy cannot be made (nothing is then held).
///
/// # Safety
/// `q` and the buffers named by `args` are the app's live handles.
/// Per kernel parameter, whether the kernel may store and may load through it (`None`:
/// unknown, so every parameter may).
#[derive(Clone, Copy)]
pub(super) struct ArgAccess<'a> {
    pub written: Option<&'a [bool]>,
    pub read: Option<&'a [bool]>,
}

pub(super) unsafe fn take(
    q: cl_command_queue,
    context: Key,
    args: &[Option<crate::registry::tables::KernelArg>],
    access: ArgAccess<'_>,
    wait: &[cl_event],
) -> Result<Snapshots, String> {
    let may = |v: Option<&[bool]>, i: usize| v.is_none_or(|v| v.get(i).copied().unwrap_or(true));
    // (buffer, size, written, read) per distinct buffer
    let mut bufs: Vec<(Key, usize, bool, bool)> = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let Some(h) = a
            .as_ref()
            .and_then(crate::registry::tables::buffer_named_by)
        else {
            continue;
        };
        let (w, r) = (may(access.written, i), may(access.read, i));
        match bufs.iter_mut().find(|b| b.0 == h) {
            Some(b) => {
                b.2 |= w;
                b.3 |= r;
            }
            None => {
                if let Some(size) = TABLES.buffers.with(h, |i| i.size) {
                    bufs.push((h, size, w, r));
                }
            }
        }
    }
    // a buffer sharing storage with a written (read) one (sub-buffers) is written (read) too
    let written_roots: Vec<Key> = bufs.iter().filter(|b| b.2).map(|b| root_of(b.0)).collect();
    let read_roots: Vec<Key> = bufs.iter().filter(|b| b.3).map(|b| root_of(b.0)).collect();
    for b in bufs.iter_mut() {
        b.2 |= written_roots.contains(&root_of(b.0)) || host_backed(b.0);
        b.3 |= read_roots.contains(&root_of(b.0));
    }
    let mut s = Snapshots::default();
    // written, never read: no pre-launch contents needed (clpeak's 2 GiB bandwidth outputs
    // were over the cap and its launches not emulated)
    bufs.retain(|&(h, size, w, r)| {
        let blank = w && !r;
        if blank {
            s.blank.push((h, size));
        }
        !blank
    });
    let total: u64 = bufs.iter().filter(|b| b.2).map(|b| b.1 as u64).sum();
    let cap = crate::config::get().emu_snapshot_max;
    if total > cap {
        return Err(format!(
            "buffer snapshot of {total} bytes (buffers the kernel may write) exceeds CLPRISM_EMU_SNAPSHOT_MAX={cap}"
        ));
    }
    match hold(q, total, &|| true) {
        Hold::Held(w) => s.counters.waited(w),
        Hold::Full(held, w) => {
            return Err(format!(
                "buffer snapshot of {total} bytes: {held} bytes of earlier snapshots are still held after waiting {} ms (CLPRISM_EMU_SNAPSHOT_MAX={cap})",
                w.as_millis()
            ))
        }
        // `needed` is always true
        Hold::NotNeeded(_) => return Err("internal: eager snapshot not needed".into()),
    }
    s.bytes = total;
    for &(h, size, w, _) in &bufs {
        if w {
            if let Err(e) = copy_eager(q, context, h, size, wait, &mut s) {
                release(&mut s);
                return Err(e);
            }
            continue;
        }
        let retain = crate::exec::cl::rt()
            .ok()
            .and_then(|t| t.clRetainMemObject)
            .ok_or("clRetainMemObject unavailable")?;
        if retain(h as cl_mem) != CL_SUCCESS {
            release(&mut s);
            return Err("clRetainMemObject failed on a buffer argument".into());
        }
        s.counters
            .deferred
            .fetch_add(size as u64, Ordering::Relaxed);
        s.deferred.push(Arc::new(Deferred {
            app: h,
            root: root_of(h),
            size,
            context,
            marker: Mutex::new(0),
            state: Mutex::new(State::App),
            holds: Mutex::new(Vec::new()),
            counters: s.counters.clone(),
        }));
    }
    Ok(s)
}

/// Holds `size` bytes of the snapshot budget for a copy on the app's queue `q`: at once when
/// they fit, else after flushing `q` (so that nothing the worker may wait for is left
/// unsubmitted) with the bounded wait of [`super::budget`] while `needed()`.
///
/// # Safety
/// `q` is the app's live queue.
unsafe fn hold(q: cl_command_queue, size: u64, needed: &dyn Fn() -> bool) -> Hold {
    let budget = &projector().budget;
    let cap = crate::config::get().emu_snapshot_max;
    if budget.try_hold(size, cap).is_ok() {
        return Hold::Held(Duration::ZERO);
    }
    let _ = crate::exec::cl::flush(q);
    budget.hold_waiting(size, cap, needed)
}

unsafe fn copy_eager(
    q: cl_command_queue,
    context: Key,
    h: Key,
    size: usize,
    wait: &[cl_event],
    s: &mut Snapshots,
) -> Result<(), String> {
    let m = crate::exec::cl::create_buffer(context as cl_context, size)
        .map_err(|e| format!("snapshot buffer: {e}"))?;
    s.eager.push(Eager {
        src: h,
        copy: m,
        size,
    });
    let ev = enqueue_copy(q, h as cl_mem, m, size, wait)?;
    s.copy_events.push(ev);
    Ok(())
}

/// `clEnqueueCopyBuffer` of `size` bytes from `src` to `dst` on `q` after `wait`.
unsafe fn enqueue_copy(
    q: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    size: usize,
    wait: &[cl_event],
) -> Result<cl_event, String> {
    let copy = crate::exec::cl::rt()
        .map_err(|e| e.to_string())?
        .clEnqueueCopyBuffer
        .ok_or("clEnqueueCopyBuffer unavailable")?;
    let wp = if wait.is_empty() {
        std::ptr::null()
    } else {
        wait.as_ptr()
    };
    let mut ev: cl_event = std::ptr::null_mut();
    let r = copy(q, src, dst, 0, 0, size, wait.len() as u32, wp, &mut ev);
    if r != CL_SUCCESS {
        return Err(format!("snapshot copy: clEnqueueCopyBuffer returned {r}"));
    }
    Ok(ev)
}

/// Releases the eager copies and events and returns their bytes to the budget; finishes the
/// deferred buffers.
pub(super) fn release(s: &mut Snapshots) {
    // SAFETY: clprism's own handles, released once.
    unsafe {
        for e in s.copy_events.drain(..) {
            crate::exec::cl::release_event(e);
        }
        for c in s.eager.drain(..) {
            crate::exec::cl::release_mem(c.copy);
        }
    }
    projector().budget.unhold(std::mem::take(&mut s.bytes));
    for d in s.deferred.drain(..) {
        d.finish();
    }
}

/// Registers the deferred buffers of a launch just enqueued on `q`: a marker after it, then
/// every later write to them goes through [`before_write`].
///
/// # Safety
/// `q` is the app's live queue.
pub(super) unsafe fn register(q: cl_command_queue, s: &Snapshots) {
    if s.deferred.is_empty() {
        return;
    }
    let marker = match crate::exec::cl::marker(q, &[]) {
        Ok(m) => m,
        Err(e) => {
            for d in &s.deferred {
                d.lose(format!("no marker after the launch: {e}"));
            }
            return;
        }
    };
    let mut pending = PENDING.lock();
    for (n, d) in s.deferred.iter().enumerate() {
        if n > 0 {
            let _ = crate::exec::cl::retain_event(marker);
        }
        *d.marker.lock() = marker as usize;
        pending.entry(d.root).or_default().push(d.clone());
        PENDING_COUNT.fetch_add(1, Ordering::AcqRel);
    }
}

/// An app command on `q` may write buffer `m`: every deferred snapshot of its storage is
/// copied first (see the module docs), one copy per buffer handle shared by all the launches
/// still reading it ([`copy_shared`]). Cheap when nothing is pending.
///
/// # Safety
/// `q` is the app's live queue of the command (a queue of `m`'s context).
pub unsafe fn before_write(q: cl_command_queue, m: Key) {
    if !any_pending() || q.is_null() {
        return;
    }
    // called from forwarding stubs: no panic may cross the FFI boundary
    let _ = std::panic::catch_unwind(|| {
        let list = PENDING.lock().get(&root_of(m)).cloned();
        for group in by_handle(list.unwrap_or_default()) {
            copy_shared(q, &group);
        }
    });
}

/// The pending deferred buffers of one root, grouped by buffer handle and size (a root and
/// its sub-buffers hold different bytes), in registration order.
fn by_handle(list: Vec<Arc<Deferred>>) -> Vec<Vec<Arc<Deferred>>> {
    let mut groups: Vec<Vec<Arc<Deferred>>> = Vec::new();
    for d in list {
        match groups
            .iter_mut()
            .find(|g| g[0].app == d.app && g[0].size == d.size)
        {
            Some(g) => g.push(d),
            None => groups.push(vec![d]),
        }
    }
    groups
}

/// Takes one copy of the buffer of `group` (one handle) on `q` before a write, for every
/// member still reading the app's buffer. When it does not fit under the cap it waits
/// (bounded, [`super::budget`]) for held bytes to come back or for those members' emulations
/// to finish with the buffer; when it still does not fit they lose the buffer.
///
/// # Safety
/// `q` is the app's live queue of the writing command.
unsafe fn copy_shared(q: cl_command_queue, group: &[Arc<Deferred>]) {
    let reading: Vec<&Arc<Deferred>> = group.iter().filter(|d| d.reads_app()).collect();
    let Some(first) = reading.first() else {
        return;
    };
    let size = first.size as u64;
    if reading.iter().any(|d| d.held()) {
        // an earlier write is held back before this one: a copy now would see its bytes
        if !(in_order(q) && reading.iter().all(|d| d.held_on(q))) {
            // (behind a hold on the same in-order queue the command waits already)
            hold_back(q, &reading, "an earlier write of it is held back".into());
        }
        return;
    }
    let needed = || reading.iter().any(|d| d.reads_app());
    let (copy, waited) = match hold(q, size, &needed) {
        Hold::Held(w) => {
            let markers: Vec<cl_event> = reading.iter().filter_map(|d| d.marker()).collect();
            let r = first.copy_on(q, &markers);
            for m in markers {
                crate::exec::cl::release_event(m);
            }
            match r {
                Ok((mem, ev)) => (
                    Ok(Arc::new(LaterCopy {
                        mem: mem as usize,
                        event: ev as usize,
                        bytes: size,
                    })),
                    w,
                ),
                Err(why) => {
                    projector().budget.unhold(size);
                    (Err(why), w)
                }
            }
        }
        Hold::NotNeeded(_) => return,
        Hold::Full(held, w) => {
            let cap = crate::config::get().emu_snapshot_max;
            for d in &reading {
                d.counters.waited(w);
            }
            let why = format!(
                "a {size}-byte buffer the kernel only reads was overwritten before the emulation ended and its copy does not fit: {held} bytes of snapshots held after waiting {} ms (CLPRISM_EMU_SNAPSHOT_MAX={cap})",
                w.as_millis()
            );
            hold_back(q, &reading, why);
            return;
        }
    };
    for d in reading {
        d.counters.waited(waited);
        match &copy {
            Ok(c) => d.take_copy(c),
            Err(why) => d.lose(why.clone()),
        }
    }
}

/// Longest time one app command writing a deferred buffer is held back ([`WriteHold`]).
const HOLD_ONE: Duration = Duration::from_secs(10);

/// An app command writing a deferred buffer whose copy does not fit, held back on the device
/// (a barrier on its queue waits for a user event of clprism's) until every emulation still
/// reading the buffer is done with it, at most [`HOLD_ONE`] and the process's allowance
/// ([`super::budget::Budget::hold_limit`]): the emulation takes the pages its work-group
/// reads from the app's buffer meanwhile, so no copy of the buffer is made (a 1 GiB input
/// overwritten right after its launch costs the write a delay, not a 1 GiB copy). The app's
/// thread does not wait, unless the command blocks.
struct WriteHold {
    /// The user event the barrier waits for.
    event: usize,
    /// The queue of the held command.
    queue: usize,
    /// Readers not done with the buffer yet.
    left: Mutex<usize>,
    cv: parking_lot::Condvar,
    since: Instant,
}

impl WriteHold {
    /// One reader no longer reads the app's buffer.
    fn one_done(&self) {
        let mut l = self.left.lock();
        *l = l.saturating_sub(1);
        if *l == 0 {
            self.cv.notify_all();
        }
    }

    /// [`Self::wait`], then lets the held command run, whatever happened.
    fn watch(&self, readers: &[Arc<Deferred>], limit: Duration) {
        let waited =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.wait(readers, limit)));
        if waited.is_err() {
            log::debug!("clprism: panic while holding a write back; released");
        }
        self.release();
    }

    /// Waits (at most `limit`) for the readers to be done, and makes those still reading
    /// lose the buffer (under its lock: a page read in progress ends first).
    fn wait(&self, readers: &[Arc<Deferred>], limit: Duration) {
        let deadline = self.since + limit;
        {
            let mut l = self.left.lock();
            while *l > 0 {
                if self.cv.wait_until(&mut l, deadline).timed_out() {
                    break;
                }
            }
        }
        for d in readers {
            d.lose(format!(
                "a {}-byte buffer the kernel only reads was overwritten before the emulation ended: the write was held back {} ms (at most {} ms) and the emulation still needed it",
                d.size,
                self.since.elapsed().as_millis(),
                limit.as_millis()
            ));
        }
    }

    /// Completes the user event: the held command runs.
    fn release(&self) {
        // SAFETY: clprism's own user event, completed and released once (by `watch`).
        unsafe {
            let _ = crate::exec::cl::set_user_event(self.event as cl_event, CL_COMPLETE);
            crate::exec::cl::release_event(self.event as cl_event);
        }
        projector().budget.held_back(self.since.elapsed());
    }
}

/// Holds the app command about to be forwarded on `q` back until the emulations of
/// `reading` are done with the buffer ([`WriteHold`]); when that cannot be done they lose
/// the buffer, with `why` and the reason.
///
/// # Safety
/// `q` is the app's live queue of the writing command.
unsafe fn hold_back(q: cl_command_queue, reading: &[&Arc<Deferred>], why: String) {
    if let Err(e) = try_hold_back(q, reading) {
        for d in reading {
            d.lose(format!("{why}; not held back: {e}"));
        }
    }
}

/// [`hold_back`]: the barrier, the registration with the readers and the watching thread.
unsafe fn try_hold_back(q: cl_command_queue, reading: &[&Arc<Deferred>]) -> Result<(), String> {
    let limit = projector()
        .budget
        .hold_limit(HOLD_ONE)
        .ok_or("the process's time for held-back writes is spent")?;
    let ctx = reading.first().ok_or("no reader")?.context as cl_context;
    let ev = crate::exec::cl::user_event(ctx).map_err(|e| format!("user event: {e}"))?;
    let hold = Arc::new(WriteHold {
        event: ev as usize,
        queue: q as usize,
        left: Mutex::new(reading.len()),
        cv: parking_lot::Condvar::new(),
        since: Instant::now(),
    });
    match crate::exec::cl::barrier(q, &[ev]) {
        Ok(b) => crate::exec::cl::release_event(b),
        Err(e) => {
            hold.release();
            return Err(format!("barrier: {e}"));
        }
    }
    // the launch and its marker must run while the app's command waits
    let _ = crate::exec::cl::flush(q);
    for d in reading {
        if !d.add_hold(&hold) {
            hold.one_done();
        }
    }
    let readers: Vec<Arc<Deferred>> = reading.iter().map(|d| Arc::clone(d)).collect();
    let watcher = hold.clone();
    let spawned = std::thread::Builder::new()
        .name("clprism-hold".into())
        .spawn(move || watcher.watch(&readers, limit));
    if let Err(e) = spawned {
        // nobody would release the command: the readers lose the buffer, the command runs
        for d in reading {
            d.lose(format!("no thread to watch the held-back write: {e}"));
        }
        hold.release();
    }
    Ok(())
}

/// True when the app created `q` in order (false when unknown).
fn in_order(q: cl_command_queue) -> bool {
    TABLES
        .queues
        .with(q as Key, |i| {
            i.app_properties & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE == 0
        })
        .unwrap_or(false)
}

/// True when some deferred snapshot is pending.
pub(super) fn any_pending() -> bool {
    PENDING_COUNT.load(Ordering::Acquire) > 0
}

impl Deferred {
    fn lose(&self, why: String) {
        let mut st = self.state.lock();
        if matches!(*st, State::App) {
            self.counters
                .lost
                .fetch_add(self.size as u64, Ordering::Relaxed);
            *st = State::Lost(why);
        }
        drop(st);
        self.release_holds();
    }

    /// Counts `h` among the held commands this buffer lets run when done; false (not
    /// counted) when it no longer reads the app's buffer.
    fn add_hold(&self, h: &Arc<WriteHold>) -> bool {
        let st = self.state.lock();
        if !matches!(*st, State::App) {
            return false;
        }
        self.holds.lock().push(h.clone());
        true
    }

    /// True while an app command writing the buffer is held back for it.
    fn held(&self) -> bool {
        !self.holds.lock().is_empty()
    }

    /// True while an app command on `q` is held back for it.
    fn held_on(&self, q: cl_command_queue) -> bool {
        self.holds.lock().iter().any(|h| h.queue == q as usize)
    }

    /// Done with the app's buffer: each held command stops waiting for it, and the time it
    /// was held so far counts on this launch (`emulation.snapshot_held_ns`).
    fn release_holds(&self) {
        for h in std::mem::take(&mut *self.holds.lock()) {
            let ns = h.since.elapsed().as_nanos() as u64;
            self.counters.held_ns.fetch_add(ns, Ordering::Relaxed);
            h.one_done();
        }
    }

    /// True while the emulation reads the app's buffer itself (no copy, not lost, not
    /// finished).
    fn reads_app(&self) -> bool {
        matches!(*self.state.lock(), State::App)
    }

    /// The marker after its launch, when set, retained (under the lock that [`Self::finish`]
    /// takes it with) so that it outlives a concurrent finish; the caller releases it.
    fn marker(&self) -> Option<cl_event> {
        let m = self.marker.lock();
        if *m == 0 {
            return None;
        }
        // SAFETY: the marker is live while it is set (finish takes it under this lock).
        unsafe { crate::exec::cl::retain_event(*m as cl_event) }.ok()?;
        Some(*m as cl_event)
    }

    /// Switches to the shared copy `c` when still reading the app's buffer (under the
    /// buffer's lock: a page read in progress ends first).
    fn take_copy(&self, c: &Arc<LaterCopy>) {
        let mut st = self.state.lock();
        if matches!(*st, State::App) {
            self.counters.later.fetch_add(c.bytes, Ordering::Relaxed);
            *st = State::Copied(c.clone());
        }
    }

    /// Copies the buffer on `q` after `markers` (the markers after the launches reading it;
    /// held by their deferred buffers during the call).
    unsafe fn copy_on(
        &self,
        q: cl_command_queue,
        markers: &[cl_event],
    ) -> Result<(cl_mem, cl_event), String> {
        let m = crate::exec::cl::create_buffer(self.context as cl_context, self.size)
            .map_err(|e| format!("deferred snapshot buffer: {e}"))?;
        let ev = match enqueue_copy(q, self.app as cl_mem, m, self.size, markers) {
            Ok(ev) => ev,
            Err(e) => {
                crate::exec::cl::release_mem(m);
                return Err(e);
            }
        };
        // an out-of-order queue runs the writing command only after the copy
        if !in_order(q) {
            match crate::exec::cl::barrier(q, &[ev]) {
                Ok(b) => crate::exec::cl::release_event(b),
                Err(e) => {
                    crate::exec::cl::release_event(ev);
                    crate::exec::cl::release_mem(m);
                    return Err(format!("barrier after the deferred copy: {e}"));
                }
            }
        }
        // the worker waits for the copy: submit it even if the app never flushes
        let _ = crate::exec::cl::flush(q);
        Ok((m, ev))
    }

    /// Fills `dst` with the bytes at `at` on the worker's queue `q`: from the app's buffer
    /// while it is unchanged, else from the copy taken before it was written.
    unsafe fn read(&self, q: cl_command_queue, at: u64, dst: &mut [u8]) -> Result<(), String> {
        let st = self.state.lock();
        let copy = match &*st {
            // under the lock: a write hook waits for this read
            State::App => {
                return crate::exec::cl::read(q, self.app as cl_mem, at as usize, dst)
                    .map_err(|e| e.to_string())
            }
            State::Copied(c) => c.clone(),
            State::Lost(why) => return Err(why.clone()),
            State::Done => return Err("deferred snapshot already released".into()),
        };
        drop(st);
        wait_event(copy.event as cl_event)?;
        crate::exec::cl::read(q, copy.mem as cl_mem, at as usize, dst).map_err(|e| e.to_string())
    }

    /// Waits (bounded) until the launch it follows has completed.
    unsafe fn wait_launch(&self) -> Result<(), String> {
        let m = *self.marker.lock();
        if m == 0 {
            return Err("the launch was not followed by a marker".into());
        }
        wait_event(m as cl_event)
    }

    /// The emulation no longer needs the buffer: drops the registration, the copy (its
    /// bytes return to the budget), the marker and clprism's reference to the app's buffer.
    /// Idempotent.
    pub(super) fn finish(&self) {
        let old = std::mem::replace(&mut *self.state.lock(), State::Done);
        self.release_holds();
        if matches!(old, State::Done) {
            return;
        }
        {
            let mut pending = PENDING.lock();
            if let Some(v) = pending.get_mut(&self.root) {
                let before = v.len();
                v.retain(|d| !std::ptr::eq(Arc::as_ptr(d), self));
                PENDING_COUNT.fetch_sub(before - v.len(), Ordering::AcqRel);
                if v.is_empty() {
                    pending.remove(&self.root);
                }
            }
        }
        // the shared copy goes (bytes back to the budget) with its last user
        drop(old);
        // SAFETY: clprism's own handles and reference, released once (state was not Done).
        unsafe {
            let m = std::mem::take(&mut *self.marker.lock());
            crate::exec::cl::release_event(m as cl_event);
            crate::exec::cl::release_mem(self.app as cl_mem);
        }
        // a copy waiting for room may no longer be needed
        projector().budget.wake();
    }
}

/// Finishes its deferred buffers when dropped (the paged arguments hold it).
struct DeferredSet(Vec<Arc<Deferred>>);

impl Drop for DeferredSet {
    fn drop(&mut self) {
        for d in &self.0 {
            d.finish();
        }
    }
}

/// Waits (polling, bounded) for an event; Err with the reason.
unsafe fn wait_event(ev: cl_event) -> Result<(), String> {
    let start = Instant::now();
    loop {
        let st = crate::exec::cl::event_status(ev).map_err(|e| e.to_string())?;
        if st < 0 {
            return Err(format!("snapshot command failed with status {st}"));
        }
        if st == CL_COMPLETE {
            return Ok(());
        }
        if start.elapsed() > SNAPSHOT_WAIT {
            return Err(format!(
                "snapshot copy or launch not finished after {} s",
                SNAPSHOT_WAIT.as_secs()
            ));
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

/// The worker's read queue, the eager copies read page by page and the deferred buffers,
/// released when the last paged argument using them is dropped (the worker drops the
/// arguments right after the emulation).
struct PageSource {
    queue: cl_command_queue,
    copies: Vec<cl_mem>,
    deferred: DeferredSet,
}

// SAFETY: OpenCL handles may be used from any thread; the queue is used by one emulation at
// a time (the worker thread's).
unsafe impl Send for PageSource {}
unsafe impl Sync for PageSource {}

impl Drop for PageSource {
    fn drop(&mut self) {
        for d in self.deferred.0.drain(..) {
            d.finish();
        }
        // SAFETY: clprism's own handles, released once.
        unsafe {
            for m in self.copies.drain(..) {
                crate::exec::cl::release_mem(m);
            }
            if let Some(f) = crate::exec::cl::rt()
                .ok()
                .and_then(|t| t.clReleaseCommandQueue)
            {
                f(self.queue);
            }
        }
    }
}

/// A snapshot as the emulation gets it.
pub(super) enum SnapshotData {
    /// Read back whole.
    Whole(Vec<u8>),
    /// Read page by page on first touch: (size, page reader).
    Paged(usize, emu::paged::Fetch),
}

/// Worker side: reads the small snapshots back whole and releases them (eager copies, and
/// deferred buffers, which are finished at once); the large ones ([`PAGED_MIN`]) are read
/// page by page during the emulation. Everything is released on every path.
pub(super) unsafe fn read_back(
    s: &mut Snapshots,
    context: Key,
    device: Key,
) -> Result<HashMap<Key, SnapshotData>, String> {
    let mut out = HashMap::new();
    for (h, size) in std::mem::take(&mut s.blank) {
        let zeros: emu::paged::Fetch = Arc::new(|_, dst: &mut [u8]| {
            dst.fill(0);
            Ok(())
        });
        out.insert(h, SnapshotData::Paged(size, zeros));
    }
    let deferred = DeferredSet(std::mem::take(&mut s.deferred));
    if s.eager.is_empty() && deferred.0.is_empty() {
        return Ok(out);
    }
    for e in &s.copy_events {
        wait_event(*e)?;
    }
    for d in &deferred.0 {
        d.wait_launch()?;
    }
    let q = crate::exec::cl::create_queue(context as cl_context, device as cl_device_id)
        .map_err(|e| format!("snapshot read queue: {e}"))?;
    // the queue is released with the paged buffers (or at once when there are none)
    let mut source = PageSource {
        queue: q,
        copies: Vec::new(),
        deferred: DeferredSet(Vec::new()),
    };
    let mut paged: Vec<(Key, usize, Result<usize, Arc<Deferred>>)> = Vec::new();
    let counter = s.counters.clone();
    let mut res = Ok(());
    for c in std::mem::take(&mut s.eager) {
        if c.size > PAGED_MIN {
            // released with `source`
            source.copies.push(c.copy);
            paged.push((c.src, c.size, Ok(c.copy as usize)));
            continue;
        }
        if res.is_ok() {
            let mut v = vec![0u8; c.size];
            res = crate::exec::cl::read(q, c.copy, 0, &mut v)
                .map_err(|e| format!("snapshot read: {e}"));
            if res.is_ok() {
                counter
                    .read_back
                    .fetch_add(c.size as u64, Ordering::Relaxed);
                out.insert(c.src, SnapshotData::Whole(v));
            }
        }
        crate::exec::cl::release_mem(c.copy);
    }
    let mut deferred = deferred;
    for d in std::mem::take(&mut deferred.0) {
        if d.size > PAGED_MIN && res.is_ok() {
            // finished with `source`
            source.deferred.0.push(d.clone());
            paged.push((d.app, d.size, Err(d)));
            continue;
        }
        if res.is_ok() {
            let mut v = vec![0u8; d.size];
            res = d
                .read(q, 0, &mut v)
                .map_err(|e| format!("snapshot read: {e}"));
            if res.is_ok() {
                counter
                    .read_back
                    .fetch_add(d.size as u64, Ordering::Relaxed);
                out.insert(d.app, SnapshotData::Whole(v));
            }
        }
        // read whole: the emulation needs it no more
        d.finish();
    }
    res?;
    let source = Arc::new(source);
    for (src, size, from) in paged {
        let (source, counter) = (source.clone(), counter.clone());
        let fetch: emu::paged::Fetch = Arc::new(move |at, dst: &mut [u8]| {
            // SAFETY: the copy, the deferred buffer and the queue live as long as `source`,
            // held here.
            unsafe {
                match &from {
                    Ok(copy) => {
                        crate::exec::cl::read(source.queue, *copy as cl_mem, at as usize, dst)
                            .map_err(|e| e.to_string())?
                    }
                    Err(d) => d.read(source.queue, at, dst)?,
                }
            }
            counter
                .read_back
                .fetch_add(dst.len() as u64, Ordering::Relaxed);
            Ok(())
        });
        out.insert(src, SnapshotData::Paged(size, fetch));
    }
    Ok(out)
}
