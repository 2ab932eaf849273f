//! Chrome trace event JSON timeline (`CLPRISM_TRACE=FILE`, DESIGN.md §3), which Perfetto
//! (ui.perfetto.dev, `trace_processor`) and `chrome://tracing` open.
//!
//! This module is the trace sink of the `log` layer (DESIGN.md §1): the generated API stubs
//! (`api`) report each OpenCL call the application makes ([`ApiSpan`]), the log writer thread
//! hands over every finished launch record ([`on_record`]), and at process exit the file is
//! written once. It depends only on `log`'s record types, `loader` (to map device clocks) and
//! `config`.
//!
//! What the file shows (one track per row):
//! * **host threads** (one track per OS thread of the application): a slice for every
//!   OpenCL call, named after the entry point (category `api`);
//! * **devices** (one track per device, `platform:device` as in `CLPRISM_DEVICES`): every
//!   kernel execution, from the profiling timestamps the log writer collects, mapped to the
//!   host clock ([`clock`]) (category `kernel`; one such event per launch record);
//! * **balance mode**: a `balanced launches` track with one slice per balanced launch
//!   (category `kernel`), and on the device tracks every chunk labelled with its share of
//!   the work-groups, its enqueue as an instant and a flow arrow from that instant to the
//!   chunk's start (on the device's track: see [`timeline`] for why), and the transfers
//!   when the `schedule` record carries them, as in Boyer's dissertation, Figure 4.4
//!   (§4.3.4) (categories `chunk`, `transfer`);
//! * **emulation** (project mode): one slice per emulated launch from the `emulation`
//!   record's `stats.emulation_ns`, an instant for reused statistics or an emulation that
//!   did not run (category `emulation`).
//!
//! Tracing is enabled when `CLPRISM_TRACE` is set and non-empty and `CLPRISM_MODE` is not
//! `off` (off is pure forwarding). A process that makes no OpenCL call writes no file, nor
//! does a child made by `fork` without `exec`. The file is written at exit (`atexit`), so a
//! process killed by a signal leaves none.
//!
//! Cost: with tracing off, each exported entry point pays one relaxed atomic load and a
//! predicted branch ([`api_on`]). With tracing on, a call pays two `clock_gettime` reads
//! and an uncontended lock (tens of ns).

pub mod check;
pub mod clock;
pub mod timeline;

use crate::log::{DeviceTimes, LaunchRecord};
use once_cell::sync::Lazy;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Set once at library load when tracing is requested; read by every exported stub.
static API_ON: AtomicBool = AtomicBool::new(false);
/// Set once the file has been written (later events are dropped).
static WRITTEN: AtomicBool = AtomicBool::new(false);
/// API spans dropped because a thread exceeded [`MAX_SPANS_PER_THREAD`].
static DROPPED: AtomicU64 = AtomicU64::new(0);

/// Most API spans kept per thread (24 bytes each); later calls are counted, not recorded.
pub const MAX_SPANS_PER_THREAD: usize = 1 << 21;

/// Whether API calls are being traced. One relaxed load: the only cost tracing adds to a
/// forwarded call when it is off.
#[inline(always)]
pub fn api_on() -> bool {
    API_ON.load(Ordering::Relaxed)
}

/// Whether tracing is on (same flag as [`api_on`]).
#[inline]
pub fn enabled() -> bool {
    api_on()
}

/// Wall-clock time now, ns since the Unix epoch (`CLOCK_REALTIME`, the clock of
/// `LaunchRecord::time_ns`).
#[inline]
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: valid out-pointer; CLOCK_REALTIME always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One recorded OpenCL call on a host thread (ns since the Unix epoch).
#[derive(Debug, Clone, Copy)]
pub struct Span {
    /// Entry point name.
    pub name: &'static str,
    /// Start, ns since the Unix epoch.
    pub start: u64,
    /// End, ns since the Unix epoch.
    pub end: u64,
}

/// The spans of one host thread.
pub struct ThreadSpans {
    /// OS thread id.
    pub tid: u64,
    /// Thread name (`/proc/self/task/TID/comm`) when it was first seen.
    pub name: String,
    /// Recorded spans, in end order.
    pub spans: Mutex<Vec<Span>>,
}

static THREADS: Lazy<Mutex<Vec<Arc<ThreadSpans>>>> = Lazy::new(Default::default);

thread_local! {
    static MINE: Arc<ThreadSpans> = {
        let tid = crate::log::thread_id();
        let name = std::fs::read_to_string(format!("/proc/self/task/{tid}/comm"))
            .map(|s| s.trim().to_string())
            .unwrap_or_default();
        let t = Arc::new(ThreadSpans { tid, name, spans: Mutex::new(Vec::new()) });
        THREADS.lock().push(t.clone());
        t
    };
}

/// Guard that records one API call from its creation to its drop (used by the generated
/// stubs only when [`api_on`] is true).
pub struct ApiSpan {
    name: &'static str,
    start: u64,
}

impl ApiSpan {
    /// Starts a span for entry point `name`.
    #[inline]
    pub fn begin(name: &'static str) -> ApiSpan {
        ApiSpan {
            name,
            start: now_ns(),
        }
    }
}

impl Drop for ApiSpan {
    fn drop(&mut self) {
        let end = now_ns();
        if WRITTEN.load(Ordering::Relaxed) {
            return;
        }
        let span = Span {
            name: self.name,
            start: self.start,
            end,
        };
        // try_with: a call made while this thread's locals are being destroyed is not traced
        let _ = MINE.try_with(|t| {
            let mut v = t.spans.lock();
            if v.len() < MAX_SPANS_PER_THREAD {
                v.push(span);
            } else {
                DROPPED.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
}

/// A finished launch record as the trace keeps it.
#[derive(Debug, Clone)]
pub struct Finished {
    /// The record as written to the log.
    pub rec: LaunchRecord,
    /// Device timestamps (device clock), when the device reported them.
    pub times: Option<DeviceTimes>,
}

static RECORDS: Lazy<Mutex<Vec<Finished>>> = Lazy::new(Default::default);

/// Hook of the log writer: called once for every launch record it writes (its raw device
/// timestamps in `device_times`). Cheap when tracing is off (one relaxed load). On first
/// sight of a device, calibrates its clock ([`clock`]).
pub fn on_record(rec: &LaunchRecord) {
    if !enabled() || WRITTEN.load(Ordering::Relaxed) {
        return;
    }
    // failed commands keep no timestamps on the timeline
    let times = rec.device_times.filter(|_| rec.status == "complete");
    if times.is_some() && !timeline::is_balanced(rec) {
        clock::calibrate(&rec.device.index);
    }
    RECORDS.lock().push(Finished {
        rec: rec.clone(),
        times,
    });
}

/// Everything recorded so far (used at exit and by tests).
pub fn collected() -> timeline::Input {
    let threads = THREADS
        .lock()
        .iter()
        .map(|t| timeline::HostThread {
            tid: t.tid,
            name: t.name.clone(),
            spans: t.spans.lock().clone(),
        })
        .collect();
    timeline::Input {
        pid: crate::log::pid(),
        process: std::env::args().next().unwrap_or_default(),
        threads,
        records: RECORDS.lock().clone(),
        clocks: clock::mappings(),
        dropped_spans: DROPPED.load(Ordering::Relaxed),
    }
}

/// Writes the trace file now (once; later calls do nothing). Returns the path written, or
/// `None` when tracing is off, nothing was recorded, or writing failed (one warning line).
pub fn write_now() -> Option<std::path::PathBuf> {
    if !enabled() || WRITTEN.swap(true, Ordering::AcqRel) {
        return None;
    }
    let input = collected();
    if input.records.is_empty() && input.threads.iter().all(|t| t.spans.is_empty()) {
        return None;
    }
    let path = crate::config::get().trace.clone()?;
    let tl = timeline::build(&input);
    let r = crate::log::create_private(&path).and_then(|f| {
        use std::io::Write;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, f);
        timeline::render_to(&tl, &input, &mut w)?;
        w.flush()
    });
    match r {
        Ok(()) => Some(path),
        Err(e) => {
            crate::config::warn(&format!("cannot write the trace {}: {e}", path.display()));
            None
        }
    }
}

extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(|| {
        // the log's remaining records reach `on_record` first (no-op if already shut down)
        crate::log::shutdown();
        write_now();
    });
}

/// Library constructor: turns tracing on when `CLPRISM_TRACE` is set (and the mode is not
/// `off`) and registers the exit handler. Reads only those two variables, so processes that
/// never use OpenCL print nothing and write nothing.
extern "C" fn init() {
    if crate::config::trace_at_load() {
        API_ON.store(true, Ordering::Relaxed);
        // SAFETY: registering plain extern "C" functions. at_exit is registered before the
        // log's own handler (created at the first launch), so it runs after it (atexit is
        // LIFO). A forked child inherits the parent's spans and path: it writes nothing.
        unsafe {
            libc::atexit(at_exit);
            libc::pthread_atfork(None, None, Some(in_forked_child));
        }
    }
}

extern "C" fn in_forked_child() {
    WRITTEN.store(true, Ordering::Relaxed);
}

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = init;
