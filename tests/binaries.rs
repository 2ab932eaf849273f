//! Programs created from binaries (issue 18, item 3): an app with its own kernel cache
//! (tests/c/binary_cache.c, like hashcat or pyopencl) builds from source once, saves the
//! binary and loads it with `clCreateProgramWithBinary` later. When clprism saw the binary
//! read back (`clGetProgramInfo(CL_PROGRAM_BINARIES)`), it remembers the source and options in
//! its cache directory, and the binary's program is split in balance mode and emulated in
//! project mode like the source program; without that entry the launch falls back with the
//! reason. A program compiled and linked alone (hashcat) counts as built from source.
mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// Runs `binary_cache ARGS` (via `via`) with clprism's cache in `cache`; returns its one
/// launch record (none when run natively).
fn run_app(args: &[&str], via: Via, cache: &Path, log: &Path) -> Option<Value> {
    let out = run(
        &c_program("binary_cache"),
        args,
        via,
        &[
            ("CLPRISM_CACHE", cache.to_str().unwrap()),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_SUMMARY", "off"),
            ("CLPRISM_DEVICES", "all"),
        ],
    );
    assert_ok(&out, &format!("binary_cache {args:?} ({via:?})"));
    assert_eq!(launches_printed(&out), 1);
    if via == Via::Native {
        return None;
    }
    let recs = read_log(log);
    assert_eq!(recs.len(), 1, "one launch record: {recs:?}");
    recs.into_iter().next()
}

/// Binary cache entries clprism wrote in `cache`.
fn entries(cache: &Path) -> Vec<String> {
    std::fs::read_dir(cache)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("binary-") && n.ends_with(".json"))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn a_binary_saved_under_clprism_is_split_when_loaded() {
    let d = scratch("binaries-balance");
    let (cache, bin) = (d.join("cache"), d.join("kernel.bin"));
    let saved = run_app(
        &["save", bin.to_str().unwrap()],
        Via::Preload("balance"),
        &cache,
        &d.join("save.jsonl"),
    )
    .unwrap();
    assert_split(&saved);
    let remembered = entries(&cache);
    assert_eq!(remembered.len(), 1, "one binary remembered");
    // the entry holds the source sealed, never readable (tests/hostile.rs)
    let text =
        String::from_utf8_lossy(&std::fs::read(cache.join(&remembered[0])).unwrap()).into_owned();
    assert!(
        !text.contains("scaled_plus") && !text.contains("ADD"),
        "{text}"
    );
    let loaded = run_app(
        &["load", bin.to_str().unwrap()],
        Via::Preload("balance"),
        &cache,
        &d.join("load.jsonl"),
    )
    .unwrap();
    assert_split(&loaded);
    // recorded as the source program it came from
    assert_eq!(loaded["program"], saved["program"]);
}

/// hashcat compiles and links each kernel file alone (clCompileProgram + clLinkProgram of one
/// program): that program is split like one built from source, and so is its binary later.
#[test]
fn a_program_linked_alone_and_its_binary_are_split() {
    let d = scratch("binaries-linked");
    let (cache, bin) = (d.join("cache"), d.join("kernel.bin"));
    let saved = run_app(
        &["save-linked", bin.to_str().unwrap()],
        Via::Preload("balance"),
        &cache,
        &d.join("save.jsonl"),
    )
    .unwrap();
    assert_split(&saved);
    assert_eq!(entries(&cache).len(), 1, "one binary remembered");
    let loaded = run_app(
        &["load", bin.to_str().unwrap()],
        Via::Preload("balance"),
        &cache,
        &d.join("load.jsonl"),
    )
    .unwrap();
    assert_split(&loaded);
}

#[test]
fn a_binary_saved_under_clprism_is_emulated_when_loaded() {
    let d = scratch("binaries-project");
    let (cache, bin) = (d.join("cache"), d.join("kernel.bin"));
    // log mode remembers too: the app's cache may have been filled in any mode
    run_app(
        &["save", bin.to_str().unwrap()],
        Via::Preload("log"),
        &cache,
        &d.join("save.jsonl"),
    );
    assert_eq!(entries(&cache).len(), 1, "one binary remembered");
    let loaded = run_app(
        &["load", bin.to_str().unwrap()],
        Via::Preload("project"),
        &cache,
        &d.join("load.jsonl"),
    )
    .unwrap();
    let e = &loaded["emulation"];
    assert_eq!(e["status"], "ok", "emulation: {e}");
}

#[test]
fn a_binary_clprism_never_saw_falls_back_with_the_reason() {
    let d = scratch("binaries-unknown");
    let (cache, bin) = (d.join("cache"), d.join("kernel.bin"));
    // saved without clprism: nothing remembered
    run_app(
        &["save", bin.to_str().unwrap()],
        Via::Native,
        &cache,
        &d.join("save.jsonl"),
    );
    assert!(entries(&cache).is_empty());
    let why = "program created from a binary that clprism never saw built from source";
    let balanced = run_app(
        &["load", bin.to_str().unwrap()],
        Via::Preload("balance"),
        &cache,
        &d.join("balance.jsonl"),
    )
    .unwrap();
    let fallback = balanced["schedule"]["fallback"].as_str().unwrap_or("");
    assert!(fallback.contains(why), "fallback: {}", balanced["schedule"]);
    let projected = run_app(
        &["load", bin.to_str().unwrap()],
        Via::Preload("project"),
        &cache,
        &d.join("project.jsonl"),
    )
    .unwrap();
    let e = &projected["emulation"];
    assert_eq!(e["status"], "unavailable", "emulation: {e}");
    assert!(
        e["reason"].as_str().unwrap_or("").contains(why),
        "emulation: {e}"
    );
}

#[test]
fn a_binary_read_back_in_the_same_run_is_split_without_a_cache_directory() {
    let d = scratch("binaries-same-run");
    // a cache path that cannot be a directory: nothing is written, the run still maps the
    // binary it read back itself
    let not_a_dir = d.join("file");
    std::fs::write(&not_a_dir, b"").unwrap();
    let rec = run_app(
        &["roundtrip"],
        Via::Preload("balance"),
        &not_a_dir,
        &d.join("log.jsonl"),
    )
    .unwrap();
    assert_split(&rec);
}
