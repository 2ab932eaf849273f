//! Shared helpers of the integration tests: paths, building the C programs, running them
//! natively and under clprism, reading logs.
#![allow(dead_code)]

pub mod remote;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// Repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The interposer library under test: `CLPRISM_TEST_LIB` or target/{release,debug}/libOpenCL.so
/// (whichever is newer).
pub fn lib() -> PathBuf {
    if let Ok(p) = std::env::var("CLPRISM_TEST_LIB") {
        return PathBuf::from(p);
    }
    let cands = ["target/debug/libOpenCL.so", "target/release/libOpenCL.so"];
    let best = cands
        .iter()
        .map(|c| root().join(c))
        .filter(|p| p.exists())
        .max_by_key(|p| p.metadata().and_then(|m| m.modified()).ok());
    best.expect(
        "libOpenCL.so not built: run `cargo build` before `cargo test` (scripts/test.sh does)",
    )
}

/// Builds examples/ (and bench/) once per test process; returns examples/build.
pub fn examples() -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let out = Command::new("make")
            .args(["-s", "-C"])
            .arg(root().join("examples"))
            .output()
            .expect("make");
        assert!(
            out.status.success(),
            "make -C examples failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    });
    root().join("examples/build")
}

/// Compiles one C test program from tests/c/ into target/ctests/ (once per name).
pub fn c_program(name: &str) -> PathBuf {
    // one compile at a time in this process: parallel tests of one file would race on the
    // rename and exec a file being replaced (ETXTBSY)
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let dir = root().join("target/ctests");
    std::fs::create_dir_all(&dir).unwrap();
    let exe = dir.join(name);
    let src = root().join(format!("tests/c/{name}.c"));
    let stale = match (exe.metadata(), src.metadata()) {
        (Ok(e), Ok(s)) => e.modified().unwrap() < s.modified().unwrap(),
        _ => true,
    };
    if stale {
        let tmp = dir.join(format!("{name}.{}", std::process::id()));
        let out = Command::new("cc")
            .args(["-O2", "-Wall", "-o"])
            .arg(&tmp)
            .arg(&src)
            .args(["-lOpenCL", "-lpthread"])
            .output()
            .expect("cc");
        assert!(
            out.status.success(),
            "compiling {name}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::fs::rename(&tmp, &exe).unwrap();
    }
    exe
}

/// A fresh scratch directory for one test.
pub fn scratch(test: &str) -> PathBuf {
    let d = root().join("target/test-scratch").join(test);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// PoCL devices used by the tests unless the caller sets `POCL_DEVICES`.
pub const POCL: &str = "pthread pthread";

/// How a program is run.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Via {
    /// Straight against the system loader.
    Native,
    /// `LD_PRELOAD=libOpenCL.so` with the given `CLPRISM_MODE`.
    Preload(&'static str),
}

/// Runs `exe args` with `env`, via the interposer or not. Clears inherited CLPRISM_* variables.
pub fn run(exe: &Path, args: &[&str], via: Via, env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(exe);
    c.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("CLPRISM_") && k != "CLPRISM_TEST_LIB" {
            c.env_remove(k);
        }
    }
    c.env(
        "POCL_DEVICES",
        std::env::var("POCL_DEVICES").unwrap_or_else(|_| POCL.into()),
    );
    if let Via::Preload(mode) = via {
        c.env("LD_PRELOAD", lib()).env("CLPRISM_MODE", mode);
    }
    // balance mode, preloaded or loaded as an ocl-icd layer with CLPRISM_MODE in `env`
    let balance = matches!(via, Via::Preload("balance"))
        || env
            .iter()
            .any(|&(k, v)| k == "CLPRISM_MODE" && v == "balance");
    if balance {
        // the tests exercise the splitting machinery: split every launch (a test of
        // CLPRISM_SPLIT=auto passes its own value), and open the devices at the first
        // launch, so no launch is forwarded because they are still opening (a test of
        // CLPRISM_BALANCE_EARLY passes its own value)
        c.env("CLPRISM_SPLIT", "always")
            .env("CLPRISM_BALANCE_EARLY", "off");
    }
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("spawn")
}

/// Parses a JSONL log into its launch records, the references of a compact log (schema
/// `clprism.launch/2`) resolved against its emulation definition lines, which are left out
/// as are the device definition lines (see [`read_log_raw`] for the lines as written).
pub fn read_log(p: &Path) -> Vec<Value> {
    expand_values(read_log_raw(p))
}

/// Parses a JSONL log, every line as written.
pub fn read_log_raw(p: &Path) -> Vec<Value> {
    let text =
        std::fs::read_to_string(p).unwrap_or_else(|e| panic!("reading log {}: {e}", p.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad JSON line {l}: {e}")))
        .collect()
}

/// The launch records of a log's lines with their `emulation` / `projection` references
/// replaced by the definition's objects (done on the JSON values, independently of
/// `log::schema`'s typed resolution): the definition's fields, then the reference's
/// `status` and `reused` (emulation) or `launch_device_profile` (projection); the
/// reference-only fields are dropped.
pub fn expand_values(lines: Vec<Value>) -> Vec<Value> {
    let mut defs = std::collections::HashMap::new();
    let mut out = Vec::new();
    for v in lines {
        if v.get("record").is_some_and(|r| r == "device") {
            // a device definition line: no launch, nothing to resolve here
            continue;
        }
        if v.get("record").is_some() {
            assert_eq!(v["record"], "emulation", "unknown record kind: {v}");
            defs.insert((v["pid"].as_u64(), v["key"].as_u64()), v);
        } else {
            out.push(v);
        }
    }
    for v in out.iter_mut() {
        let pid = v["pid"].as_u64();
        for (part, keep) in [
            ("emulation", &["status", "reused"][..]),
            ("projection", &["launch_device_profile"][..]),
        ] {
            let Some(key) = v
                .get(part)
                .and_then(|o| o.get("key"))
                .and_then(Value::as_u64)
            else {
                continue;
            };
            let def = defs
                .get(&(pid, Some(key)))
                .unwrap_or_else(|| panic!("no definition of key {key} before {v}"));
            let mut full = def[part].as_object().cloned().unwrap_or_default();
            for k in keep {
                if let Some(x) = v[part].get(*k) {
                    full.insert(k.to_string(), x.clone());
                }
            }
            v[part] = Value::Object(full);
        }
    }
    out
}

/// The `kernels: N` count a program printed.
pub fn launches_printed(out: &Output) -> usize {
    let s = String::from_utf8_lossy(&out.stdout);
    s.lines()
        .find_map(|l| l.strip_prefix("kernels: "))
        .unwrap_or_else(|| panic!("no 'kernels: N' line in output:\n{s}"))
        .trim()
        .parse()
        .unwrap()
}

/// Kernel function names declared in an OpenCL C file.
pub fn kernel_names(cl: &Path) -> Vec<String> {
    let src = std::fs::read_to_string(cl).unwrap();
    let mut names = Vec::new();
    let toks: Vec<&str> = src
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|t| !t.is_empty())
        .collect();
    for w in toks.windows(3) {
        if (w[0] == "__kernel" || w[0] == "kernel") && w[1] == "void" {
            names.push(w[2].to_string());
        }
    }
    names
}

/// Asserts a process succeeded, printing its output if not.
pub fn assert_ok(out: &Output, what: &str) {
    assert!(
        out.status.success(),
        "{what} failed ({:?})\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The example programs (all but the multi-threaded one), from examples/kernels/*.cl.
pub fn example_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(root().join("examples/kernels"))
        .unwrap()
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            e.path()
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
        })
        .filter(|n| n != "mt_launch")
        .collect();
    v.sort();
    v
}

/// The devices (indices among the launch's participants) whose chunks ran in a balance-mode
/// launch record.
#[allow(dead_code)]
pub fn chunk_devices(rec: &Value) -> std::collections::HashSet<u64> {
    rec["schedule"]["chunks"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["device"].as_u64())
        .collect()
}

/// Asserts a balance-mode launch record was split over at least two devices.
#[allow(dead_code)]
pub fn assert_split(rec: &Value) {
    let s = &rec["schedule"];
    assert!(s["fallback"].is_null(), "launch not split: {s}");
    let used = chunk_devices(rec);
    assert!(used.len() >= 2, "chunks ran on {used:?} only: {s}");
}

/// The emulator front end's options from the environment the test set (`CLPRISM_TOOLCHAIN`,
/// `CLPRISM_CACHE`, `PATH`, `XDG_CACHE_HOME`, `HOME`), read at each call.
pub fn fe() -> OpenCL::emu::FrontendOptions {
    let v = |k: &str| std::env::var_os(k).map(PathBuf::from);
    OpenCL::emu::FrontendOptions::resolve(v("CLPRISM_TOOLCHAIN"), v("CLPRISM_CACHE"), |k| {
        std::env::var_os(k)
    })
}

/// Whether a balance-mode `schedule` record went through the balanced path, or was forwarded
/// only because every other device was still draining abandoned straggler chunks of an
/// earlier launch: on a loaded machine a launch can meet that transient state, and a launch
/// that only the app's device can take is forwarded (`exec::launch::plan`).
pub fn balanced_or_stragglers_draining(s: &Value) -> bool {
    match s["fallback"].as_str() {
        None => true,
        Some(f) => {
            f.starts_with("kept whole on the app's device: no other device can take chunks now")
                && f.contains("abandoned straggler")
        }
    }
}

/// Runs the C test program `exe` natively and under balance mode with `CLPRISM_SPLIT=always`
/// over `devices` (PoCL names) with the fixed shares `scheduler` (`CLPRISM_SCHEDULER`), in
/// scratch directory `dir`; `args(out)` gives the program's arguments for the output file
/// `out`. Asserts both runs pass and write the same bytes; returns the balanced run's output
/// and its log records.
pub fn native_and_split(
    exe: &Path,
    args: impl Fn(&str) -> Vec<String>,
    devices: &str,
    scheduler: &str,
    dir: &Path,
) -> (Output, Vec<Value>) {
    native_and_split_with(exe, args, (devices, scheduler), dir, &[])
}

/// [`native_and_split`] with `extra` variables for the balanced run (`(devices, scheduler)`
/// as there).
pub fn native_and_split_with(
    exe: &Path,
    args: impl Fn(&str) -> Vec<String>,
    (devices, scheduler): (&str, &str),
    dir: &Path,
    extra: &[(&str, &str)],
) -> (Output, Vec<Value>) {
    let (nat, bal, log) = (
        dir.join("native.bin"),
        dir.join("balanced.bin"),
        dir.join("log.jsonl"),
    );
    let a_nat = args(nat.to_str().unwrap());
    let native = run(
        exe,
        &a_nat.iter().map(String::as_str).collect::<Vec<_>>(),
        Via::Native,
        &[("POCL_DEVICES", devices)],
    );
    assert_ok(&native, "native");
    let a_bal = args(bal.to_str().unwrap());
    let out = run(
        exe,
        &a_bal.iter().map(String::as_str).collect::<Vec<_>>(),
        Via::Preload("balance"),
        &[
            ("POCL_DEVICES", devices),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_SPLIT", "always"),
            ("CLPRISM_BALANCE_EARLY", "off"),
            ("CLPRISM_SCHEDULER", scheduler),
            ("CLPRISM_CACHE", dir.join("cache").to_str().unwrap()),
        ]
        .into_iter()
        .chain(extra.iter().copied())
        .collect::<Vec<_>>(),
    );
    assert_ok(&out, "balanced");
    assert!(
        std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
        "what the app read differs from the native run"
    );
    let recs = read_log(&log);
    (out, recs)
}
