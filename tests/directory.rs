//! The buffer directory (issue 31 item 3, `exec::directory`): what a split launch writes
//! stays on the devices until the app needs it. `tests/c/resident.c` runs an iterative
//! three-point stencil (ping-pong buffers) with the app's reads, maps, copies, writes,
//! releases and shifting ranges in between; each run under `CLPRISM_SPLIT=always` over
//! three PoCL devices must write exactly what the native run writes, keep its launches'
//! results on the devices (`schedule.merge = "resident"`, nothing merged), and move far
//! fewer bytes than gathering every launch would. The static scheduler makes every launch
//! split the same way whatever the machine's load (Boyer's scheduler with the directory runs
//! in `tests/balance.rs`'s examples and on the GPUs).

mod common;
use common::*;
use serde_json::Value;

const DEVICES: &str = "pthread pthread basic";
/// Buffer elements (uint) and launches per run.
const N: usize = 65536;
const ITERS: usize = 60;

/// The directory's line at exit: (split launches left resident, bytes fetched between
/// devices, gathers, bytes gathered); the bytes moved through page-locked staging are
/// [`relayed_bytes`].
fn directory_line(stderr: &str) -> (u64, u64, u64, u64) {
    let nums = directory_numbers(stderr);
    (nums[0], nums[1], nums[2], nums[3])
}

/// The bytes of the fetches and gathers moved through page-locked staging (the directory's
/// line at exit).
fn relayed_bytes(stderr: &str) -> u64 {
    directory_numbers(stderr)[4]
}

fn directory_numbers(stderr: &str) -> Vec<u64> {
    let line = stderr
        .lines()
        .find(|l| l.contains("buffer directory:"))
        .unwrap_or_else(|| panic!("no directory line in:\n{stderr}"));
    let nums: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|w| w.parse().ok())
        .collect();
    assert_eq!(nums.len(), 5, "{line}");
    assert_eq!(
        stderr.matches("buffer directory:").count(),
        1,
        "the line is printed once: {stderr}"
    );
    nums
}

/// Runs `resident MODE` natively and balanced; asserts byte identity and returns the
/// balanced run's schedule records and directory line.
fn run_mode(mode: &str) -> (Vec<Value>, (u64, u64, u64, u64)) {
    let (s, stderr) = run_sized(mode, N, ITERS);
    (s, directory_line(&stderr))
}

/// [`run_mode`] over buffers of `n` uints and `iters` launches; returns the balanced run's
/// schedule records and stderr.
fn run_sized(mode: &str, n: usize, iters: usize) -> (Vec<Value>, String) {
    run_sized_with(mode, n, iters, &[])
}

/// [`run_sized`] with `extra` variables for the balanced run. The balanced run opens the
/// devices at the first launch (`CLPRISM_BALANCE_EARLY=off`: none is forwarded while they
/// open, how many would be depends on the machine's load) and gives each device one fixed
/// share (every launch splits over all three, into the same ranges; Boyer's chunks follow the
/// devices' measured speed, which on a loaded 2-core machine may give every chunk to one).
fn run_sized_with(
    mode: &str,
    n: usize,
    iters: usize,
    extra: &[(&str, &str)],
) -> (Vec<Value>, String) {
    let exe = c_program("resident");
    let tag = if extra.is_empty() { "" } else { "-extra" };
    let d = scratch(&format!("directory-{mode}-{n}{tag}"));
    let (n, iters) = (n.to_string(), iters.to_string());
    let args = |out: &str| vec![mode.to_string(), n.clone(), iters.clone(), out.to_string()];
    let (out, recs) = native_and_split_with(&exe, args, (DEVICES, "static:0.4,0.3,0.3"), &d, extra);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let s: Vec<Value> = recs.into_iter().map(|r| r["schedule"].clone()).collect();
    (s, stderr)
}

/// Split launches of the run, and how many of them left their results on the devices with
/// nothing merged back. The kernel's first split over unlike devices (PoCL's `basic` beside
/// `pthread`) is compared with a whole run (its agreement check, `schedule.verify`), which
/// needs its result in the app's buffer at once: it is not counted.
fn resident_share(s: &[Value]) -> (usize, usize) {
    let split: Vec<&Value> = s
        .iter()
        .filter(|x| x["merge"].as_str().is_some_and(|m| m != "none"))
        .filter(|x| x["verify"].is_null())
        .collect();
    let resident = split
        .iter()
        .filter(|x| x["merge"] == "resident" && x["merged_bytes"] == 0)
        .count();
    (split.len(), resident)
}

/// Read only at the end: the results stay on the devices for every launch, the chunks fetch
/// halos and moved ranges only, and one gather (the final read) brings at most the buffer
/// back, instead of a read-back and an upload per launch.
#[test]
fn an_iterative_kernel_read_at_the_end_moves_halos_not_buffers() {
    let (s, (resident, fetched, gathers, gathered)) = run_mode("end");
    let (split, kept) = resident_share(&s);
    // each launch says when the launch thread began it, after the app's enqueue
    assert!(
        s.iter()
            .filter(|x| x["merge"] == "resident")
            .all(|x| x["started_ns"].as_u64().is_some_and(|n| n < 10_000_000_000)),
        "a resident launch without a sane schedule.started_ns"
    );
    assert!(split >= ITERS - 2, "only {split} of {ITERS} launches split");
    assert_eq!(kept, split, "a split launch merged back");
    assert_eq!(resident as usize, split);
    let bytes = (N * 4) as u64;
    assert_eq!(gathers, 1, "one gather, at the final read");
    assert!(
        gathered <= bytes,
        "gathered {gathered} bytes of a {bytes}-byte buffer"
    );
    // gathering every launch would read back and upload about one buffer per launch; the
    // same ranges every launch leave only the halos: 4 bytes each side of each boundary
    assert!(
        fetched <= split as u64 * 64,
        "fetched {fetched} bytes over {split} launches of a {bytes}-byte buffer"
    );
    let per_launch: Vec<u64> = s
        .iter()
        .filter_map(|x| x["fetched_bytes"].as_u64())
        .collect();
    eprintln!("fetched per launch: {per_launch:?}; gathered {gathered} bytes");
}

/// The app reads, maps or copies the buffer half-way: a gather brings the devices' bytes
/// back first (what the app sees equals native), and the launches after it go on resident.
#[test]
fn a_read_a_map_and_a_copy_in_the_middle_see_the_devices_bytes() {
    for mode in ["read", "map", "copy"] {
        let (s, (_, _, gathers, _)) = run_mode(mode);
        let (split, kept) = resident_share(&s);
        assert!(
            split >= ITERS - 2 && kept == split,
            "{mode}: {split} split, {kept} kept"
        );
        // the app's access half-way and its read at the end each find bytes that only
        // devices hold when the launch before left some there (not when the scheduler gave
        // every chunk to the app's own device, whose results are copied at once)
        let device_held = |i: usize| s[i]["resident_bytes"].as_u64().unwrap_or(0) > 0;
        assert_eq!(s.len(), ITERS);
        assert!(device_held(ITERS / 2) && device_held(ITERS - 1), "{mode}");
        assert!(
            gathers >= 2,
            "{mode}: {gathers} gathers, one half-way and one at the end"
        );
    }
}

/// The app overwrites part of a buffer the devices hold: the devices' copies of it become
/// stale, and the next launches read the app's bytes.
#[test]
fn a_write_by_the_app_makes_the_device_copies_stale() {
    let (s, _) = run_mode("write");
    let (split, kept) = resident_share(&s);
    assert!(
        split >= ITERS - 2 && kept == split,
        "{split} split, {kept} kept"
    );
}

/// Odd launches cover only the second half (a global offset): each device's ranges move
/// between launches, and each chunk fetches what it lacks.
#[test]
fn ranges_that_move_between_launches_are_fetched() {
    let (s, (_, fetched, _, _)) = run_mode("shift");
    let (split, kept) = resident_share(&s);
    assert!(
        split >= ITERS - 2 && kept == split,
        "{split} split, {kept} kept"
    );
    assert!(fetched > 0, "the moved ranges were fetched");
}

/// Shifting ranges over 16 MiB buffers: ranges of 1 MiB or more (the moved slabs, the final
/// gather) go between the devices through the upload ring's page-locked slots, and the app
/// reads what it reads natively.
#[test]
fn large_ranges_move_through_page_locked_staging() {
    let (s, stderr) = run_sized("shift", 4 << 20, 6);
    let (split, kept) = resident_share(&s);
    assert!(split >= 4 && kept == split, "{split} split, {kept} kept");
    let (_, fetched, _, gathered) = directory_line(&stderr);
    let relayed = relayed_bytes(&stderr);
    assert!(
        relayed >= 1 << 20 && relayed <= fetched + gathered,
        "{relayed} bytes relayed of {fetched} fetched and {gathered} gathered"
    );
}

/// A buffer written by a split launch is released while the devices hold its bytes: nothing
/// is gathered for it, and a new buffer (which may reuse its handle) starts clean.
#[test]
fn a_release_while_the_devices_hold_a_buffer_forgets_it() {
    let (s, _) = run_mode("release");
    let (split, kept) = resident_share(&s);
    assert!(
        split >= ITERS - 2 && kept == split,
        "{split} split, {kept} kept"
    );
}

/// A time step passed by value that only indexes a read-only table (PolyBench fdtd-2d's
/// kernel 1, `tests/c/time_step.c`): its footprint is derived at most twice (the second time
/// once the step is seen to change), not at every launch
/// (`emu::dataflow::value_params_free_of_writes`; fdtd-2d's kernel 1 spent 2.1 ms per launch
/// on 2 H200s deriving it again), every launch still keeps its results on the devices, and
/// what the app reads is byte-identical to native.
#[test]
fn a_time_step_passed_by_value_does_not_derive_the_footprint_again() {
    let iters = 30;
    let (_, recs) = native_and_split(
        &c_program("time_step"),
        |out| vec!["256".into(), iters.to_string(), out.into()],
        DEVICES,
        "static:0.4,0.3,0.3",
        &scratch("directory-time-step"),
    );
    let derived: Vec<u64> = recs
        .iter()
        .filter(|r| {
            r["kernel"] == "advance" && r["schedule"]["footprint"]["derived_ms"].is_number()
        })
        .filter_map(|r| r["seq"].as_u64())
        .collect();
    // once with the first value of `t`, once more when `t` is seen to change (from then on
    // the key leaves it out)
    let first_two: Vec<u64> = recs
        .iter()
        .filter(|r| r["kernel"] == "advance")
        .filter_map(|r| r["seq"].as_u64())
        .take(2)
        .collect();
    assert!(
        !derived.is_empty() && derived.iter().all(|s| first_two.contains(s)),
        "advance's footprint derived at launches {derived:?} (its first two: {first_two:?})"
    );
    let resident = recs
        .iter()
        .filter(|r| r["kernel"] == "advance" && r["schedule"]["merge"] == "resident")
        .count();
    assert!(
        resident >= iters - 1,
        "only {resident} of {iters} launches of advance stayed resident"
    );
}

/// `CLPRISM_BALANCE_ISSUE=parallel` (`exec::launch::issue`): the halo reads and writes and
/// the chunks of each launch are issued from a thread per device; the bytes the app reads
/// are the native run's, every launch still splits and stays resident, and only halos move
/// (here with ranges that shift between launches too).
#[test]
fn parallel_issue_gives_the_same_bytes() {
    for mode in ["end", "shift"] {
        let (s, stderr) = run_sized_with(
            mode,
            N,
            ITERS,
            &[
                ("CLPRISM_BALANCE_ISSUE", "parallel"),
                ("CLPRISM_DEBUG", "1"),
            ],
        );
        assert!(
            stderr.contains("issue threads"),
            "{mode}: the launches were not issued in parallel"
        );
        let (split, kept) = resident_share(&s);
        assert!(
            split >= ITERS - 2,
            "{mode}: only {split} of {ITERS} launches split"
        );
        assert_eq!(kept, split, "{mode}: a split launch merged back");
        if mode == "end" {
            let (_, fetched, gathers, _) = directory_line(&stderr);
            assert_eq!(gathers, 1, "one gather, at the final read");
            assert!(fetched <= split as u64 * 64, "fetched {fetched} bytes");
        }
    }
}
