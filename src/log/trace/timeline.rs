//! Turns what the trace collected (API spans, finished launch records, clock mappings) into
//! Chrome trace events (the "JSON Object Format" of the Trace Event Format: `traceEvents`,
//! `displayTimeUnit`, `otherData`). Pure: no OpenCL calls, unit-tested on synthetic input.
//!
//! Tracks (`pid` = the process, `tid` = the track): host threads keep their OS thread ids;
//! synthetic tracks use ids from [`SYNTHETIC_TID`] up. Slices on one track must nest, so a
//! device whose commands overlap in time (several queues) gets extra lanes ("overlap 2", …).
//!
//! Balance mode reads the `schedule` record (all `*_ns` relative to the launch's start t0):
//! `devices[{index, name}]`, `work_groups`, `wall_ns`/`makespan_ns`,
//! `chunks[{device, first_wg, count, work_groups, enqueue_ns, start_ns?, end_ns?, device_ns?,
//! abandoned?, failed?}]`, and, when present, `t0_unix_ns` (t0 on the host clock; otherwise
//! t0 = end of the app's `clEnqueueNDRangeKernel` call − `wall_ns`),
//! `transfers[{device?, kind, bytes?, start_ns, end_ns}]` (drawn on the device's track, or
//! inside the launch slice when `device` is absent) and `phases[{name, start_ns, end_ns}]`
//! (host phases, nested in the launch slice).
//!
//! Each chunk that ran gets a flow arrow (`s` → `f`, category `flow`) from its enqueue tick
//! to its slice, Boyer's Figure 4.4 (§4.3.4). The `s` sits on the device's track at the
//! tick's ts, written right after the tick: Perfetto binds a flow start to the innermost
//! slice open there and draws the arrow from that slice's **end**, so an `s` inside the launch
//! slice (as the writer first did) gave arrows from the end of the launch, back in time
//! (results/perfetto/README.md). The zero-duration tick ends where it starts, so the arrow
//! leaves at the enqueue time. chrome://tracing (catapult's trace viewer) imports a
//! thread-scoped instant as a zero-duration slice, so there too a slice encloses the `s` at
//! the tick's ts and thread. The `f` has `bp:"e"`: it binds to the chunk slice that starts at
//! its ts.

use super::clock::Mapping;
use super::{Finished, Span};
use crate::log::schema::{Chunk, Schedule};
use crate::log::LaunchRecord;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// First track id of the synthetic (non-thread) tracks; above any Linux thread id (`pid_max`
/// is at most 2^22).
pub const SYNTHETIC_TID: u64 = 1 << 30;
const BALANCE_GROUP: &str = "\u{1}balance";
/// How far before its host enqueue a timer-mapped submission may fall before the timer
/// mapping is distrusted, ns (clock reads and calibration jitter stay far below).
pub const TIMER_TOLERANCE_NS: i128 = 1_000_000;
const EMU_GROUP: &str = "\u{2}emulation";

/// The API spans of one host thread.
#[derive(Debug, Clone)]
pub struct HostThread {
    /// OS thread id.
    pub tid: u64,
    /// Thread name, may be empty.
    pub name: String,
    /// Its OpenCL calls.
    pub spans: Vec<Span>,
}

/// Everything the trace needs to build the timeline.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Process id.
    pub pid: u32,
    /// Program name (argv\[0\]).
    pub process: String,
    /// Host threads with their API spans.
    pub threads: Vec<HostThread>,
    /// Finished launch records, in any order.
    pub records: Vec<Finished>,
    /// Clock mapping per device index (devices absent here are enqueue-aligned).
    pub clocks: BTreeMap<String, Mapping>,
    /// API spans not recorded (per-thread cap).
    pub dropped_spans: u64,
}

/// One trace event before rendering. Times are absolute, ns since the Unix epoch.
#[derive(Debug, Clone)]
pub struct Event {
    /// Phase: `X` (complete slice), `i` (instant), `s`/`f` (flow start/end).
    pub ph: &'static str,
    /// Name shown on the slice.
    pub name: String,
    /// Category: `api`, `kernel`, `chunk`, `transfer`, `balance`, `emulation`, `flow`.
    pub cat: &'static str,
    /// Start, ns since the Unix epoch (may be estimated, see [`super::clock`]).
    pub ts: i128,
    /// Duration of an `X` event, ns.
    pub dur: Option<u64>,
    /// Track.
    pub tid: u64,
    /// `args` object (shown in the details panel).
    pub args: Value,
    /// Flow id (`s`/`f`).
    pub id: Option<u64>,
    /// Track group until lanes are assigned (synthetic tracks), else empty.
    group: String,
}

impl Event {
    fn new(ph: &'static str, cat: &'static str, name: String, ts: i128, dur: Option<u64>) -> Self {
        Event {
            ph,
            name,
            cat,
            ts,
            dur,
            tid: 0,
            args: Value::Null,
            id: None,
            group: String::new(),
        }
    }
    fn end(&self) -> i128 {
        self.ts + self.dur.unwrap_or(0) as i128
    }
}

/// A named track.
#[derive(Debug, Clone)]
pub struct Track {
    /// Track id.
    pub tid: u64,
    /// Name shown in the UI.
    pub name: String,
    /// Display order.
    pub sort: i64,
}

/// The built timeline.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Events, unsorted.
    pub events: Vec<Event>,
    /// Tracks with names.
    pub tracks: Vec<Track>,
    /// Notes for `otherData` (clock mapping per device, estimates used).
    pub notes: Map<String, Value>,
}

/// Whether a record is a balanced launch (its device times are not one device's).
pub fn is_balanced(rec: &LaunchRecord) -> bool {
    rec.schedule().is_some_and(|s| s.is_balanced())
}

/// Builds the timeline (see the module docs of [`super`] for what it draws).
pub fn build(input: &Input) -> Timeline {
    let mut tl = Timeline::default();
    let mut ev: Vec<Event> = Vec::new();
    host_tracks(input, &mut tl, &mut ev);
    let mut records: Vec<&Finished> = input.records.iter().collect();
    records.sort_by_key(|r| r.rec.seq);

    let offsets = clock_offsets(input, &records, &mut tl);

    // device groups: key = "index name", shown in first-seen order
    let mut device_groups = DeviceGroups::default();
    let host_span_end = |thread: u64, at: u64| -> Option<u64> {
        input
            .threads
            .iter()
            .find(|t| t.tid == thread)?
            .spans
            .iter()
            .find(|s| s.name == "clEnqueueNDRangeKernel" && s.start <= at && at <= s.end)
            .map(|s| s.end)
    };
    // (flow start event, chunk event): the end is placed once the chunk's lane is known
    let mut flows: Vec<(usize, usize)> = Vec::new();
    let mut emu_free: i128 = 0; // end of the previous emulation (single FIFO worker)
    let mut t0_methods = BTreeMap::<&str, u64>::new();
    for f in &records {
        let rec = &f.rec;
        let mut kargs = json!({
            "seq": rec.seq,
            "status": rec.status,
            "global": rec.global,
            "local": rec.local,
            "device": rec.device.index,
            "thread": rec.thread,
        });
        let schedule = rec.schedule();
        if let Some(s) = schedule.as_ref().filter(|s| s.is_balanced()) {
            let wall = s.wall_ns.or(s.makespan_ns).unwrap_or(0);
            let (t0, how) = match s.t0_unix_ns {
                Some(t) => (t, "schedule.t0_unix_ns"),
                None => match host_span_end(rec.thread, rec.time_ns) {
                    Some(end) if end >= rec.time_ns + wall => (
                        end - wall,
                        "end of the clEnqueueNDRangeKernel call - wall_ns",
                    ),
                    _ => (rec.time_ns, "enqueue time (estimate)"),
                },
            };
            *t0_methods.entry(how).or_default() += 1;
            let t0 = t0 as i128;
            let mut e = Event::new(
                "X",
                "kernel",
                format!("{} (balanced)", rec.kernel),
                t0,
                Some(wall),
            );
            for (k, v) in [
                ("scheduler", json!(s.scheduler)),
                ("work_groups", json!(s.work_groups)),
                ("share", json!(s.share)),
                ("idle_tail_ns", json!(s.idle_tail_ns)),
                ("makespan_ns", json!(s.makespan_ns)),
                ("merged_bytes", json!(s.merged_bytes)),
                ("split_dim", json!(s.split_dim)),
            ] {
                if !v.is_null() {
                    kargs[k] = v;
                }
            }
            kargs["t0"] = json!(how);
            e.args = kargs;
            e.group = BALANCE_GROUP.into();
            let launch_end = e.end();
            ev.push(e);
            let units = s.work_groups.unwrap_or(0).max(1);
            let chunks = &s.chunks;
            let spans = chunk_spans(chunks);
            for (ci, c) in chunks.iter().enumerate() {
                let group = device_groups.of_schedule(s, c.device);
                let count = c.count;
                let pct = 100.0 * count as f64 / units as f64;
                let enq = c.enqueue_ns.map(|x| t0 + x as i128);
                let mut cargs = json!({"seq": rec.seq, "chunk": ci, "first_wg": c.first_wg, "count": count,
                    "work_groups": c.work_groups, "device_ns": c.device_ns, "share_pct": (pct * 100.0).round() / 100.0});
                let mut label = format!("{} chunk {ci}: {pct:.1}%", rec.kernel);
                if c.abandoned {
                    label.push_str(" (abandoned)");
                    cargs["abandoned"] = json!(true);
                }
                if let Some(code) = c.failed {
                    label.push_str(" (failed)");
                    cargs["failed"] = json!(code);
                }
                // Boyer's uptick (Figure 4.4, §4.3.4): when the scheduler enqueued the chunk
                let tick = enq.map(|t| {
                    let mut i = Event::new("i", "chunk", format!("enqueue chunk {ci}"), t, None);
                    i.args = json!({"seq": rec.seq, "chunk": ci});
                    i.group = group.clone();
                    ev.push(i);
                    ev.len() - 1
                });
                match spans[ci] {
                    Some((start, end)) => {
                        let end = t0 + end;
                        let mut start = start.map(|x| t0 + x).or(enq).unwrap_or(end);
                        if let Some(q) = enq {
                            start = start.max(q);
                        }
                        let start = start.min(end);
                        let mut e =
                            Event::new("X", "chunk", label, start, Some((end - start) as u64));
                        e.args = cargs;
                        e.group = group.clone();
                        ev.push(e);
                        let chunk_idx = ev.len() - 1;
                        // the arrow leaves the enqueue tick: the flow start sits on the
                        // tick's track (same group, and lane 0 like every instant) at its ts,
                        // and is written right after it (see `render_to`), so that viewers
                        // bind it to the tick, not to a longer slice around it
                        if let Some(ti) = tick {
                            let mut s = Event::new("s", "flow", "chunk".into(), ev[ti].ts, None);
                            s.group = group.clone();
                            ev.push(s);
                            flows.push((ev.len() - 1, chunk_idx));
                        }
                    }
                    None => {
                        let mut e = Event::new(
                            "i",
                            "chunk",
                            format!("{label}: never completed"),
                            enq.unwrap_or(t0),
                            None,
                        );
                        e.args = cargs;
                        e.group = group.clone();
                        ev.push(e);
                    }
                }
            }
            transfer_and_phase_events(s, rec.seq, (t0, launch_end), &mut device_groups, &mut ev);
        } else {
            let mut e = kernel_event(f, offsets.get(&rec.device.index), kargs, schedule.as_ref());
            e.group = device_groups.of(&rec.device.index, &rec.device.name);
            ev.push(e);
        }
        // emulation (project mode)
        if let Some(e) = emulation_event(rec, &mut emu_free) {
            ev.push(e);
        }
    }
    if !t0_methods.is_empty() {
        tl.notes.insert("balance_t0".into(), json!(t0_methods));
    }
    if input.dropped_spans > 0 {
        tl.notes
            .insert("dropped_api_spans".into(), json!(input.dropped_spans));
    }

    // lanes: per group, greedy first-fit on slices sorted by start
    let mut groups: Vec<String> = vec![BALANCE_GROUP.into()];
    groups.extend(device_groups.0.iter().cloned());
    groups.push(EMU_GROUP.into());
    assign_lanes(&mut ev, &groups, &mut tl);
    // flows: enqueue tick -> chunk start (`bp:"e"`: binds to the chunk slice that starts
    // there, on whichever lane the chunk got)
    for (n, (s, c)) in flows.into_iter().enumerate() {
        let id = Some(n as u64 + 1);
        ev[s].id = id;
        let mut f = Event::new("f", "flow", "chunk".into(), ev[c].ts, None);
        f.tid = ev[c].tid;
        f.id = id;
        ev.push(f);
    }
    tl.events = ev;
    tl
}

/// Device groups (tracks) in first-seen order; key "device INDEX NAME".
#[derive(Default)]
struct DeviceGroups(Vec<String>);

impl DeviceGroups {
    /// The group of device `index` named `name`, added when new.
    fn of(&mut self, index: &str, name: &str) -> String {
        let key = format!("device {index} {name}");
        if !self.0.contains(&key) {
            self.0.push(key.clone());
        }
        key
    }

    /// The group of the device at position `i` of a schedule's devices.
    fn of_schedule(&mut self, s: &Schedule, i: usize) -> String {
        match s.devices.get(i) {
            Some(d) => self.of(&d.index, &d.name),
            None => self.of("?", "unknown"),
        }
    }
}

/// The transfers and host phases of balanced launch `seq` (started at `t0`, ended at
/// `launch_end`, host ns), when its schedule record carries them.
fn transfer_and_phase_events(
    s: &Schedule,
    seq: u64,
    (t0, launch_end): (i128, i128),
    groups: &mut DeviceGroups,
    ev: &mut Vec<Event>,
) {
    // transfers and host phases, when the schedule record carries them
    for t in s.transfers.iter().flatten() {
        let (Some(a), Some(b)) = (t.start_ns, t.end_ns) else {
            continue;
        };
        // a transfer without a device (e.g. the write into the app's buffer) is host
        // work inside the launch: drawn nested in the launch slice
        let (group, a, b) = match t.device {
            Some(d) => (groups.of_schedule(s, d), t0 + a as i128, t0 + b as i128),
            None => {
                let a = (t0 + a as i128).clamp(t0, launch_end);
                (
                    BALANCE_GROUP.to_string(),
                    a,
                    (t0 + b as i128).clamp(a, launch_end),
                )
            }
        };
        let kind = t.kind.as_deref().unwrap_or("transfer");
        let name = match t.bytes {
            Some(n) => format!("{kind} {}", human_bytes(n)),
            None => kind.to_string(),
        };
        let mut e = Event::new("X", "transfer", name, a, Some((b - a).max(0) as u64));
        e.args = json!({"seq": seq, "kind": kind, "bytes": t.bytes});
        e.group = group;
        ev.push(e);
    }
    for p in s.phases.iter().flatten() {
        let a = (t0 + p.start_ns as i128).clamp(t0, launch_end);
        let b = (t0 + p.end_ns as i128).clamp(a, launch_end);
        let name = if p.name.is_empty() {
            "phase".to_string()
        } else {
            p.name.clone()
        };
        let mut e = Event::new("X", "balance", name, a, Some((b - a) as u64));
        e.args = json!({"seq": seq});
        e.group = BALANCE_GROUP.into();
        ev.push(e);
    }
}

/// The kernel slice of a launch that ran on one device: at its device times mapped by the
/// device's clock `offset`, or an instant at the enqueue when it was not timed.
fn kernel_event(
    f: &Finished,
    offset: Option<&(i128, String)>,
    mut kargs: Value,
    schedule: Option<&Schedule>,
) -> Event {
    let rec = &f.rec;
    let mut e = match (f.times, offset) {
        (Some(t), Some((off, how))) => {
            kargs["device_ns"] = json!(rec.device_ns);
            kargs["queued_ns"] = json!(rec.queued_ns);
            kargs["clock"] = json!(how);
            Event::new(
                "X",
                "kernel",
                rec.kernel.to_string(),
                t.start as i128 + off,
                Some(t.end.saturating_sub(t.start)),
            )
        }
        _ => Event::new(
            "i",
            "kernel",
            format!("{} ({})", rec.kernel, rec.status),
            rec.time_ns as i128,
            None,
        ),
    };
    if let Some(s) = schedule {
        kargs["balance_fallback"] = json!(s.fallback);
    }
    e.args = kargs;
    e
}

/// One track per host thread with its OpenCL API spans.
fn host_tracks(input: &Input, tl: &mut Timeline, ev: &mut Vec<Event>) {
    let mut threads: Vec<&HostThread> = input.threads.iter().collect();
    threads.sort_by_key(|t| t.tid);
    for (i, t) in threads.iter().enumerate() {
        if t.spans.is_empty() {
            continue;
        }
        let name = if t.name.is_empty() {
            format!("host thread {}", t.tid)
        } else {
            format!("host thread {} ({})", t.tid, t.name)
        };
        tl.tracks.push(Track {
            tid: t.tid,
            name,
            sort: i as i64,
        });
        for s in &t.spans {
            let mut e = Event::new(
                "X",
                "api",
                s.name.to_string(),
                s.start as i128,
                Some(s.end.saturating_sub(s.start)),
            );
            e.tid = t.tid;
            ev.push(e);
        }
    }
}

/// Per device index, the offset from its profiling clock to host time (ns) and how it was
/// found; the notes record the mapping per device.
fn clock_offsets(
    input: &Input,
    records: &[&Finished],
    tl: &mut Timeline,
) -> BTreeMap<String, (i128, String)> {
    // device clock offsets: enqueue alignment for every device (max(time_ns − SUBMIT)), and
    // the timer mapping where there is one, unless it puts a command's submission more than
    // TIMER_TOLERANCE_NS before its host enqueue (a driver whose timer and profiling clocks
    // disagree): then the alignment is used and the note says why
    let mut aligned: BTreeMap<String, i128> = BTreeMap::new();
    for f in records {
        let (Some(t), false) = (f.times, is_balanced(&f.rec)) else {
            continue;
        };
        let cand = f.rec.time_ns as i128 - t.submit as i128;
        let e = aligned.entry(f.rec.device.index.clone()).or_insert(cand);
        *e = (*e).max(cand);
    }
    let mut offsets: BTreeMap<String, (i128, String)> = BTreeMap::new();
    let mut mapping_notes = Map::new();
    for (idx, &al) in &aligned {
        let (off, how, note) = match input.clocks.get(idx) {
            Some(m @ Mapping::Timer { offset, .. }) => {
                // al − offset = how far the worst command's submission lies before its enqueue
                if al - offset > TIMER_TOLERANCE_NS {
                    let why = format!(
                        "clGetDeviceAndHostTimer rejected (it put a submission {} us before its enqueue); aligned to the host enqueue time",
                        (al - offset) / 1000
                    );
                    (al, "enqueue-aligned", why)
                } else {
                    (*offset, "clGetDeviceAndHostTimer", m.describe())
                }
            }
            Some(m) => (al, "enqueue-aligned", m.describe()),
            None => (al, "enqueue-aligned", "enqueue-aligned".to_string()),
        };
        offsets.insert(idx.clone(), (off, how.to_string()));
        mapping_notes.insert(idx.clone(), json!(note));
    }
    tl.notes
        .insert("clock_mapping".into(), Value::Object(mapping_notes));
    offsets
}

/// The emulation slice of a project-mode record: its own time on the (single, FIFO)
/// emulation worker, or an instant for reused statistics and failures. `emu_free`: when the
/// previous emulation ended.
fn emulation_event(rec: &LaunchRecord, emu_free: &mut i128) -> Option<Event> {
    let m = rec.emulation()?;

    let status = m.status.as_ref().map_or("unknown", |s| s.as_str());
    let reused = m.reused;
    let emu_ns = m.stats.as_ref().map(|s| s.emulation_ns);
    let mut args = json!({"seq": rec.seq, "status": status, "reused": reused,
        "reason": m.reason, "emulation_ns": emu_ns});
    let e = match emu_ns.filter(|_| !reused) {
        Some(ns) => {
            let (start, how) = match m.start_unix_ns {
                Some(t) => (t as i128, "emulation.start_unix_ns"),
                None => (
                    (rec.time_ns as i128).max(*emu_free),
                    "reconstructed: FIFO worker after the enqueue",
                ),
            };
            *emu_free = start + ns as i128;
            args["start"] = json!(how);
            Event::new(
                "X",
                "emulation",
                format!("emulate {}", rec.kernel),
                start,
                Some(ns),
            )
        }
        None => {
            let what = if reused {
                "reused statistics".to_string()
            } else {
                status.to_string()
            };
            Event::new(
                "i",
                "emulation",
                format!("{}: {what}", rec.kernel),
                rec.time_ns as i128,
                None,
            )
        }
    };
    let mut e = e;
    e.args = args;
    e.group = EMU_GROUP.into();
    Some(e)
}

/// Places each group's events on lanes (greedy first-fit on slices sorted by start; a slice
/// fits a lane when it nests in the innermost open slice there) and names the tracks.
fn assign_lanes(ev: &mut [Event], groups: &[String], tl: &mut Timeline) {
    let mut next_tid = SYNTHETIC_TID;
    for (gi, g) in groups.iter().enumerate() {
        let mut idx: Vec<usize> = (0..ev.len()).filter(|&i| ev[i].group == *g).collect();
        if idx.is_empty() {
            continue;
        }
        idx.sort_by_key(|&i| (ev[i].ts, std::cmp::Reverse(ev[i].dur)));
        // each lane is a stack of open slice ends: a slice fits a lane when, after closing
        // the slices that ended, it nests inside the innermost open one (or the lane is idle)
        let mut lanes_open: Vec<Vec<i128>> = Vec::new();
        let base = next_tid;
        for &i in &idx {
            let lane = if ev[i].ph == "X" {
                let (ts, end) = (ev[i].ts, ev[i].end());
                let fit = lanes_open.iter_mut().position(|st| {
                    while st.last().is_some_and(|&e| e <= ts) {
                        st.pop();
                    }
                    st.last().is_none_or(|&e| end <= e)
                });
                match fit {
                    Some(l) => {
                        lanes_open[l].push(end);
                        l
                    }
                    None => {
                        lanes_open.push(vec![end]);
                        lanes_open.len() - 1
                    }
                }
            } else {
                0
            };
            ev[i].tid = base + lane as u64;
        }
        let lanes = lanes_open.len().max(1);
        next_tid += lanes as u64;
        let title = match g.as_str() {
            BALANCE_GROUP => "balanced launches (clprism scheduler)".to_string(),
            EMU_GROUP => "emulation (project mode worker)".to_string(),
            other => other.to_string(),
        };
        for l in 0..lanes {
            tl.tracks.push(Track {
                tid: base + l as u64,
                name: if l == 0 {
                    title.clone()
                } else {
                    format!("{title} (overlap {})", l + 1)
                },
                sort: 1000 + 10 * gi as i64 + l as i64,
            });
        }
    }
}

/// (start, end) of each chunk relative to the launch's t0, ns. The schedule record gives the
/// host time at which the completion was seen (`end_ns`, later than the device's end by the
/// notification delay) and `start_ns = end_ns − device_ns`, so two chunks of one in-order
/// device queue can seem to overlap. Walking each device's chunks backwards from its last
/// one, an end is moved to no later than the next chunk's start: measured durations are
/// kept, and nothing changes when the times do not overlap. `None`: never completed.
fn chunk_spans(chunks: &[Chunk]) -> Vec<Option<(Option<i128>, i128)>> {
    let mut out: Vec<Option<(Option<i128>, i128)>> = chunks
        .iter()
        .map(|c| {
            let end = c.end_ns? as i128;
            Some((c.start_ns.map(|x| x as i128), end))
        })
        .collect();
    let mut devices: Vec<usize> = chunks.iter().map(|c| c.device).collect();
    devices.sort_unstable();
    devices.dedup();
    for d in devices {
        let mut idx: Vec<usize> = (0..chunks.len())
            .filter(|&i| chunks[i].device == d && out[i].is_some())
            .collect();
        idx.sort_by_key(|&i| chunks[i].enqueue_ns.unwrap_or(0));
        let mut next_start: Option<i128> = None;
        for &i in idx.iter().rev() {
            let Some((start, end)) = out[i] else { continue };
            let Some(dn) = chunks[i].device_ns else {
                next_start = start;
                continue;
            };
            let e = next_start.map_or(end, |n| end.min(n));
            let s = e - dn as i128;
            out[i] = Some((Some(s), e));
            next_start = Some(s);
        }
    }
    out
}

fn human_bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MiB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KiB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

/// `ns` as a JSON number of microseconds with ns precision (no float rounding).
fn micros(ns: i128) -> String {
    let sign = if ns < 0 { "-" } else { "" };
    let a = ns.unsigned_abs();
    format!("{sign}{}.{:03}", a / 1000, a % 1000)
}

/// Writes the timeline as Chrome trace event JSON to `s` (streamed: no copy of the file in
/// memory). Timestamps are relative to the earliest event (its absolute time is
/// `otherData.origin_unix_ns`), in µs with ns precision.
pub fn render_to(tl: &Timeline, input: &Input, s: &mut impl std::io::Write) -> std::io::Result<()> {
    let origin = tl.events.iter().map(|e| e.ts).min().unwrap_or(0);
    let pid = input.pid;
    s.write_all(b"{\"traceEvents\":[\n")?;
    let exe = std::path::Path::new(&input.process)
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    write!(
        s,
        "{{\"ph\":\"M\",\"name\":\"process_name\",\"ts\":0,\"pid\":{pid},\"tid\":0,\"args\":{{\"name\":{}}}}}",
        Value::String(format!("{exe} (clprism, pid {pid})"))
    )?;
    for t in &tl.tracks {
        write!(
            s,
            ",\n{{\"ph\":\"M\",\"name\":\"thread_name\",\"ts\":0,\"pid\":{pid},\"tid\":{},\"args\":{{\"name\":{}}}}}",
            t.tid,
            Value::String(t.name.clone())
        )?;
        write!(
            s,
            ",\n{{\"ph\":\"M\",\"name\":\"thread_sort_index\",\"ts\":0,\"pid\":{pid},\"tid\":{},\"args\":{{\"sort_index\":{}}}}}",
            t.tid, t.sort
        )?;
    }
    // Per track by time, longer slices first (they enclose the shorter ones at the same ts).
    // At one ts, flow ends come before instants and flow starts: Perfetto binds an `f` with
    // `bp:"e"` and an `s` to the innermost slice open at that point of the file, so the `f`
    // binds to the chunk slice that starts there rather than to an enqueue tick at the same
    // ts; the rest keep the order of `events` (stable sort), which puts each flow start right
    // after its enqueue tick.
    let mut order: Vec<&Event> = tl.events.iter().collect();
    order.sort_by_key(|e| (e.tid, e.ts, std::cmp::Reverse(e.dur), e.ph != "f"));
    for e in order {
        write!(
            s,
            ",\n{{\"ph\":\"{}\",\"name\":{},\"cat\":\"{}\",\"ts\":{},\"pid\":{pid},\"tid\":{}",
            e.ph,
            Value::String(e.name.clone()),
            e.cat,
            micros(e.ts - origin),
            e.tid
        )?;
        if let Some(d) = e.dur {
            write!(s, ",\"dur\":{}", micros(d as i128))?;
        }
        match e.ph {
            "i" => s.write_all(b",\"s\":\"t\"")?,
            "f" => s.write_all(b",\"bp\":\"e\"")?,
            _ => {}
        }
        if let Some(id) = e.id {
            write!(s, ",\"id\":{id}")?;
        }
        if !e.args.is_null() {
            write!(s, ",\"args\":{}", e.args)?;
        }
        s.write_all(b"}")?;
    }
    let mut other = tl.notes.clone();
    other.insert("origin_unix_ns".into(), json!(origin.max(0) as u64));
    other.insert("generator".into(), json!("clprism"));
    other.insert("schema".into(), json!(crate::log::SCHEMA));
    write!(
        s,
        "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{}}}\n",
        Value::Object(other)
    )
}

/// [`render_to`] into a string.
pub fn render(tl: &Timeline, input: &Input) -> String {
    let mut v = Vec::with_capacity(128 * tl.events.len() + 1024);
    // writing into a Vec cannot fail
    let _ = render_to(tl, input, &mut v);
    String::from_utf8(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::{DeviceRef, DeviceTimes};
    use std::sync::Arc;

    fn rec(seq: u64, time_ns: u64, dev: &str) -> LaunchRecord {
        LaunchRecord {
            schema: crate::log::SCHEMA,
            seq,
            time_ns,
            pid: 7,
            thread: 100,
            mode: "log",
            kernel: Arc::from("k"),
            program: Arc::from("0"),
            work_dim: 1,
            global: vec![1024].into(),
            local: Some(vec![64].into()),
            offset: None,
            device: Arc::new(DeviceRef {
                index: dev.into(),
                name: "D".into(),
                kind: "cpu".into(),
                ..Default::default()
            }),
            status: "complete",
            error_code: None,
            device_ns: Some(10),
            queued_ns: Some(5),
            extra: Default::default(),
            shared_extra: None,
            device_times: None,
            timed: true,
            timing_p: None,
            sampler: None,
            forwarded: None,
        }
    }

    fn parse(input: &Input) -> Value {
        serde_json::from_str(&render(&build(input), input)).expect("valid JSON")
    }

    #[test]
    fn enqueue_alignment_puts_no_submit_before_its_enqueue() {
        // device clock = host clock - 1_000_000 + a per-launch submit delay of 30..50 ns
        let mut input = Input::default();
        for (i, delay) in [50u64, 30, 40].iter().enumerate() {
            let host = 10_000_000 + i as u64 * 1000;
            let submit = host - 1_000_000 + delay;
            input.records.push(Finished {
                rec: rec(i as u64, host, "0:0"),
                times: Some(DeviceTimes {
                    submit,
                    start: submit + 5,
                    end: submit + 15,
                }),
            });
        }
        let tl = build(&input);
        let kernels: Vec<&Event> = tl.events.iter().filter(|e| e.cat == "kernel").collect();
        assert_eq!(kernels.len(), 3);
        // offset = max(host - submit) = 1_000_000 - 30: the 30-ns launch starts 5 ns after
        // its enqueue, the others later
        for (k, f) in kernels.iter().zip(&input.records) {
            assert!(k.ts >= f.rec.time_ns as i128, "kernel before its enqueue");
        }
        assert_eq!(kernels[1].ts, input.records[1].rec.time_ns as i128 + 5);
        assert_eq!(kernels[0].dur, Some(10));
    }

    #[test]
    fn timer_mapping_is_used_when_present() {
        let mut input = Input::default();
        input.clocks.insert(
            "0:0".into(),
            Mapping::Timer {
                offset: 500,
                uncertainty_ns: 1,
            },
        );
        input.records.push(Finished {
            rec: rec(0, 100, "0:0"),
            times: Some(DeviceTimes {
                submit: 0,
                start: 1000,
                end: 1200,
            }),
        });
        let tl = build(&input);
        let k = tl.events.iter().find(|e| e.cat == "kernel").unwrap();
        assert_eq!((k.ts, k.dur), (1500, Some(200)));
    }

    #[test]
    fn an_implausible_timer_mapping_is_rejected() {
        let mut input = Input::default();
        // the timer claims device = host - 10 s, but the command was enqueued at host 20 s
        input.clocks.insert(
            "0:0".into(),
            Mapping::Timer {
                offset: 10_000_000_000,
                uncertainty_ns: 1,
            },
        );
        input.records.push(Finished {
            rec: rec(0, 20_000_000_000, "0:0"),
            times: Some(DeviceTimes {
                submit: 1_000_000,
                start: 1_000_100,
                end: 1_000_200,
            }),
        });
        let tl = build(&input);
        let k = tl.events.iter().find(|e| e.cat == "kernel").unwrap();
        assert_eq!(k.ts, 20_000_000_100, "enqueue-aligned instead");
        assert!(tl.notes["clock_mapping"]["0:0"]
            .as_str()
            .unwrap()
            .contains("rejected"));
    }

    #[test]
    fn overlapping_commands_of_one_device_get_lanes() {
        let mut input = Input::default();
        for i in 0..2u64 {
            input.records.push(Finished {
                rec: rec(i, 1000, "0:0"),
                times: Some(DeviceTimes {
                    submit: 1000,
                    start: 1000 + i * 10,
                    end: 2000 + i * 100,
                }),
            });
        }
        let v = parse(&input);
        let s = super::super::check::check(&v).expect("nested per track");
        assert_eq!(s.kernel_seqs, vec![0, 1]);
        let tids: std::collections::BTreeSet<u64> = v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["cat"] == "kernel")
            .map(|e| e["tid"].as_u64().unwrap())
            .collect();
        assert_eq!(tids.len(), 2);
    }

    #[test]
    fn balanced_launch_draws_chunks_transfers_and_flows() {
        let mut input = Input::default();
        let mut r = rec(3, 1_000_000, "0:0");
        r.extra.insert(
            "schedule".into(),
            json!({
                "scheduler": "boyer", "work_groups": 100, "wall_ns": 5000, "t0_unix_ns": 2_000_000,
                "devices": [{"index": "0:0", "name": "A"}, {"index": "0:1", "name": "B"}],
                "chunks": [
                    {"device": 0, "first_wg": 0, "count": 7, "enqueue_ns": 100, "start_ns": 200, "end_ns": 900, "device_ns": 700},
                    {"device": 1, "first_wg": 7, "count": 7, "enqueue_ns": 110, "start_ns": 300, "end_ns": 1200, "device_ns": 900},
                    {"device": 0, "first_wg": 14, "count": 86, "enqueue_ns": 1000, "start_ns": 1000, "end_ns": 4000, "device_ns": 3000},
                    {"device": 1, "first_wg": 100, "count": 5, "enqueue_ns": 1300, "abandoned": true}
                ],
                "transfers": [{"device": 0, "kind": "upload", "bytes": 4096, "start_ns": 10, "end_ns": 90},
                                {"kind": "write_back", "bytes": 100, "start_ns": 4900, "end_ns": 4990}],
                "phases": [{"name": "merge", "start_ns": 4100, "end_ns": 4900}],
                "fallback": null
            }),
        );
        assert!(is_balanced(&r));
        input.records.push(Finished {
            rec: r,
            times: Some(DeviceTimes {
                submit: 0,
                start: 0,
                end: 5000,
            }),
        });
        let v = parse(&input);
        let s = super::super::check::check(&v).expect("valid");
        assert_eq!(s.kernel_seqs, vec![3]);
        let evs = v["traceEvents"].as_array().unwrap();
        let chunks: Vec<&Value> = evs
            .iter()
            .filter(|e| e["cat"] == "chunk" && e["ph"] == "X")
            .collect();
        assert_eq!(chunks.len(), 3);
        assert!(chunks.iter().any(|c| c["name"] == "k chunk 2: 86.0%"));
        assert_eq!(evs.iter().filter(|e| e["ph"] == "s").count(), 3);
        assert_eq!(evs.iter().filter(|e| e["ph"] == "f").count(), 3);
        let sched = &input.records[0].rec.extra["schedule"];
        let us = |ns: u64| ns as f64 / 1000.0; // JSON ts in µs; t0 is the origin (ts 0)
        let device_tid = |d: usize| {
            let want = format!("device {} ", sched["devices"][d]["index"].as_str().unwrap());
            s.tracks
                .iter()
                .find(|(_, n)| n.starts_with(&want))
                .map(|((_, tid), _)| *tid)
                .unwrap()
        };
        let launch_tid = evs.iter().find(|e| e["cat"] == "kernel").unwrap()["tid"].clone();
        let mut flow_chunks = Vec::new();
        for (si, st) in evs.iter().enumerate().filter(|(_, e)| e["ph"] == "s") {
            let (fi, f) = evs
                .iter()
                .enumerate()
                .find(|(_, e)| e["ph"] == "f" && e["id"] == st["id"])
                .expect("the flow's end");
            // the end: at the start of a chunk slice on the same track, written after it
            let (ci, chunk) = evs
                .iter()
                .enumerate()
                .find(|(_, e)| {
                    e["cat"] == "chunk"
                        && e["ph"] == "X"
                        && e["tid"] == f["tid"]
                        && e["ts"] == f["ts"]
                })
                .expect("a chunk slice starts where the flow ends");
            assert!(ci < fi, "the chunk slice precedes its flow end in the file");
            let n = chunk["args"]["chunk"].as_u64().unwrap() as usize;
            let c = &sched["chunks"][n];
            // the start: at the chunk's enqueue time, on its device's track, not the launch's
            assert_eq!(
                st["ts"].as_f64(),
                Some(us(c["enqueue_ns"].as_u64().unwrap()))
            );
            let dev = c["device"].as_u64().unwrap() as usize;
            assert_eq!(st["tid"].as_u64(), Some(device_tid(dev)));
            assert_ne!(st["tid"], launch_tid);
            assert_eq!(st["pid"], chunk["pid"]);
            // and right after the enqueue tick of that chunk (same pid/tid/ts), which is the
            // innermost slice open there when a viewer reads the `s`
            let tick = &evs[si - 1];
            assert_eq!(
                (&tick["ph"], &tick["cat"], &tick["args"]["chunk"]),
                (&json!("i"), &json!("chunk"), &json!(n)),
                "the event before flow start {si} is not chunk {n}'s enqueue tick"
            );
            assert_eq!(
                (&tick["pid"], &tick["tid"], &tick["ts"]),
                (&st["pid"], &st["tid"], &st["ts"])
            );
            flow_chunks.push(n);
        }
        flow_chunks.sort_unstable();
        assert_eq!(flow_chunks, vec![0, 1, 2], "one arrow per chunk that ran");
        // chunk 2 starts at its enqueue: its tick and its flow end share a ts on one track,
        // and the flow end comes first (binds to the chunk slice, not to the tick)
        let pos = |p: &dyn Fn(&Value) -> bool| evs.iter().position(p).unwrap();
        let tick2 = pos(&|e| e["name"] == "enqueue chunk 2");
        let end2 = pos(&|e| e["ph"] == "f" && e["ts"] == evs[tick2]["ts"]);
        assert_eq!(evs[end2]["tid"], evs[tick2]["tid"]);
        assert!(end2 < tick2);
        assert!(evs
            .iter()
            .any(|e| e["cat"] == "transfer" && e["name"] == "upload 4.0 KiB"));
        // the host-side write-back sits on the scheduler track, inside the launch slice
        let wb = evs
            .iter()
            .find(|e| e["name"] == "write_back 100 B")
            .unwrap();
        assert_eq!(wb["tid"], launch_tid);
        assert!(evs.iter().any(|e| e["cat"] == "chunk"
            && e["ph"] == "i"
            && e["name"].as_str().unwrap().contains("never completed")));
        // the launch slice starts at t0 (the earliest event): ts 0
        let launch = evs.iter().find(|e| e["cat"] == "kernel").unwrap();
        assert_eq!(launch["ts"].as_f64(), Some(0.0));
        assert_eq!(launch["dur"].as_f64(), Some(5.0));
    }

    #[test]
    fn emulation_records_and_their_absence() {
        let mut input = Input::default();
        let mut a = rec(0, 1000, "0:0");
        a.extra.insert(
            "emulation".into(),
            json!({"status": "ok", "reused": false, "stats": crate::emu::stats::WorkGroupStats {
                emulation_ns: 5000, ..Default::default() }}),
        );
        let mut b = rec(1, 2000, "0:0");
        b.extra.insert(
            "emulation".into(),
            json!({"status": "ok", "reused": false, "stats": crate::emu::stats::WorkGroupStats {
                emulation_ns: 100, ..Default::default() }}),
        );
        let mut c = rec(2, 3000, "0:0");
        c.extra
            .insert("emulation".into(), json!({"status": "ok", "reused": true}));
        let mut d = rec(3, 4000, "0:0");
        d.extra.insert(
            "emulation".into(),
            json!({"status": "unavailable", "reason": "no toolchain", "reused": false}),
        );
        for r in [a, b, c, d, rec(4, 5000, "0:0")] {
            input.records.push(Finished {
                rec: r,
                times: None,
            });
        }
        let tl = build(&input);
        let emu: Vec<&Event> = tl.events.iter().filter(|e| e.cat == "emulation").collect();
        assert_eq!(emu.len(), 4);
        // the second emulation waits for the first on the FIFO worker
        assert_eq!(emu[1].ts, 6000);
        assert_eq!(emu[2].ph, "i");
        assert!(emu[3].name.contains("unavailable"));
        // every record still has exactly one kernel event (instants: no device times)
        assert_eq!(tl.events.iter().filter(|e| e.cat == "kernel").count(), 5);
        check_ok(&input);
    }

    fn check_ok(input: &Input) {
        super::super::check::check(&parse(input)).expect("valid trace");
    }

    #[test]
    fn api_spans_become_thread_slices() {
        let input = Input {
            pid: 1,
            threads: vec![HostThread {
                tid: 42,
                name: "main".into(),
                spans: vec![
                    Span {
                        name: "clFinish",
                        start: 10,
                        end: 20,
                    },
                    Span {
                        name: "clGetPlatformIDs",
                        start: 1,
                        end: 5,
                    },
                ],
            }],
            ..Default::default()
        };
        let v = parse(&input);
        let s = super::super::check::check(&v).unwrap();
        assert_eq!(s.by_cat.get("api"), Some(&2));
        assert!(v["traceEvents"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["ph"] == "M" && e["args"]["name"] == "host thread 42 (main)"));
    }
}

#[cfg(test)]
mod chunk_tests {
    use super::*;

    #[test]
    fn late_completion_notices_do_not_make_one_device_overlap() {
        // device 0 ran chunk a then b back to back; a's completion was seen 50 ns late
        let chunks: Vec<Chunk> = serde_json::from_value(json!([
            {"device": 0, "enqueue_ns": 0, "end_ns": 150, "start_ns": 50, "device_ns": 100},
            {"device": 1, "enqueue_ns": 5, "end_ns": 400, "start_ns": 100, "device_ns": 300},
            {"device": 0, "enqueue_ns": 10, "end_ns": 300, "start_ns": 100, "device_ns": 200},
            {"device": 0, "enqueue_ns": 20},
        ]))
        .unwrap();
        let s = chunk_spans(&chunks);
        assert_eq!(s[2], Some((Some(100), 300)));
        assert_eq!(s[0], Some((Some(0), 100)), "a ends where b starts");
        assert_eq!(s[1], Some((Some(100), 400)), "another device is untouched");
        assert_eq!(s[3], None);
    }
}
