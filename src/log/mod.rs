//! Per-kernel log (DESIGN.md §4): one JSON object per kernel launch, one per line (JSONL),
//! with a versioned schema ([`SCHEMA`]), and the end-of-run summary per kernel name.
//!
//! Launch records are created at enqueue time and completed asynchronously when the device
//! time arrives (profiling events, polled by the writer): the application is never blocked.
//! Untimed log-mode records, and balance mode's untimed forwarded launches (their
//! `schedule` kept typed, [`Forwarded`]), go to a per-thread batch ([`finished`]) and everything else
//! through a channel; the writer is never woken per launch (it sleeps between passes). A dedicated writer thread owns the pending records, the output file and
//! the summary statistics. At process exit the remaining records are written (those whose
//! device time never arrived with `"status": "incomplete"`), so every launch has exactly one
//! record.

mod compact;
pub mod sampling;
pub mod schema;
pub mod summary;
pub mod trace;

use crate::config::{self, LogTarget, SummaryTarget};
use crossbeam_channel::{bounded, unbounded, Receiver, Sender};
use once_cell::sync::{Lazy, OnceCell};
use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};
use serde::Serialize;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Version tag of the launch record schema; bumped on incompatible changes.
pub const SCHEMA: &str = schema::SCHEMA_VERSION;

/// The device a command ran on (the record's `device`; one definition with the readers').
pub type DeviceRef = schema::Device;

/// One kernel launch (`clEnqueueNDRangeKernel` or `clEnqueueTask`).
#[derive(Debug, Clone, Serialize)]
pub struct LaunchRecord {
    /// [`SCHEMA`].
    pub schema: &'static str,
    /// Launch sequence number in this process, from 0, in enqueue order.
    pub seq: u64,
    /// Wall-clock time of the enqueue, ns since the Unix epoch.
    pub time_ns: u64,
    /// Process id.
    pub pid: u32,
    /// OS thread id of the enqueuing thread.
    pub thread: u64,
    /// `CLPRISM_MODE` in effect.
    pub mode: &'static str,
    /// Kernel function name.
    pub kernel: Arc<str>,
    /// 16 hex digits identifying the program: content and build options
    /// (`registry::tables::program_identity`).
    pub program: Arc<str>,
    /// Number of NDRange dimensions (1..3).
    pub work_dim: u32,
    /// Global size per dimension, work-items.
    pub global: Dims,
    /// Local (work-group) size per dimension, work-items; null when the app let the driver choose.
    pub local: Option<Dims>,
    /// Global offset per dimension, work-items; null when none was given.
    pub offset: Option<Dims>,
    /// The device of the command queue.
    pub device: Arc<DeviceRef>,
    /// `complete`, `failed` (the command ended with a negative execution status),
    /// `enqueue_failed` (the driver rejected the enqueue), `incomplete` (no completion seen
    /// before exit) or `no_profiling` (the device gave no profiling timestamps).
    pub status: &'static str,
    /// The driver's error code for `enqueue_failed` / `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i32>,
    /// Device execution time, ns (`CL_PROFILING_COMMAND_END − START`).
    pub device_ns: Option<u64>,
    /// Time from submission to start on the device, ns (`START − SUBMIT`).
    pub queued_ns: Option<u64>,
    /// The probability with which this launch was chosen to be timed, when below 1
    /// (`CLPRISM_DEVICE_TIMING=adaptive` or `sample:N`); written on timed launches only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing_p: Option<f64>,
    /// Extra records added by other layers (`emulation`, `projection`, `schedule`, fallbacks).
    #[serde(flatten)]
    pub extra: serde_json::Map<String, serde_json::Value>,
    /// Extra records shared by many launches (project mode's reused results), serialized
    /// once: written after `extra`, so neither the launching thread nor the writer copies
    /// or re-serializes them per launch.
    #[serde(skip)]
    pub shared_extra: Option<Arc<SharedExtra>>,
    /// Raw device timestamps behind `device_ns`/`queued_ns` (not written to the log; the
    /// timeline maps them to the host clock, [`trace`]).
    #[serde(skip)]
    pub device_times: Option<DeviceTimes>,
    /// Whether this launch gets a device timing event (`CLPRISM_DEVICE_TIMING`); untimed
    /// launches are final at enqueue with status `untimed`. Not serialized.
    #[serde(skip)]
    pub timed: bool,
    /// The kernel's adaptive sampler, told the device time once it arrives. Not serialized.
    #[serde(skip)]
    pub sampler: Option<Arc<sampling::Sampler>>,
    /// Balance mode's `schedule` of a launch forwarded unsplit, kept typed until the writer
    /// writes it (as `schedule::Schedule::forwarded` would): the app's thread builds no JSON
    /// value for it, and the record keeps the cheap path ([`finished`], [`PlainWriter`]).
    /// Written in `extra`'s place, so a record never has both a `schedule` here and one in
    /// `extra`.
    #[serde(skip)]
    pub forwarded: Option<Forwarded>,
}

/// The `schedule` of a launch balance mode forwarded unsplit (issue 18 item 2: a launch kept
/// whole costs what forwarding costs): the reason (shared, usually the same `Arc` launch
/// after launch, so the writer serializes it once) and the time spent deciding.
#[derive(Debug, Clone)]
pub struct Forwarded {
    /// The record's `schedule.fallback` text.
    pub reason: ReasonText,
    /// The record's `schedule.decision_ns`: clprism's time on the app's thread before
    /// forwarding, ns.
    pub decision_ns: u64,
    /// The record's `schedule.devices_ready_ms`: when the balance devices became ready (ms
    /// since the first OpenCL call), once they are open.
    pub devices_ready_ms: Option<f64>,
    /// Run whole by clprism's launch thread (`schedule.launch_thread`).
    pub launch_thread: bool,
}

impl Forwarded {
    /// The typed `schedule` object this stands for.
    pub fn schedule(&self) -> schema::Schedule {
        let mut s = schema::Schedule::forwarded(&*self.reason.text(), self.decision_ns);
        s.devices_ready_ms = self.devices_ready_ms;
        s.launch_thread = self.launch_thread.then_some(true);
        s
    }
}

/// A forwarded launch's reason (`schedule.fallback`): a text shared by the launches that give
/// it, or one whose figures change from launch to launch (the early decision's "saved so
/// far"), made from them where the record is written, never on the app's thread.
#[derive(Clone)]
pub enum ReasonText {
    /// The text, shared.
    Shared(Arc<str>),
    /// Makes the text (cheap to clone; called by the writer or a reader of the record).
    Deferred(Arc<dyn Fn() -> String + Send + Sync>),
}

impl ReasonText {
    /// A text made from per-launch figures when it is needed.
    pub fn deferred(make: impl Fn() -> String + Send + Sync + 'static) -> ReasonText {
        ReasonText::Deferred(Arc::new(make))
    }

    /// The text.
    pub fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            ReasonText::Shared(s) => std::borrow::Cow::Borrowed(s),
            ReasonText::Deferred(f) => std::borrow::Cow::Owned(f()),
        }
    }
}

impl Default for ReasonText {
    fn default() -> Self {
        ReasonText::Shared(Arc::from(""))
    }
}

impl std::fmt::Debug for ReasonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.text().fmt(f)
    }
}

impl std::fmt::Display for ReasonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text())
    }
}

impl PartialEq for ReasonText {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl From<Arc<str>> for ReasonText {
    fn from(s: Arc<str>) -> Self {
        ReasonText::Shared(s)
    }
}

impl From<String> for ReasonText {
    fn from(s: String) -> Self {
        ReasonText::Shared(s.into())
    }
}

impl From<&str> for ReasonText {
    fn from(s: &str) -> Self {
        ReasonText::Shared(s.into())
    }
}

impl LaunchRecord {
    /// A top-level extra object: from `extra`, else from `shared_extra`.
    pub fn extra_value(&self, key: &str) -> Option<&serde_json::Value> {
        self.extra.get(key).or_else(|| {
            self.shared_extra
                .as_ref()
                .and_then(|s| s.entries.iter().find(|e| e.0 == key).map(|e| &e.1))
        })
    }

    /// A top-level extra object, typed (`None`: absent, `null`, or not of that type).
    fn extra_typed<T: serde::de::DeserializeOwned>(&self, key: &str) -> Option<T> {
        self.extra_value(key)
            .filter(|v| !v.is_null())
            .and_then(|v| T::deserialize(v).ok())
    }

    /// The `schedule` object (balance mode), typed.
    pub fn schedule(&self) -> Option<schema::Schedule> {
        match &self.forwarded {
            Some(f) => Some(f.schedule()),
            None => self.extra_typed(schema::KEY_SCHEDULE),
        }
    }

    /// The record with a typed [`Forwarded`] schedule moved into `extra` (for the writer's
    /// serde paths; the plain path writes it from cached fragments).
    fn with_schedule_in_extra(&self) -> LaunchRecord {
        let mut r = self.clone();
        if let Some(f) = r.forwarded.take() {
            r.set_schedule(&f.schedule());
        }
        r
    }

    /// The `emulation` object (project mode), typed.
    pub fn emulation(&self) -> Option<schema::Emulation> {
        self.extra_typed(schema::KEY_EMULATION)
    }

    /// The `projection` object (project mode), typed.
    pub fn projection(&self) -> Option<schema::Projection> {
        self.extra_typed(schema::KEY_PROJECTION)
    }

    /// Sets the `schedule` object (replacing a typed [`Forwarded`] one).
    pub fn set_schedule(&mut self, s: &schema::Schedule) {
        self.forwarded = None;
        self.extra
            .insert(schema::KEY_SCHEDULE.into(), schema::to_value(s));
    }

    /// Sets the `emulation` object.
    pub fn set_emulation(&mut self, e: &schema::Emulation) {
        self.extra
            .insert(schema::KEY_EMULATION.into(), schema::to_value(e));
    }

    /// Sets the `projection` object.
    pub fn set_projection(&mut self, p: &schema::Projection) {
        self.extra
            .insert(schema::KEY_PROJECTION.into(), schema::to_value(p));
    }
}

/// Sizes per NDRange dimension (1 to 3 used), stored inline so that a launch's record
/// allocates nothing for them; serialized as the JSON array of the used dimensions.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Dims {
    n: u8,
    v: [u64; 3],
}

impl Dims {
    /// The first `work_dim` (at most 3) entries of `v`.
    pub fn of(v: &[usize; 3], work_dim: u32) -> Dims {
        Dims {
            n: work_dim.min(3) as u8,
            v: v.map(|x| x as u64),
        }
    }
}

impl std::ops::Deref for Dims {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        &self.v[..self.n as usize]
    }
}

impl std::fmt::Debug for Dims {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl From<Vec<u64>> for Dims {
    /// The first 3 entries of `v`.
    fn from(v: Vec<u64>) -> Dims {
        let mut d = Dims { n: 0, v: [0; 3] };
        for (i, x) in v.into_iter().take(3).enumerate() {
            d.v[i] = x;
            d.n = i as u8 + 1;
        }
        d
    }
}

impl Serialize for Dims {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(s)
    }
}

/// Top-level objects shared by many launch records, with their JSON text made once.
#[derive(Debug)]
pub struct SharedExtra {
    /// The (key, value) pairs.
    pub entries: Vec<(String, serde_json::Value)>,
    /// `"key":value,...` of `entries`, without braces.
    json: String,
    /// The written form when the entries name an emulation key (compact log).
    compact: Option<compact::Compact>,
}

impl SharedExtra {
    /// Serializes `entries` once.
    pub fn new(entries: Vec<(String, serde_json::Value)>) -> SharedExtra {
        let map: serde_json::Map<String, serde_json::Value> = entries.iter().cloned().collect();
        let text = serde_json::to_string(&map).unwrap_or_else(|_| "{}".into());
        let json = text[1..text.len().saturating_sub(1).max(1)].to_string();
        let compact = compact::Compact::of(
            map.get(schema::KEY_EMULATION),
            map.get(schema::KEY_PROJECTION),
        );
        SharedExtra {
            entries,
            json,
            compact,
        }
    }
}

/// One JSON line of a record: its own fields, then the shared ones.
fn record_line(rec: &LaunchRecord) -> String {
    let mut line = serde_json::to_string(rec).unwrap_or_default();
    if let Some(sh) = rec.shared_extra.as_ref().filter(|s| !s.json.is_empty()) {
        if line.ends_with('}') {
            line.pop();
            if !line.ends_with('{') {
                line.push(',');
            }
            line.push_str(&sh.json);
            line.push('}');
        }
    }
    line
}

/// Appends the JSON of `v` to `buf` (serde_json's own text, so it matches the derived
/// serialization exactly).
fn json<T: Serialize + ?Sized>(buf: &mut Vec<u8>, v: &T) {
    let _ = serde_json::to_writer(&mut *buf, v);
}

/// Writes the line of a record without extra objects (log mode's records) straight into a
/// reused buffer: the same text as `serde_json::to_string(rec)`, field by field in the
/// struct's order, with each device's and kernel's JSON made once (issue 21: the log writer's
/// cost per launch). `tests::plain_lines_match_serde` checks the equality.
#[derive(Default)]
struct PlainWriter {
    /// `"device":{…}` per device entry, keyed by the entry's address (the `Arc` is held so
    /// the address is not reused).
    devices: Vec<(Arc<DeviceRef>, Vec<u8>)>,
    /// `"kernel":"…","program":"…"` per (kernel, program) name pair, keyed likewise.
    kernels: Vec<(Arc<str>, Arc<str>, Vec<u8>)>,
    /// The end of a forwarded launch's `schedule` after its `devices` and `devices_ready_ms`
    /// (`,"fallback":"…","merge":"none"}`) per reason, keyed by the reason's address, else by
    /// its text.
    reasons: Vec<(Arc<str>, Vec<u8>)>,
}

/// A forwarded launch's `schedule` up to its `decision_ns` value: serde_json writes a
/// `Value` object's keys sorted, and `Schedule::forwarded` leaves these fields only.
const FORWARDED_HEAD: &[u8] = b",\"schedule\":{\"chunks\":[],\"decision_ns\":";

/// Fragments kept per kind before the oldest is dropped (a bound for apps that create many
/// programs; a dropped fragment is made again when needed).
const PLAIN_FRAGMENTS: usize = 64;

impl PlainWriter {
    /// Appends the line of `rec` (which has no `extra` and no `shared_extra`; a typed
    /// [`Forwarded`] schedule is written from cached fragments) to `buf`.
    fn write(&mut self, rec: &LaunchRecord, buf: &mut Vec<u8>) {
        buf.extend_from_slice(b"{\"schema\":");
        json(buf, rec.schema);
        buf.extend_from_slice(b",\"seq\":");
        json(buf, &rec.seq);
        buf.extend_from_slice(b",\"time_ns\":");
        json(buf, &rec.time_ns);
        buf.extend_from_slice(b",\"pid\":");
        json(buf, &rec.pid);
        buf.extend_from_slice(b",\"thread\":");
        json(buf, &rec.thread);
        buf.extend_from_slice(b",\"mode\":");
        json(buf, rec.mode);
        buf.push(b',');
        buf.extend_from_slice(self.kernel(rec));
        buf.extend_from_slice(b",\"work_dim\":");
        json(buf, &rec.work_dim);
        buf.extend_from_slice(b",\"global\":");
        json(buf, &rec.global);
        buf.extend_from_slice(b",\"local\":");
        json(buf, &rec.local);
        buf.extend_from_slice(b",\"offset\":");
        json(buf, &rec.offset);
        buf.push(b',');
        buf.extend_from_slice(self.device(rec));
        buf.extend_from_slice(b",\"status\":");
        json(buf, rec.status);
        if let Some(e) = rec.error_code {
            buf.extend_from_slice(b",\"error_code\":");
            json(buf, &e);
        }
        buf.extend_from_slice(b",\"device_ns\":");
        json(buf, &rec.device_ns);
        buf.extend_from_slice(b",\"queued_ns\":");
        json(buf, &rec.queued_ns);
        if let Some(p) = rec.timing_p {
            buf.extend_from_slice(b",\"timing_p\":");
            json(buf, &p);
        }
        if let Some(f) = &rec.forwarded {
            buf.extend_from_slice(FORWARDED_HEAD);
            json(buf, &f.decision_ns);
            buf.extend_from_slice(b",\"devices\":[]");
            if let Some(ms) = f.devices_ready_ms {
                buf.extend_from_slice(b",\"devices_ready_ms\":");
                json(buf, &ms);
            }
            match (&f.reason, f.launch_thread) {
                (ReasonText::Shared(r), false) => buf.extend_from_slice(self.reason(r)),
                // a text of its own, or a key between the reason and `merge`: not cached
                _ => {
                    buf.extend_from_slice(b",\"fallback\":");
                    json(buf, &*f.reason.text());
                    if f.launch_thread {
                        buf.extend_from_slice(b",\"launch_thread\":true");
                    }
                    buf.extend_from_slice(b",\"merge\":\"none\"}");
                }
            }
        }
        buf.push(b'}');
    }

    fn reason(&mut self, reason: &Arc<str>) -> &[u8] {
        let found = (self.reasons.iter())
            .position(|(r, _)| Arc::ptr_eq(r, reason))
            .or_else(|| self.reasons.iter().position(|(r, _)| r == reason));
        let i = found.unwrap_or_else(|| {
            let mut b = b",\"fallback\":".to_vec();
            json(&mut b, &**reason);
            b.extend_from_slice(b",\"merge\":\"none\"}");
            if self.reasons.len() >= PLAIN_FRAGMENTS {
                self.reasons.remove(0);
            }
            self.reasons.push((reason.clone(), b));
            self.reasons.len() - 1
        });
        &self.reasons[i].1
    }

    fn kernel(&mut self, rec: &LaunchRecord) -> &[u8] {
        let found = self
            .kernels
            .iter()
            .position(|(k, p, _)| Arc::ptr_eq(k, &rec.kernel) && Arc::ptr_eq(p, &rec.program));
        let i = found.unwrap_or_else(|| {
            let mut b = b"\"kernel\":".to_vec();
            json(&mut b, &*rec.kernel);
            b.extend_from_slice(b",\"program\":");
            json(&mut b, &*rec.program);
            if self.kernels.len() >= PLAIN_FRAGMENTS {
                self.kernels.remove(0);
            }
            self.kernels
                .push((rec.kernel.clone(), rec.program.clone(), b));
            self.kernels.len() - 1
        });
        &self.kernels[i].2
    }

    fn device(&mut self, rec: &LaunchRecord) -> &[u8] {
        let found = self
            .devices
            .iter()
            .position(|(d, _)| Arc::ptr_eq(d, &rec.device));
        let i = found.unwrap_or_else(|| {
            let mut b = b"\"device\":".to_vec();
            json(&mut b, &*rec.device);
            if self.devices.len() >= PLAIN_FRAGMENTS {
                self.devices.remove(0);
            }
            self.devices.push((rec.device.clone(), b));
            self.devices.len() - 1
        });
        &self.devices[i].1
    }
}

/// Device timestamps of a completed command (ns, device clock).
#[derive(Debug, Clone, Copy)]
pub struct DeviceTimes {
    /// `CL_PROFILING_COMMAND_SUBMIT`.
    pub submit: u64,
    /// `CL_PROFILING_COMMAND_START`.
    pub start: u64,
    /// `CL_PROFILING_COMMAND_END`.
    pub end: u64,
}

enum Msg {
    Pending(Box<LaunchRecord>),
    /// A pending launch and clprism's reference to its event, owned by the writer thread,
    /// which polls it and reads its profiling timestamps once it completes.
    PendingWatched(Box<LaunchRecord>, usize),
    Done {
        seq: u64,
        exec_status: i32,
        times: Option<DeviceTimes>,
    },
    Final(Box<LaunchRecord>),
    Extra {
        seq: u64,
        key: String,
        value: serde_json::Value,
    },
    /// The launch `seq` gets attachments later ([`hold`]): do not write it before them.
    Hold(u64),
    /// Attachments for a held launch; the record may be written once complete.
    Release {
        seq: u64,
        entries: Attach,
    },
    Flush(Sender<()>),
    Shutdown(Sender<()>),
}

struct Logger {
    tx: Sender<Msg>,
    /// The writer thread, unparked by messages that wait for it ([`flush`], [`shutdown`]).
    writer: std::thread::Thread,
}

static NEXT_SEQ: AtomicU64 = AtomicU64::new(0);
static LOGGER: OnceCell<Logger> = OnceCell::new();
static SHUT_DOWN: AtomicBool = AtomicBool::new(false);
/// Events polled per pass of the writer thread: with [`POLL_INTERVAL`], up to ~400,000
/// completed launches a second are finalized without a backlog.
const POLL_BATCH: usize = 4096;
/// Shortest time between two polling passes of the writer thread over the watched events.
/// Every pass wakes the writer, so this is also its wake-up period while device-timing events
/// are outstanding (log mode's default times a sample of launches); 1 ms until ad7b54a, for the
/// reason given at [`WRITER_SLEEP`]. A completed launch's record is written, and its event
/// released, at most this much later.
const POLL_INTERVAL: Duration = Duration::from_millis(10);

/// The polling interval: [`POLL_INTERVAL`], or `CLPRISM_LOG_POLL_US` (µs; 0 polls on every
/// message, the behaviour before rate limiting, kept for the overhead benchmark).
fn poll_interval() -> Duration {
    crate::config::get()
        .log_poll_us
        .map(Duration::from_micros)
        .unwrap_or(POLL_INTERVAL)
}

/// The writer's sleep when no event is watched: it is not woken per message; messages that
/// wait for it ([`flush`], [`shutdown`]) and full batches ([`BATCH_WAKE`]) wake it early.
/// 1 ms until ad7b54a: those wake-ups cost `clblast_test_xsymm` 13-16 % in log mode on the
/// 2-core development machine, none on an H200 host's 16 cores (docs/results.md, issue 18,
/// session 17; results/session17-2026-11-27/local-xsymm-writer.txt).
const WRITER_SLEEP: Duration = Duration::from_millis(50);
/// Records in one thread's batch that wake the writer (one wake-up per this many untimed
/// launches of a thread that launches faster than the writer sleeps), so that a batch holds
/// at most about this many records (~0.5 KiB each) between two wake-ups.
const BATCH_WAKE: usize = 8192;
/// Quiet time after which the writer flushes the log file.
const IDLE_FLUSH: Duration = Duration::from_millis(500);

/// How long the exit handler waits for outstanding device times.
const EXIT_WAIT: Duration = Duration::from_secs(5);
/// How long the exit handler waits for outstanding attachments of held records (project
/// mode: emulation and projection still running).
const EXIT_WAIT_HELD: Duration = Duration::from_secs(10);
/// Reason written into a held record whose attachments never came before exit.
pub const UNFINISHED_AT_EXIT: &str = "emulation unfinished at exit";

/// Allocates the next launch sequence number.
pub fn next_seq() -> u64 {
    NEXT_SEQ.fetch_add(1, Ordering::Relaxed)
}

fn logger() -> Option<&'static Logger> {
    if SHUT_DOWN.load(Ordering::Acquire) {
        return None;
    }
    LOGGER
        .get_or_try_init(|| {
            let (tx, rx) = unbounded();
            let writer = std::thread::Builder::new()
                .name("clprism-log".into())
                .spawn(move || writer_thread(rx))
                .map_err(|_| ())?
                .thread()
                .clone();
            // SAFETY: registering a plain extern "C" function; glibc ties it to this DSO.
            unsafe { libc::atexit(at_exit) };
            Ok::<_, ()>(Logger { tx, writer })
        })
        .ok()
}

/// Registers a launch whose device time will arrive later through [`complete`].
pub fn pending(rec: LaunchRecord) {
    if let Some(l) = logger() {
        let _ = l.tx.send(Msg::Pending(Box::new(rec)));
    }
}

/// Writes a launch record that is already final (an untimed launch, or the enqueue failed).
///
/// Log mode's records without attachments, and balance mode's forwarded launches whose only
/// attachment is their typed [`Forwarded`] schedule, go to the calling thread's batch ([`Batch`]),
/// which the writer takes whole: no allocation and no channel message per launch; the rest
/// go through the writer's channel.
pub fn finished(rec: LaunchRecord) {
    let Some(l) = logger() else {
        return;
    };
    let mut rec = Some(rec);
    if matches!(
        crate::config::get().mode,
        config::Mode::Log | config::Mode::Balance
    ) && rec
        .as_ref()
        .is_some_and(|r| r.extra.is_empty() && r.shared_extra.is_none())
    {
        let _ = MY_BATCH.try_with(|b| {
            if let Some(r) = rec.take() {
                let full = {
                    let mut recs = b.get_or_init(Batch::register).recs.lock();
                    recs.push(r);
                    recs.len().is_multiple_of(BATCH_WAKE)
                };
                if full {
                    l.writer.unpark();
                }
            }
        });
    }
    if let Some(rec) = rec {
        let _ = l.tx.send(Msg::Final(Box::new(rec)));
    }
}

/// One thread's final records not yet taken by the writer (log mode's untimed launches).
///
/// The launching thread pushes under the batch's own lock (uncontended but for the writer's
/// take, once per writer wake-up); the writer swaps the vector for an empty one of the same
/// capacity, so the steady state allocates nothing. Records of one thread stay in order;
/// they need no order with other messages (a final record is never held and has no
/// attachments), except that [`flush`] and the exit take every batch first.
#[derive(Default)]
struct Batch {
    recs: parking_lot::Mutex<Vec<LaunchRecord>>,
}

impl Batch {
    /// A new batch for the calling thread, known to the writer.
    fn register() -> Arc<Batch> {
        let b = Arc::new(Batch::default());
        BATCHES.lock().push(b.clone());
        b
    }
}

/// Every thread's batch; a batch whose thread ended is dropped once taken empty.
static BATCHES: Lazy<parking_lot::Mutex<Vec<Arc<Batch>>>> = Lazy::new(Default::default);

thread_local! {
    static MY_BATCH: once_cell::unsync::OnceCell<Arc<Batch>> =
        const { once_cell::unsync::OnceCell::new() };
}

/// Takes every thread's batched records (writer thread); `spare` is the emptied vector
/// given in exchange, and comes back empty with the records handed to `each`.
fn take_batches(spare: &mut Vec<LaunchRecord>, mut each: impl FnMut(LaunchRecord)) -> bool {
    let batches: Vec<Arc<Batch>> = {
        let mut all = BATCHES.lock();
        // a batch held only here belongs to a thread that ended: drop it once empty
        all.retain(|b| Arc::strong_count(b) > 1 || !b.recs.lock().is_empty());
        all.clone()
    };
    let mut any = false;
    for b in batches {
        std::mem::swap(&mut *b.recs.lock(), spare);
        any |= !spare.is_empty();
        for r in spare.drain(..) {
            each(r);
        }
    }
    any
}

/// Registers a pending launch together with clprism's reference to its event: the writer
/// thread polls the event (no per-launch driver callback on the enqueue path), reads the
/// device timestamps when it completes and releases the reference.
pub fn pending_watched(rec: LaunchRecord, event: usize) {
    match logger() {
        Some(l) => {
            let _ = l.tx.send(Msg::PendingWatched(Box::new(rec), event));
        }
        None => release_event(event),
    }
}

fn release_event(event: usize) {
    if let Some(f) = crate::loader::table().and_then(|t| t.clReleaseEvent) {
        // SAFETY: releases the reference handed over by `watch`.
        unsafe { f(event as opencl_sys::cl_event) };
    }
}

/// Execution status and timestamps of a watched event, if it has finished.
fn poll_event(event: usize) -> Option<(i32, Option<DeviceTimes>)> {
    use opencl_sys::*;
    let t = crate::loader::table()?;
    let ev = event as cl_event;
    let mut status: cl_int = CL_QUEUED;
    let gi = t.clGetEventInfo?;
    // SAFETY: cl_int-sized query on an event clprism holds a reference to.
    let r = unsafe {
        gi(
            ev,
            CL_EVENT_COMMAND_EXECUTION_STATUS,
            4,
            (&mut status as *mut cl_int).cast(),
            std::ptr::null_mut(),
        )
    };
    if r != CL_SUCCESS {
        return Some((r, None));
    }
    if status > CL_COMPLETE {
        return None;
    }
    let mut times = None;
    if status == CL_COMPLETE {
        if let Some(f) = t.clGetEventProfilingInfo {
            let mut v = [0u64; 3];
            let params = [
                CL_PROFILING_COMMAND_SUBMIT,
                CL_PROFILING_COMMAND_START,
                CL_PROFILING_COMMAND_END,
            ];
            let mut ok = true;
            for (i, p) in params.iter().enumerate() {
                // SAFETY: cl_ulong-sized outputs of a completed event.
                ok &= unsafe {
                    f(
                        ev,
                        *p,
                        8,
                        (&mut v[i] as *mut u64).cast(),
                        std::ptr::null_mut(),
                    )
                } == CL_SUCCESS;
            }
            if ok {
                times = Some(DeviceTimes {
                    submit: v[0],
                    start: v[1],
                    end: v[2],
                });
            }
        }
    }
    Some((status, times))
}

/// Completes a pending launch with its execution status and device timestamps. Cheap and
/// non-blocking: safe to call from an OpenCL event callback.
pub fn complete(seq: u64, exec_status: i32, times: Option<DeviceTimes>) {
    if let Some(l) = LOGGER.get() {
        let _ = l.tx.send(Msg::Done {
            seq,
            exec_status,
            times,
        });
    }
}

/// Attaches an extra top-level object (e.g. `emulation`) to a pending launch record.
pub fn attach(seq: u64, key: &str, value: serde_json::Value) {
    if let Some(l) = LOGGER.get() {
        let _ = l.tx.send(Msg::Extra {
            seq,
            key: key.to_string(),
            value,
        });
    }
}

/// Announces that launch `seq` will receive attachments through [`release`]: the writer
/// keeps its record (even once the device time is known) until then, or until the exit
/// deadline, when it is written with an `emulation` record saying
/// [`UNFINISHED_AT_EXIT`]. Must be called before the record is registered
/// ([`pending_watched`], from the same thread).
pub fn hold(seq: u64) {
    if let Some(l) = logger() {
        let _ = l.tx.send(Msg::Hold(seq));
    }
}

/// Attaches top-level objects to a held launch (see [`hold`]) and lets it be written.
/// May arrive before the record itself; then it is kept until the record arrives.
pub fn release(seq: u64, entries: Vec<(String, serde_json::Value)>) {
    if let Some(l) = LOGGER.get() {
        let entries = Attach::Own(entries);
        let _ = l.tx.send(Msg::Release { seq, entries });
    }
}

/// As [`release`], with attachments shared by many launch records (serialized once): the
/// launches waiting for one emulation key all get the same object, so the memory they take
/// while their records are pending does not grow with their number.
pub fn release_shared(seq: u64, shared: Arc<SharedExtra>) {
    if let Some(l) = LOGGER.get() {
        let entries = Attach::Shared(shared);
        let _ = l.tx.send(Msg::Release { seq, entries });
    }
}

/// The attachments of a held launch: its own, or shared ([`release_shared`]).
enum Attach {
    Own(Vec<(String, serde_json::Value)>),
    Shared(Arc<SharedExtra>),
}

impl Attach {
    fn apply(self, rec: &mut LaunchRecord) {
        match self {
            Attach::Own(e) => rec.extra.extend(e),
            Attach::Shared(s) => rec.shared_extra = Some(s),
        }
    }
}

/// Waits until every message sent so far has been processed and written (tests, `clFinish`
/// users that want the file up to date).
pub fn flush() {
    if let Some(l) = LOGGER.get() {
        let (tx, rx) = bounded(1);
        if l.tx.send(Msg::Flush(tx)).is_ok() {
            l.writer.unpark();
            let _ = rx.recv_timeout(Duration::from_secs(10));
        }
    }
}

/// The log's exit hook: writes what is pending and the summary (see [`shutdown`]).
pub extern "C" fn at_exit() {
    let _ = std::panic::catch_unwind(shutdown);
}

/// Writes the remaining records and the summary; called once at process exit.
pub fn shutdown() {
    if SHUT_DOWN.swap(true, Ordering::AcqRel) {
        return;
    }
    if let Some(l) = LOGGER.get() {
        let (tx, rx) = bounded(1);
        if l.tx.send(Msg::Shutdown(tx)).is_ok() {
            l.writer.unpark();
            let _ = rx.recv_timeout(EXIT_WAIT_HELD + Duration::from_secs(5));
        }
    }
}

struct Output {
    sink: Option<Box<dyn Write + Send>>,
    failed: bool,
    /// Emulation definitions written so far (compact project-mode log).
    compact: compact::Compactor,
    /// Records without extra objects (log mode), written without serde's per-field walk.
    plain: PlainWriter,
    /// The line being written (reused).
    buf: Vec<u8>,
}

impl Output {
    fn open() -> Output {
        let sink: Option<Box<dyn Write + Send>> = match &config::get().log {
            LogTarget::Off => None,
            LogTarget::Stderr => Some(Box::new(std::io::stderr())),
            LogTarget::File(p) => match create_private(p) {
                Ok(f) => Some(Box::new(std::io::BufWriter::with_capacity(1 << 16, f))),
                Err(e) => {
                    config::warn(&format!(
                        "cannot write the log {}: {e}; continuing without a log file",
                        p.display()
                    ));
                    None
                }
            },
        };
        Output {
            sink,
            failed: false,
            compact: Default::default(),
            plain: Default::default(),
            buf: Vec::with_capacity(512),
        }
    }

    fn write(&mut self, rec: &LaunchRecord) {
        trace::on_record(rec);
        if let Some(s) = self.sink.as_mut() {
            self.buf.clear();
            if rec.extra.is_empty() && rec.shared_extra.is_none() {
                if let Some(def) = self.compact.device_line(rec) {
                    self.buf.extend_from_slice(def.as_bytes());
                    self.buf.push(b'\n');
                }
                self.plain.write(rec, &mut self.buf);
            } else if rec.forwarded.is_some() {
                let r = rec.with_schedule_in_extra();
                self.buf
                    .extend_from_slice(self.compact.lines(&r).as_bytes());
            } else {
                self.buf
                    .extend_from_slice(self.compact.lines(rec).as_bytes());
            }
            self.buf.push(b'\n');
            if s.write_all(&self.buf).is_err() && !self.failed {
                self.failed = true;
                config::warn("writing the log failed (disk full?); further records are dropped");
            }
        }
    }

    fn flush(&mut self) {
        if let Some(s) = self.sink.as_mut() {
            let _ = s.flush();
        }
    }
}

/// Creates (truncating) a file readable only by the user (mode 0600), refusing to follow a
/// symlink at the final path component.
pub fn create_private(p: &std::path::Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(p)
}

fn finalize(rec: &mut LaunchRecord, exec_status: i32, times: Option<DeviceTimes>) {
    if exec_status < 0 {
        rec.status = "failed";
        rec.error_code = Some(exec_status);
    } else if let Some(t) = times {
        rec.status = "complete";
        rec.device_ns = Some(t.end.saturating_sub(t.start));
        if let (Some(s), Some(ns)) = (&rec.sampler, rec.device_ns) {
            s.observe(ns);
        }
        rec.device_times = Some(t);
        rec.queued_ns = Some(t.start.saturating_sub(t.submit));
    } else {
        rec.status = "no_profiling";
    }
}

fn writer_thread(rx: Receiver<Msg>) {
    let mut out = Output::open();
    let mut pending: HashMap<u64, Box<LaunchRecord>> = HashMap::default();
    // completions that raced ahead of their Pending message
    let mut early: HashMap<u64, (i32, Option<DeviceTimes>)> = HashMap::default();
    let mut summary = summary::Summary::default();
    let mut shutdown_reply: Option<(Sender<()>, Instant)> = None;
    let mut watched: Vec<(u64, usize)> = Vec::new();
    // launches awaiting attachments (project mode), and attachments that came early
    let mut held: HashSet<u64> = Default::default();
    let mut done_held: HashMap<u64, Box<LaunchRecord>> = HashMap::default();
    let mut early_extra: HashMap<u64, Attach> = HashMap::default();
    // Writes a finished record, or parks it while its attachments are outstanding.
    let emit = |rec: Box<LaunchRecord>,
                held: &mut HashSet<u64>,
                done_held: &mut HashMap<u64, Box<LaunchRecord>>,
                summary: &mut summary::Summary,
                out: &mut Output| {
        if held.contains(&rec.seq) {
            done_held.insert(rec.seq, rec);
        } else {
            summary.add(&rec);
            out.write(&rec);
        }
    };
    let poll_interval = poll_interval();
    let mut last_poll = Instant::now() - poll_interval;
    // when the queue was first seen empty since the last message, and whether the output
    // was flushed since
    let mut last_msg: Option<Instant> = None;
    // the vector exchanged for a thread's batch (see `Batch`)
    let mut spare: Vec<LaunchRecord> = Vec::new();
    let mut since_take = 0usize;
    let mut flushed = true;
    loop {
        // poll the watched events; finished ones become completions
        let draining = shutdown_reply.is_some();
        if !watched.is_empty() && (draining || last_poll.elapsed() >= poll_interval) {
            last_poll = Instant::now();
            // Poll oldest first and stop at the first unfinished event (in-order queues finish
            // in order), at most POLL_BATCH per pass and one pass per `poll_interval`: the
            // writer must not compete with the application for the driver's locks. At
            // shutdown every event is polled.
            let mut budget = if draining { usize::MAX } else { POLL_BATCH };
            let mut stop = false;
            watched.retain(|&(seq, ev)| {
                if stop || budget == 0 {
                    return true;
                }
                budget -= 1;
                let Some((status, times)) = poll_event(ev) else {
                    stop = !draining;
                    return true;
                };
                release_event(ev);
                match pending.remove(&seq) {
                    Some(mut rec) => {
                        finalize(&mut rec, status, times);
                        emit(rec, &mut held, &mut done_held, &mut summary, &mut out);
                    }
                    None => {
                        early.insert(seq, (status, times));
                    }
                }
                false
            });
        }
        // The writer never blocks on the channel: it takes what is queued and otherwise
        // sleeps (`park_timeout`), so a launch's send finds no receiver to wake and costs a
        // few atomic operations, not a futex call per launch (issue 21). Messages that wait
        // for the writer unpark it; the others wait at most one sleep.
        let msg = match rx.try_recv() {
            Ok(m) => {
                last_msg = None;
                since_take += 1;
                if since_take >= POLL_BATCH {
                    // a channel that never empties does not starve the batches
                    since_take = 0;
                    take_batches(&mut spare, |r| {
                        summary.add(&r);
                        out.write(&r);
                    });
                }
                m
            }
            Err(crossbeam_channel::TryRecvError::Disconnected) => break,
            Err(crossbeam_channel::TryRecvError::Empty) => {
                if take_batches(&mut spare, |r| {
                    summary.add(&r);
                    out.write(&r);
                }) {
                    last_msg = None;
                    flushed = false;
                    continue;
                }
                let now = Instant::now();
                if let Some((_, deadline)) = &shutdown_reply {
                    // device times are awaited until `deadline` (EXIT_WAIT), attachments of
                    // held records EXIT_WAIT_HELD from the start of the shutdown
                    let waiting_device = !pending.is_empty() && now < *deadline;
                    let waiting_held =
                        !held.is_empty() && now < *deadline + (EXIT_WAIT_HELD - EXIT_WAIT);
                    if !waiting_device && !waiting_held {
                        break;
                    }
                    std::thread::park_timeout(Duration::from_millis(1));
                    continue;
                }
                let quiet = now.duration_since(*last_msg.get_or_insert(now));
                if quiet >= IDLE_FLUSH && !flushed && watched.is_empty() {
                    out.flush();
                    flushed = true;
                }
                let sleep = if !watched.is_empty() {
                    poll_interval
                        .saturating_sub(last_poll.elapsed())
                        .max(Duration::from_micros(100))
                } else {
                    WRITER_SLEEP
                };
                std::thread::park_timeout(sleep);
                continue;
            }
        };
        flushed = false;
        match msg {
            Msg::Pending(mut rec) => {
                take_early_extra(&mut rec, &mut early_extra, &mut held);
                if let Some((st, t)) = early.remove(&rec.seq) {
                    finalize(&mut rec, st, t);
                    emit(rec, &mut held, &mut done_held, &mut summary, &mut out);
                } else {
                    pending.insert(rec.seq, rec);
                }
            }
            Msg::PendingWatched(mut rec, event) => {
                take_early_extra(&mut rec, &mut early_extra, &mut held);
                watched.push((rec.seq, event));
                pending.insert(rec.seq, rec);
            }
            Msg::Final(mut rec) => {
                // a final record (untimed, or a failed enqueue) is never held
                if !held.is_empty() || !early_extra.is_empty() {
                    take_early_extra(&mut rec, &mut early_extra, &mut held);
                    held.remove(&rec.seq);
                }
                summary.add(&rec);
                out.write(&rec);
            }
            Msg::Hold(seq) => {
                held.insert(seq);
            }
            Msg::Release { seq, entries } => {
                release_held(
                    seq,
                    entries,
                    &mut held,
                    &mut done_held,
                    &mut pending,
                    &mut early_extra,
                    &mut summary,
                    &mut out,
                );
            }
            Msg::Done {
                seq,
                exec_status,
                times,
            } => match pending.remove(&seq) {
                Some(mut rec) => {
                    finalize(&mut rec, exec_status, times);
                    emit(rec, &mut held, &mut done_held, &mut summary, &mut out);
                }
                None => {
                    early.insert(seq, (exec_status, times));
                }
            },
            Msg::Extra { seq, key, value } => {
                if let Some(rec) = pending.get_mut(&seq) {
                    rec.extra.insert(key, value);
                }
            }
            Msg::Flush(reply) => {
                take_batches(&mut spare, |r| {
                    summary.add(&r);
                    out.write(&r);
                });
                out.flush();
                let _ = reply.send(());
            }
            Msg::Shutdown(reply) => {
                shutdown_reply = Some((reply, Instant::now() + EXIT_WAIT));
            }
        }
    }
    take_batches(&mut spare, |r| {
        summary.add(&r);
        out.write(&r);
    });
    for (_, ev) in watched {
        release_event(ev);
    }
    let mut rest: Vec<_> = pending.into_values().collect();
    for r in rest.iter_mut() {
        r.status = "incomplete";
    }
    rest.extend(done_held.into_values());
    rest.sort_by_key(|r| r.seq);
    for mut rec in rest {
        if held.contains(&rec.seq) && !rec.extra.contains_key(schema::KEY_EMULATION) {
            rec.set_emulation(&schema::Emulation::failed(
                schema::EmulationStatus::Unavailable,
                UNFINISHED_AT_EXIT,
                false,
            ));
        }
        summary.add(&rec);
        out.write(&rec);
    }
    out.flush();
    write_summary(&summary);
    if let Some((reply, _)) = shutdown_reply {
        let _ = reply.send(());
    }
}

/// Prints the exit summary where `CLPRISM_SUMMARY` says (nothing when no launch was seen).
fn write_summary(summary: &summary::Summary) {
    if !summary.is_empty() {
        let mut table = summary.render();
        let proj = summary.render_projection();
        if !proj.is_empty() {
            table.push('\n');
            table.push_str(&proj);
        }
        match &config::get().summary {
            SummaryTarget::Off => {}
            SummaryTarget::Stderr => config::eprintln_safe(&table),
            SummaryTarget::File(p) => {
                if let Err(e) = create_private(p).and_then(|mut f| f.write_all(table.as_bytes())) {
                    config::warn(&format!("cannot write the summary {}: {e}", p.display()));
                }
            }
        }
    }
}

/// Attaches `entries` to a held record: writes it when its device time is known already,
/// else keeps it pending (or keeps the entries until the record arrives).
#[allow(clippy::too_many_arguments)]
fn release_held(
    seq: u64,
    entries: Attach,
    held: &mut HashSet<u64>,
    done_held: &mut HashMap<u64, Box<LaunchRecord>>,
    pending: &mut HashMap<u64, Box<LaunchRecord>>,
    early_extra: &mut HashMap<u64, Attach>,
    summary: &mut summary::Summary,
    out: &mut Output,
) {
    if let Some(mut rec) = done_held.remove(&seq) {
        held.remove(&seq);
        entries.apply(&mut rec);
        summary.add(&rec);
        out.write(&rec);
    } else if let Some(rec) = pending.get_mut(&seq) {
        held.remove(&seq);
        entries.apply(rec);
    } else if held.contains(&seq) {
        early_extra.insert(seq, entries);
    }
}

/// Moves attachments that arrived before their record into it (the record is then no
/// longer held).
fn take_early_extra(
    rec: &mut LaunchRecord,
    early_extra: &mut HashMap<u64, Attach>,
    held: &mut HashSet<u64>,
) {
    if let Some(e) = early_extra.remove(&rec.seq) {
        held.remove(&rec.seq);
        e.apply(rec);
    }
}

/// Wall-clock time now, ns since the Unix epoch.
pub fn unix_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// OS thread id of the caller (cached per thread).
pub fn thread_id() -> u64 {
    thread_local! {
        // SAFETY: gettid has no preconditions.
        static TID: u64 = unsafe { libc::syscall(libc::SYS_gettid) as u64 };
    }
    TID.with(|t| *t)
}

static PID: Lazy<u32> = Lazy::new(std::process::id);

/// Process id (cached).
pub fn pid() -> u32 {
    *PID
}

#[cfg(test)]
pub(crate) mod tests_support {
    use super::*;

    /// A complete project-mode record without attachments.
    pub fn record(seq: u64) -> LaunchRecord {
        LaunchRecord {
            schema: SCHEMA,
            seq,
            time_ns: 0,
            pid: 1,
            thread: 1,
            mode: "project",
            kernel: "k".into(),
            program: "p".into(),
            work_dim: 1,
            global: vec![64].into(),
            local: None,
            offset: None,
            device: Arc::new(DeviceRef {
                index: "0:0".into(),
                name: "d".into(),
                kind: "cpu".into(),
                ..Default::default()
            }),
            status: "complete",
            error_code: None,
            device_ns: Some(5),
            queued_ns: None,
            extra: Default::default(),
            shared_extra: None,
            device_times: None,
            timed: true,
            timing_p: None,
            sampler: None,
            forwarded: None,
        }
    }
}

#[cfg(test)]
mod tests;
