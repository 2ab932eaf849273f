//! Pipelined launches (`CLPRISM_BALANCE_PIPELINE`, `exec::launch::ahead`): the app's next
//! launch, queued behind a running one whose results stay on the devices, is planned and its
//! halo copies and chunks issued behind the running chunks. `tests/c/resident.c` runs an
//! iterative three-point stencil (ping-pong buffers, no wait between launches) over two PoCL
//! `pthread` devices (a `basic` device would make launches synchronous,
//! `exec::pipeline::holds_behind_user_event`); what the app reads must be the native run's
//! bytes, with launches really issued ahead.

mod common;
use common::*;
use serde_json::Value;

const DEVICES: &str = "pthread pthread";
/// Buffer elements (uint) and launches per run.
const N: usize = 65536;
const ITERS: usize = 60;

/// Runs `resident MODE` natively and balanced with `extra` variables; asserts byte identity
/// and returns the balanced run's schedule records.
fn run_resident(mode: &str, extra: &[(&str, &str)]) -> Vec<Value> {
    run_resident_stderr(mode, extra).0
}

/// [`run_resident`], with the balanced run's stderr.
fn run_resident_stderr(mode: &str, extra: &[(&str, &str)]) -> (Vec<Value>, String) {
    let tag: Vec<&str> = extra.iter().map(|e| e.1).collect();
    let d = scratch(&format!("pipeline-{mode}-{}", tag.join("-")));
    let (n, iters) = (N.to_string(), ITERS.to_string());
    let args = |out: &str| vec![mode.to_string(), n.clone(), iters.clone(), out.to_string()];
    let exe = c_program("resident");
    let (out, recs) = native_and_split_with(&exe, args, (DEVICES, "static:0.5,0.5"), &d, extra);
    let s = recs.into_iter().map(|r| r["schedule"].clone()).collect();
    (s, String::from_utf8_lossy(&out.stderr).to_string())
}

/// Launches issued behind a running one, and launches split with their results left on the
/// devices.
fn ahead_and_resident(s: &[Value]) -> (usize, usize) {
    let ahead = s.iter().filter(|x| x["issued_ahead"] == true).count();
    let resident = s.iter().filter(|x| x["merge"] == "resident").count();
    (ahead, resident)
}

/// Read only at the end, with shifting ranges (odd launches cover half the buffer at an
/// offset, so each launch fetches other halos), and with a barrier without a wait list after
/// each launch (PolyBench-ACC's pattern, which orders only): most launches are issued behind
/// the one before, every one stays resident, and the app reads the native run's bytes.
#[test]
fn launches_issued_behind_running_chunks_give_the_native_bytes() {
    for mode in ["end", "shift", "barrier"] {
        let s = run_resident(mode, &[("CLPRISM_BALANCE_PIPELINE", "on")]);
        let (ahead, resident) = ahead_and_resident(&s);
        eprintln!("{mode}: {ahead} of {ITERS} issued ahead, {resident} resident");
        assert!(
            resident >= ITERS - 2,
            "{mode}: only {resident} of {ITERS} launches stayed resident"
        );
        // the app enqueues the 60 launches without waiting: all but the first few (the
        // devices' first builds) come while the one before runs
        assert!(
            ahead >= ITERS * 3 / 4,
            "{mode}: only {ahead} of {ITERS} launches were issued ahead"
        );
    }
}

/// Without `CLPRISM_BALANCE_PIPELINE` no launch is issued ahead (the check above can fail),
/// and with it a read in the middle of the run (the app waits for the launches before it)
/// still sees the devices' bytes.
#[test]
fn a_read_between_pipelined_launches_sees_the_devices_bytes() {
    let s = run_resident("end", &[("CLPRISM_BALANCE_PIPELINE", "off")]);
    assert_eq!(
        ahead_and_resident(&s).0,
        0,
        "issued ahead without the variable"
    );
    let s = run_resident("read", &[("CLPRISM_BALANCE_PIPELINE", "on")]);
    let (ahead, resident) = ahead_and_resident(&s);
    assert!(resident >= ITERS - 2, "read: {resident} resident");
    assert!(ahead >= ITERS / 3, "read: only {ahead} issued ahead");
}

/// A device whose every enqueue fails (`CLPRISM_FAULT=fail:1`): its slabs are redone on the
/// other device and no launch is issued behind a launch with a failed chunk; the app still
/// reads the native run's bytes.
#[test]
fn a_failing_device_loses_nothing_with_pipelining() {
    let s = run_resident(
        "end",
        &[
            ("CLPRISM_BALANCE_PIPELINE", "on"),
            ("CLPRISM_FAULT", "fail:1"),
        ],
    );
    assert!(!s.is_empty());
}

/// After each stencil launch, a kernel that reads its result and cannot be issued behind it:
/// a global-atomic tally (runs whole: taken up as not split, its buffers gathered when it
/// runs) and a scatter through a modulo (no affine footprint: taken up as planned, merged at
/// once), alternately. The stencil launches behind them are still issued ahead where they
/// follow one, and every byte the app reads (the stencil's array, the scatter's output, the
/// tally) is the native run's.
#[test]
fn launches_that_cannot_stay_on_the_devices_are_taken_up_and_run_in_order() {
    let (s, stderr) = run_resident_stderr(
        "mixed",
        &[("CLPRISM_BALANCE_PIPELINE", "on"), ("CLPRISM_DEBUG", "1")],
    );
    let taken = |what: &str| stderr.matches(&format!("({what}) in")).count();
    let (forwarded, planned) = (taken("not split"), taken("planned"));
    eprintln!("mixed: {forwarded} taken up not split, {planned} taken up planned");
    assert_eq!(s.len(), 2 * ITERS, "one record per launch");
    assert!(
        forwarded >= ITERS / 4 && planned >= ITERS / 4,
        "the tally and the scatter launches were not taken up behind the stencil's"
    );
    let whole = s
        .iter()
        .filter(|x| x["fallback"].as_str().is_some())
        .count();
    assert!(whole >= ITERS / 2, "the tally launches run whole: {whole}");
}

/// `clFinish` after every launch (jacobi-2d's pattern): nothing waits behind a running
/// launch, so the launch thread pushes the halos of the launch that followed it last time
/// (`CLPRISM_BALANCE_PUSH`, `exec::launch::forecast`), and that launch then finds them in
/// place and fetches nothing. With `write` (the app overwrites a quarter of the current
/// buffer half-way, after a push was issued) and `shift` (each launch's ranges move), the
/// app still reads the native run's bytes; with the push off, nothing is pushed and every
/// launch fetches its own halos.
#[test]
fn halos_pushed_for_the_expected_launch_are_in_place_when_it_comes() {
    for mode in ["finish", "finish-write", "finish-shift"] {
        let s = run_resident(mode, &[("CLPRISM_BALANCE_PUSH", "on")]);
        let pushed: Vec<usize> = (0..s.len())
            .filter(|&i| s[i]["pushed_bytes"].as_u64().unwrap_or(0) > 0)
            .collect();
        // a launch after a push: its own halo batch had nothing left to fetch
        let served = pushed
            .iter()
            .filter(|&&i| s.get(i + 1).is_some_and(|x| x["fetched_bytes"] == 0))
            .count();
        eprintln!(
            "{mode}: {} pushes, {served} launches after one fetched nothing",
            pushed.len()
        );
        assert!(
            pushed.len() >= ITERS * 3 / 4,
            "{mode}: only {} of {ITERS} launches pushed halos",
            pushed.len()
        );
        assert!(
            served >= pushed.len() * 3 / 4,
            "{mode}: only {served} of the {} launches after a push found their halos in place",
            pushed.len()
        );
    }
    let s = run_resident("finish", &[("CLPRISM_BALANCE_PUSH", "off")]);
    let pushed = s.iter().filter(|x| x["pushed_bytes"].is_u64()).count();
    let fetching = s
        .iter()
        .filter(|x| x["fetched_bytes"].as_u64().unwrap_or(0) > 0)
        .count();
    assert_eq!(pushed, 0, "halos pushed with CLPRISM_BALANCE_PUSH=off");
    assert!(
        fetching >= ITERS * 3 / 4,
        "off: only {fetching} launches fetched halos"
    );
}

/// `clFinish` after each launch (jacobi-2d's pattern): the app's finish of a queue that holds
/// only launches the launch thread has finished is served by clprism (`CLPRISM_DEBUG=1`
/// counts them at exit), with a write by the app half-way (`finish-write`) and with the
/// launch thread and the finish polling before they sleep (`CLPRISM_BALANCE_SPIN=on`), and
/// the app reads the native run's bytes; with `CLPRISM_BALANCE_EARLY_FINISH=off` every finish
/// goes to the driver.
#[test]
fn finish_of_a_queue_of_finished_launches_is_served_without_the_driver() {
    let served = |stderr: &str| -> (usize, usize) {
        let line = stderr
            .lines()
            .find(|l| l.contains("balance: clFinish: "))
            .unwrap_or_else(|| panic!("no clFinish count at exit:\n{stderr}"));
        let n = |after: &str| -> usize {
            let tail = &line[line.find(after).expect(after) + after.len()..];
            let digits: String = tail.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().expect("a count")
        };
        let by_driver = line.rsplit(", ").next().unwrap_or("");
        let driver: String = by_driver.chars().take_while(char::is_ascii_digit).collect();
        (n("clFinish: "), driver.parse().expect("a count"))
    };
    // polling before sleeping (GPU-only engines by default) on PoCL's devices too
    for (mode, spin) in [
        ("finish", "auto"),
        ("finish-write", "auto"),
        ("finish", "on"),
    ] {
        let (s, err) = run_resident_stderr(
            mode,
            &[("CLPRISM_DEBUG", "1"), ("CLPRISM_BALANCE_SPIN", spin)],
        );
        let (clprism, driver) = served(&err);
        let threaded = s.iter().filter(|x| x["launch_thread"] == true).count();
        eprintln!("{mode}: {clprism} finishes served by clprism, {driver} by the driver, {threaded} launches on the launch thread");
        assert!(
            clprism >= ITERS * 3 / 4,
            "{mode}: only {clprism} of {ITERS} finishes served by clprism ({driver} by the driver)"
        );
    }
    let (_, err) = run_resident_stderr(
        "finish",
        &[
            ("CLPRISM_DEBUG", "1"),
            ("CLPRISM_BALANCE_EARLY_FINISH", "off"),
        ],
    );
    let (clprism, driver) = served(&err);
    assert_eq!(clprism, 0, "served by clprism with the option off");
    assert!(driver >= ITERS, "only {driver} finishes went to the driver");
}
