//! Stress (issue 6, item 2): tests/c/stress.c, 8 threads x L launches over private and shared
//! queues, in every mode. Checks: the program finishes (no deadlock: a watchdog kills it),
//! its outputs are right (it checks every word itself), the log holds exactly one record per
//! launch with unique `seq` numbers 0..N, and peak resident size stays bounded: the ratio of
//! the whole run's peak RSS at 10x the launches to that at 1x is printed and, except in
//! project mode (see `stress_mode`), must stay below a generous 3 (the buffers do not grow
//! with the launch count, so growth is what clprism keeps per launch).
mod common;
use common::*;
use std::collections::HashSet;
use std::process::{Command, Output};

/// Runs the stress program under a watchdog (killed after 300 s: a deadlock); returns its
/// output and its peak resident size in KiB, exit included: the largest `VmHWM` of
/// /proc/PID/status read every 10 ms until the process ends (the exit drain of clprism's
/// log writer counts; `getrusage` inside the program cannot see it).
fn stress(
    mode: Option<&'static str>,
    threads: u32,
    launches: u32,
    log: &std::path::Path,
) -> (Output, u64) {
    let exe = c_program("stress");
    let mut c = Command::new(&exe);
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
    c.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = c.spawn().expect("spawn stress");
    let mut so = child.stdout.take().unwrap();
    let mut se = child.stderr.take().unwrap();
    let outt = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut so, &mut v);
        v
    });
    let errt = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = std::io::Read::read_to_end(&mut se, &mut v);
        v
    });
    let status_file = format!("/proc/{}/status", child.id());
    let start = std::time::Instant::now();
    let mut peak = 0u64;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(&status_file) {
            if let Some(kb) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
            {
                peak = peak.max(kb);
            }
        }
        if let Some(st) = child.try_wait().expect("wait") {
            break st;
        }
        if start.elapsed() > std::time::Duration::from_secs(300) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("stress {mode:?} {threads}x{launches}: deadlock (killed after 300 s)");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let out = Output {
        status,
        stdout: outt.join().unwrap(),
        stderr: errt.join().unwrap(),
    };
    assert_ok(&out, &format!("stress {mode:?} {threads}x{launches}"));
    (out, peak)
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

/// `bound`: whether the 10x/1x ratio of the whole-run peak RSS is asserted (< 3). Project
/// mode only prints it: its pending records (emulation + projection, ~12-15 KiB each in
/// memory) pile up while the log writer catches up, most of it during the exit drain (docs/usage.md,
/// known limitations).
fn stress_mode(mode: &'static str, bound: bool) {
    let d = scratch(&format!("stress-{mode}"));
    let (t, l) = (8u32, 200u32);
    let mut rss = Vec::new();
    for factor in [1u32, 10] {
        let log = d.join(format!("x{factor}.jsonl"));
        let (out, peak) = stress(Some(mode), t, l * factor, &log);
        let n = launches_printed(&out);
        assert_eq!(n, (2 * t * l * factor) as usize);
        if mode != "off" {
            check_records(&log, n, &format!("{mode} x{factor}"));
        } else {
            assert!(!log.exists(), "off mode writes no log");
        }
        rss.push(peak);
    }
    let (_, native_peak) = stress(None, t, l, &d.join("native.jsonl"));
    let ratio = rss[1] as f64 / rss[0] as f64;
    eprintln!(
        "stress {mode}: peak RSS native x1 {native_peak} KiB, clprism x1 {} KiB, x10 {} KiB, \
         ratio x10/x1 {ratio:.2}",
        rss[0], rss[1]
    );
    if bound {
        assert!(
            ratio < 3.0,
            "{mode}: peak RSS grows with the launch count: {} KiB -> {} KiB",
            rss[0],
            rss[1]
        );
    }
}

#[test]
fn stress_off() {
    stress_mode("off", true);
}

#[test]
fn stress_log() {
    stress_mode("log", true);
}

#[test]
fn stress_project() {
    stress_mode("project", false);
}

#[test]
fn stress_balance() {
    stress_mode("balance", true);
}
