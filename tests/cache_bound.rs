//! The cache directory's bound (`CLPRISM_CACHE_MAX`, `src/cache`): a real app run under
//! clprism on PoCL trims an overfull cache to the bound, least recently used first, keeps
//! the newest entries and its own, and its results stay those of a native run; and the
//! `clprism cache stats|trim|clear` command.
mod common;
use common::*;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, SystemTime};

/// Writes `n` dummy footprint entries of 16 KiB named `footprint-dummy-PREFIX-I.json`, entry
/// `i` last used `age(i)` ago.
fn fill(dir: &Path, prefix: &str, n: usize, age: impl Fn(usize) -> Duration) {
    let data = vec![b' '; 16 << 10];
    for i in 0..n {
        let p = dir.join(format!("footprint-dummy-{prefix}-{i:04}.json"));
        std::fs::write(&p, &data).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&p)
            .unwrap()
            .set_modified(SystemTime::now() - age(i))
            .unwrap();
    }
}

/// Bytes on disk of clprism's entries in `dir`, as `clprism cache stats` counts them.
fn entry_bytes(dir: &Path) -> u64 {
    OpenCL::cache::scan(dir, &|_| false)
        .unwrap()
        .iter()
        .filter(|e| e.kind != OpenCL::cache::Kind::Temporary)
        .map(|e| e.bytes)
        .sum()
}

fn clprism(cache: &Path, args: &[&str], env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_clprism"));
    c.args(["cache"]).args(args).env("CLPRISM_CACHE", cache);
    c.env_remove("CLPRISM_CACHE_MAX");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn a_run_trims_an_overfull_cache_and_keeps_the_newest_entries() {
    let d = scratch("cache-bound");
    let cache = d.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    // 16 MiB of entries last used 2 to 3 days ago (entry i older than entry i-1), 10 recent
    // ones, and a file that is not clprism's; bound 8 MiB: the run keeps at most 7.2 MiB of
    // what it found, and writes some 120 KiB of its own (SPIR-V, footprint, a binary)
    fill(&cache, "old", 1024, |i| {
        Duration::from_secs(2 * 86400 + 60 * i as u64)
    });
    fill(&cache, "new", 10, |i| Duration::from_secs(60 + i as u64));
    std::fs::write(cache.join("README"), b"not clprism's").unwrap();
    std::fs::File::options()
        .write(true)
        .open(cache.join("README"))
        .unwrap()
        .set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1000))
        .unwrap();
    let max: u64 = 8 << 20;
    assert!(entry_bytes(&cache) >= 2 * max);

    // 32 steps: the run lasts a second or so after its first use of the cache, time for the
    // trim at the lowest priority even while other tests keep the cores busy
    let exe = examples().join("nbody");
    let native_dump = d.join("native.bin");
    let native = run(
        &exe,
        &["2048", "32", "--dump", native_dump.to_str().unwrap()],
        Via::Native,
        &[],
    );
    assert_ok(&native, "nbody native");
    // The trim runs at the lowest priority and stops at the app's exit: on cores that other
    // tests keep busy one run may end before it is done. Each run goes on from what is left
    // (oldest first), so the app is run again, at most RUNS times, until the cache is under
    // the bound; every run's results must be the native run's.
    const RUNS: usize = 4;
    let verdict = |o: &std::process::Output| {
        String::from_utf8_lossy(&o.stdout)
            .lines()
            .map(|l| l.split(" time_ms=").next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    let mut stderr = String::new();
    let mut trimmed = false;
    for run_no in 0..RUNS {
        let dump = d.join(format!("balance{run_no}.bin"));
        let out = run(
            &exe,
            &["2048", "32", "--dump", dump.to_str().unwrap()],
            Via::Preload("balance"),
            &[
                ("CLPRISM_CACHE", cache.to_str().unwrap()),
                ("CLPRISM_CACHE_MAX", "8M"),
                ("CLPRISM_DEBUG", "1"),
                ("CLPRISM_DEVICES", "all"),
                ("CLPRISM_LOG", "off"),
                ("CLPRISM_SUMMARY", "off"),
            ],
        );
        assert_ok(&out, "nbody under clprism");
        stderr = String::from_utf8_lossy(&out.stderr).to_string();
        // the app's results and its report are those of the native run
        assert!(
            std::fs::read(&native_dump).unwrap() == std::fs::read(&dump).unwrap(),
            "the dump differs from native"
        );
        assert_eq!(verdict(&out), verdict(&native));
        trimmed |= stderr.contains("[clprism-cache] cache: ")
            && stderr.contains("bytes (bound 8388608): removed");
        if entry_bytes(&cache) <= max {
            eprintln!("under the bound after {} run(s)", run_no + 1);
            break;
        }
    }
    assert!(trimmed, "no trim line in any run's debug output:\n{stderr}");

    // under the bound, and what went is the least recently used
    let after = entry_bytes(&cache);
    assert!(after <= max, "{after} bytes left, bound {max}\n{stderr}");
    let exists = |prefix: &str, i: usize| {
        cache
            .join(format!("footprint-dummy-{prefix}-{i:04}.json"))
            .exists()
    };
    let kept_old: Vec<usize> = (0..1024).filter(|&i| exists("old", i)).collect();
    assert!(
        !kept_old.is_empty() && kept_old.len() < 512,
        "{}",
        kept_old.len()
    );
    assert_eq!(
        kept_old,
        (0..kept_old.len()).collect::<Vec<_>>(),
        "the newest of the old entries stay, the oldest go"
    );
    assert!((0..10).all(|i| exists("new", i)), "recent entries stay");
    assert!(cache.join("README").exists(), "a file not clprism's stays");
    let binaries = std::fs::read_dir(cache.join("binaries")).map_or(0, |r| r.count());
    assert!(binaries > 0, "the run's own binary is kept");
}

#[test]
fn cache_stats_trim_and_clear() {
    let d = scratch("cache-cli");
    let cache = d.join("cache");
    std::fs::create_dir_all(cache.join("binaries")).unwrap();
    fill(&cache, "a", 6, |i| {
        Duration::from_secs(3600 * (i as u64 + 1))
    });
    std::fs::write(cache.join("binaries/0123.bin"), vec![1u8; 40 << 10]).unwrap();
    std::fs::create_dir_all(cache.join("pocl-remote-x")).unwrap();
    std::fs::write(cache.join("pocl-remote-x/libpocl.so"), vec![0u8; 1 << 20]).unwrap();
    let total = entry_bytes(&cache);

    let out = clprism(&cache, &["stats"], &[("CLPRISM_CACHE_MAX", "1M")]);
    assert_ok(&out, "clprism cache stats");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("directory  {}", cache.display())),
        "{text}"
    );
    assert!(
        text.contains("bound      1.0 MiB (1048576 bytes)"),
        "{text}"
    );
    assert!(text.contains("entries    7, "), "{text}");
    let line = |kind: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(kind))
            .unwrap_or_else(|| panic!("no {kind} line in\n{text}"))
            .split_whitespace()
            .nth(1)
            .unwrap()
            .to_string()
    };
    assert_eq!(line("footprint"), "6");
    assert_eq!(line("device-binary"), "1");
    let off = clprism(&cache, &["stats"], &[("CLPRISM_CACHE_MAX", "off")]);
    assert!(String::from_utf8_lossy(&off.stdout).contains("bound      none"));

    // trim to a bound of half the entries: the oldest go, to under 90 % of it
    let half = total / 2;
    let out = clprism(&cache, &["trim", "--max", &half.to_string()], &[]);
    assert_ok(&out, "clprism cache trim");
    let left = entry_bytes(&cache);
    assert!(left <= half / 10 * 9, "{left} > 0.9 × {half}");
    assert!(
        cache.join("footprint-dummy-a-0000.json").exists(),
        "the newest stays"
    );
    assert!(!cache.join("footprint-dummy-a-0005.json").exists());
    assert!(cache.join("binaries/0123.bin").exists(), "newest of all");

    let out = clprism(&cache, &["clear"], &[]);
    assert_ok(&out, "clprism cache clear");
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("removed "),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(entry_bytes(&cache), 0);
    assert!(
        cache.join("pocl-remote-x/libpocl.so").exists(),
        "what is not clprism's stays"
    );
    let out = clprism(&cache, &["stats"], &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("entries    0, 0 B"));
    // bad arguments: usage, status 2
    assert_eq!(
        clprism(&cache, &["trim", "--max", "lots"], &[])
            .status
            .code(),
        Some(2)
    );
    assert_eq!(clprism(&cache, &["nonsense"], &[]).status.code(), Some(2));
}
