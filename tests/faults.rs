//! Faults (issue 6, item 3). Each test proves that the app's result is right (stdout and
//! exit status equal to the native run, outputs checked by the app itself or compared
//! byte-for-byte) or that the app gets the real driver's error code.
//!
//! Tests that change this process's environment (CLPRISM_TOOLCHAIN, CLPRISM_CACHE) hold
//! `ENV`; child processes get their CLPRISM_* variables from `common::run` only.
mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Mutex;
use OpenCL::emu::*;

static ENV: Mutex<()> = Mutex::new(());

/// Writes an executable shell script.
fn script(p: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fake LLVM 15 toolchain directory whose clang answers `--version` and then runs `then`.
fn fake_toolchain(dir: &Path, then: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    script(
        &dir.join("clang-15"),
        &format!(
            "case \"$1\" in --version) echo 'clang version 15.0.0 (fake)'; exit 0;; esac\n{then}"
        ),
    );
    script(
        &dir.join("llvm-spirv-15"),
        "case \"$1\" in --version) echo 'LLVM version 15.0.0 (fake)'; exit 0;; esac\nexit 1",
    );
    dir.to_path_buf()
}

/// stdout and exit status equal to the native run's.
fn same_as_native(native: &Output, other: &Output, what: &str) {
    assert_ok(other, what);
    assert_eq!(
        String::from_utf8_lossy(&native.stdout),
        String::from_utf8_lossy(&other.stdout),
        "{what}: stdout differs from native"
    );
}

const SRC: &str = "kernel void k(global int *o) { o[get_global_id(0)] = X; }";

/// The toolchain crashing (SIGSEGV) or failing (exit 1): the front end returns an error
/// naming the failure, never panics, and writes no cache entry.
#[test]
fn toolchain_crash_or_failure_is_an_error_not_a_crash() {
    let _g = ENV.lock().unwrap_or_else(|e| e.into_inner());
    let d = scratch("fault-toolchain-lib");
    let cache = d.join("cache");
    std::env::set_var("CLPRISM_CACHE", &cache);
    for (name, then) in [
        ("segv", "kill -SEGV $$"),
        ("exit1", "echo 'error: fake failure' >&2; exit 1"),
    ] {
        let tc = fake_toolchain(&d.join(name), then);
        std::env::set_var("CLPRISM_TOOLCHAIN", &tc);
        let t = find_toolchain(&fe()).expect("fake toolchain is found");
        assert!(t.identity.contains(name), "{}", t.identity);
        let e = compile_source(SRC, "-DX=1", &fe()).unwrap_err();
        assert!(matches!(e, EmuError::Frontend(_)), "{name}: {e:?}");
        let msg = format!("{e:?}");
        assert!(
            msg.contains("clang-15"),
            "{name}: error names the program: {msg}"
        );
        if name == "segv" {
            assert!(
                msg.contains("signal"),
                "{name}: error says it was a signal: {msg}"
            );
        }
        let entries = std::fs::read_dir(&cache).map(|r| r.count()).unwrap_or(0);
        assert_eq!(entries, 0, "{name}: a failed compile left cache files");
    }
    // A tool that exits without reading a large input: the write to its stdin fails with
    // EPIPE. With SIGPIPE at its default action, as in a C application, the process must
    // survive (it was killed by SIGPIPE before the fix in frontend::run_pipe).
    // SAFETY: sets a signal disposition; nothing else in this test binary writes to pipes.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let tc = fake_toolchain(&d.join("noread"), "exec 0<&-; exit 1");
    std::env::set_var("CLPRISM_TOOLCHAIN", &tc);
    let big = format!("{SRC}\n{}", "// padding\n".repeat(200_000));
    let e = compile_source(&big, "-DX=1", &fe()).unwrap_err();
    assert!(matches!(e, EmuError::Frontend(_)), "{e:?}");
    // Missing toolchain: a directory without clang: NoToolchain with the reason.
    std::env::set_var("CLPRISM_TOOLCHAIN", d.join("none"));
    let e = compile_source(SRC, "-DX=1", &fe()).unwrap_err();
    assert!(matches!(e, EmuError::NoToolchain(_)), "{e:?}");
    std::env::remove_var("CLPRISM_TOOLCHAIN");
    std::env::remove_var("CLPRISM_CACHE");
}

/// The app's build options reach the toolchain as literal argv words: no shell runs them.
#[test]
fn build_options_are_not_shell_interpolated() {
    let _g = ENV.lock().unwrap_or_else(|e| e.into_inner());
    let d = scratch("fault-shell");
    let argv = d.join("argv");
    let pwned = d.join("PWNED");
    let tc = fake_toolchain(
        &d.join("tc"),
        &format!(
            "for a in \"$@\"; do echo \"$a\"; done > {}\nexit 1",
            argv.display()
        ),
    );
    std::env::set_var("CLPRISM_TOOLCHAIN", &tc);
    std::env::set_var("CLPRISM_CACHE", d.join("cache"));
    let opts = format!(
        "-DX=$(touch${{IFS}}{p}) -DY=`touch${{IFS}}{p}` -DZ=1;touch${{IFS}}{p}",
        p = pwned.display()
    );
    let _ = compile_source(SRC, &opts, &fe()).unwrap_err();
    let got = std::fs::read_to_string(&argv).expect("fake clang ran");
    let p = pwned.display();
    for w in [
        format!("-DX=$(touch${{IFS}}{p})"),
        format!("-DY=`touch${{IFS}}{p}`"),
        format!("-DZ=1;touch${{IFS}}{p}"),
    ] {
        assert!(
            got.lines().any(|l| l == w),
            "argv lacks literal {w}:\n{got}"
        );
    }
    assert!(!pwned.exists(), "a build option was run by a shell");
    // With the real toolchain too, when there is one.
    std::env::remove_var("CLPRISM_TOOLCHAIN");
    if find_toolchain(&fe()).is_some() {
        let _ = compile_source(SRC, &format!("-DX=1 -DQ=$(touch${{IFS}}{p})"), &fe());
        assert!(
            !pwned.exists(),
            "a build option was run by a shell (real toolchain)"
        );
    }
    std::env::remove_var("CLPRISM_CACHE");
}

/// A cache directory that cannot be written (full disk: a tiny tmpfs filled up when this
/// runs as root and may mount; otherwise a path below a regular file): compiling still
/// succeeds from the toolchain and leaves no temporary file behind.
#[test]
fn full_or_unwritable_cache_still_compiles() {
    let _g = ENV.lock().unwrap_or_else(|e| e.into_inner());
    if find_toolchain(&fe()).is_none() {
        eprintln!("SKIP: no toolchain");
        return;
    }
    let d = scratch("fault-cache-full");
    let mnt = d.join("tmpfs");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs"])
        .arg(&mnt)
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    /// Unmounts on drop, also when an assertion fails.
    struct Umount(PathBuf, bool);
    impl Drop for Umount {
        fn drop(&mut self) {
            if self.1 {
                let _ = std::process::Command::new("umount").arg(&self.0).status();
            }
        }
    }
    let _umount = Umount(mnt.clone(), mounted);
    let mut cases = vec![d.join("file").join("cache")];
    std::fs::write(d.join("file"), b"not a directory").unwrap();
    if mounted {
        // fill it: writes fail with ENOSPC from now on
        let cache = mnt.join("cache");
        std::fs::create_dir_all(&cache).unwrap();
        let mut f = std::fs::File::create(mnt.join("fill")).unwrap();
        use std::io::Write;
        while f.write_all(&[0u8; 4096]).is_ok() {}
        let _ = f.sync_all();
        cases.push(cache);
    } else {
        eprintln!("note: cannot mount a tmpfs here; testing the unwritable path only");
    }
    for (i, cache) in cases.iter().enumerate() {
        std::env::set_var("CLPRISM_CACHE", cache);
        let src = format!("{SRC} // case {i}");
        let (w, o) = compile_cached(&src, "-DX=3", &fe()).expect("compiles without a cache");
        assert_eq!(o, Origin::Compiled);
        assert_eq!(w[0], 0x0723_0203);
        if let Ok(rd) = std::fs::read_dir(cache) {
            let left: Vec<_> = rd.flatten().map(|e| e.file_name()).collect();
            assert!(left.is_empty(), "files left in a full cache: {left:?}");
        }
    }
    std::env::remove_var("CLPRISM_CACHE");
}

/// Emulator budget: a kernel that never ends stops at the instruction budget, reports
/// `budget_exhausted`, and returns (no hang, no panic).
#[test]
fn emulator_budget_stops_an_endless_kernel() {
    let _g = ENV.lock().unwrap_or_else(|e| e.into_inner());
    if find_toolchain(&fe()).is_none() {
        eprintln!("SKIP: no toolchain");
        return;
    }
    std::env::set_var("CLPRISM_CACHE", scratch("fault-budget").join("cache"));
    let src = "kernel void spin(global volatile int *o) { int i = 0; while (o[0] == 0) { i++; } o[1] = i; }";
    let w = compile_source(src, "", &fe()).unwrap();
    let m = load_module(&w).unwrap();
    let mut args = vec![ArgValue::Buffer(vec![0; 8])];
    let cfg = EmuConfig {
        instr_budget: 100_000,
        ..EmuConfig::default()
    };
    let st = emulate(
        &m,
        "spin",
        &LaunchShape::new(&[64], &[64], None),
        [0; 3],
        &mut args,
        &cfg,
    )
    .expect("emulation returns");
    assert!(st.budget_exhausted, "budget flag");
    std::env::remove_var("CLPRISM_CACHE");
}

/// Project mode with a toolchain that crashes or fails, or none at all: the app's output
/// and exit status equal the native run's.
#[test]
fn project_mode_survives_a_broken_toolchain() {
    let exe = c_program("early_release");
    let shapes = c_program("launch_shapes");
    let d = scratch("fault-toolchain-app");
    let segv = fake_toolchain(&d.join("segv"), "kill -SEGV $$");
    let exit1 = fake_toolchain(&d.join("exit1"), "exit 1");
    let none = d.join("none");
    for prog in [&exe, &shapes] {
        let native = run(prog, &[], Via::Native, &[]);
        assert_ok(&native, "native");
        for tc in [&segv, &exit1, &none] {
            let out = run(
                prog,
                &[],
                Via::Preload("project"),
                &[
                    ("CLPRISM_TOOLCHAIN", tc.to_str().unwrap()),
                    ("CLPRISM_CACHE", d.join("cache").to_str().unwrap()),
                    ("CLPRISM_LOG", d.join("l.jsonl").to_str().unwrap()),
                ],
            );
            same_as_native(
                &native,
                &out,
                &format!("project, toolchain {}", tc.display()),
            );
        }
    }
}

/// An unwritable log path (a missing directory below /proc, a directory, a dangling path
/// below a regular file): the app runs as natively; clprism warns once, naming the path.
#[test]
fn unwritable_log_path_warns_and_runs() {
    let exe = c_program("early_release");
    let d = scratch("fault-log");
    std::fs::write(d.join("file"), b"x").unwrap();
    let native = run(&exe, &[], Via::Native, &[]);
    assert_ok(&native, "native");
    for p in [
        "/proc/clprism-no-such-dir/l.jsonl".to_string(),
        d.to_str().unwrap().to_string(),
        d.join("file/l.jsonl").to_str().unwrap().to_string(),
    ] {
        for mode in ["log", "balance"] {
            let out = run(&exe, &[], Via::Preload(mode), &[("CLPRISM_LOG", &p)]);
            same_as_native(&native, &out, &format!("{mode} with CLPRISM_LOG={p}"));
            let err = String::from_utf8_lossy(&out.stderr);
            let warns: Vec<_> = err.lines().filter(|l| l.contains(p.as_str())).collect();
            assert_eq!(
                warns.len(),
                1,
                "{mode} {p}: one warning naming the path:\n{err}"
            );
        }
    }
}

/// The app releases its kernel, program, buffers and queue while the launch and a read are
/// still queued: results right in every mode.
#[test]
fn early_release_in_every_mode() {
    let exe = c_program("early_release");
    let d = scratch("fault-early-release");
    let native = run(&exe, &[], Via::Native, &[]);
    assert_ok(&native, "native");
    for mode in ["off", "log", "project", "balance"] {
        let log = d.join(format!("{mode}.jsonl"));
        let out = run(
            &exe,
            &[],
            Via::Preload(mode),
            &[("CLPRISM_LOG", log.to_str().unwrap())],
        );
        same_as_native(&native, &out, &format!("early release, {mode}"));
        if mode != "off" {
            let recs = read_log(&log);
            assert_eq!(recs.len(), 1, "{mode}: one record");
        }
    }
}

/// Balance mode, faults on the other device and on an app with many launches per run:
/// a failing device (every enqueue fails) and a hanging one (blocked behind a user event
/// that never completes). Extends tests/balance.rs (matmul_global) to floyd_warshall
/// (many dependent launches on one buffer) and nbody (ping-pong buffers).
#[test]
fn balance_device_faults_on_multi_launch_apps() {
    let ex = examples();
    for name in ["floyd_warshall", "nbody"] {
        let exe = ex.join(name);
        let d = scratch(&format!("fault-balance-{name}"));
        let nat = d.join("n.bin");
        let native = run(&exe, &["--dump", nat.to_str().unwrap()], Via::Native, &[]);
        assert_ok(&native, "native");
        for fault in ["fail:1", "block:0"] {
            let bal = d.join("b.bin");
            let log = d.join("l.jsonl");
            let out = run(
                &exe,
                &["--dump", bal.to_str().unwrap()],
                Via::Preload("balance"),
                &[
                    ("CLPRISM_FAULT", fault),
                    ("CLPRISM_DEVICES", "all"),
                    ("CLPRISM_LOG", log.to_str().unwrap()),
                ],
            );
            assert_ok(&out, &format!("{name} balance {fault}"));
            assert!(
                std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
                "{name} {fault}: output differs from native"
            );
            assert_eq!(
                read_log(&log).len(),
                launches_printed(&out),
                "{name} {fault}: one record per launch"
            );
        }
    }
}

/// Project mode, a kernel far beyond the emulator's budget (`tests/c/long_loop.c`, 40 M
/// iterations per work-item): the app's output equals native, and the record says the
/// emulation stopped at its budget (and extrapolated).
#[test]
fn project_mode_emulator_budget() {
    let exe = c_program("long_loop");
    let d = scratch("fault-budget-app");
    let log = d.join("l.jsonl");
    let native = run(&exe, &[], Via::Native, &[]);
    assert_ok(&native, "native");
    let out = run(
        &exe,
        &[],
        Via::Preload("project"),
        &[
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_CACHE", d.join("cache").to_str().unwrap()),
        ],
    );
    same_as_native(&native, &out, "project, long loop");
    if find_toolchain(&fe()).is_none() {
        eprintln!("SKIP (record check): no toolchain");
        return;
    }
    let recs = read_log(&log);
    assert_eq!(recs.len(), 1);
    let st = &recs[0]["emulation"]["stats"];
    assert_eq!(st["budget_exhausted"], true, "{}", recs[0]);
}

/// Project mode with a cache directory that cannot be created (a path below a regular
/// file): the app's output equals native and the launch is still emulated (compiled now).
#[test]
fn project_mode_unwritable_cache() {
    let exe = c_program("early_release");
    let d = scratch("fault-cache-app");
    std::fs::write(d.join("file"), b"not a directory").unwrap();
    let log = d.join("l.jsonl");
    let native = run(&exe, &[], Via::Native, &[]);
    let out = run(
        &exe,
        &[],
        Via::Preload("project"),
        &[
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_CACHE", d.join("file/cache").to_str().unwrap()),
        ],
    );
    same_as_native(&native, &out, "project, unwritable cache");
    if find_toolchain(&fe()).is_none() {
        eprintln!("SKIP (record check): no toolchain");
        return;
    }
    let recs = read_log(&log);
    assert_eq!(recs.len(), 1);
    assert!(
        recs[0]["emulation"]["stats"].is_object(),
        "emulated without a cache: {}",
        recs[0]
    );
}
