//! Real applications nobody here wrote (issue 18, item 4), installed by scripts/setup.sh from
//! Debian: 13 of CLBlast's own self-checking test binaries, clFFT's client and clpeak, in balance mode with
//! `CLPRISM_SPLIT=always` on three unequal PoCL devices. Each must pass its own checks with
//! the same verdict as natively, and launches must really run on >= 2 devices.
//! Speed is measured by bench/real_apps.sh, not here.
mod common;
use common::*;
use std::path::Path;
use std::process::Command;

const DEVICES: &str = "pthread pthread basic";

/// PoCL lists `basic` first (device 0), the two `pthread` devices after it. The apps run on
/// device 1, a `pthread` device with a twin: by default (`CLPRISM_BALANCE_FLOAT=like`) a
/// kernel that does floating-point arithmetic splits only over devices like the app's,
/// so most of CLBlast's kernels split over the two `pthread` devices and leave `basic`
/// out; integer and copy kernels split over all three.
const APP_DEVICE_ARGS: [&str; 4] = ["-platform", "0", "-device", "1"];

/// Runs `cmd args` natively or in balance mode (split always, every device, logging to
/// `log`); returns (exit code, stdout + stderr).
fn app(cmd: &str, args: &[&str], log: Option<&Path>) -> (Option<i32>, String) {
    let mut c = Command::new(cmd);
    c.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("CLPRISM_") && k != "CLPRISM_TEST_LIB" {
            c.env_remove(k);
        }
    }
    c.env("POCL_DEVICES", DEVICES);
    if let Some(log) = log {
        c.env("LD_PRELOAD", lib())
            .env("CLPRISM_MODE", "balance")
            .env("CLPRISM_SPLIT", "always")
            .env("CLPRISM_DEVICES", "all")
            .env("CLPRISM_BALANCE_EARLY", "off")
            .env("CLPRISM_LOG", log)
            .env("CLPRISM_SUMMARY", "off");
    }
    let out = c
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e} (scripts/setup.sh installs it)"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// Launches of `log` whose chunks ran on >= 2 devices.
fn split_launches(log: &Path) -> usize {
    read_log(log)
        .iter()
        .filter(|r| {
            let chunks = r["schedule"]["chunks"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let devices: std::collections::HashSet<u64> =
                chunks.iter().filter_map(|c| c["device"].as_u64()).collect();
            devices.len() >= 2
        })
        .count()
}

/// Every launch of `log` ran on >= 2 devices or its record says why not (`fallback` or
/// `one_device_reason`).
fn every_unsplit_launch_says_why(log: &Path) {
    for r in read_log(log) {
        let s = &r["schedule"];
        assert!(
            chunk_devices(&r).len() >= 2
                || s["fallback"].is_string()
                || s["one_device_reason"].is_string(),
            "launch {} ran on one device without a reason: {s}",
            r["seq"]
        );
    }
}

/// CLBlast's verdict lines: "N test(s) failed" summed over the routines.
fn clblast_failed(text: &str) -> usize {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            let i = l.find(" test(s) failed")?;
            l[..i]
                .rsplit(|c: char| !c.is_ascii_digit())
                .next()?
                .parse::<usize>()
                .ok()
        })
        .sum()
}

fn clblast(routine: &str) {
    let bin = format!("clblast_test_{routine}");
    let d = scratch(&format!("real-{routine}"));
    let log = d.join("balance.jsonl");
    let (native_rc, native) = app(&bin, &APP_DEVICE_ARGS, None);
    let (rc, text) = app(&bin, &APP_DEVICE_ARGS, Some(&log));
    assert_eq!(native_rc, Some(0), "{bin} natively:\n{native}");
    assert!(
        native.contains(" test(s) passed"),
        "{bin} printed no verdict:\n{native}"
    );
    assert_eq!(rc, Some(0), "{bin} in balance mode:\n{text}");
    assert_eq!(clblast_failed(&text), 0, "{bin} in balance mode:\n{text}");
    let split = split_launches(&log);
    assert!(split > 0, "{bin}: no launch ran on two devices");
    every_unsplit_launch_says_why(&log);
    eprintln!("{bin}: {split} launches split");
}

#[test]
fn clblast_axpy_passes_its_own_checks_split() {
    clblast("xaxpy");
}

#[test]
fn clblast_gemv_passes_its_own_checks_split() {
    clblast("xgemv");
}

#[test]
fn clblast_scal_passes_its_own_checks_split() {
    clblast("xscal");
}

/// One test per CLBlast routine: `clblast_test!(name, routine)`.
macro_rules! clblast_test {
    ($($name:ident => $routine:literal),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                clblast($routine);
            }
        )*
    };
}

// Level 1, 2 and the extra routines whose tests take under ~15 s natively on three PoCL
// devices here (xgemm, xsymm and xtrsv take 28-98 s natively: left to bench/real_apps.sh;
// xhad launches one work-group at a time: nothing to split).
clblast_test! {
    clblast_amax_passes_its_own_checks_split => "xamax",
    clblast_asum_passes_its_own_checks_split => "xasum",
    clblast_copy_passes_its_own_checks_split => "xcopy",
    clblast_dot_passes_its_own_checks_split => "xdot",
    clblast_nrm2_passes_its_own_checks_split => "xnrm2",
    clblast_swap_passes_its_own_checks_split => "xswap",
    clblast_ger_passes_its_own_checks_split => "xger",
    clblast_syr_passes_its_own_checks_split => "xsyr",
    clblast_col2im_passes_its_own_checks_split => "xcol2im",
    clblast_omatcopy_passes_its_own_checks_split => "xomatcopy",
}

/// clpeak's single-precision compute test (no self-check: its figures are printed) runs to
/// the end in balance mode with its launches split over >= 2 devices, every other launch
/// saying why not.
#[test]
fn clpeak_compute_runs_split() {
    let d = scratch("real-clpeak");
    let log = d.join("balance.jsonl");
    let args = ["-p", "0", "-d", "1", "--compute-sp"];
    let (native_rc, native) = app("clpeak", &args, None);
    assert_eq!(native_rc, Some(0), "clpeak natively:\n{native}");
    let (rc, text) = app("clpeak", &args, Some(&log));
    assert_eq!(rc, Some(0), "clpeak in balance mode:\n{text}");
    assert!(text.contains("float16"), "{text}");
    assert!(
        split_launches(&log) > 0,
        "clpeak: no launch ran on two devices"
    );
    every_unsplit_launch_says_why(&log);
}

#[test]
fn clfft_client_runs_split() {
    let d = scratch("real-clfft");
    let log = d.join("balance.jsonl");
    let args = ["-x", "1024", "-y", "64", "-p", "3"];
    let (native_rc, native) = app("clFFT-client", &args, None);
    assert_eq!(native_rc, Some(0), "clFFT-client natively:\n{native}");
    let (rc, text) = app("clFFT-client", &args, Some(&log));
    assert_eq!(rc, Some(0), "clFFT-client in balance mode:\n{text}");
    assert!(text.contains("Execution wall time"), "{text}");
    assert!(
        split_launches(&log) > 0,
        "clFFT-client: no launch ran on two devices"
    );
}
