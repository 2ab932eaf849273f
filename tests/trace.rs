//! Issue 7 check: `CLPRISM_TRACE` writes Chrome trace event JSON that follows the trace event
//! format ([`OpenCL::log::trace::check`]: every event has ph/ts/pid/tid, slices nest per track,
//! flows are paired) and agrees with the per-kernel log: one kernel event per record, one API
//! span per `clEnqueueNDRangeKernel` call, chunks that add up to the NDRange in balance mode.
//! Needs `cargo build` first.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn load(p: &Path) -> Value {
    let text =
        std::fs::read_to_string(p).unwrap_or_else(|e| panic!("no trace at {}: {e}", p.display()));
    serde_json::from_str(&text).expect("the trace is one JSON document")
}

fn events(v: &Value) -> &Vec<Value> {
    v["traceEvents"].as_array().expect("traceEvents")
}

fn ts_ns(e: &Value) -> i64 {
    (e["ts"].as_f64().unwrap() * 1000.0).round() as i64
}

#[test]
fn log_mode_trace_matches_the_log() {
    let exe = examples().join("reduction");
    let d = scratch("trace_log");
    let (log, trace) = (d.join("run.jsonl"), d.join("run.json"));
    let out = run(
        &exe,
        &[],
        Via::Preload("log"),
        &[
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_TRACE", trace.to_str().unwrap()),
        ],
    );
    assert_ok(&out, "reduction with a trace");
    let recs = read_log(&log);
    assert_eq!(recs.len(), launches_printed(&out));
    let v = load(&trace);
    let st = OpenCL::log::trace::check::check(&v).unwrap_or_else(|e| panic!("invalid trace: {e}"));
    // one kernel event per log record
    let mut seqs: Vec<u64> = recs.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    seqs.sort_unstable();
    assert_eq!(st.kernel_seqs, seqs);
    // one API span per enqueue the app made, and the app's other calls are there too
    assert_eq!(st.api_calls["clEnqueueNDRangeKernel"], recs.len());
    for call in ["clGetPlatformIDs", "clCreateContext", "clBuildProgram"] {
        assert!(st.api_calls.contains_key(call), "no {call} span");
    }
    // the device track is named after the record's device
    let dev = &recs[0]["device"];
    let want = format!(
        "device {} {}",
        dev["index"].as_str().unwrap(),
        dev["name"].as_str().unwrap()
    );
    assert!(
        st.tracks.values().any(|n| *n == want),
        "no track '{want}' in {:?}",
        st.tracks
    );
    // kernel slices last the logged device time and never start before their enqueue call
    let evs = events(&v);
    let mut enqueues: Vec<i64> = evs
        .iter()
        .filter(|e| e["cat"] == "api" && e["name"] == "clEnqueueNDRangeKernel")
        .map(ts_ns)
        .collect();
    enqueues.sort_unstable();
    let by_seq: BTreeMap<u64, &Value> = recs
        .iter()
        .map(|r| (r["seq"].as_u64().unwrap(), r))
        .collect();
    for e in evs.iter().filter(|e| e["cat"] == "kernel") {
        let seq = e["args"]["seq"].as_u64().unwrap();
        let r = by_seq[&seq];
        assert_eq!(r["status"], "complete");
        assert_eq!(e["ph"], "X");
        let dur = (e["dur"].as_f64().unwrap() * 1000.0).round() as u64;
        assert_eq!(dur, r["device_ns"].as_u64().unwrap(), "seq {seq}");
        assert!(
            ts_ns(e) >= enqueues[seq as usize],
            "kernel {seq} drawn before its clEnqueueNDRangeKernel call"
        );
    }
    let mapping = &v["otherData"]["clock_mapping"][dev["index"].as_str().unwrap()];
    assert!(
        mapping.is_string(),
        "clock mapping not documented: {mapping}"
    );
}

#[test]
fn balance_mode_trace_draws_every_chunk() {
    let exe = examples().join("matmul_local");
    let d = scratch("trace_balance");
    let (log, trace) = (d.join("run.jsonl"), d.join("run.json"));
    let out = run(
        &exe,
        &["256", "2"],
        Via::Preload("balance"),
        &[
            ("POCL_DEVICES", "pthread pthread basic"),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_TRACE", trace.to_str().unwrap()),
            // matmul computes floating point and the app's device (`basic`) has no twin:
            // the trace is drawn from a split over the `pthread` devices too
            ("CLPRISM_BALANCE_FLOAT", "any"),
        ],
    );
    assert_ok(&out, "matmul_local balanced with a trace");
    let recs = read_log(&log);
    assert_eq!(recs.len(), launches_printed(&out));
    let v = load(&trace);
    let st = OpenCL::log::trace::check::check(&v).unwrap_or_else(|e| panic!("invalid trace: {e}"));
    let mut seqs: Vec<u64> = recs.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    seqs.sort_unstable();
    assert_eq!(st.kernel_seqs, seqs);
    let evs = events(&v);
    let mut balanced = 0;
    for r in &recs {
        let s = &r["schedule"];
        if !s["fallback"].is_null() {
            continue;
        }
        balanced += 1;
        let seq = r["seq"].as_u64().unwrap();
        // one event per chunk: a slice, or an instant for one that never completed (an
        // abandoned straggler); the enqueue ticks are extra instants
        let chunks: Vec<&Value> = evs
            .iter()
            .filter(|e| e["cat"] == "chunk" && e["args"]["seq"] == seq)
            .filter(|e| !e["name"].as_str().unwrap().starts_with("enqueue chunk"))
            .collect();
        assert_eq!(chunks.len(), s["chunks"].as_array().unwrap().len());
        // the chunks that were not abandoned cover the NDRange exactly once
        let done: u64 = chunks
            .iter()
            .filter(|c| c["args"]["abandoned"].is_null())
            .map(|c| c["args"]["count"].as_u64().unwrap())
            .sum();
        assert_eq!(done, s["work_groups"].as_u64().unwrap(), "seq {seq}");
        // each chunk sits on the track of the device the schedule names
        for c in &chunks {
            let ci = c["args"]["chunk"].as_u64().unwrap() as usize;
            let di = s["chunks"][ci]["device"].as_u64().unwrap() as usize;
            let name = &st.tracks[&(c["pid"].as_u64().unwrap(), c["tid"].as_u64().unwrap())];
            let want = format!("device {} ", s["devices"][di]["index"].as_str().unwrap());
            assert!(name.starts_with(&want), "chunk on '{name}', want '{want}…'");
        }
    }
    assert!(balanced > 0, "no launch was balanced");
    // one flow arrow (scheduler -> chunk) per enqueued chunk, paired
    let starts = evs.iter().filter(|e| e["ph"] == "s").count();
    let chunk_slices = evs
        .iter()
        .filter(|e| e["cat"] == "chunk" && e["ph"] == "X")
        .count();
    assert_eq!(starts, chunk_slices);
    assert!(st
        .tracks
        .values()
        .any(|n| n.starts_with("balanced launches")));
}

#[test]
fn no_trace_in_off_mode_or_without_opencl() {
    let d = scratch("trace_off");
    let trace = d.join("off.json");
    let exe = examples().join("transpose");
    let out = run(
        &exe,
        &[],
        Via::Preload("off"),
        &[("CLPRISM_TRACE", trace.to_str().unwrap())],
    );
    assert_ok(&out, "transpose in off mode");
    assert!(!trace.exists(), "off mode is pure forwarding");
    // a process that never calls OpenCL writes nothing
    let t2 = d.join("true.json");
    let out = run(
        Path::new("/bin/true"),
        &[],
        Via::Preload("log"),
        &[("CLPRISM_TRACE", t2.to_str().unwrap())],
    );
    assert_ok(&out, "/bin/true");
    assert!(!t2.exists());
}
