//! `clprism run` end to end: real OpenCL apps (PoCL) run through the launcher in off and log
//! modes, exit status and signal passthrough, the `dlopen("libOpenCL.so.1")` trap, the
//! environment it sets up, the temporary directory's removal, and its error statuses.
//! Needs `cargo build` first (target/debug/libOpenCL.so next to the clprism binary).

mod common;
use common::*;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `clprism run ARGS` with the inherited CLPRISM_* variables removed and PoCL's devices set.
fn clprism_run(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_clprism"));
    c.arg("run").args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("CLPRISM_") {
            c.env_remove(k);
        }
    }
    c.env(
        "POCL_DEVICES",
        std::env::var("POCL_DEVICES").unwrap_or_else(|_| POCL.into()),
    );
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

fn out(args: &[&str], env: &[(&str, &str)]) -> Output {
    clprism_run(args, env).output().expect("spawn clprism")
}

/// The "count KERNEL N" lines report_app prints.
fn counts(o: &Output) -> BTreeMap<String, usize> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("count "))
        .map(|l| {
            let (k, n) = l.split_once(' ').unwrap();
            (k.to_string(), n.parse().unwrap())
        })
        .collect()
}

/// Compiles tests/c/dlopen_app.c WITHOUT -lOpenCL (it must load OpenCL with dlopen).
fn dlopen_app() -> PathBuf {
    let dir = root().join("target/ctests");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join("dlopen_app");
    let tmp = dir.join(format!("dlopen_app.{}", std::process::id()));
    let o = Command::new("cc")
        .args(["-O2", "-Wall", "-o"])
        .arg(&tmp)
        .arg(root().join("tests/c/dlopen_app.c"))
        .arg("-ldl")
        .output()
        .expect("cc");
    assert_ok(&o, "compiling dlopen_app.c");
    std::fs::rename(&tmp, &exe).unwrap();
    exe
}

#[test]
fn log_mode_logs_every_launch_and_keeps_output() {
    let app = c_program("report_app");
    let d = scratch("launcher_log");
    let log = d.join("run.jsonl");
    let native = run(&app, &[], Via::Native, &[]);
    assert_ok(&native, "report_app natively");
    let o = out(
        &[
            "--mode",
            "log",
            "--log",
            log.to_str().unwrap(),
            "--summary",
            "off",
            "--",
            app.to_str().unwrap(),
        ],
        &[],
    );
    assert_ok(&o, "clprism run report_app");
    assert_eq!(o.stdout, native.stdout, "the app's output is unchanged");
    assert_eq!(
        o.stderr, native.stderr,
        "--summary off adds nothing on stderr"
    );
    let recs = read_log(&log);
    assert_eq!(recs.len(), launches_printed(&o));
    let mut logged: BTreeMap<String, usize> = BTreeMap::new();
    for r in &recs {
        assert_eq!(r["mode"], "log");
        *logged
            .entry(r["kernel"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    assert_eq!(logged, counts(&o));
    // the summary goes where --summary says
    let summary = d.join("summary.txt");
    let o = out(
        &[
            "--log",
            log.to_str().unwrap(),
            "--summary",
            summary.to_str().unwrap(),
            app.to_str().unwrap(),
        ],
        &[],
    );
    assert_ok(&o, "clprism run with a summary file");
    let s = std::fs::read_to_string(&summary).unwrap();
    assert!(
        s.contains("device time per kernel") && s.contains("fill2d"),
        "{s}"
    );
}

#[test]
fn off_mode_writes_no_log() {
    let app = c_program("report_app");
    let d = scratch("launcher_off");
    let log = d.join("off.jsonl");
    let native = run(&app, &[], Via::Native, &[]);
    let o = out(
        &[
            "--mode=off",
            "--log",
            log.to_str().unwrap(),
            app.to_str().unwrap(),
        ],
        &[],
    );
    assert_ok(&o, "clprism run --mode off");
    assert_eq!(o.stdout, native.stdout);
    assert_eq!(o.stderr, native.stderr, "off mode prints nothing");
    assert!(!log.exists(), "off mode wrote a log");
}

#[test]
fn exit_status_passes_through() {
    let app = c_program("report_app");
    let d = scratch("launcher_exit");
    let log = d.join("exit.jsonl");
    let o = out(
        &["--log", log.to_str().unwrap(), "--summary", "off", "--"],
        &[],
    );
    assert_eq!(o.status.code(), Some(2), "no APP is a usage error");
    let o = out(
        &[
            "--log",
            log.to_str().unwrap(),
            "--summary",
            "off",
            "--",
            app.to_str().unwrap(),
            "3",
        ],
        &[],
    );
    assert_eq!(
        o.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // the log is complete although the app exited with 3
    assert_eq!(read_log(&log).len(), launches_printed(&o));
    // killed by a signal: 128 + N
    let o = out(&["--mode", "off", "sh", "-c", "kill -TERM $$"], &[]);
    assert_eq!(o.status.code(), Some(128 + libc::SIGTERM));
    let o = out(&["--mode", "off", "sh", "-c", "exit 42"], &[]);
    assert_eq!(o.status.code(), Some(42));
}

#[test]
fn dlopen_app_gets_clprism() {
    let app = dlopen_app();
    let d = scratch("launcher_dlopen");
    let log = d.join("dl.jsonl");
    let native = run(&app, &[], Via::Native, &[]);
    assert_ok(&native, "dlopen_app natively");
    assert!(
        String::from_utf8_lossy(&native.stdout).contains("clprism: no"),
        "natively the app gets the system loader"
    );
    let o = out(
        &[
            "--log",
            log.to_str().unwrap(),
            "--summary",
            "off",
            app.to_str().unwrap(),
        ],
        &[],
    );
    assert_ok(&o, "clprism run dlopen_app");
    assert!(String::from_utf8_lossy(&o.stdout).contains("clprism: yes"));
    let recs = read_log(&log);
    assert_eq!(recs.len(), launches_printed(&o));
    assert!(recs
        .iter()
        .all(|r| r["kernel"] == "twice" && r["global"][0] == 256));
}

#[test]
fn environment_is_prepended_and_temp_dir_removed() {
    let lib = std::fs::canonicalize(root().join("target/debug/libOpenCL.so")).unwrap();
    let script = r#"echo "$LD_PRELOAD"; echo "$LD_LIBRARY_PATH"; d="${LD_LIBRARY_PATH%%:*}";
        echo "$d"; readlink "$d/libOpenCL.so.1"; echo "$CLPRISM_MODE|$CLPRISM_LOG|$CLPRISM_TRACE|$CLPRISM_SUMMARY""#;
    let o = out(
        &[
            "--mode",
            "off",
            "--log",
            "l.jsonl",
            "--trace",
            "t.json",
            "--summary",
            "off",
            "sh",
            "-c",
            script,
        ],
        &[("LD_LIBRARY_PATH", "/opt/y:/opt/z")],
    );
    assert_ok(&o, "clprism run sh");
    let s = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines[0], lib.to_str().unwrap());
    let (first, rest) = lines[1].split_once(':').unwrap();
    assert_eq!(rest, "/opt/y:/opt/z");
    assert_eq!(first, lines[2]);
    assert_eq!(lines[3], lib.to_str().unwrap());
    assert_eq!(lines[4], "off|l.jsonl|t.json|off");
    assert!(
        !Path::new(first).exists(),
        "temporary directory {first} left behind"
    );
    // with an existing LD_PRELOAD, clprism goes first and the other stays
    let o = out(
        &["--mode", "off", "sh", "-c", "echo \"$LD_PRELOAD\""],
        &[("LD_PRELOAD", "libc.so.6")],
    );
    assert_ok(&o, "clprism run with LD_PRELOAD set");
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("{}:libc.so.6", lib.display())
    );
    // unset options leave the inherited variables alone
    let o = out(
        &["sh", "-c", "echo \"${CLPRISM_MODE-unset}|$CLPRISM_LOG\""],
        &[("CLPRISM_MODE", "off"), ("CLPRISM_LOG", "mine.jsonl")],
    );
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "off|mine.jsonl");
}

#[test]
fn errors_have_clear_statuses() {
    let d = scratch("launcher_errors");
    let o = out(&["--", d.join("no-such-app").to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(127));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no-such-app"));
    let o = out(&["no-such-command-clprism-test"], &[]);
    assert_eq!(o.status.code(), Some(127));
    let text = d.join("not-executable");
    std::fs::write(&text, "x").unwrap();
    let o = out(&[text.to_str().unwrap()], &[]);
    assert_eq!(o.status.code(), Some(126));
    let o = out(&["--lib", "/nonexistent/libOpenCL.so", "true"], &[]);
    assert_eq!(o.status.code(), Some(125));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("/nonexistent/libOpenCL.so"), "{e}");
    let o = out(&["true"], &[("CLPRISM_LIB", text.to_str().unwrap())]);
    assert_eq!(o.status.code(), Some(125));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a shared library"));
    let o = out(&["--mode", "turbo", "true"], &[]);
    assert_eq!(o.status.code(), Some(2));
    // --lib with the real library works like the default
    let o = out(
        &[
            "--lib",
            root().join("target/debug/libOpenCL.so").to_str().unwrap(),
            "true",
        ],
        &[],
    );
    assert_ok(&o, "--lib");
}

/// True when `sig` is ignored in this process (then the launcher leaves it ignored).
fn ignored(sig: i32) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mask = status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .map(|m| u64::from_str_radix(m.trim(), 16).unwrap())
        .unwrap();
    mask & (1 << (sig - 1)) != 0
}

/// Starts `clprism run -- sh -c 'trap "exit CODE" SIG; ...'`, waits until the trap is set,
/// sends `sig` to clprism (not to the app) and returns clprism's exit status.
fn forwarded(sig: i32, name: &str, code: i32) -> Option<i32> {
    let script = format!("trap 'exit {code}' {name}; echo ready; while :; do sleep 0.05; done");
    let mut child = clprism_run(&["--mode", "off", "sh", "-c", &script], &[])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    // SAFETY: signalling our own child process.
    unsafe { libc::kill(child.id() as i32, sig) };
    child.wait().unwrap().code()
}

#[test]
fn signals_are_forwarded_to_the_app() {
    assert_eq!(forwarded(libc::SIGTERM, "TERM", 7), Some(7));
    if !ignored(libc::SIGHUP) {
        // under `nohup` SIGHUP is ignored from the start: clprism leaves it ignored, and the
        // app's shell cannot trap it (POSIX), so the app would never exit
        assert_eq!(forwarded(libc::SIGHUP, "HUP", 9), Some(9));
    }
    if !ignored(libc::SIGINT) {
        // a SIGINT sent with kill (not from a terminal) is forwarded too
        assert_eq!(forwarded(libc::SIGINT, "INT", 11), Some(11));
    }
}

#[test]
fn python_ctypes_dlopen_gets_clprism() {
    let py = [
        "python3",
        "-c",
        "import ctypes; l = ctypes.CDLL('libOpenCL.so.1'); print(hasattr(l, 'clprism_identity'))",
    ];
    if Command::new("python3").arg("-V").output().is_err() {
        eprintln!("python3 not installed: skipped");
        return;
    }
    let native = Command::new(py[0]).args(&py[1..]).output().unwrap();
    assert_ok(&native, "python3 ctypes natively");
    assert_eq!(String::from_utf8_lossy(&native.stdout).trim(), "False");
    let o = out(
        &["--mode", "log", "--summary", "off", "--"]
            .iter()
            .chain(&py)
            .copied()
            .collect::<Vec<_>>(),
        &[],
    );
    assert_ok(&o, "clprism run python3");
    assert_eq!(String::from_utf8_lossy(&o.stdout).trim(), "True");
}

#[test]
fn library_path_with_a_space_still_preloads() {
    let app = c_program("report_app");
    let d = scratch("launcher_space");
    let dir = d.join("with space");
    std::fs::create_dir_all(&dir).unwrap();
    let lib = dir.join("libOpenCL.so");
    // a hard link keeps the space in the canonical path (a symlink would resolve it away)
    std::fs::hard_link(root().join("target/debug/libOpenCL.so"), &lib).unwrap();
    let log = d.join("space.jsonl");
    let o = out(
        &[
            "--lib",
            lib.to_str().unwrap(),
            "--log",
            log.to_str().unwrap(),
            "--summary",
            "off",
            app.to_str().unwrap(),
        ],
        &[],
    );
    assert_ok(&o, "clprism run --lib 'with space/libOpenCL.so'");
    assert_eq!(read_log(&log).len(), launches_printed(&o));
    // the LD_PRELOAD entry has no space and is the same file
    let o = out(
        &[
            "--lib",
            lib.to_str().unwrap(),
            "--mode",
            "off",
            "sh",
            "-c",
            "echo \"$LD_PRELOAD\"; stat -L -c %i \"$LD_PRELOAD\"",
        ],
        &[],
    );
    assert_ok(&o, "clprism run sh with a spaced --lib");
    let s = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = s.lines().collect();
    assert!(!lines[0].contains(' '), "LD_PRELOAD={}", lines[0]);
    use std::os::unix::fs::MetadataExt;
    assert_eq!(lines[1], lib.metadata().unwrap().ino().to_string());
}
