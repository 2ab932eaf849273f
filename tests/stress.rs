//! Stress (issue 6, item 2): tests/c/stress.c, 8 threads x L launches over private and shared
//! queues, in every mode. Checks: the program finishes (no deadlock: a watchdog kills it),
//! its outputs are right (it checks every word itself), the log holds exactly one record per
//! launch with unique `seq` numbers 0..N, and peak resident size stays bounded: the ratio of
//! max RSS at 10x the launches to max RSS at 1x is printed and must stay below a generous 3
//! (the buffers do not grow with the launch count, so growth is what clprism keeps per launch).
mod common;
use common::*;
use std::collections::HashSet;
use std::process::{Command, Output};

/// Runs the stress program with a watchdog (`timeout`), returns its output.
fn stress(
    mode: Option<&'static str>,
    threads: u32,
    launches: u32,
    log: &std::path::Path,
) -> Output {
    let exe = c_program("stress");
    let mut c = Command::new("timeout");
    c.args(["-k", "5", "300"]).arg(&exe);
    c.arg(threads.to_string()).arg(launches.to_string());
    for (k, _) in std::env::vars() {
        if k.starts_with("CLPRISM_") && k != "CLPRISM_TEST_LIB" {
            c.env_remove(k);
        }
    }
    c.env(
        "POCL_DEVICES",
        std::env::var("POCL_DEVICES").unwrap_or_else(|_| POCL.into()),
    );
    if let Some(m) = mode {
        c.env("LD_PRELOAD", lib())
            .env("CLPRISM_MODE", m)
            .env("CLPRISM_LOG", log)
            .env("CLPRISM_SUMMARY", "off");
    }
    let out = c.output().expect("spawn stress");
    assert_ne!(
        out.status.code(),
        Some(124),
        "stress {mode:?} {threads}x{launches}: deadlock (killed after 300 s)"
    );
    assert_ok(&out, &format!("stress {mode:?} {threads}x{launches}"));
    out
}

fn maxrss_kb(out: &Output) -> u64 {
    let s = String::from_utf8_lossy(&out.stdout);
    s.lines()
        .find_map(|l| l.strip_prefix("maxrss_kb: "))
        .expect("maxrss_kb line")
        .trim()
        .parse()
        .unwrap()
}

/// Every launch has exactly one record, and the `seq` numbers are 0..n without repeats.
fn check_records(log: &std::path::Path, n: usize, what: &str) {
    let recs = read_log(log);
    assert_eq!(recs.len(), n, "{what}: records vs launches");
    let seqs: HashSet<u64> = recs.iter().map(|r| r["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs.len(), n, "{what}: duplicated seq numbers");
    assert_eq!(
        seqs.iter().max().copied(),
        Some(n as u64 - 1),
        "{what}: seq range"
    );
    assert!(
        recs.iter().all(|r| r["kernel"] == "tag"),
        "{what}: kernel names"
    );
}

fn stress_mode(mode: &'static str) {
    let d = scratch(&format!("stress-{mode}"));
    let (t, l) = (8u32, 200u32);
    let mut rss = Vec::new();
    for factor in [1u32, 10] {
        let log = d.join(format!("x{factor}.jsonl"));
        let out = stress(Some(mode), t, l * factor, &log);
        let n = launches_printed(&out);
        assert_eq!(n, (2 * t * l * factor) as usize);
        if mode != "off" {
            check_records(&log, n, &format!("{mode} x{factor}"));
        } else {
            assert!(!log.exists(), "off mode writes no log");
        }
        rss.push(maxrss_kb(&out));
    }
    let native = stress(None, t, l, &d.join("native.jsonl"));
    let ratio = rss[1] as f64 / rss[0] as f64;
    eprintln!(
        "stress {mode}: max RSS native x1 {} KiB, clprism x1 {} KiB, x10 {} KiB, ratio x10/x1 {ratio:.2}",
        maxrss_kb(&native),
        rss[0],
        rss[1]
    );
    assert!(
        ratio < 3.0,
        "{mode}: max RSS grows with the launch count: {} KiB -> {} KiB",
        rss[0],
        rss[1]
    );
}

#[test]
fn stress_off() {
    stress_mode("off");
}

#[test]
fn stress_log() {
    stress_mode("log");
}

#[test]
fn stress_project() {
    stress_mode("project");
}

#[test]
fn stress_balance() {
    stress_mode("balance");
}
