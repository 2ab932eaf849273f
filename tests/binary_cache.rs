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

/// Issue 31 item 1: with `CLPRISM_BALANCE_APP_BINARY=on` the balance devices of the app's
/// device's model load the app's own build of its program (read back on the background
/// thread) instead of compiling the source, and results stay byte-identical; with `off` none
/// does. On PoCL the option must be forced: `auto` uses it for GPUs only (PoCL produces the
/// binary on request, in about 2 s here).
#[test]
fn devices_of_the_apps_model_build_from_its_binary() {
    let d = scratch("app-binary");
    let exe = examples().join("nbody");
    let native = d.join("native.bin");
    let out = run(
        &exe,
        &["--dump", native.to_str().unwrap()],
        Via::Native,
        &[],
    );
    assert_ok(&out, "nbody native");
    for setting in ["on", "off"] {
        // an empty cache each time: the cached binary would be taken first
        let cache = d.join(format!("cache-{setting}"));
        let dump = d.join(format!("balance-{setting}.bin"));
        let out = run(
            &exe,
            &["--dump", dump.to_str().unwrap()],
            Via::Preload("balance"),
            &[
                ("CLPRISM_CACHE", cache.to_str().unwrap()),
                ("CLPRISM_DEBUG", "1"),
                ("CLPRISM_DEVICES", "all"),
                ("CLPRISM_SPLIT", "always"),
                ("CLPRISM_BALANCE_APP_BINARY", setting),
                // the build at the app's clBuildProgram (the tests' default opens the devices
                // at the first launch instead)
                ("CLPRISM_BALANCE_EARLY", "on"),
                ("CLPRISM_LOG", "off"),
                ("CLPRISM_SUMMARY", "off"),
            ],
        );
        assert_ok(&out, &format!("nbody balance, app binary {setting}"));
        assert!(
            std::fs::read(&native).unwrap() == std::fs::read(&dump).unwrap(),
            "app binary {setting}: differs from native"
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        let from_app = stderr
            .lines()
            .filter(|l| l.contains(": from the app's binary"))
            .count();
        if setting == "on" {
            assert!(from_app >= 1, "{stderr}");
        } else {
            assert_eq!(from_app, 0, "{stderr}");
        }
    }
}
