//! Object lifetimes mirrored from the driver (issue 18): a kernel holds a reference to its
//! program, so an app that releases the program right after `clCreateKernel`
//! (tests/c/quick_exit.c `--release-program`, as Rodinia's lud, backprop, kmeans and nw do)
//! still has its launches split in balance mode and emulated in project mode.
mod common;
use common::*;

fn run_released(mode: &'static str, test: &str) -> Vec<serde_json::Value> {
    let d = scratch(test);
    let log = d.join("log.jsonl");
    let out = run(
        &c_program("quick_exit"),
        &["8192", "--release-program"],
        Via::Preload(mode),
        &[
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_SUMMARY", "off"),
            ("CLPRISM_DEVICES", "all"),
        ],
    );
    assert_ok(&out, &format!("quick_exit --release-program ({mode})"));
    let recs = read_log(&log);
    assert_eq!(recs.len(), 1, "one launch record: {recs:?}");
    recs
}

#[test]
fn a_program_released_after_create_kernel_is_still_split() {
    let recs = run_released("balance", "lifetimes-balance");
    let s = &recs[0]["schedule"];
    assert!(s["fallback"].is_null(), "launch not split: {s}");
    let used: std::collections::HashSet<u64> = s["chunks"]
        .as_array()
        .expect("chunks")
        .iter()
        .filter_map(|c| c["device"].as_u64())
        .collect();
    assert!(used.len() >= 2, "chunks ran on {used:?} only: {s}");
}

#[test]
fn a_program_released_after_create_kernel_is_still_emulated() {
    let recs = run_released("project", "lifetimes-project");
    let e = &recs[0]["emulation"];
    assert_eq!(e["status"], "ok", "emulation: {e}");
}
