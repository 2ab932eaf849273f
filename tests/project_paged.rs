//! Project mode without whole-buffer copies on the host (issue 19 item 1): a large buffer's
//! snapshot stays on the device and the emulation fetches only the pages the work-group
//! touches ([`OpenCL::emu::paged`]), with the same statistics and results as a whole
//! buffer.

mod common;
use common::*;
use serde_json::Value;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use OpenCL::emu::paged::{PagedBuffer, PAGE};
use OpenCL::emu::*;

fn fe() -> FrontendOptions {
    let v = |k: &str| std::env::var_os(k).map(std::path::PathBuf::from);
    FrontendOptions::resolve(v("CLPRISM_TOOLCHAIN"), v("CLPRISM_CACHE"), |k| {
        std::env::var_os(k)
    })
}

/// The emulator on a paged buffer: the same statistics and contents as on the whole
/// buffer, and only the touched pages fetched.
#[test]
fn paged_buffer_emulates_like_a_whole_one() {
    if find_toolchain(&fe()).is_none() {
        eprintln!("SKIP: no toolchain");
        return;
    }
    let src = "kernel void k(global int *a, global int *o, ulong n) {\n\
               size_t i = get_global_id(0);\n\
               int v = a[i] + a[n - 1 - i];\n\
               a[n / 2 + i] = v;\n\
               o[i] = v + a[n / 2 + (i ^ 1)];\n}";
    let m = load_module(&compile_source(src, "", &fe()).unwrap()).unwrap();
    let n: u64 = 1 << 20; // 4 MiB of ints: 64 pages
    let data: Arc<Vec<u8>> = Arc::new((0..n as u32).flat_map(|x| x.to_le_bytes()).collect());
    let shape = LaunchShape::new(&[256], &[64], None);
    let nbytes = n.to_le_bytes().to_vec();
    let mut whole = vec![
        ArgValue::Buffer(data.to_vec()),
        ArgValue::Buffer(vec![0; 1024]),
        ArgValue::Scalar(nbytes.clone()),
    ];
    let cfg = EmuConfig::default();
    let sw = emulate(&m, "k", &shape, [0; 3], &mut whole, &cfg).unwrap();
    let calls = Arc::new(AtomicU64::new(0));
    let (d, c) = (data.clone(), calls.clone());
    let fetch: paged::Fetch = Arc::new(move |at, dst: &mut [u8]| {
        c.fetch_add(1, Ordering::Relaxed);
        dst.copy_from_slice(&d[at as usize..at as usize + dst.len()]);
        Ok(())
    });
    let mut lazy = vec![
        ArgValue::Paged(PagedBuffer::new(data.len(), fetch)),
        ArgValue::Buffer(vec![0; 1024]),
        ArgValue::Scalar(nbytes),
    ];
    let sp = emulate(&m, "k", &shape, [0; 3], &mut lazy, &cfg).unwrap();
    let strip = |mut s: stats::WorkGroupStats| {
        s.emulation_ns = 0;
        s
    };
    assert_eq!(strip(sw), strip(sp));
    let (ArgValue::Buffer(w), ArgValue::Paged(p)) = (&whole[0], &lazy[0]) else {
        panic!("argument kinds changed");
    };
    // pages 0, the middle one and the last one: three fetches
    assert_eq!(calls.load(Ordering::Relaxed), 3);
    assert_eq!(p.fetched(), 3 * PAGE);
    for page in [
        0,
        data.len() / 2 / PAGE as usize,
        data.len() / PAGE as usize - 1,
    ] {
        let r = page * PAGE as usize..(page + 1) * PAGE as usize;
        assert_eq!(w[r.clone()], p.data[r], "page {page}");
    }
    assert_eq!(whole[1], lazy[1], "the same results");
}

/// A kernel reading from a 1 GiB buffer (PoCL's CPU device) under the default snapshot cap:
/// no device copy of it is made, the emulation reads back only the pages its work-group
/// touches from the app's buffer, and the launch gets its projection.
#[test]
fn one_gib_buffer_is_projected_reading_only_touched_pages() {
    let d = scratch("project_paged");
    let log = d.join("l.jsonl");
    let out = run(
        &c_program("big_buffer"),
        &["1024"],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", "pthread"),
            ("CLPRISM_LOG", log.to_str().unwrap()),
        ],
    );
    assert_ok(&out, "big_buffer under project mode");
    let recs = read_log(&log);
    assert_eq!(recs.len(), 1);
    let e = &recs[0]["emulation"];
    // CLPRISM_EMU_SNAPSHOT_MAX at its default (256 MiB, the runner clears CLPRISM_*)
    assert_eq!(e["status"], "ok", "{e}");
    // nothing is copied before the launch: the output is only written (its pre-launch
    // contents cannot change the emulation: it gets zeros) and the 1 GiB input is read from
    // the app's buffer (deferred) and never copied
    assert_eq!(e["snapshot_bytes"].as_u64().unwrap_or(0), 0, "{e}");
    assert_eq!(e["snapshot_deferred_bytes"], 1u64 << 30, "{e}");
    assert!(e.get("snapshot_later_bytes").is_none(), "{e}");
    assert!(e.get("snapshot_lost_bytes").is_none(), "{e}");
    // in[0..64) and in[n-64..n): two pages of the input, nothing of the output
    let read = e["snapshot_bytes_read"].as_u64().unwrap();
    let pages_touched = 2;
    assert!(
        read <= pages_touched * PAGE,
        "{read} bytes read back for {pages_touched} pages touched"
    );
    assert!(read > 0);
    let p: &Value = &recs[0]["projection"];
    assert!(
        !p["devices"].as_array().unwrap().is_empty(),
        "no projection: {p}"
    );
}

/// A buffer the kernel only writes needs no snapshot, however large: with a cap (4 KiB)
/// below big_buffer's 16 KiB output, the launch is still emulated (before, "exceeds
/// CLPRISM_EMU_SNAPSHOT_MAX": clpeak's 2 GiB bandwidth outputs on an H100).
#[test]
fn a_write_only_output_over_the_cap_is_emulated() {
    let d = scratch("project_paged-write-only");
    let log = d.join("l.jsonl");
    let out = run(
        &c_program("big_buffer"),
        &["64"],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", "pthread"),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_EMU_SNAPSHOT_MAX", "4K"),
        ],
    );
    assert_ok(&out, "big_buffer under project mode, 4 KiB cap");
    let recs = read_log(&log);
    assert_eq!(recs.len(), 1);
    let e = &recs[0]["emulation"];
    assert_eq!(e["status"], "ok", "{e}");
    assert_eq!(e["snapshot_bytes"].as_u64().unwrap_or(0), 0, "{e}");
}

/// `overwrite_after MODE` (16 MiB input) under project mode: its one launch's `emulation`.
fn overwrite_after(mode: &str) -> Value {
    overwrite_after_capped(mode, None)
}

/// [`overwrite_after`] with `CLPRISM_EMU_SNAPSHOT_MAX=cap` when given.
fn overwrite_after_capped(mode: &str, cap: Option<&str>) -> Value {
    let (e, _) = overwrite_after_run(mode, cap);
    assert_eq!(e["status"], "ok", "{mode}: {e}");
    e
}

/// [`overwrite_after_capped`] whatever the status, and the run's wall time.
fn overwrite_after_run(mode: &str, cap: Option<&str>) -> (Value, std::time::Duration) {
    let d = scratch(&format!(
        "project_paged_{mode}_{}",
        cap.unwrap_or("default")
    ));
    let log = d.join("l.jsonl");
    let mut env = vec![
        ("POCL_DEVICES", "pthread"),
        ("CLPRISM_LOG", log.to_str().unwrap()),
    ];
    env.extend(cap.map(|c| ("CLPRISM_EMU_SNAPSHOT_MAX", c)));
    let t = std::time::Instant::now();
    let out = run(
        &c_program("overwrite_after"),
        &[mode],
        Via::Preload("project"),
        &env,
    );
    let took = t.elapsed();
    assert_ok(&out, &format!("overwrite_after {mode} under project mode"));
    let recs = read_log(&log);
    assert_eq!(recs.len(), 1, "{recs:?}");
    (recs[0]["emulation"].clone(), took)
}

/// The statistics without the emulation's wall time.
fn stats_of(e: &Value) -> Value {
    let mut s = e["stats"].clone();
    s.as_object_mut().unwrap().remove("emulation_ns");
    s
}

/// A buffer the kernel only reads is not copied at the launch; when the app overwrites it
/// (clEnqueueWriteBuffer) right after the launch, before the emulation could read it, the
/// copy is taken then, and the emulation still sees the pre-launch contents: the same
/// data-dependent statistics (a loop of in[i] iterations) as when nothing is overwritten,
/// and not those of the overwritten data.
#[test]
fn overwritten_read_only_buffer_keeps_its_pre_launch_contents() {
    let mib16 = 16u64 << 20;
    // the output is only written: no copy of it (see a_write_only_output_over_the_cap...)
    let no_copy = |e: &Value| e["snapshot_bytes"].as_u64().unwrap_or(0) == 0;
    let keep = overwrite_after("keep");
    assert!(no_copy(&keep), "{keep}");
    assert_eq!(keep["snapshot_deferred_bytes"], mib16, "{keep}");
    assert!(keep.get("snapshot_later_bytes").is_none(), "{keep}");
    let over = overwrite_after("overwrite");
    assert!(no_copy(&over), "{over}");
    assert_eq!(over["snapshot_deferred_bytes"], mib16, "{over}");
    assert_eq!(
        over["snapshot_later_bytes"], mib16,
        "copied before the write: {over}"
    );
    assert!(over.get("snapshot_lost_bytes").is_none(), "{over}");
    let pre = overwrite_after("pre");
    assert_eq!(
        stats_of(&keep),
        stats_of(&over),
        "the emulation saw the pre-launch data"
    );
    assert_ne!(
        stats_of(&keep)["instructions"],
        stats_of(&pre)["instructions"],
        "the statistics depend on the data (5 against 50 iterations)"
    );
}

/// A read-only input larger than `CLPRISM_EMU_SNAPSHOT_MAX` (16 MiB, cap 1 MiB) overwritten
/// right after the launch, by a non-blocking write before the launch may run (`overwrite`:
/// the launch waits for a user event the app sets after the write) or by a blocking write
/// (`now`; `now_ooo` on an out-of-order queue, after the kernel's event): no copy of it is taken, the write is held back on the device until the emulation
/// has read the pages its work-group reads (one 64 KiB page, not the 16 MiB), the launch is
/// emulated, and its statistics equal those of a run without the overwrite.
#[test]
fn an_overwritten_input_over_the_cap_is_held_back_not_copied() {
    let keep = overwrite_after_capped("keep", Some("1M"));
    for mode in ["overwrite", "now", "now_ooo"] {
        let e = overwrite_after_capped(mode, Some("1M"));
        assert_eq!(e["snapshot_deferred_bytes"], 16u64 << 20, "{mode}: {e}");
        assert!(
            e.get("snapshot_later_bytes").is_none(),
            "{mode}: no copy: {e}"
        );
        assert!(e.get("snapshot_lost_bytes").is_none(), "{mode}: {e}");
        assert!(
            e["snapshot_held_ns"].as_u64().unwrap_or(0) > 0,
            "{mode}: {e}"
        );
        let read = e["snapshot_bytes_read"].as_u64().unwrap();
        assert!(
            read > 0 && read <= PAGE,
            "{mode}: {read} bytes read back: {e}"
        );
        assert_eq!(
            stats_of(&keep),
            stats_of(&e),
            "{mode}: the emulation saw the pre-launch data"
        );
    }
}

/// The hold is bounded: a blocking write on a second queue, before the app sets the user
/// event its launch waits for, cannot be let through by the emulation (which waits for the
/// launch, which waits for the app's thread, held in the write). It is let go after 10 s:
/// the app ends with its own results right (self-checked: the kernel sees the written
/// data, as natively), and the launch says why it was not emulated.
#[test]
fn a_held_write_is_let_go_at_the_bound() {
    let (e, took) = overwrite_after_run("queue2", Some("1M"));
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
    assert_ne!(e["status"], "ok", "{e}");
    let reason = e["reason"].as_str().unwrap_or("");
    assert!(reason.contains("held back"), "{e}");
    let held = e["snapshot_held_ns"].as_u64().unwrap_or(0);
    assert!((9_000_000_000..15_000_000_000).contains(&held), "{e}");
    assert_eq!(e["snapshot_lost_bytes"], 16u64 << 20, "{e}");
}

/// An in-place kernel (reads and writes the same buffer) still gets its copy before the
/// launch, and nothing is deferred.
#[test]
fn in_place_kernel_is_copied_before_the_launch() {
    let e = overwrite_after("inplace");
    assert_eq!(e["snapshot_bytes"], 16u64 << 20, "{e}");
    assert!(e.get("snapshot_deferred_bytes").is_none(), "{e}");
}

/// `reread MODE` (16 MiB input read by three launches of three shapes) under project mode
/// with a snapshot cap that fits one copy of the input but not two: the three `emulation`
/// objects, in launch order, and the run's wall time.
fn reread(mode: &str) -> (Vec<Value>, std::time::Duration) {
    let d = scratch(&format!("project_paged_reread_{mode}"));
    let log = d.join("l.jsonl");
    let t = std::time::Instant::now();
    let out = run(
        &c_program("reread"),
        &[mode],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", "pthread"),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            // 16 MiB input + 1 MiB: the three 16 KiB outputs and one copy of the input
            ("CLPRISM_EMU_SNAPSHOT_MAX", "17M"),
        ],
    );
    let took = t.elapsed();
    assert_ok(&out, &format!("reread {mode} under project mode"));
    let recs = read_log(&log);
    assert_eq!(recs.len(), 3, "{recs:?}");
    (recs.iter().map(|r| r["emulation"].clone()).collect(), took)
}

/// Three launches read one buffer that the app then overwrites once: one copy of it serves
/// all three emulations (the cap fits one copy, not three), and every launch gets the
/// statistics of a run without the overwrite.
#[test]
fn launches_reading_one_overwritten_buffer_share_its_copy() {
    let (keep, _) = reread("keep");
    let (shared, _) = reread("shared");
    for (k, s) in keep.iter().zip(&shared) {
        assert_eq!(k["status"], "ok", "{k}");
        assert_eq!(s["status"], "ok", "{s}");
        assert_eq!(s["snapshot_later_bytes"], 16u64 << 20, "{s}");
        assert!(s.get("snapshot_lost_bytes").is_none(), "{s}");
        assert_eq!(
            stats_of(k),
            stats_of(s),
            "the emulation saw the pre-launch data"
        );
    }
}

/// After each launch the app writes the buffer again: each write needs its own copy while
/// the copy before may still be held, so the app's thread waits (bounded) for the earlier
/// emulation to give its copy back; every launch gets the statistics of a run without the
/// writes.
#[test]
fn a_copy_that_does_not_fit_waits_for_the_earlier_one() {
    let (keep, _) = reread("keep");
    let (twice, _) = reread("twice");
    for (k, s) in keep.iter().zip(&twice) {
        assert_eq!(s["status"], "ok", "{s}");
        assert_eq!(s["snapshot_later_bytes"], 16u64 << 20, "{s}");
        assert_eq!(
            stats_of(k),
            stats_of(s),
            "the emulation saw the pre-launch data"
        );
    }
}

/// As above, but no emulation can end before the writes (every launch waits for a user
/// event the app sets only after them), so a copy that does not fit never gets room while the
/// app's thread is in the write: the wait ends by itself (no deadlock, bounded by the
/// budget's process allowance). The write is then held back on the device until the
/// emulations still reading the buffer are done with its pages (issue 32; before, they lost
/// the buffer and took the first launch's statistics): the app's results are right
/// (self-checked), every launch is emulated with the statistics of a run without the writes,
/// and the records say how long the app waited and how long writes were held.
#[test]
fn a_wait_that_cannot_be_satisfied_ends_by_itself() {
    let (keep, _) = reread("keep");
    let (stall, took) = reread("stall");
    assert!(took < std::time::Duration::from_secs(30), "took {took:?}");
    for (k, e) in keep.iter().zip(&stall) {
        assert_eq!(e["status"], "ok", "{e}");
        assert!(e.get("snapshot_lost_bytes").is_none(), "{e}");
        assert_eq!(
            stats_of(k),
            stats_of(e),
            "the emulation saw the pre-launch data"
        );
    }
    for e in &stall[1..] {
        eprintln!(
            "held {} ns, waited {} ns",
            e["snapshot_held_ns"], e["snapshot_wait_ns"]
        );
        assert!(e["snapshot_held_ns"].as_u64().unwrap_or(0) > 0, "{e}");
    }
    // the second launch's copy waited (about the budget's 1 s floor) before its write was
    // held back instead
    let waited = stall[1]["snapshot_wait_ns"].as_u64().unwrap_or(0);
    assert!(waited > 500_000_000, "{}", stall[1]);
}
