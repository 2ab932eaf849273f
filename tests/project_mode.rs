//! Project mode (issue 3 item 5, issue 4 item 5) with real PoCL and real programs: the apps
//! see nothing, every launch record carries an `emulation` and a `projection` record, the
//! emulation sees the buffers as they were before the launch, repeated launches reuse, and a
//! missing toolchain is a reason in the record, not a failure.

mod common;
use common::*;
use serde_json::Value;
use std::collections::HashMap;

/// The PoCL devices of these tests: `basic` and `pthread` are two different profiled devices.
const DEVICES: &str = "pthread pthread basic";

/// Ranks are standard competition ranks of `projected_ns`: 1 for the fastest, equal times
/// share a rank, every rank in 1..=N.
fn check_ranks(p: &Value, what: &str) {
    let devs = p["devices"]
        .as_array()
        .unwrap_or_else(|| panic!("{what}: {p}"));
    assert!(!devs.is_empty(), "{what}: no projected device: {p}");
    let t: Vec<f64> = devs
        .iter()
        .map(|d| d["projected_ns"].as_f64().unwrap())
        .collect();
    for (i, d) in devs.iter().enumerate() {
        let rank = d["rank"].as_u64().unwrap();
        assert!(
            (1..=devs.len() as u64).contains(&rank),
            "{what}: rank {rank}"
        );
        let faster = t.iter().filter(|x| **x < t[i]).count() as u64;
        assert_eq!(rank, faster + 1, "{what}: rank of {}", d["device"]);
        assert!(t[i] > 0.0 && t[i].is_finite(), "{what}: time {}", t[i]);
        for k in ["t_compute_ns", "t_global_ns", "t_local_ns", "bound"] {
            assert!(d.get(k).is_some(), "{what}: no {k}");
        }
    }
    assert!(devs.iter().any(|d| d["rank"] == 1));
}

/// Program output without its wall-clock `time_ms=` fields.
fn untimed(out: &[u8]) -> String {
    String::from_utf8_lossy(out)
        .split_whitespace()
        .filter(|w| !w.starts_with("time_ms="))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every example gives byte-identical output under project mode; every record has an
/// emulation (ok or reused) and a ranked projection; a repeated (kernel, shape) says reused.
#[test]
fn examples_are_projected_and_unchanged() {
    let build = examples();
    let d = scratch("project_examples");
    let mut reused_seen = 0;
    for name in example_names() {
        let exe = build.join(&name);
        let dump = |tag: &str| d.join(format!("{name}.{tag}.bin"));
        let env_dev = [("POCL_DEVICES", DEVICES)];
        let native = run(
            &exe,
            &["--dump", dump("native").to_str().unwrap()],
            Via::Native,
            &env_dev,
        );
        assert_ok(&native, &format!("{name} native"));
        let log = d.join(format!("{name}.jsonl"));
        let pr = run(
            &exe,
            &["--dump", dump("project").to_str().unwrap()],
            Via::Preload("project"),
            &[
                ("POCL_DEVICES", DEVICES),
                ("CLPRISM_LOG", log.to_str().unwrap()),
            ],
        );
        assert_ok(&pr, &format!("{name} project"));
        assert_eq!(
            untimed(&pr.stdout),
            untimed(&native.stdout),
            "{name}: stdout differs"
        );
        assert!(
            std::fs::read(dump("project")).unwrap() == std::fs::read(dump("native")).unwrap(),
            "{name}: project-mode output differs from native"
        );
        let recs = read_log(&log);
        assert_eq!(recs.len(), launches_printed(&native), "{name}: records");
        let mut first_of: HashMap<String, u64> = HashMap::new();
        for r in &recs {
            let what = format!("{name} seq {}", r["seq"]);
            assert_eq!(r["mode"], "project");
            let e = &r["emulation"];
            let st = e["status"]
                .as_str()
                .unwrap_or_else(|| panic!("{what}: {r}"));
            assert!(
                st == "ok" || st == "reused",
                "{what}: emulation {st}: {}",
                e["reason"]
            );
            assert!(e.get("reason").is_none(), "{what}: reason on success");
            assert_eq!(e["reused"].as_bool().unwrap(), st == "reused");
            let stats = &e["stats"];
            assert!(stats["instructions"]["int"]["lane"].as_u64().unwrap() > 0);
            assert!(stats["emulation_ns"].as_u64().unwrap() > 0);
            let p = &r["projection"];
            check_ranks(p, &what);
            // the launch device is PoCL's: its profile is named
            let ldp = p["launch_device_profile"].as_str().unwrap_or_else(|| {
                panic!(
                    "{what}: no launch_device_profile: {}",
                    p["launch_device_profile"]
                )
            });
            assert!(ldp.starts_with("pocl-"), "{what}: {ldp}");
            // same kernel and shape as an earlier launch of this run: reused
            let shape = format!("{}{}{}", r["kernel"], r["global"], r["local"]);
            let seq = r["seq"].as_u64().unwrap();
            match first_of.get(&shape) {
                Some(first) if *first < seq => {
                    assert_eq!(st, "reused", "{what}: repeated {shape} not reused");
                    reused_seen += 1;
                }
                _ => {
                    first_of.insert(shape, seq);
                }
            }
        }
        // the first launch of each shape was emulated, not reused
        for seq in first_of.values() {
            let r = recs.iter().find(|r| r["seq"] == *seq).unwrap();
            assert_eq!(r["emulation"]["status"], "ok", "{name}: first launch {r}");
        }
        let err = String::from_utf8_lossy(&pr.stderr);
        assert!(
            err.contains("projected"),
            "{name}: summary lacks projection:\n{err}"
        );
    }
    assert!(reused_seen > 0, "no example repeated a launch shape");
}

/// The emulated work-group saw the input as it was before the launch: the kernel reads its
/// loop counts from a buffer and then zeroes it; the logged instruction counts equal a
/// reference emulation on the pre-launch contents and differ from one on the post-launch
/// contents.
#[test]
fn emulation_sees_pre_launch_contents() {
    use OpenCL::emu::*;
    let exe = c_program("inplace_loop");
    let d = scratch("project_inplace");
    let log = d.join("l.jsonl");
    let out = run(
        &exe,
        &[],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", DEVICES),
            ("CLPRISM_LOG", log.to_str().unwrap()),
        ],
    );
    assert_ok(&out, "inplace_loop under project mode");
    let recs = read_log(&log);
    assert_eq!(recs.len(), 1);
    let e = &recs[0]["emulation"];
    assert_eq!(e["status"], "ok", "{e}");
    // reference emulations (same kernel, same NDRange: 256 work-items, groups of 64)
    let src = run(&exe, &["--print-source"], Via::Native, &[]);
    assert_ok(&src, "inplace_loop --print-source");
    let m = load_module(&compile_source(&String::from_utf8_lossy(&src.stdout), "", &fe()).unwrap())
        .unwrap();
    let shape = LaunchShape::new(&[256], &[64], None);
    let reference = |counts: &dyn Fn(u32) -> u32| {
        let data: Vec<u8> = (0..256u32).flat_map(|i| counts(i).to_le_bytes()).collect();
        let mut args = vec![ArgValue::Buffer(data), ArgValue::Buffer(vec![0; 1024])];
        emulate(
            &m,
            "spin",
            &shape,
            [0, 0, 0],
            &mut args,
            &EmuConfig::default(),
        )
        .unwrap()
    };
    // the host program's counts: 20 + (7 i mod 50)
    let pre = reference(&|i| 20 + (i * 7) % 50);
    let post = reference(&|_| 0);
    let logged = &e["stats"]["instructions"];
    assert_eq!(*logged, serde_json::to_value(pre.instructions).unwrap());
    assert_ne!(*logged, serde_json::to_value(post.instructions).unwrap());
    assert_eq!(
        e["stats"]["global_loads"],
        serde_json::to_value(pre.global_loads).unwrap()
    );
}

/// No toolchain and an empty cache: the app runs as natively; the record says unavailable
/// and why; later launches of the same key reuse that answer.
#[test]
fn no_toolchain_is_a_reason() {
    let exe = c_program("inplace_loop");
    let d = scratch("project_notoolchain");
    let tc = d.join("empty-toolchain");
    let cache = d.join("empty-cache");
    std::fs::create_dir_all(&tc).unwrap();
    std::fs::create_dir_all(&cache).unwrap();
    let log = d.join("l.jsonl");
    let native = run(&exe, &[], Via::Native, &[("POCL_DEVICES", DEVICES)]);
    assert_ok(&native, "native");
    let out = run(
        &exe,
        &[],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", DEVICES),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_TOOLCHAIN", tc.to_str().unwrap()),
            ("CLPRISM_CACHE", cache.to_str().unwrap()),
        ],
    );
    assert_ok(&out, "inplace_loop without toolchain");
    assert_eq!(out.stdout, native.stdout);
    let recs = read_log(&log);
    assert_eq!(recs.len(), 1);
    let e = &recs[0]["emulation"];
    assert_eq!(e["status"], "unavailable", "{e}");
    assert_eq!(e["reused"], false);
    assert!(e.get("stats").is_none());
    let reason = e["reason"].as_str().unwrap();
    assert!(reason.contains("toolchain"), "{reason}");
    assert!(recs[0].get("projection").is_none());
    assert_eq!(recs[0]["status"], "complete");
}

/// A snapshot cap below the buffers' size: the launch is not emulated, the reason names
/// the variable, the app is unaffected.
#[test]
fn snapshot_cap_is_a_reason() {
    let exe = c_program("inplace_loop");
    let d = scratch("project_cap");
    let log = d.join("l.jsonl");
    let out = run(
        &exe,
        &[],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", DEVICES),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_EMU_SNAPSHOT_MAX", "512"),
        ],
    );
    assert_ok(&out, "inplace_loop with a 512-byte snapshot cap");
    let recs = read_log(&log);
    let e = &recs[0]["emulation"];
    assert_eq!(e["status"], "unavailable", "{e}");
    // the in-place buffer (1 KiB, read and written) must be copied; the output, only
    // written, needs no copy
    assert!(
        e["reason"]
            .as_str()
            .unwrap()
            .contains("CLPRISM_EMU_SNAPSHOT_MAX"),
        "{e}"
    );
}

/// Many threads launching the same kernel and shape at once: one emulation, every other
/// record reused, none lost or refused.
#[test]
fn concurrent_launches_wait_for_one_emulation() {
    let exe = examples().join("mt_launch");
    let d = scratch("project_mt");
    let log = d.join("l.jsonl");
    let out = run(
        &exe,
        &["4", "50", "both"],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", DEVICES),
            ("CLPRISM_LOG", log.to_str().unwrap()),
        ],
    );
    assert_ok(&out, "mt_launch under project mode");
    let recs = read_log(&log);
    assert_eq!(recs.len(), launches_printed(&out));
    let mut ok = 0;
    for r in &recs {
        let st = r["emulation"]["status"].as_str().unwrap();
        assert!(st == "ok" || st == "reused", "{r}");
        ok += (st == "ok") as usize;
        check_ranks(&r["projection"], "mt_launch");
    }
    assert_eq!(ok, 1, "one emulation for one kernel and shape");
}

/// `clprism emulate --project --profiles DIR`: the statistics keep their top-level keys and
/// values, and a ranked `projection` covers exactly the profiles of DIR.
#[test]
fn emulate_cli_projects() {
    let d = scratch("project_cli");
    let prof = d.join("profiles");
    std::fs::create_dir_all(&prof).unwrap();
    for p in ["pocl-basic.json", "pocl-pthread.json", "h200.json"] {
        std::fs::copy(root().join("profiles").join(p), prof.join(p)).unwrap();
    }
    let args = [
        "emulate",
        "examples/kernels/reduction.cl",
        "--kernel",
        "reduce",
        "--global",
        "65536",
        "--local",
        "256",
        "--arg",
        "buf:524288:fill=iota",
        "--arg",
        "buf:1024",
        "--arg",
        "local:1024",
        "--arg",
        "uint:131072",
    ];
    let cli = |extra: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_clprism"))
            .current_dir(root())
            .args(args)
            .args(extra)
            .output()
            .unwrap();
        assert_ok(&out, "clprism emulate");
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    let plain = cli(&[]);
    let proj = cli(&["--project", "--profiles", prof.to_str().unwrap()]);
    for (k, v) in plain.as_object().unwrap() {
        if k != "emulation_ns" {
            assert_eq!(&proj[k], v, "stats key {k} changed");
        }
    }
    assert!(plain.get("projection").is_none());
    let p = &proj["projection"];
    check_ranks(p, "cli");
    let mut names: Vec<&str> = p["devices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["device"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["h200", "pocl-basic", "pocl-pthread"]);
}

/// `clprism report` reads project-mode records: projected time per device with ranks, and the
/// emulation section counts reused launches and no error.
#[test]
fn report_reads_project_records() {
    let d = scratch("project_report");
    let log = d.join("l.jsonl");
    let out = run(
        &examples().join("fwt"),
        &[],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", DEVICES),
            ("CLPRISM_LOG", log.to_str().unwrap()),
        ],
    );
    assert_ok(&out, "fwt under project mode");
    let rep = std::process::Command::new(env!("CARGO_BIN_EXE_clprism"))
        .args(["report", log.to_str().unwrap(), "--format", "json"])
        .output()
        .unwrap();
    assert_ok(&rep, "clprism report");
    let v: Value = serde_json::from_slice(&rep.stdout).unwrap();
    let text = v.to_string();
    let recs = read_log(&log);
    let n = recs.len() as u64;
    // every profiled device appears in the projection rows of fwt_stage, one best device
    let rows = v["projection"]
        .as_array()
        .unwrap_or_else(|| panic!("{text}"));
    let devs = recs[0]["projection"]["devices"].as_array().unwrap().len();
    assert_eq!(rows.len(), devs, "{text}");
    assert!(rows.iter().all(|r| r["launches"].as_u64() == Some(n)));
    let best: u64 = rows.iter().map(|r| r["best"].as_u64().unwrap()).sum();
    assert_eq!(best, n, "one best device per launch");
    let emu = &v["emulation"][0];
    assert_eq!(emu["launches"].as_u64(), Some(n));
    assert_eq!(emu["reused"].as_u64(), Some(n - 1));
    assert_eq!(emu["errors"].as_u64(), Some(0));
}
