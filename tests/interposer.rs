//! Issue 2 acceptance tests: transparency and the per-kernel log, with real OpenCL (PoCL) and
//! real programs run under `LD_PRELOAD` and as `libOpenCL.so.1`.

mod common;
use common::*;
use std::collections::HashSet;

/// `clinfo` prints the same with and without the interposer, in both setups.
#[test]
fn clinfo_is_identical() {
    let clinfo = std::path::Path::new("/usr/bin/clinfo");
    assert!(
        clinfo.exists(),
        "clinfo is not installed (scripts/test.sh installs it)"
    );
    let d = scratch("clinfo");
    let log = d.join("log.jsonl");
    let env = [("CLPRISM_LOG", log.to_str().unwrap())];
    let native = run(clinfo, &[], Via::Native, &[]);
    assert_ok(&native, "clinfo");
    for mode in ["off", "log"] {
        let pre = run(clinfo, &[], Via::Preload(mode), &env);
        assert_ok(&pre, "clinfo under clprism");
        assert_eq!(
            String::from_utf8_lossy(&native.stdout),
            String::from_utf8_lossy(&pre.stdout),
            "mode {mode}"
        );
        assert_eq!(
            pre.stderr, native.stderr,
            "clprism added stderr output in mode {mode}"
        );
    }
    let rep = replaced_dir(&d);
    let out = run_replaced(clinfo, &[], &rep, &env);
    assert_ok(&out, "clinfo with clprism as libOpenCL.so.1");
    assert_eq!(out.stdout, native.stdout);
    assert_eq!(out.stderr, native.stderr);
}

/// A directory holding clprism as `libOpenCL.so.1`.
fn replaced_dir(d: &std::path::Path) -> std::path::PathBuf {
    let rep = d.join("libdir");
    std::fs::create_dir_all(&rep).unwrap();
    let link = rep.join("libOpenCL.so.1");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(lib(), &link).unwrap();
    rep
}

fn run_replaced(
    exe: &std::path::Path,
    args: &[&str],
    rep: &std::path::Path,
    env: &[(&str, &str)],
) -> std::process::Output {
    let mut e: Vec<(&str, &str)> = vec![("LD_LIBRARY_PATH", rep.to_str().unwrap())];
    e.extend_from_slice(env);
    run(exe, args, Via::Native, &e)
}

/// Checks a log against a program's output: one record per launch, names from its kernels,
/// consistent sizes, sequence numbers 0..N-1 each once.
fn check_log(records: &[serde_json::Value], launches: usize, kernels: &[String], what: &str) {
    assert_eq!(
        records.len(),
        launches,
        "{what}: {} records for {launches} launches",
        records.len()
    );
    let mut seqs = HashSet::new();
    for r in records {
        assert_eq!(r["schema"], OpenCL::log::SCHEMA);
        let name = r["kernel"].as_str().unwrap();
        assert!(
            kernels.iter().any(|k| k == name),
            "{what}: unexpected kernel {name} (kernels: {kernels:?})"
        );
        assert!(
            seqs.insert(r["seq"].as_u64().unwrap()),
            "{what}: duplicate seq"
        );
        let dim = r["work_dim"].as_u64().unwrap() as usize;
        let global: Vec<u64> = r["global"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect();
        assert_eq!(global.len(), dim);
        assert!(global.iter().all(|g| *g > 0));
        if let Some(local) = r["local"].as_array() {
            for (g, l) in global.iter().zip(local) {
                assert_eq!(
                    g % l.as_u64().unwrap(),
                    0,
                    "{what}: global not a multiple of local in {r}"
                );
            }
        }
        assert_eq!(r["status"], "complete", "{what}: {r}");
        assert!(
            r["device_ns"].as_u64().is_some(),
            "{what}: no device time in {r}"
        );
        assert_eq!(r["program"].as_str().unwrap().len(), 16);
    }
    assert_eq!(
        seqs,
        (0..launches as u64).collect::<HashSet<_>>(),
        "{what}: seq numbers"
    );
}

/// Every example passes natively and under clprism in off and log modes, with byte-identical
/// output; the log has exactly one record per launch with the right kernel names and sizes.
#[test]
fn examples_pass_in_off_and_log_modes() {
    let build = examples();
    let d = scratch("examples");
    for name in example_names() {
        let exe = build.join(&name);
        let kernels = kernel_names(&root().join(format!("examples/kernels/{name}.cl")));
        let dump = |tag: &str| d.join(format!("{name}.{tag}.bin"));
        let native = run(
            &exe,
            &["--dump", dump("native").to_str().unwrap()],
            Via::Native,
            &[],
        );
        assert_ok(&native, &format!("{name} native"));
        let launches = launches_printed(&native);
        assert!(launches > 0);

        let off = run(
            &exe,
            &["--dump", dump("off").to_str().unwrap()],
            Via::Preload("off"),
            &[("CLPRISM_LOG", d.join("off.jsonl").to_str().unwrap())],
        );
        assert_ok(&off, &format!("{name} off"));
        assert!(
            !d.join("off.jsonl").exists(),
            "off mode must not write a log"
        );
        assert_eq!(
            String::from_utf8_lossy(&off.stderr),
            String::from_utf8_lossy(&native.stderr),
            "{name}: off mode changed stderr"
        );

        let log = d.join(format!("{name}.jsonl"));
        let logged = run(
            &exe,
            &["--dump", dump("log").to_str().unwrap()],
            Via::Preload("log"),
            // check_log wants every launch's time: time all, not a sample
            &[
                ("CLPRISM_LOG", log.to_str().unwrap()),
                ("CLPRISM_DEVICE_TIMING", "all"),
            ],
        );
        assert_ok(&logged, &format!("{name} log"));
        assert_eq!(launches_printed(&logged), launches);
        let n = std::fs::read(dump("native")).unwrap();
        assert!(!n.is_empty(), "{name}: empty dump");
        assert!(
            std::fs::read(dump("off")).unwrap() == n,
            "{name}: off-mode output differs from native"
        );
        assert!(
            std::fs::read(dump("log")).unwrap() == n,
            "{name}: log-mode output differs from native"
        );
        check_log(&read_log(&log), launches, &kernels, &name);
        // the summary names every kernel that ran
        let err = String::from_utf8_lossy(&logged.stderr);
        assert!(
            err.contains("clprism summary"),
            "{name}: no summary on stderr"
        );
        for r in read_log(&log) {
            assert!(err.contains(r["kernel"].as_str().unwrap()));
        }
    }
}

/// Launch shapes, failed enqueues and clEnqueueTask are logged exactly as the app issued them;
/// queue properties and profiling stay as the app asked.
#[test]
fn launch_shapes_are_logged_exactly() {
    let exe = c_program("launch_shapes");
    let d = scratch("shapes");
    let log = d.join("l.jsonl");
    let out = run(
        &exe,
        &[],
        Via::Preload("log"),
        &[("CLPRISM_LOG", log.to_str().unwrap())],
    );
    assert_ok(&out, "launch_shapes under clprism");
    let native = run(&exe, &[], Via::Native, &[]);
    assert_ok(&native, "launch_shapes native");
    assert_eq!(out.stdout, native.stdout);
    let mut recs = read_log(&log);
    recs.sort_by_key(|r| r["seq"].as_u64().unwrap());
    let lines: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("launch "))
        .map(String::from)
        .collect();
    assert_eq!(recs.len(), lines.len());
    let fmt = |v: &serde_json::Value| match v.as_array() {
        None => "null".to_string(),
        Some(a) => a
            .iter()
            .map(|x| x.to_string())
            .collect::<Vec<_>>()
            .join(","),
    };
    for (r, line) in recs.iter().zip(&lines) {
        let ret = if r["status"] == "enqueue_failed" {
            r["error_code"].as_i64().unwrap()
        } else {
            0
        };
        let got = format!(
            "launch kernel={} dim={} global={} local={} offset={} ret={}",
            r["kernel"].as_str().unwrap(),
            r["work_dim"],
            fmt(&r["global"]),
            fmt(&r["local"]),
            fmt(&r["offset"]),
            ret
        );
        assert_eq!(&got, line);
    }
}

/// clprism put in place as libOpenCL.so.1 serves a program linked against the real loader.
#[test]
fn works_as_libopencl_so_1() {
    let build = examples();
    let d = scratch("replaced");
    let rep = replaced_dir(&d);
    let exe = build.join("matmul_local");
    let log = d.join("l.jsonl");
    let env = [
        ("CLPRISM_LOG", log.to_str().unwrap()),
        ("CLPRISM_DEVICE_TIMING", "all"),
    ];
    let out = run_replaced(&exe, &[], &rep, &env);
    assert_ok(&out, "matmul_local with clprism as libOpenCL.so.1");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("no version information"), "{err}");
    assert!(
        err.contains("clprism summary"),
        "the interposer was not used: {err}"
    );
    let kernels = kernel_names(&root().join("examples/kernels/matmul_local.cl"));
    check_log(
        &read_log(&log),
        launches_printed(&out),
        &kernels,
        "replaced",
    );
}

/// Several threads creating queues and launching concurrently: passes, no record lost or
/// duplicated.
#[test]
fn multithreaded_launches_lose_no_record() {
    let exe = examples().join("mt_launch");
    let d = scratch("mt");
    let log = d.join("l.jsonl");
    let out = run(
        &exe,
        &["8", "100"],
        Via::Preload("log"),
        &[
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_DEVICE_TIMING", "all"),
        ],
    );
    assert_ok(&out, "mt_launch");
    let n = launches_printed(&out);
    assert_eq!(n, 8 * 100 * 2, "mt_launch runs private and shared queues");
    let kernels = kernel_names(&root().join("examples/kernels/mt_launch.cl"));
    check_log(&read_log(&log), n, &kernels, "mt_launch");
}

/// A malformed variable gives exactly one warning line and the default; a mode not built yet
/// gives one honest warning and log mode.
#[test]
fn malformed_variable_warns_once() {
    let exe = c_program("launch_shapes");
    let d = scratch("malformed");
    for (var, val) in [("CLPRISM_MODE", "turbo"), ("CLPRISM_VERIFY", "maybe")] {
        let log = d.join(format!("{var}.jsonl"));
        let out = run(
            &exe,
            &[],
            Via::Native,
            &[
                ("LD_PRELOAD", lib().to_str().unwrap()),
                (var, val),
                ("CLPRISM_LOG", log.to_str().unwrap()),
                ("CLPRISM_SUMMARY", "off"),
            ],
        );
        assert_ok(&out, var);
        let err = String::from_utf8_lossy(&out.stderr);
        let warnings: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("clprism: warning"))
            .collect();
        assert_eq!(warnings.len(), 1, "{var}: {err}");
        assert!(
            warnings[0].contains(var) && warnings[0].contains(val),
            "{}",
            warnings[0]
        );
        assert!(
            !read_log(&log).is_empty(),
            "{var}: default log mode must still log"
        );
    }
}

/// Bad `CLPRISM_REAL_OPENCL` values give a clear error, never a hang or a crash.
#[test]
fn bad_real_library_gives_clear_error() {
    let exe = c_program("launch_shapes");
    let me = lib();
    let me = me.to_str().unwrap();
    let libz = [
        "/usr/lib/x86_64-linux-gnu/libz.so.1",
        "/lib/x86_64-linux-gnu/libz.so.1",
    ]
    .into_iter()
    .find(|p| std::path::Path::new(p).exists())
    .expect("libz.so.1");
    for (path, reason) in [
        (me, "clprism itself"),
        ("/nonexistent/libOpenCL.so.1", "does not exist"),
        (libz, "no OpenCL entry points"),
    ] {
        let out = run(
            &exe,
            &[],
            Via::Preload("log"),
            &[("CLPRISM_REAL_OPENCL", path), ("CLPRISM_LOG", "off")],
        );
        assert!(out.status.code().is_some(), "{path}: killed by a signal");
        let err = String::from_utf8_lossy(&out.stderr);
        let errors: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("clprism: error"))
            .collect();
        assert_eq!(errors.len(), 1, "{path}: {err}");
        assert!(errors[0].contains(reason), "{path}: {}", errors[0]);
        // the app sees the loader's "no platform" error and exits with its own error path
        assert_eq!(out.status.code(), Some(2), "{path}");
    }
}

/// Loader-layer mode: ocl-icd loads clprism through `OPENCL_LAYERS`; an example runs in log
/// and balance modes with native output and one record per launch.
#[test]
fn works_as_an_ocl_icd_layer() {
    let build = examples();
    let d = scratch("layer");
    let exe = build.join("matmul_global");
    let native_dump = d.join("n.bin");
    let native = run(
        &exe,
        &["--dump", native_dump.to_str().unwrap()],
        Via::Native,
        &[("POCL_DEVICES", "pthread pthread basic")],
    );
    assert_ok(&native, "native");
    let kernels = kernel_names(&root().join("examples/kernels/matmul_global.cl"));
    for mode in ["log", "balance"] {
        let log = d.join(format!("{mode}.jsonl"));
        let dump = d.join(format!("{mode}.bin"));
        let out = run(
            &exe,
            &["--dump", dump.to_str().unwrap()],
            Via::Native,
            &[
                ("POCL_DEVICES", "pthread pthread basic"),
                ("OPENCL_LAYERS", lib().to_str().unwrap()),
                ("CLPRISM_MODE", mode),
                ("CLPRISM_LOG", log.to_str().unwrap()),
                ("CLPRISM_DEVICE_TIMING", "all"),
                // matmul computes floating point and the app's device (PoCL's `basic`) has
                // no twin: split it over the `pthread` devices too, as the test is about
                // the layer, not about byte-identity across compilers
                ("CLPRISM_BALANCE_FLOAT", "any"),
            ],
        );
        assert_ok(&out, &format!("layer mode {mode}"));
        assert!(
            std::fs::read(&dump).unwrap() == std::fs::read(&native_dump).unwrap(),
            "{mode}: output differs"
        );
        let recs = read_log(&log);
        check_log(&recs, launches_printed(&native), &kernels, mode);
        if mode == "balance" {
            assert!(
                recs.iter()
                    .all(|r| balanced_or_stragglers_draining(&r["schedule"])),
                "balance fell back in layer mode"
            );
        }
    }
}

/// `CLPRISM_DEVICE_TIMING`: `sample:N` times the first launch of a kernel object and every
/// N-th after it, `off` times none; untimed launches still get one record each and the
/// summary marks estimated totals.
#[test]
fn device_timing_sample_and_off() {
    let exe = examples().join("floyd_warshall");
    let d = scratch("device_timing");
    for (timing, every) in [("sample:10", Some(10usize)), ("off", None)] {
        let log = d.join(format!("{}.jsonl", timing.replace(':', "_")));
        let out = run(
            &exe,
            &["64"],
            Via::Preload("log"),
            &[
                ("CLPRISM_LOG", log.to_str().unwrap()),
                ("CLPRISM_DEVICE_TIMING", timing),
            ],
        );
        assert_ok(&out, timing);
        let n = launches_printed(&out);
        let recs = read_log(&log);
        assert_eq!(recs.len(), n, "{timing}: one record per launch");
        let timed = recs.iter().filter(|r| r["device_ns"].is_u64()).count();
        let untimed = recs.iter().filter(|r| r["status"] == "untimed").count();
        assert_eq!(
            timed + untimed,
            n,
            "{timing}: every record timed or untimed"
        );
        // floyd_warshall launches one kernel object n times
        let want = every.map_or(0, |e| n.div_ceil(e));
        assert_eq!(timed, want, "{timing}: timed launches");
        let err = String::from_utf8_lossy(&out.stderr);
        if every.is_some() {
            assert!(err.contains("~ estimated"), "{timing}: {err}");
            let line = format!("~ floyd_pass: timed {want} of {n}, total ");
            assert!(err.contains(&line), "{timing}: {err}");
        }
    }
}
