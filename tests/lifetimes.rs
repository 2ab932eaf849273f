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
    assert_split(&recs[0]);
}

#[test]
fn a_program_released_after_create_kernel_is_still_emulated() {
    let recs = run_released("project", "lifetimes-project");
    let e = &recs[0]["emulation"];
    assert_eq!(e["status"], "ok", "emulation: {e}");
}
