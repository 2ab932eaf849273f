//! A program that reads `get_global_size` is rebuilt on the balance devices per launch shape
//! (`exec::program::RangeQueries`); with `CLPRISM_BALANCE_EARLY` on, that build runs in the
//! background while the shape's launches run whole on the app's device, instead of the app
//! waiting for the compiler (clpeak's program took 2.48 s on four H200s, session 29). The
//! launches after the build split, and the output is byte-identical to native.
mod common;
use common::*;

/// Runs many_launches (3,000 launches) under balance mode with `CLPRISM_BALANCE_EARLY` on and
/// the clprism cache `cache`; asserts its output equals `native`; returns the log's records.
fn balanced_run(d: &std::path::Path, tag: &str, cache: &std::path::Path) -> Vec<serde_json::Value> {
    let (out_file, log) = (d.join(format!("{tag}.bin")), d.join(format!("{tag}.jsonl")));
    let out = run(
        &c_program("many_launches"),
        &["3000", out_file.to_str().unwrap()],
        Via::Preload("balance"),
        &[
            ("CLPRISM_DEVICES", "all"),
            ("CLPRISM_SPLIT", "always"),
            ("CLPRISM_BALANCE_EARLY", "on"),
            ("CLPRISM_CACHE", cache.to_str().unwrap()),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_SUMMARY", "off"),
        ],
    );
    assert_ok(&out, &format!("many_launches balance ({tag})"));
    assert!(
        std::fs::read(d.join("native.bin")).unwrap() == std::fs::read(&out_file).unwrap(),
        "{tag}: balanced output differs from native"
    );
    read_log(&log)
}

#[test]
fn launches_run_whole_while_their_shape_variant_builds_then_split() {
    let d = scratch("shape-variant-build");
    let native = d.join("native.bin");
    let out = run(
        &c_program("many_launches"),
        &["3000", native.to_str().unwrap()],
        Via::Native,
        &[],
    );
    assert_ok(&out, "many_launches native");
    // The first run builds the variant from source, which on a loaded 2-core machine can
    // outlast the app's 3,000 launches; it fills the cache with the built binaries, so the
    // second run's background build takes milliseconds. Both must be byte-identical.
    let cache = d.join("cache");
    balanced_run(&d, "first", &cache);
    let recs = balanced_run(&d, "second", &cache);
    let building = |r: &serde_json::Value| {
        r["schedule"]["fallback"]
            .as_str()
            .is_some_and(|f| f.contains("variant for this NDRange is being built"))
    };
    let split =
        |r: &serde_json::Value| r["schedule"]["fallback"].is_null() && chunk_devices(r).len() >= 2;
    // the launch that found the variant unbuilt started its build and ran whole
    assert!(
        recs.iter().any(building),
        "no launch ran whole while building"
    );
    let first_split = recs
        .iter()
        .position(split)
        .expect("no launch split after the build");
    // the variant is built once: no launch after the first split waits for it again
    assert!(
        !recs[first_split..].iter().any(building),
        "a launch after the first split was still waiting for the build"
    );
}

/// A kernel that reads no global size, in a program whose other kernel does (clpeak's compute
/// and bandwidth kernels): its launches of two shapes share one build of the program on the
/// balance devices (`launch::Worker::range_queries`, from the kernel's SPIR-V), and only the
/// kernel that reads `get_global_size` gets a variant for its shape: two builds in all, where
/// a variant per launch shape of the program made three. Every launch splits, and the output
/// is byte-identical to native.
#[test]
fn a_kernel_that_reads_no_global_size_shares_one_build_across_shapes() {
    let d = scratch("shape-variant-mixed");
    let (native, bal, log) = (
        d.join("native.bin"),
        d.join("balance.bin"),
        d.join("b.jsonl"),
    );
    let exe = c_program("mixed_queries");
    assert_ok(
        &run(&exe, &["4", native.to_str().unwrap()], Via::Native, &[]),
        "mixed_queries native",
    );
    let out = run(
        &exe,
        &["4", bal.to_str().unwrap()],
        Via::Preload("balance"),
        &[
            ("CLPRISM_DEVICES", "all"),
            ("CLPRISM_SPLIT", "always"),
            ("CLPRISM_DEBUG", "1"),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_SUMMARY", "off"),
        ],
    );
    assert_ok(&out, "mixed_queries balance");
    assert!(
        std::fs::read(&native).unwrap() == std::fs::read(&bal).unwrap(),
        "balanced output differs from native"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    let builds = stderr
        .lines()
        .filter(|l| l.contains("] build: ") && l.contains("devices"))
        .count();
    assert_eq!(builds, 2, "builds on the balance devices:\n{stderr}");
    let recs = read_log(&log);
    assert_eq!(recs.len(), 9, "{recs:?}");
    for r in &recs {
        assert!(
            r["schedule"]["fallback"].is_null() && chunk_devices(r).len() >= 2,
            "a launch did not split: {}",
            r["schedule"]
        );
    }
}
