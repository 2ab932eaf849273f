//! Structural check of a Chrome trace event file (the Trace Event Format's JSON Object or
//! JSON Array form), as CI applies it to clprism's traces: every event has `ph`, `ts`, `pid`
//! and `tid`; `X` slices have a non-negative `dur`; slices on one track (`pid`, `tid`) nest
//! properly (no partial overlap, which trace viewers reject or misdraw); `B`/`E` pairs match;
//! every flow start has its end.

use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

/// What a valid trace contains.
#[derive(Debug, Default, Clone)]
pub struct Stats {
    /// Number of events, metadata included.
    pub events: usize,
    /// Events per category (`cat`), metadata excluded.
    pub by_cat: BTreeMap<String, usize>,
    /// `args.seq` of every `kernel` event, sorted (one per launch record).
    pub kernel_seqs: Vec<u64>,
    /// Track names from `thread_name` metadata, by (pid, tid).
    pub tracks: BTreeMap<(u64, u64), String>,
    /// API call names and their counts (category `api`).
    pub api_calls: BTreeMap<String, usize>,
}

const PHASES: &[&str] = &[
    "B", "E", "X", "i", "I", "C", "b", "n", "e", "s", "t", "f", "P", "N", "O", "D", "M", "R", "c",
];

/// (pid, tid) of a track.
type TrackId = (u64, u64);
/// Slices of one track: (start ns, end ns, event index).
type Slices = Vec<(i128, i128, usize)>;

/// Timestamp in ns (trace `ts`/`dur` are µs).
fn ns(v: &Value) -> Option<i128> {
    v.as_f64().map(|x| (x * 1000.0).round() as i128)
}

/// Checks a parsed trace; the error names the first offending event.
pub fn check(v: &Value) -> Result<Stats, String> {
    let events = match v {
        Value::Array(a) => a,
        Value::Object(o) => o
            .get("traceEvents")
            .and_then(Value::as_array)
            .ok_or("object without a traceEvents array")?,
        _ => return Err("neither an array nor an object".into()),
    };
    let mut st = Stats {
        events: events.len(),
        ..Default::default()
    };
    // per track: (start, end, index) of X slices; B/E stacks
    let mut slices: HashMap<TrackId, Slices> = HashMap::new();
    let mut open: HashMap<TrackId, Vec<i128>> = HashMap::new();
    let mut flows: HashMap<u64, (usize, usize)> = HashMap::new();
    for (i, e) in events.iter().enumerate() {
        let ph = e
            .get("ph")
            .and_then(Value::as_str)
            .ok_or(format!("event {i} has no ph: {e}"))?;
        if !PHASES.contains(&ph) {
            return Err(format!("event {i} has unknown ph '{ph}'"));
        }
        let ts = e
            .get("ts")
            .and_then(ns)
            .ok_or(format!("event {i} has no numeric ts: {e}"))?;
        let pid = e
            .get("pid")
            .and_then(Value::as_u64)
            .ok_or(format!("event {i} has no integer pid: {e}"))?;
        let tid = e
            .get("tid")
            .and_then(Value::as_u64)
            .ok_or(format!("event {i} has no integer tid: {e}"))?;
        if ph == "M" {
            if e["name"] == "thread_name" {
                let n = e["args"]["name"].as_str().unwrap_or_default().to_string();
                st.tracks.insert((pid, tid), n);
            }
            continue;
        }
        let cat = e.get("cat").and_then(Value::as_str).unwrap_or("");
        *st.by_cat.entry(cat.to_string()).or_default() += 1;
        if cat == "kernel" {
            st.kernel_seqs.push(
                e["args"]["seq"]
                    .as_u64()
                    .ok_or(format!("kernel event {i} has no args.seq"))?,
            );
        }
        if cat == "api" {
            let n = e["name"].as_str().unwrap_or_default().to_string();
            *st.api_calls.entry(n).or_default() += 1;
        }
        match ph {
            "X" => {
                let dur = e
                    .get("dur")
                    .and_then(ns)
                    .ok_or(format!("X event {i} has no dur"))?;
                if dur < 0 {
                    return Err(format!("X event {i} has a negative dur"));
                }
                slices
                    .entry((pid, tid))
                    .or_default()
                    .push((ts, ts + dur, i));
            }
            "B" => open.entry((pid, tid)).or_default().push(ts),
            "E" => {
                let b = open
                    .get_mut(&(pid, tid))
                    .and_then(Vec::pop)
                    .ok_or(format!("E event {i} without a B"))?;
                if ts < b {
                    return Err(format!("E event {i} before its B"));
                }
                slices.entry((pid, tid)).or_default().push((b, ts, i));
            }
            "s" | "f" => {
                let id = e
                    .get("id")
                    .and_then(Value::as_u64)
                    .ok_or(format!("flow event {i} has no id"))?;
                let f = flows.entry(id).or_default();
                if ph == "s" {
                    f.0 += 1
                } else {
                    f.1 += 1
                }
            }
            _ => {}
        }
    }
    if let Some((k, _)) = open.iter().find(|(_, v)| !v.is_empty()) {
        return Err(format!("track {k:?} has a B without its E"));
    }
    if let Some((id, c)) = flows.iter().find(|(_, c)| c.0 != 1 || c.1 != 1) {
        return Err(format!(
            "flow {id} has {} starts and {} ends (expected 1 and 1)",
            c.0, c.1
        ));
    }
    for (track, mut v) in slices {
        v.sort_by_key(|&(s, e, _)| (s, std::cmp::Reverse(e)));
        let mut stack: Vec<(i128, usize)> = Vec::new();
        for (s, e, i) in v {
            while stack.last().is_some_and(|&(end, _)| end <= s) {
                stack.pop();
            }
            if let Some(&(end, j)) = stack.last() {
                if e > end {
                    return Err(format!(
                        "slices overlap without nesting on track {track:?}: event {j} ends at {end} ns, event {i} spans {s}..{e} ns"
                    ));
                }
            }
            stack.push((e, i));
        }
    }
    st.kernel_seqs.sort_unstable();
    Ok(st)
}

/// `clprism trace-check TRACE.json...`: checks each file and prints its events per
/// category and its tracks. Exit status 0 when every file is valid, 1 otherwise, 2 for a
/// usage error.
pub fn check_main(args: &[String]) -> i32 {
    const USAGE: &str = "usage: clprism trace-check TRACE.json...";
    if args.iter().any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return 0;
    }
    if args.is_empty() {
        eprintln!("{USAGE}");
        return 2;
    }
    let mut status = 0;
    for path in args {
        let parsed = std::fs::read_to_string(path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Value>(&t).map_err(|e| format!("not JSON: {e}")))
            .and_then(|v| check(&v));
        match parsed {
            Ok(st) => {
                println!("{path}: valid, {} events", st.events);
                for (cat, n) in &st.by_cat {
                    println!(
                        "  category {:<10} {n}",
                        if cat.is_empty() { "-" } else { cat }
                    );
                }
                println!(
                    "  kernel events  {} (one per launch record)",
                    st.kernel_seqs.len()
                );
                for ((_, tid), name) in &st.tracks {
                    println!("  track {tid:>10}  {name}");
                }
            }
            Err(e) => {
                println!("{path}: INVALID: {e}");
                status = 1;
            }
        }
    }
    status
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accepts_nested_and_rejects_partial_overlap() {
        let ok = json!([
            {"ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1, "name": "a"},
            {"ph": "X", "ts": 2, "dur": 3, "pid": 1, "tid": 1, "name": "b"},
            {"ph": "X", "ts": 10, "dur": 3, "pid": 1, "tid": 1, "name": "c"},
            {"ph": "X", "ts": 5, "dur": 30, "pid": 1, "tid": 2, "name": "other track"}
        ]);
        assert!(check(&ok).is_ok());
        let bad = json!([
            {"ph": "X", "ts": 0, "dur": 10, "pid": 1, "tid": 1},
            {"ph": "X", "ts": 5, "dur": 10, "pid": 1, "tid": 1}
        ]);
        assert!(check(&bad).unwrap_err().contains("overlap"));
    }

    #[test]
    fn rejects_missing_fields_and_unmatched_pairs() {
        assert!(check(&json!([{"ph": "X", "dur": 1, "pid": 1, "tid": 1}])).is_err());
        assert!(check(&json!([{"ph": "i", "ts": 1, "tid": 1}])).is_err());
        assert!(check(&json!([{"ph": "X", "ts": 1, "pid": 1, "tid": 1}])).is_err());
        assert!(check(&json!([{"ph": "B", "ts": 1, "pid": 1, "tid": 1}])).is_err());
        assert!(check(&json!([{"ph": "s", "ts": 1, "pid": 1, "tid": 1, "id": 4}])).is_err());
        assert!(
            check(&json!({"traceEvents": [{"ph": "Q", "ts": 1, "pid": 1, "tid": 1}]})).is_err()
        );
        assert!(check(
            &json!([{"ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": 1, "cat": "kernel"}])
        )
        .is_err());
    }

    #[test]
    fn counts_kernel_events_by_seq() {
        let v = json!({"traceEvents": [
            {"ph": "M", "name": "thread_name", "ts": 0, "pid": 1, "tid": 9, "args": {"name": "dev"}},
            {"ph": "X", "ts": 1, "dur": 1, "pid": 1, "tid": 9, "cat": "kernel", "args": {"seq": 2}},
            {"ph": "i", "ts": 1, "pid": 1, "tid": 9, "cat": "kernel", "args": {"seq": 0}}
        ]});
        let s = check(&v).unwrap();
        assert_eq!(s.kernel_seqs, vec![0, 2]);
        assert_eq!(s.tracks[&(1, 9)], "dev");
    }
}
