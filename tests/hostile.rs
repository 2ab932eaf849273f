//! Hostile input and file safety (issue 6, item 4): clprism's files are private, no symlink
//! is followed (log path, cache entries), and kernel sources and buffer contents never
//! reach the log, summary or trace. (Shell-free toolchain runs: tests/faults.rs.)
mod common;
use common::*;
use std::os::unix::fs::PermissionsExt;
use OpenCL::emu::*;

const SOURCE_MARKER: &str = "SECRET_SOURCE_MARKER_7f3a";
const BUFFER_MARKER: &str = "SECRET_BUFFER_MARKER_9c1e";

/// Every file clprism writes under `dir`, recursively.
fn files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(files(&p));
        } else {
            v.push(p);
        }
    }
    v
}

/// Log, summary, trace and cache files are mode 0600 (no group/other access), and neither
/// they nor stderr contain the app's kernel source or buffer bytes, in every mode.
#[test]
fn files_are_private_and_hold_no_source_or_data() {
    let exe = c_program("early_release");
    for mode in ["log", "project", "balance"] {
        let d = scratch(&format!("hostile-files-{mode}"));
        let out_dir = d.join("out");
        std::fs::create_dir_all(&out_dir).unwrap();
        let p = |n: &str| out_dir.join(n).to_str().unwrap().to_string();
        let out = run(
            &exe,
            &[],
            Via::Preload(mode),
            &[
                ("CLPRISM_LOG", &p("l.jsonl")),
                ("CLPRISM_SUMMARY", &p("summary.txt")),
                ("CLPRISM_TRACE", &p("trace.json")),
                ("CLPRISM_CACHE", &p("cache")),
            ],
        );
        assert_ok(&out, mode);
        let written = files(&out_dir);
        assert!(
            written.iter().any(|f| f.ends_with("l.jsonl")),
            "{mode}: no log written"
        );
        for f in &written {
            let m = std::fs::metadata(f).unwrap().permissions().mode() & 0o777;
            assert_eq!(m & 0o077, 0, "{mode}: {} has mode {m:o}", f.display());
            let bytes = std::fs::read(f).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            for marker in [SOURCE_MARKER, BUFFER_MARKER] {
                assert!(
                    !text.contains(marker),
                    "{mode}: {} holds {marker}",
                    f.display()
                );
            }
        }
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains(SOURCE_MARKER) && !err.contains(BUFFER_MARKER),
            "{err}"
        );
    }
}

/// A symlink planted at the log path is not followed: its target is left untouched, the
/// app runs as natively, and clprism says it cannot write the log.
#[test]
fn log_path_symlink_is_not_followed() {
    let exe = c_program("early_release");
    let d = scratch("hostile-log-symlink");
    let victim = d.join("victim");
    std::fs::write(&victim, b"precious\n").unwrap();
    let link = d.join("l.jsonl");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let native = run(&exe, &[], Via::Native, &[]);
    let out = run(
        &exe,
        &[],
        Via::Preload("log"),
        &[("CLPRISM_LOG", link.to_str().unwrap())],
    );
    assert_ok(&out, "log via symlink");
    assert_eq!(native.stdout, out.stdout);
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot write the log"), "{err}");
}

/// Cache entries that are symlinks are never read (a planted link to another kernel's
/// SPIR-V would poison the emulation) nor written through; the cache directory is 0700.
#[test]
fn cache_symlinks_are_not_followed() {
    if find_toolchain(&fe()).is_none() {
        eprintln!("SKIP: no toolchain");
        return;
    }
    let d = scratch("hostile-cache-symlink");
    let cache = d.join("cache");
    std::env::set_var("CLPRISM_CACHE", &cache);
    let src = "kernel void k(global int *o) { o[0] = 11; }";
    let other = "kernel void k(global int *o) { o[0] = 99; o[1] = 98; }";
    let (w, o) = compile_cached(src, "", &fe()).unwrap();
    assert_eq!(o, Origin::Compiled);
    assert_eq!(
        std::fs::metadata(&cache).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let entry = std::fs::read_dir(&cache)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // plant: the entry becomes a link to the SPIR-V of another kernel
    let (w_other, _) = compile_cached(other, "", &fe()).unwrap();
    assert_ne!(w, w_other);
    let poisoned = d.join("poisoned.spv");
    let bytes: Vec<u8> = w_other.iter().flat_map(|x| x.to_le_bytes()).collect();
    std::fs::write(&poisoned, &bytes).unwrap();
    std::fs::remove_file(&entry).unwrap();
    std::os::unix::fs::symlink(&poisoned, &entry).unwrap();
    let (w2, o2) = compile_cached(src, "", &fe()).unwrap();
    assert_eq!(o2, Origin::Compiled, "a symlinked entry was read");
    assert_eq!(w2, w);
    // the rewrite replaced the link by a private file; the link target is unchanged
    let m = std::fs::symlink_metadata(&entry).unwrap();
    assert!(m.is_file(), "entry is a regular file again");
    assert_eq!(m.permissions().mode() & 0o777, 0o600);
    assert_eq!(std::fs::read(&poisoned).unwrap(), bytes);
    std::env::remove_var("CLPRISM_CACHE");
}

/// Loads a fuzzer find from fuzz/regressions/ the way the fuzz target does (an odd first
/// byte gets a valid SPIR-V magic number); returns the loader's error message.
fn load_regression(name: &str) -> String {
    let bytes = std::fs::read(root().join("fuzz/regressions").join(name)).unwrap();
    let mut b = bytes.clone();
    if bytes.first().is_some_and(|x| x & 1 == 1) && b.len() >= 20 {
        b[..4].copy_from_slice(&0x0723_0203u32.to_le_bytes());
    }
    let words = spirv_words(&b).expect("header is valid");
    let Err(err) = OpenCL::emu::module::Module::load(&words) else {
        panic!("{name}: a malformed module loaded");
    };
    let msg = format!("{err:?}");
    // a panic would be caught inside Module::load but print on the app's stderr
    assert!(
        !msg.contains("parser failed"),
        "{name}: rejected by a caught panic: {msg}"
    );
    msg
}

/// Fuzzer finds: each input is rejected with an error, not a panic or a stack overflow.
#[test]
fn fuzz_regressions_are_errors() {
    // rspirv 0.12 indexes past the stream for an instruction whose word count runs beyond it
    assert!(load_regression("spirv_load-rspirv-string-oob.bin").contains("word count"));
    // an operand naming a value that was never defined (HashMap index in the decoder)
    load_regression("spirv_load-unknown-value-index.bin");
    // a result id defined twice, making a type contain itself: a stack overflow (abort, not
    // catchable) in the recursive type walks before the fix
    assert!(load_regression("spirv_load-type-cycle-stack-overflow.bin").contains("defined twice"));
    // a block label defined twice (out-of-bounds block index in the decoder)
    assert!(load_regression("spirv_load-duplicate-label-oob.bin").contains("defined twice"));
}
