//! Asynchronous balanced launches (issue 31 item 4, `exec::pipeline`): a split launch returns
//! to the app at once and runs on clprism's launch thread. `tests/c/async_launches.c`
//! enqueues a stencil's launches without waiting and checks what the app sees: a callback,
//! a wait on one launch's event, a non-blocking and a blocking read in the middle, `clFinish`,
//! every event complete with profiling times, and the data (against its own host reference
//! and byte for byte against the native run). Two PoCL `pthread` devices: PoCL 3.1 with a
//! `basic` device lets commands pass a user-event barrier, and balance mode keeps launches
//! on the app's thread there (checked too).

mod common;
use common::*;
use serde_json::Value;

/// Buffer elements (uint) and launches per run.
const N: usize = 32768;
const ITERS: usize = 40;

/// Runs the app natively and balanced on `devices`; asserts both pass and write the same
/// bytes; returns the balanced run's records.
fn run_both(devices: &str, name: &str) -> Vec<Value> {
    let (out, recs) = native_and_split(
        &c_program("async_launches"),
        |f| vec![N.to_string(), ITERS.to_string(), f.into()],
        devices,
        // fixed shares: every launch splits the same way whatever the machine's load
        "static:0.5,0.5,0.5",
        &scratch(&format!("async-{name}")),
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("PASS async_launches"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(recs.len(), ITERS, "one record per launch");
    recs
}

/// Split launches (more than one device ran chunks) and how many ran on the launch thread.
fn split_on_launch_thread(recs: &[Value]) -> (usize, usize) {
    let split: Vec<&Value> = recs
        .iter()
        .map(|r| &r["schedule"])
        .filter(|s| {
            s["share"]
                .as_array()
                .is_some_and(|v| v.iter().filter(|x| x.as_f64() > Some(0.0)).count() >= 2)
        })
        .collect();
    let threaded = split
        .iter()
        .filter(|s| s["launch_thread"] == Value::Bool(true))
        .count();
    (split.len(), threaded)
}

#[test]
fn launches_return_at_once_and_the_app_sees_their_completion_and_data() {
    let recs = run_both("pthread pthread", "two");
    let (split, threaded) = split_on_launch_thread(&recs);
    assert!(
        split >= ITERS - 2,
        "only {split} of {ITERS} launches split over both devices"
    );
    assert_eq!(threaded, split, "a split launch ran on the app's thread");
}

#[test]
fn a_driver_that_lets_commands_pass_a_user_event_barrier_keeps_launches_synchronous() {
    let recs = run_both("pthread pthread basic", "basic");
    let (split, threaded) = split_on_launch_thread(&recs);
    assert!(split >= ITERS - 2, "only {split} of {ITERS} launches split");
    assert_eq!(
        threaded, 0,
        "a launch ran on the launch thread beside PoCL's basic device"
    );
}

/// An app that exits with launches still queued on the launch thread (no `clFinish`):
/// the process ends at once with the app's status and prints nothing (the exit guarantees
/// of `exec::background`: no driver call starts after exit began, none is waited for
/// past the one in flight). Five runs, with the launches at different stages at exit.
#[test]
fn an_app_that_exits_with_launches_in_flight_exits_cleanly() {
    let exe = c_program("exit_in_flight");
    for iters in ["1", "5", "30", "100", "300"] {
        let t = std::time::Instant::now();
        let out = run(
            &exe,
            &[iters],
            Via::Preload("balance"),
            &[("POCL_DEVICES", "pthread pthread")],
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_ok(&out, &format!("{iters} launches in flight"));
        assert!(
            !stderr.contains("clprism: warning") && !stderr.contains("clprism: error"),
            "{iters} launches: {stderr}"
        );
        // the launches themselves take about 1 ms each: an exit that waited for all 300 of
        // them, or for a hung driver call, would take far longer than this bound
        assert!(
            t.elapsed() < std::time::Duration::from_secs(30),
            "{iters} launches: the exit took {:?}",
            t.elapsed()
        );
    }
}
