//! Program binaries built on the balance devices are cached across runs (issue 18, item 1):
//! a second run of the same app builds nothing from source on clprism's devices, and its
//! results stay byte-identical to native. Which build path ran is read from the
//! `CLPRISM_DEBUG` lines (`build: DEVICE: from source` / `from the cached binary KEY`).
mod common;
use common::*;

#[test]
fn a_second_run_builds_from_cached_binaries() {
    let d = scratch("binary-cache");
    let cache = d.join("cache");
    let exe = examples().join("nbody");
    let native = d.join("native.bin");
    let out = run(
        &exe,
        &["--dump", native.to_str().unwrap()],
        Via::Native,
        &[],
    );
    assert_ok(&out, "nbody native");
    let mut stderr = Vec::new();
    for i in 0..2 {
        let dump = d.join(format!("balance{i}.bin"));
        let out = run(
            &exe,
            &["--dump", dump.to_str().unwrap()],
            Via::Preload("balance"),
            &[
                ("CLPRISM_CACHE", cache.to_str().unwrap()),
                ("CLPRISM_DEBUG", "1"),
                ("CLPRISM_DEVICES", "all"),
                ("CLPRISM_LOG", "off"),
                ("CLPRISM_SUMMARY", "off"),
            ],
        );
        assert_ok(&out, &format!("nbody balance run {i}"));
        assert!(
            std::fs::read(&native).unwrap() == std::fs::read(&dump).unwrap(),
            "run {i} differs from native"
        );
        stderr.push(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    let builds = |text: &str, how: &str| text.lines().filter(|l| l.contains(how)).count();
    assert!(builds(&stderr[0], ": from source") > 0, "{}", stderr[0]);
    let saved = std::fs::read_dir(cache.join("binaries")).map_or(0, |r| r.count());
    assert!(saved > 0, "no binary saved in {}", cache.display());
    assert_eq!(builds(&stderr[1], ": from source"), 0, "{}", stderr[1]);
    assert!(
        builds(&stderr[1], ": from the cached binary") >= 2,
        "{}",
        stderr[1]
    );
}
