//! Issue 5 acceptance tests: balance mode on PoCL with unequal devices
//! (`POCL_DEVICES="pthread pthread basic"`), real example apps under `LD_PRELOAD`.

mod common;
use common::*;
use serde_json::Value;

const DEVICES: &str = "pthread pthread basic";

/// Runs `exe` in balance mode on [`DEVICES`], logging to `log`. The scheduler's tests split
/// floating-point kernels over PoCL's basic and pthread devices too
/// (`CLPRISM_BALANCE_FLOAT=any`; the default keeps them on devices like the app's, and the
/// app's device here is `basic`, the only one of its kind): PoCL 3.1's two devices compute
/// these example kernels alike at these sizes, and every test compares the output's bytes
/// with the native run. `extra` comes last and may set it back.
fn balanced(
    exe: &std::path::Path,
    args: &[&str],
    log: &std::path::Path,
    extra: &[(&str, &str)],
) -> std::process::Output {
    let mut env = vec![
        ("POCL_DEVICES", DEVICES),
        ("CLPRISM_LOG", log.to_str().unwrap()),
        ("CLPRISM_BALANCE_FLOAT", "any"),
    ];
    env.extend_from_slice(extra);
    run(exe, args, Via::Preload("balance"), &env)
}

fn schedules(log: &std::path::Path) -> Vec<Value> {
    read_log(log)
        .into_iter()
        .map(|r| r["schedule"].clone())
        .collect()
}

/// The default `CLPRISM_BALANCE_FLOAT=like`: a kernel that does floating-point arithmetic
/// (matmul_global) is not split over devices of another name than the app's device (here
/// the app's device is PoCL's `basic`, the others `pthread`): it runs whole with the reason
/// in its record. Kernels without floating-point arithmetic (Floyd-Warshall's integer
/// minimum, a transpose that only moves floats) still split over them. Outputs stay
/// byte-identical to the native run.
#[test]
fn floating_point_kernels_split_only_over_devices_like_the_apps() {
    let build = examples();
    let d = scratch("balance-float-like");
    for (name, float) in [
        ("matmul_global", true),
        ("floyd_warshall", false),
        ("transpose", false),
    ] {
        let exe = build.join(name);
        let nat = d.join(format!("{name}.native.bin"));
        let bal = d.join(format!("{name}.balance.bin"));
        let native = run(
            &exe,
            &["--dump", nat.to_str().unwrap()],
            Via::Native,
            &[("POCL_DEVICES", DEVICES)],
        );
        assert_ok(&native, &format!("{name} native"));
        let log = d.join(format!("{name}.jsonl"));
        let out = balanced(
            &exe,
            &["--dump", bal.to_str().unwrap()],
            &log,
            &[
                ("CLPRISM_BALANCE_FLOAT", "like"),
                ("CLPRISM_SPLIT", "always"),
                ("CLPRISM_BALANCE_EARLY", "off"),
            ],
        );
        assert_ok(&out, &format!("{name} balance"));
        assert!(
            std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
            "{name}: balance output differs from native"
        );
        let s = schedules(&log);
        let split = s
            .iter()
            .filter(|x| {
                let devs: std::collections::HashSet<u64> = x["chunks"]
                    .as_array()
                    .map(|c| c.iter().filter_map(|c| c["device"].as_u64()).collect())
                    .unwrap_or_default();
                devs.len() >= 2
            })
            .count();
        if float {
            assert_eq!(split, 0, "{name}: a floating-point kernel was split: {s:?}");
            for x in &s {
                let why = x["fallback"].as_str().unwrap_or("");
                assert!(why.contains("floating-point arithmetic"), "{name}: {x}");
                // kept whole once the devices are open: the record still says when they opened
                assert!(x["devices_ready_ms"].as_f64().is_some(), "{name}: {x}");
            }
        } else {
            assert!(split > 0, "{name}: no launch split over two devices: {s:?}");
        }
    }
}

/// Every example passes in balance mode with output byte-identical to the native run, one
/// record per launch, and chunks really run on more than one device.
#[test]
fn examples_are_byte_identical_in_balance_mode() {
    let build = examples();
    let d = scratch("balance-examples");
    let mut multi_device_launches = 0;
    let mut early_reads = 0;
    let mut warm_launches = 0;
    let mut report = String::new();
    for name in example_names() {
        let exe = build.join(&name);
        let nat = d.join(format!("{name}.native.bin"));
        let bal = d.join(format!("{name}.balance.bin"));
        let native = run(
            &exe,
            &["--dump", nat.to_str().unwrap()],
            Via::Native,
            &[("POCL_DEVICES", DEVICES)],
        );
        assert_ok(&native, &format!("{name} native"));
        let log = d.join(format!("{name}.jsonl"));
        let out = balanced(&exe, &["--dump", bal.to_str().unwrap()], &log, &[]);
        assert_ok(&out, &format!("{name} balance"));
        assert!(
            std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
            "{name}: balance output differs from native"
        );
        let recs = read_log(&log);
        assert_eq!(
            recs.len(),
            launches_printed(&native),
            "{name}: one record per launch"
        );
        let mut split = 0;
        let mut fallbacks = Vec::new();
        for r in &recs {
            let s = &r["schedule"];
            assert!(s.is_object(), "{name}: no schedule record in {r}");
            if let Some(f) = s["fallback"].as_str() {
                fallbacks.push(f.to_string());
                continue;
            }
            // the completed chunks tile the work exactly
            let total = s["work_groups"].as_u64().unwrap();
            let share: f64 = s["share"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .sum();
            assert!((share - 1.0).abs() < 1e-9, "{name}: shares sum to {share}");
            let mut covered = vec![0u32; total as usize];
            for c in s["chunks"].as_array().unwrap() {
                if c["abandoned"] == true || c.get("failed").is_some() {
                    continue;
                }
                for w in c["first_wg"].as_u64().unwrap()
                    ..c["first_wg"].as_u64().unwrap() + c["count"].as_u64().unwrap()
                {
                    covered[w as usize] += 1;
                }
            }
            assert!(
                covered.iter().all(|c| *c == 1),
                "{name}: chunks do not tile the NDRange: {s}"
            );
            // footprint merges read other devices' completed chunks back as they finish:
            // every completed chunk of a device other than the app's (0:0, running its
            // chunks directly) is read early
            // (a kernel's first split over unlike devices is checked against a whole run,
            // `schedule.verify`: that launch reads its chunks back at the end)
            if s["merge"] == "footprint" && s["app_device_direct"] == true && s["verify"].is_null()
            {
                let devices = s["devices"].as_array().unwrap();
                let home = devices.iter().position(|d| d["index"] == "0:0");
                let others_done = s["chunks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|c| c["abandoned"] != true && c.get("failed").is_none())
                    .filter(|c| c["device"].as_u64().map(|d| d as usize) != home)
                    .count() as u64;
                assert_eq!(
                    s["early_read_chunks"].as_u64(),
                    Some(others_done),
                    "{name}: early read-back: {s}"
                );
                early_reads += others_done;
            }
            if s["share"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|v| v.as_f64().unwrap() > 0.0)
                .count()
                > 1
            {
                split += 1;
            }
        }
        multi_device_launches += split;
        // Boyer's warm start: a repeated launch of a kernel seeds the scheduler with the Ω
        // its last launch measured on every device
        let warm = recs
            .iter()
            .filter(|r| r["schedule"]["warm_start"] == true)
            .count();
        if name == "floyd_warshall" {
            // 256 launches of one kernel: warm starts happen, and never more than 8 in a
            // row on one set of devices (then a cold start measures every device again; a
            // launch that some devices sit out has its own history)
            assert!(warm > 0, "{name}: no launch started warm");
            let mut streaks: std::collections::HashMap<String, u32> = Default::default();
            for r in &recs {
                let devs = r["schedule"]["devices"].to_string();
                let streak = streaks.entry(devs).or_default();
                *streak = if r["schedule"]["warm_start"] == true {
                    *streak + 1
                } else {
                    0
                };
                assert!(*streak <= 8, "{name}: more than 8 warm starts in a row");
            }
        }
        warm_launches += warm;
        // Merge method: kernels whose writes are indexed by ids merge from the emulator's
        // footprints (or leave their results on the devices by them, `resident`);
        // Floyd-Warshall's data-conditional writes must use diff-merge.
        let merges: Vec<&str> = recs
            .iter()
            .filter(|r| r["schedule"]["fallback"].is_null())
            .map(|r| r["schedule"]["merge"].as_str().unwrap_or("?"))
            .collect();
        match name.as_str() {
            "matmul_global" | "matmul_local" | "blackscholes" | "nbody" | "dct8x8" => assert!(
                merges.iter().all(|m| *m == "footprint" || *m == "resident"),
                "{name}: expected footprint merges, got {merges:?}"
            ),
            "floyd_warshall" => {
                assert!(merges.iter().all(|m| *m == "diff"), "{name}: {merges:?}");
                let why = recs[0]["schedule"]["footprint"]["reason"]
                    .as_str()
                    .unwrap_or("");
                assert!(
                    why.contains("conditional on memory contents"),
                    "{name}: {why}"
                );
            }
            _ => {}
        }
        report.push_str(&format!(
            "{name}: {} launches, {split} on several devices, {warm} warm, fallbacks {:?}\n",
            recs.len(),
            fallbacks
        ));
    }
    eprintln!("{report}");
    assert!(
        multi_device_launches > 0,
        "no launch ran on more than one device:\n{report}"
    );
    eprintln!("chunks read back early: {early_reads}");
    assert!(warm_launches > 0, "no launch started warm:\n{report}");
}

/// A kernel with global atomics runs unsplit, correct, with the reason logged.
#[test]
fn atomics_run_unsplit() {
    let exe = c_program("atomic_hist");
    let d = scratch("balance-atomics");
    let log = d.join("l.jsonl");
    let out = balanced(&exe, &[], &log, &[]);
    assert_ok(&out, "atomic_hist balance");
    let s = schedules(&log);
    assert_eq!(s.len(), 1);
    assert!(
        s[0]["fallback"].as_str().unwrap().contains("atomic"),
        "{}",
        s[0]
    );
}

/// Atomics in an included header (hashcat keeps its atomics in inc_*.cl files) are found:
/// the checks read the source with its `#include`s expanded. The kernel runs unsplit with the
/// reason, and a kernel whose header has no atomics is still split.
#[test]
fn atomics_in_an_included_header_run_unsplit() {
    let exe = c_program("include_atomic");
    for (kind, test) in [
        ("atomic", "balance-include-atomic"),
        ("plain", "balance-include-plain"),
    ] {
        let d = scratch(test);
        let log = d.join("l.jsonl");
        let cache = d.join("cache");
        let out = balanced(
            &exe,
            &[d.to_str().unwrap(), kind],
            &log,
            &[
                ("CLPRISM_CACHE", cache.to_str().unwrap()),
                ("CLPRISM_DEVICES", "all"),
            ],
        );
        assert_ok(&out, &format!("include_atomic {kind} balance"));
        let s = schedules(&log);
        assert_eq!(s.len(), 1);
        if kind == "atomic" {
            assert!(
                s[0]["fallback"].as_str().unwrap_or("").contains("atomics"),
                "{}",
                s[0]
            );
        } else {
            assert!(s[0]["fallback"].is_null(), "{}", s[0]);
        }
    }
}

/// A kernel writing a buffer the app created `CL_MEM_READ_ONLY` (hashcat's r_markov does) is
/// split and its output merged: the flag does not make an argument read-only.
#[test]
fn a_read_only_buffer_the_kernel_writes_is_merged() {
    let exe = c_program("readonly_written");
    let d = scratch("balance-readonly-written");
    let log = d.join("l.jsonl");
    let cache = d.join("cache");
    let out = balanced(
        &exe,
        &[],
        &log,
        &[
            ("CLPRISM_CACHE", cache.to_str().unwrap()),
            ("CLPRISM_DEVICES", "all"),
        ],
    );
    assert_ok(&out, "readonly_written balance");
    let s = schedules(&log);
    assert_eq!(s.len(), 1);
    assert!(s[0]["fallback"].is_null(), "{}", s[0]);
    let used: std::collections::HashSet<u64> = s[0]["chunks"]
        .as_array()
        .expect("chunks")
        .iter()
        .filter_map(|c| c["device"].as_u64())
        .collect();
    assert!(used.len() >= 2, "chunks ran on {used:?} only: {}", s[0]);
}

/// A kernel whose work-groups read what another work-group writes (its output depends on
/// the order of the work-groups: Rodinia particlefilter gave other results split) is kept
/// whole with the reason, also under `CLPRISM_SPLIT=always`; a kernel of the same program that
/// only reads the same buffer is split over >= 2 devices.
#[test]
fn a_kernel_whose_work_groups_depend_on_each_other_runs_whole() {
    let exe = c_program("group_order");
    let d = scratch("balance-group-order");
    let log = d.join("l.jsonl");
    let cache = d.join("cache");
    let out = balanced(
        &exe,
        &[],
        &log,
        &[
            ("CLPRISM_CACHE", cache.to_str().unwrap()),
            ("CLPRISM_DEVICES", "all"),
            ("CLPRISM_SPLIT", "always"),
        ],
    );
    assert_ok(&out, "group_order balance");
    let recs = read_log(&log);
    assert_eq!(recs.len(), 2);
    let racy = &recs[0]["schedule"];
    assert_eq!(recs[0]["kernel"], "racy");
    assert!(
        racy["fallback"]
            .as_str()
            .unwrap_or("")
            .contains("depends on the order of the work-groups"),
        "{racy}"
    );
    let plain = &recs[1]["schedule"];
    assert!(plain["fallback"].is_null(), "{plain}");
    let used: std::collections::HashSet<u64> = plain["chunks"]
        .as_array()
        .expect("chunks")
        .iter()
        .filter_map(|c| c["device"].as_u64())
        .collect();
    assert!(used.len() >= 2, "chunks ran on {used:?} only: {plain}");
}

/// Runs matmul_global natively and balanced with fault injection `fault`; asserts both pass
/// with byte-identical output and returns the balanced launches' schedule records.
fn run_with_fault(test: &str, fault: &str) -> Vec<Value> {
    let exe = examples().join("matmul_global");
    let d = scratch(test);
    let log = d.join("l.jsonl");
    let nat = d.join("n.bin");
    let bal = d.join("b.bin");
    assert_ok(
        &run(
            &exe,
            &["--dump", nat.to_str().unwrap()],
            Via::Native,
            &[("POCL_DEVICES", DEVICES)],
        ),
        "native",
    );
    let out = balanced(
        &exe,
        &["--dump", bal.to_str().unwrap()],
        &log,
        &[("CLPRISM_FAULT", fault)],
    );
    assert_ok(&out, &format!("balance with CLPRISM_FAULT={fault}"));
    assert!(
        std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
        "{fault}: output differs from native"
    );
    schedules(&log)
}

/// One device blocked behind a user event that never completes (Boyer §4.5.6): the launch
/// completes on the others with correct results, and the blocked device did no merged work.
#[test]
fn blocked_device_is_abandoned() {
    let s = run_with_fault("balance-blocked", "block:1");
    let first = &s[0];
    assert!(first["fallback"].is_null(), "{first}");
    assert_eq!(
        first["share"][1].as_f64().unwrap(),
        0.0,
        "blocked device got merged work: {first}"
    );
    assert!(
        first["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["device"] == 1 && c["abandoned"] == true),
        "{first}"
    );
}

/// A straggler that drains frees its device (`CLPRISM_FAULT=stall:1:MS`: device 1's chunks
/// wait MS ms after it opened, so the first launches abandon them; k-means' 100 iterations,
/// each ending with a read-back, outlast the stall). Launches meanwhile run
/// whole on the app's device, saying why, and once the stragglers have run, launches split
/// over both devices again; the output stays byte-identical. Rodinia streamcluster had kept a
/// device "busy with 1 abandoned straggler chunks" for the rest of its run (session 15).
#[test]
fn a_drained_straggler_frees_its_device() {
    let exe = examples().join("kmeans");
    let d = scratch("balance-straggler-drains");
    let (nat, bal, log) = (d.join("n.bin"), d.join("b.bin"), d.join("l.jsonl"));
    let two = "pthread basic";
    assert_ok(
        &run(
            &exe,
            &["65536", "100", "--dump", nat.to_str().unwrap()],
            Via::Native,
            &[("POCL_DEVICES", two)],
        ),
        "native",
    );
    let out = balanced(
        &exe,
        &["65536", "100", "--dump", bal.to_str().unwrap()],
        &log,
        &[
            ("POCL_DEVICES", two),
            ("CLPRISM_SPLIT", "always"),
            ("CLPRISM_BALANCE_EARLY", "off"),
            ("CLPRISM_FAULT", "stall:1:200"),
        ],
    );
    assert_ok(&out, "balance with a stalled device");
    assert!(
        std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
        "output differs from native"
    );
    // kmeans_assign uses atomics and always runs whole
    let s: Vec<Value> = read_log(&log)
        .into_iter()
        .filter(|r| r["kernel"] == "kmeans_update")
        .map(|r| r["schedule"].clone())
        .collect();
    let on_dev1 = |x: &Value, abandoned: bool| {
        x["chunks"].as_array().is_some_and(|c| {
            c.iter()
                .any(|c| c["device"] == 1 && (c["abandoned"] == true) == abandoned)
        })
    };
    let first = s
        .iter()
        .position(|x| on_dev1(x, true))
        .unwrap_or_else(|| panic!("no chunk on device 1 was abandoned: {:?}", &s[..3]));
    let waited = s[first + 1..]
        .iter()
        .take_while(|x| !on_dev1(x, false))
        .inspect(|x| {
            let why = x["fallback"].as_str().unwrap_or("");
            assert!(
                why.contains("abandoned straggler") || on_dev1(x, true),
                "a launch while device 1 drained: {x}"
            );
        })
        .count();
    assert!(
        s[first + 1 + waited..].iter().any(|x| on_dev1(x, false)),
        "device 1 never took chunks again after launch {first} ({} launches)",
        s.len()
    );
}

/// One device whose enqueues fail: its work is reassigned, results correct.
#[test]
fn failing_device_work_is_reassigned() {
    for s in run_with_fault("balance-failing", "fail:0") {
        assert!(balanced_or_stragglers_draining(&s), "{s}");
        if !s["fallback"].is_null() {
            continue;
        }
        assert_eq!(s["share"][0].as_f64().unwrap(), 0.0, "{s}");
        assert!(
            s["chunks"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["device"] == 0 && c.get("failed").is_some()),
            "{s}"
        );
    }
}

/// `CLPRISM_VERIFY=1` compares every balanced launch with a native run: no byte differs.
#[test]
fn verify_mode_finds_no_difference() {
    let exe = examples().join("floyd_warshall");
    let d = scratch("balance-verify");
    let log = d.join("l.jsonl");
    let out = balanced(&exe, &[], &log, &[("CLPRISM_VERIFY", "1")]);
    assert_ok(&out, "floyd_warshall verify");
    let mut verified = 0;
    for s in schedules(&log) {
        if s["fallback"].is_null() {
            assert_eq!(s["verify"]["differing_bytes"], 0, "{s}");
            verified += 1;
        }
    }
    assert!(verified > 0);
}

/// The footprint model derived at a run's first launch is saved in the cache directory
/// (0600) and reused by the next run of the same app and shape, with the same bytes out.
#[test]
fn footprint_models_are_reused_across_runs() {
    use std::os::unix::fs::PermissionsExt;
    let exe = examples().join("matmul_global");
    let d = scratch("balance-footprint-cache");
    let cache = d.join("cache");
    let nat = d.join("native.bin");
    let native = run(
        &exe,
        &["128", "--dump", nat.to_str().unwrap()],
        Via::Native,
        &[("POCL_DEVICES", DEVICES)],
    );
    assert_ok(&native, "matmul_global native");
    let mut firsts = Vec::new();
    for i in 0..2 {
        let log = d.join(format!("run{i}.jsonl"));
        let out_file = d.join(format!("run{i}.bin"));
        let out = balanced(
            &exe,
            &["128", "--dump", out_file.to_str().unwrap()],
            &log,
            &[("CLPRISM_CACHE", cache.to_str().unwrap())],
        );
        assert_ok(&out, &format!("matmul_global balance run {i}"));
        assert!(
            std::fs::read(&nat).unwrap() == std::fs::read(&out_file).unwrap(),
            "run {i}: output differs from native"
        );
        let s = schedules(&log);
        assert!(
            s.iter().all(|x| x["merge"] == "footprint"),
            "run {i}: {s:?}"
        );
        firsts.push(s[0]["footprint"].clone());
    }
    assert!(firsts[0]["derived_ms"].is_number(), "{}", firsts[0]);
    assert!(firsts[0].get("from_cache").is_none(), "{}", firsts[0]);
    assert_eq!(firsts[1]["from_cache"], true, "{}", firsts[1]);
    let entries: Vec<_> = std::fs::read_dir(&cache)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with("footprint-"))
        .collect();
    assert!(!entries.is_empty());
    for e in entries {
        let mode = e.metadata().unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{:?}", e.path());
    }
    // A derivation that fails for the kernel's own reason (Floyd-Warshall's stores depend on
    // memory contents) is saved too: the next run reads the verdict instead of re-deriving.
    let exe = examples().join("floyd_warshall");
    let mut verdicts = Vec::new();
    for i in 0..2 {
        let log = d.join(format!("floyd{i}.jsonl"));
        let out = balanced(
            &exe,
            &["64"],
            &log,
            &[("CLPRISM_CACHE", cache.to_str().unwrap())],
        );
        assert_ok(&out, &format!("floyd_warshall balance run {i}"));
        verdicts.push(schedules(&log)[0]["footprint"].clone());
    }
    assert!(verdicts[0]["derived_ms"].is_number(), "{}", verdicts[0]);
    assert!(verdicts[1]["derived_ms"].is_null(), "{}", verdicts[1]);
    assert_eq!(verdicts[1]["from_cache"], true, "{}", verdicts[1]);
    for v in &verdicts {
        let why = v["reason"].as_str().unwrap_or("");
        assert!(why.contains("conditional on memory contents"), "{v}");
    }
}

/// Writes `profiles/pocl-pthread.json` and (when `with_basic`) `profiles/pocl-basic.json`
/// into `dir`, with every throughput of the profile named `fast` multiplied by 1000, so that
/// the projection must rank that kind of PoCL device first.
fn scaled_profiles(dir: &std::path::Path, fast: &str, with_basic: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let kinds: &[&str] = if with_basic {
        &["pthread", "basic"]
    } else {
        &["pthread"]
    };
    for kind in kinds {
        let name = format!("pocl-{kind}.json");
        let text = std::fs::read_to_string(root().join("profiles").join(&name)).unwrap();
        let mut p: Value = serde_json::from_str(&text).unwrap();
        if *kind == fast {
            for (_, v) in p["instruction_throughput"].as_object_mut().unwrap() {
                *v = (v.as_f64().unwrap() * 1000.0).into();
            }
            for curve in ["global_read", "global_write", "local"] {
                for pt in p[curve].as_array_mut().unwrap() {
                    pt[1] = (pt[1].as_f64().unwrap() * 1000.0).into();
                }
            }
        }
        std::fs::write(dir.join(&name), serde_json::to_string(&p).unwrap()).unwrap();
    }
}

/// Runs matmul_global (64×64, `reps` launches) natively and balanced with
/// `CLPRISM_SCHEDULER=best` and `CLPRISM_PROFILES=profiles`; asserts byte-identical output
/// and returns the schedule records.
fn run_best(test: &str, profiles: &std::path::Path, reps: &str) -> Vec<Value> {
    let exe = examples().join("matmul_global");
    let d = scratch(test);
    let (log, nat, bal) = (d.join("l.jsonl"), d.join("n.bin"), d.join("b.bin"));
    assert_ok(
        &run(
            &exe,
            &["64", reps, "--dump", nat.to_str().unwrap()],
            Via::Native,
            &[("POCL_DEVICES", DEVICES)],
        ),
        "native",
    );
    let out = balanced(
        &exe,
        &["64", reps, "--dump", bal.to_str().unwrap()],
        &log,
        &[
            ("CLPRISM_SCHEDULER", "best"),
            ("CLPRISM_PROFILES", profiles.to_str().unwrap()),
        ],
    );
    assert_ok(&out, "matmul_global balance best");
    assert!(
        std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
        "best: output differs from native"
    );
    schedules(&log)
}

/// `best` with profiles for every device: the whole launch runs on the device the
/// projection ranks first. Each PoCL kind is made the projected-fastest in turn, so the
/// choice follows the profiles (not the device order or measurements).
#[test]
fn best_runs_on_the_projected_fastest_device() {
    for fast in ["pthread", "basic"] {
        let dir = scratch(&format!("balance-best-profiles-{fast}"));
        scaled_profiles(&dir, fast, true);
        let s = run_best(&format!("balance-best-{fast}"), &dir, "3");
        assert_eq!(s.len(), 3);
        for (i, x) in s.iter().enumerate() {
            assert!(x["fallback"].is_null(), "{x}");
            let b = &x["best"];
            assert_eq!(b["by"], "projection", "{b}");
            assert_eq!(b["inputs"], "zero-filled", "{b}");
            assert_eq!(b["cached"], i > 0, "projected once per shape: {b}");
            // the first participating device of the fast kind (ties: the first one)
            let names: Vec<&str> = x["devices"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d["name"].as_str().unwrap())
                .collect();
            let want = names.iter().position(|n| n.starts_with(fast)).unwrap();
            assert_eq!(b["device"], want, "{fast}: {x}");
            let t: Vec<f64> = b["projected_ns"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            for (j, n) in names.iter().enumerate() {
                if !n.starts_with(fast) {
                    assert!(t[want] * 10.0 < t[j], "{fast}: {b}");
                }
            }
            // the whole launch ran there
            let share = x["share"].as_array().unwrap();
            assert_eq!(share[want].as_f64(), Some(1.0), "{x}");
        }
    }
}

/// `best` when a device has no profile: the measured rule, with the reason. Each device
/// gets one launch first, then the one with the smallest measured time per work-group.
#[test]
fn best_falls_back_to_measurements_without_profiles() {
    let dir = scratch("balance-best-profiles-partial");
    scaled_profiles(&dir, "none", false); // pthread only: the basic device has none
    let s = run_best("balance-best-measured", &dir, "5");
    assert_eq!(s.len(), 5);
    let n = s[0]["devices"].as_array().unwrap().len();
    for (i, x) in s.iter().enumerate() {
        assert!(x["fallback"].is_null(), "{x}");
        let b = &x["best"];
        assert!(b["projected_ns"].is_null(), "{b}");
        assert!(
            b["reason"].as_str().unwrap().contains("basic"),
            "the reason names the device without a profile: {b}"
        );
        if i < n {
            assert_eq!(b["by"], "first-try", "{b}");
            assert_eq!(b["device"], i, "{b}");
        } else {
            assert_eq!(b["by"], "measured", "{b}");
            let m: Vec<f64> = b["measured_ns_per_wg"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_f64().unwrap())
                .collect();
            let fastest = (0..n)
                .min_by(|a, c| m[*a].partial_cmp(&m[*c]).unwrap())
                .unwrap();
            assert_eq!(b["device"], fastest, "{b}");
        }
        let d = b["device"].as_u64().unwrap() as usize;
        assert_eq!(x["share"][d].as_f64(), Some(1.0), "{x}");
    }
}

/// Pinned host staging (`CLPRISM_PINNED_MAX`): with the default cap the snapshots and
/// read-back areas are driver-allocated and reused across launches (the process total stays
/// at one area per buffer and role); with 0 they are heap memory. Outputs equal native.
#[test]
fn pinned_staging_is_reused_and_can_be_turned_off() {
    let exe = examples().join("matmul_global");
    let d = scratch("balance-pinned");
    let nat = d.join("native.bin");
    let native = run(
        &exe,
        &["128", "3", "--dump", nat.to_str().unwrap()],
        Via::Native,
        &[("POCL_DEVICES", DEVICES)],
    );
    assert_ok(&native, "matmul_global native");
    let n = 128 * 128 * 4;
    for (cap, expect) in [(None, Some((3 * n) as u64)), (Some("0"), Some(0))] {
        let log = d.join(format!("pinned-{}.jsonl", cap.unwrap_or("default")));
        let out_file = d.join("out.bin");
        // the first split's agreement check would also stage the output's pre-launch bytes;
        // the output is read back at every launch (`eager`: it does not stay on the devices)
        let mut env = vec![
            ("CLPRISM_BALANCE_AGREEMENT", "off"),
            ("CLPRISM_BALANCE_GATHER", "eager"),
        ];
        if let Some(c) = cap {
            env.push(("CLPRISM_PINNED_MAX", c));
        }
        let out = balanced(
            &exe,
            &["128", "3", "--dump", out_file.to_str().unwrap()],
            &log,
            &env,
        );
        assert_ok(&out, "matmul_global balance");
        assert!(std::fs::read(&nat).unwrap() == std::fs::read(&out_file).unwrap());
        let s = schedules(&log);
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(balanced_or_stragglers_draining), "{s:?}");
        assert!(s[0]["fallback"].is_null(), "{}", s[0]);
        for x in s.iter().filter(|x| x["fallback"].is_null()) {
            // A and B (snapshot for the other devices) and C (read-back), 64 KiB each, pinned
            // once and reused by the second and third launch
            assert_eq!(x["pinned_staging_bytes"].as_u64(), expect, "{x}");
        }
    }
}

/// `CLPRISM_SPLIT=auto` (the default): a kernel's first launch runs whole on the app's device
/// and is measured; later launches split only when the measured time saved exceeds the
/// transfers. Black-Scholes rewrites its inputs before every launch, so those inputs count as
/// uploads in every later decision. Outputs equal native either way.
#[test]
fn auto_split_measures_first_and_counts_rewritten_inputs() {
    let d = scratch("balance-auto-split");
    for (app, args) in [
        ("blackscholes", ["65536", "4"]),
        ("matmul_global", ["128", "4"]),
    ] {
        let exe = examples().join(app);
        let nat = d.join(format!("{app}.native.bin"));
        let out_file = d.join(format!("{app}.auto.bin"));
        let native = run(
            &exe,
            &[args[0], args[1], "--dump", nat.to_str().unwrap()],
            Via::Native,
            &[("POCL_DEVICES", DEVICES)],
        );
        assert_ok(&native, app);
        let log = d.join(format!("{app}.jsonl"));
        let out = balanced(
            &exe,
            &[args[0], args[1], "--dump", out_file.to_str().unwrap()],
            &log,
            &[("CLPRISM_SPLIT", "auto")],
        );
        assert_ok(&out, &format!("{app} auto"));
        assert!(
            std::fs::read(&nat).unwrap() == std::fs::read(&out_file).unwrap(),
            "{app}"
        );
        let s = schedules(&log);
        assert_eq!(s.len(), 4, "{app}");
        // the first launch is forwarded as the app made it and measured from its event
        // (decided before any barrier, build or footprint: exec::decide)
        let first = s[0]["fallback"].as_str().unwrap_or("");
        assert!(first.contains("forwarded to measure it"), "{app}: {}", s[0]);
        let mut decided = 0;
        let mut balanced_before = false;
        for x in &s[1..] {
            let dec = &x["split_decision"];
            if !x["fallback"].is_null() && balanced_or_stragglers_draining(x) {
                continue; // the other devices still drained an earlier launch's stragglers
            }
            if let Some(f) = x["fallback"].as_str() {
                // measured and not worth splitting: forwarded to the driver as it is
                assert!(
                    f.starts_with("kept whole on the app's device"),
                    "{app}: {f}"
                );
                assert!(f.contains(" ms split ("), "{f}");
                decided += 1;
                continue;
            }
            let devices = x["share"].as_array().unwrap().len();
            if dec.is_null() {
                // only one device was available (the others still held abandoned chunks)
                assert_eq!(devices, 1, "{app}: {x}");
                continue;
            }
            decided += 1;
            assert!(dec["est_home_ns"].as_f64().unwrap() > 0.0, "{app}: {dec}");
            let split = dec["split"].as_bool().unwrap();
            // the schedule follows the verdict: every device, or the app's alone
            assert_eq!(devices > 1, split, "{app}: {x}");
            let first_balanced = !std::mem::replace(&mut balanced_before, true);
            if first_balanced {
                // no earlier balanced launch of the kernel: no rewrite seen yet (the first
                // launch was forwarded), and the decision weighs recurring uploads only
                continue;
            }
            if app == "blackscholes" {
                // the three inputs are rewritten before each launch: 3 * 65536 floats
                // (checked on the launches that split; the others say so in `fallback`)
                assert_eq!(dec["upload_bytes"], 3 * 65536 * 4, "{dec}");
            } else {
                // matmul's inputs are written once: nothing to upload at every launch
                assert_eq!(dec["upload_bytes"], 0, "{dec}");
            }
        }
        assert!(
            decided > 0,
            "{app}: no later launch reached the decision: {s:?}"
        );
    }
}

/// `CLPRISM_SPLIT=auto` for a kernel without a footprint (Floyd-Warshall's stores depend on
/// memory contents, so a split launch would merge by diff): the first launch is forwarded to
/// the driver and its profiled event measures the app's device; every later launch is
/// decided on that figure, with the diff-merge's transfers in the estimate.
#[test]
fn auto_split_without_footprint_measures_the_forwarded_launch() {
    let d = scratch("balance-auto-diff");
    let exe = examples().join("floyd_warshall");
    let nat = d.join("native.bin");
    let out_file = d.join("auto.bin");
    let native = run(
        &exe,
        &["64", "--dump", nat.to_str().unwrap()],
        Via::Native,
        &[("POCL_DEVICES", DEVICES)],
    );
    assert_ok(&native, "floyd_warshall native");
    let log = d.join("auto.jsonl");
    let out = balanced(
        &exe,
        &["64", "--dump", out_file.to_str().unwrap()],
        &log,
        &[("CLPRISM_SPLIT", "auto")],
    );
    assert_ok(&out, "floyd_warshall auto");
    assert!(std::fs::read(&nat).unwrap() == std::fs::read(&out_file).unwrap());
    let recs = read_log(&log);
    assert_eq!(recs.len(), 64);
    let first = recs[0]["schedule"]["fallback"].as_str().unwrap_or("");
    assert!(first.contains("forwarded to measure it"), "{first}");
    assert!(
        recs[0]["device_ns"].as_u64().unwrap_or(0) > 0,
        "{}",
        recs[0]
    );
    // the callback's measurement arrives asynchronously; once it has, launches are decided
    let decided: Vec<&Value> = recs[1..]
        .iter()
        .filter(|r| {
            let s = &r["schedule"];
            s["split_decision"]["est_home_ns"].as_f64().is_some()
                || s["fallback"]
                    .as_str()
                    .is_some_and(|f| f.contains(" ms split ("))
        })
        .collect();
    assert!(
        !decided.is_empty(),
        "no launch was decided: {:?}",
        recs[1]["schedule"]
    );
    for r in &decided {
        let s = &r["schedule"];
        let text = s["fallback"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| s["split_decision"]["reason"].to_string());
        assert!(
            text.contains("by diff")
                || text.contains("as measured")
                || text.contains("the shortest split so far")
                || text.contains("assumed before a split is measured"),
            "{text}"
        );
        if s["fallback"].is_null() {
            assert_eq!(s["merge"], "diff", "{s}");
        }
    }
}

/// `CLPRISM_BALANCE_EARLY=on` (the default): the devices open on a background thread from
/// the app's program build, and launches that come before they are open are forwarded (and
/// measured) instead of waiting. Such launches can only be the first ones: once open, every
/// launch is balanced. The output equals native either way.
#[test]
fn early_start_forwards_only_while_the_devices_open() {
    let d = scratch("balance-early");
    for app in ["matmul_global", "nbody"] {
        let exe = examples().join(app);
        let nat = d.join(format!("{app}.native.bin"));
        let out_file = d.join(format!("{app}.early.bin"));
        let native = run(
            &exe,
            &["--dump", nat.to_str().unwrap()],
            Via::Native,
            &[("POCL_DEVICES", DEVICES)],
        );
        assert_ok(&native, app);
        let log = d.join(format!("{app}.jsonl"));
        let out = balanced(
            &exe,
            &["--dump", out_file.to_str().unwrap()],
            &log,
            &[("CLPRISM_BALANCE_EARLY", "on")],
        );
        assert_ok(&out, &format!("{app} early"));
        assert!(
            std::fs::read(&nat).unwrap() == std::fs::read(&out_file).unwrap(),
            "{app}: output differs from native"
        );
        let s = schedules(&log);
        assert!(!s.is_empty());
        let opening = |x: &Value| {
            x["fallback"]
                .as_str()
                .is_some_and(|f| f.contains("still being opened"))
        };
        let waiting = s.iter().take_while(|x| opening(x)).count();
        assert!(
            s[waiting..].iter().all(|x| !opening(x)),
            "{app}: a launch was forwarded after the devices had opened: {s:?}"
        );
        assert!(
            s[waiting..].iter().all(balanced_or_stragglers_draining),
            "{app}: {s:?}"
        );
        eprintln!(
            "{app}: {waiting} of {} launches forwarded while opening",
            s.len()
        );
    }
}

/// N-body (2048 bodies, 40 steps) balanced with `extra` into `d/NAME.jsonl`: asserts it passes
/// with output byte-identical to `native` (its dump of a native run) and returns the
/// launches' schedule records.
fn nbody_balanced(
    d: &std::path::Path,
    native: &std::path::Path,
    name: &str,
    extra: &[(&str, &str)],
) -> Vec<Value> {
    let out_file = d.join(format!("{name}.bin"));
    let log = d.join(format!("{name}.jsonl"));
    let out = balanced(
        &examples().join("nbody"),
        &["2048", "40", "--dump", out_file.to_str().unwrap()],
        &log,
        extra,
    );
    assert_ok(&out, &format!("nbody {name}"));
    assert!(std::fs::read(native).unwrap() == std::fs::read(&out_file).unwrap());
    schedules(&log)
}

/// `CLPRISM_SPLIT=auto` with the devices still opening (`CLPRISM_FAULT=open-delay:MS` holds
/// them back; they start opening once measured launches long enough to split add up to
/// `CLPRISM_BALANCE_OPEN_COST`, here 0, and the launches before that say so): the launches
/// forwarded meanwhile are measured on the app's device, under the kernel's key, so the first
/// launch after the devices opened is decided on that figure instead of being run whole again
/// to measure it. With an opening cost the run's launches never add up to, the devices never
/// open and every launch says why. N-body, results checked against native.
#[test]
fn a_launch_forwarded_while_the_devices_open_is_the_measurement() {
    let d = scratch("balance-open-measure");
    let nat = d.join("native.bin");
    let native = run(
        &examples().join("nbody"),
        &["2048", "40", "--dump", nat.to_str().unwrap()],
        Via::Native,
        &[("POCL_DEVICES", DEVICES)],
    );
    assert_ok(&native, "nbody native");
    let s = nbody_balanced(
        &d,
        &nat,
        "auto",
        &[
            ("CLPRISM_SPLIT", "auto"),
            ("CLPRISM_BALANCE_EARLY", "on"),
            ("CLPRISM_BALANCE_OPEN_COST", "0"),
            ("CLPRISM_FAULT", "open-delay:200"),
        ],
    );
    let opening = |x: &Value| {
        x["fallback"]
            .as_str()
            .is_some_and(|f| f.contains("still being opened"))
    };
    // `auto` opens the devices only once measured launches pay for it
    // (exec::opening_deferred): the first launches are measured before that
    let deferred = |x: &Value| {
        x["fallback"].as_str().is_some_and(|f| {
            f.contains("before the balance devices are opened")
                || f.contains("the balance devices are not opened")
        })
    };
    let before = s.iter().take_while(|x| deferred(x)).count();
    assert!(
        before >= 1,
        "the devices opened before any launch was measured: {s:?}"
    );
    let waiting = s[before..].iter().take_while(|x| opening(x)).count();
    assert!(waiting >= 1, "no launch met the devices opening: {s:?}");
    assert!(
        s[before + waiting..]
            .iter()
            .all(|x| !deferred(x) && !opening(x)),
        "a launch was forwarded for the opening after the devices had opened: {s:?}"
    );
    let waiting = before + waiting;
    let after = s
        .get(waiting)
        .unwrap_or_else(|| panic!("every launch was forwarded: {s:?}"));
    let verdict = after["fallback"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| after["split_decision"]["reason"].to_string());
    assert!(
        !verdict.contains("first launch"),
        "launch {waiting} was measured again: {after}"
    );
    assert!(
        after["split_decision"]["est_home_ns"].as_f64() > Some(0.0)
            || (verdict.starts_with("kept whole on the app's device")
                && verdict.contains(" ms on the app's device against ")),
        "launch {waiting} was not decided on the forwarded measurement: {after}"
    );
    let c = nbody_balanced(
        &d,
        &nat,
        "auto-cost",
        &[
            ("CLPRISM_SPLIT", "auto"),
            ("CLPRISM_BALANCE_EARLY", "on"),
            ("CLPRISM_BALANCE_OPEN_COST", "1000000"),
        ],
    );
    assert!(deferred(&c[0]), "{}", c[0]);
    for x in &c[1..] {
        let f = x["fallback"].as_str().unwrap_or("");
        assert!(
            f.contains("CLPRISM_BALANCE_OPEN_COST") || f.contains("too short for a split"),
            "{x}"
        );
    }
}

/// Two programs with a kernel of the same name (tests/c/twin_kernels.c, launched A, B, A, B):
/// what balance mode learns about a kernel is keyed by program, build options and name, so
/// B's first launch is measured as a first launch (no estimate of the app's device), not
/// judged on A's figures; the second launch of each has its own estimate. Results checked
/// by the app.
#[test]
fn same_named_kernels_of_two_programs_are_measured_apart() {
    let d = scratch("balance-twin-kernels");
    let log = d.join("twin.jsonl");
    let out = balanced(
        &c_program("twin_kernels"),
        &[],
        &log,
        &[("CLPRISM_SPLIT", "auto"), ("CLPRISM_BALANCE_EARLY", "off")],
    );
    assert_ok(&out, "twin_kernels");
    let s = schedules(&log);
    assert_eq!(s.len(), 4, "{s:?}");
    for (i, x) in s.iter().enumerate() {
        let est = &x["split_decision"]["est_home_ns"];
        if i < 2 {
            let f = x["fallback"].as_str().unwrap_or("");
            assert!(
                f.contains("first launch of this kernel, forwarded to measure it"),
                "launch {i} is its program's first: {x}"
            );
        } else if let Some(f) = x["fallback"].as_str() {
            // measured and kept whole: the verdict quotes the app device's estimate
            assert!(
                f.starts_with("kept whole on the app's device"),
                "launch {i}: {f}"
            );
            assert!(!f.contains("first launch"), "launch {i}: {f}");
        } else if x["split_decision"].is_null() {
            // only one device was available (the others still held abandoned chunks)
            assert_eq!(x["share"].as_array().unwrap().len(), 1, "launch {i}: {x}");
        } else {
            assert!(est.as_f64().unwrap() > 0.0, "launch {i}: {x}");
        }
    }
    // the second launch of A is judged on A's own first launch
    assert!(
        s[2]["fallback"].is_string() || s[2]["split_decision"]["est_home_ns"].as_f64() > Some(0.0),
        "{}",
        s[2]
    );
}

/// With the app's own device as the only balance device there is nothing to balance: every
/// launch is forwarded to the driver as the app made it, with the reason in its record, and
/// the output equals the native run's.
#[test]
fn the_app_device_alone_is_forwarded() {
    let d = scratch("balance-app-device-alone");
    let exe = examples().join("blackscholes");
    let nat = d.join("native.bin");
    let native = run(
        &exe,
        &["65536", "3", "--dump", nat.to_str().unwrap()],
        Via::Native,
        &[("POCL_DEVICES", DEVICES)],
    );
    assert_ok(&native, "blackscholes native");
    let log = d.join("alone.jsonl");
    let got = d.join("alone.bin");
    let out = balanced(
        &exe,
        &["65536", "3", "--dump", got.to_str().unwrap()],
        &log,
        &[("CLPRISM_DEVICES", "0:0"), ("CLPRISM_BALANCE_EARLY", "off")],
    );
    assert_ok(&out, "blackscholes, one balance device");
    assert!(std::fs::read(&nat).unwrap() == std::fs::read(&got).unwrap());
    let s = schedules(&log);
    assert_eq!(s.len(), 3, "{s:?}");
    for x in &s {
        assert_eq!(
            x["fallback"], "kept whole on the app's device: it is the only balance device",
            "{x}"
        );
    }
}

/// Runs `device_semantics CASE` natively and balanced (fresh footprint cache): the printed
/// output buffers must be byte-identical, every launch merged by its write footprint (so
/// the emulator's model of the kernel decided which bytes came back) with chunks on more
/// than one device.
fn device_semantics_match_native(case: &str) {
    let exe = c_program("device_semantics");
    let d = scratch(&format!("balance-device-semantics-{case}"));
    let native = run(&exe, &[case], Via::Native, &[("POCL_DEVICES", DEVICES)]);
    assert_ok(&native, &format!("device_semantics {case} native"));
    let log = d.join("l.jsonl");
    let cache = d.join("cache");
    let out = balanced(
        &exe,
        &[case],
        &log,
        &[("CLPRISM_CACHE", cache.to_str().unwrap())],
    );
    assert_ok(&out, &format!("device_semantics {case} balance"));
    assert!(
        native.stdout == out.stdout,
        "{case}: output buffers differ from native\nnative:\n{}\nbalance:\n{}",
        String::from_utf8_lossy(&native.stdout),
        String::from_utf8_lossy(&out.stdout)
    );
    let s = schedules(&log);
    assert_eq!(s.len(), launches_printed(&native), "{s:?}");
    let mut split = 0;
    for x in &s {
        assert!(balanced_or_stragglers_draining(x), "{x}");
        if !x["fallback"].is_null() {
            continue;
        }
        assert_eq!(x["merge"], "footprint", "{x}");
        let devs: std::collections::BTreeSet<u64> = x["chunks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["device"].as_u64().unwrap())
            .collect();
        if devs.len() > 1 {
            split += 1;
        } else {
            // a device still busy with an abandoned straggler chunk of an earlier launch
            // sits a launch out (timing-dependent on three CPU devices): the record says so
            assert!(
                x["one_device_reason"].is_string(),
                "chunks on one device only: {x}"
            );
        }
    }
    assert!(split > 0, "no launch ran on more than one device: {s:?}");
}

/// `vstorea_half3(v, i, p)` stores at `p + 4*i` halves (piglit's vstorea_half offset tests
/// on float3 and double3): the emulator placed it at `p + 3*i`, so the footprint read back
/// the wrong bytes. PoCL also writes the 4th (padding) half, which the footprint must
/// carry for the output to equal the native run's.
#[test]
fn vstorea_half3_footprint_matches_the_device() {
    device_semantics_match_native("vstorea");
}

/// Stores made only `#ifdef __OPENCL_VERSION__` (defined by the device compiler, not by
/// clang for SPIR; piglit's `__OPENCL_VERSION__ must be consistent with host`) or
/// `#ifdef __FAST_RELAXED_MATH__` (from `-cl-fast-relaxed-math`) are in the footprint.
#[test]
fn device_predefined_macros_reach_the_footprint() {
    device_semantics_match_native("macros");
}

/// A kernel's first split over devices unlike the app's device (here PoCL's basic device
/// beside its pthread ones) is checked against a whole run on the app's device
/// (`CLPRISM_BALANCE_AGREEMENT`): when they agree, later launches split without the check;
/// when a device computes other bytes (`CLPRISM_FAULT=differ:I` stands in for another
/// compiler's rounding), the app gets the whole run's bytes and the kernel runs whole from then
/// on, with the reason in its records. Either way the output equals the native run's.
#[test]
fn first_split_over_unlike_devices_is_checked_against_a_whole_run() {
    let exe = examples().join("matmul_global");
    let d = scratch("balance-agreement");
    let nat = d.join("n.bin");
    assert_ok(
        &run(
            &exe,
            &["128", "3", "--dump", nat.to_str().unwrap()],
            Via::Native,
            &[("POCL_DEVICES", DEVICES)],
        ),
        "native",
    );
    // the check repeats until a split really ran work off the app's device (0:0, the first
    // device): under load Boyer's scheduler may redo a late device's first chunks on the app's
    // device, so a run is repeated (at most 8 times) until one of its splits did
    // (with `differ:1`, device 1 itself: the fault only marks that device's chunks)
    let off_app = |x: &Value, only: Option<usize>| {
        x["share"].as_array().is_some_and(|v| {
            v.iter()
                .enumerate()
                .skip(1)
                .any(|(i, f)| only.is_none_or(|o| o == i) && f.as_f64().unwrap_or(0.0) > 0.0)
        })
    };
    for fault in [None, Some("differ:1")] {
        let mut found = None;
        for attempt in 0..8 {
            let log = d.join(format!(
                "{}-{attempt}.jsonl",
                fault.unwrap_or("agree").replace(':', "-")
            ));
            let bal = d.join("b.bin");
            let mut env = vec![("CLPRISM_SPLIT", "always")];
            if let Some(f) = fault {
                env.push(("CLPRISM_FAULT", f));
            }
            let out = balanced(
                &exe,
                &["128", "3", "--dump", bal.to_str().unwrap()],
                &log,
                &env,
            );
            assert_ok(&out, "matmul_global balance");
            assert!(
                std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
                "{fault:?}: output differs from native"
            );
            let s = schedules(&log);
            assert_eq!(s.len(), 3, "{fault:?}");
            let only = fault.map(|_| 1);
            if let Some(i) = s
                .iter()
                .position(|x| !x["verify"].is_null() && off_app(x, only))
            {
                found = Some((s, i));
                break;
            }
        }
        let (s, checked) = found
            .unwrap_or_else(|| panic!("{fault:?}: no split ran off the app's device in 8 runs"));
        let differing = s[checked]["verify"]["differing_bytes"].as_u64();
        match fault {
            None => {
                assert_eq!(differing, Some(0), "{}", s[checked]);
                for later in &s[checked + 1..] {
                    assert!(balanced_or_stragglers_draining(later), "{later}");
                    assert!(later["verify"].is_null(), "checked again: {later}");
                }
            }
            Some(_) => {
                assert!(differing.is_some_and(|n| n > 0), "{}", s[checked]);
                for later in &s[checked + 1..] {
                    assert!(
                        later["fallback"]
                            .as_str()
                            .unwrap_or("")
                            .contains("differed from the app's device"),
                        "{later}"
                    );
                }
            }
        }
    }
}

/// Runs `app ARGS --dump` natively and in balance mode with `CLPRISM_SPLIT=auto` and the
/// devices opened early (`CLPRISM_BALANCE_EARLY=on`) on two like PoCL `pthread` devices, with
/// `CLPRISM_BALANCE_SIBLINGS=SIBLINGS`, `CLPRISM_BALANCE_OPEN_COST=OPEN_COST_MS` and
/// `CLPRISM_BALANCE_OPEN=launch`; asserts both pass with identical output and returns
/// the balanced run's launch records.
fn auto_over_like_devices(
    test: &str,
    app: &str,
    args: &[&str],
    siblings: &str,
    open_cost_ms: &str,
) -> Vec<Value> {
    auto_over_like_devices_with(test, app, args, (siblings, open_cost_ms), &[]).0
}

/// [`auto_over_like_devices`] with `extra` variables for the balanced run; also returns its
/// output.
fn auto_over_like_devices_with(
    test: &str,
    app: &str,
    args: &[&str],
    (siblings, open_cost_ms): (&str, &str),
    extra: &[(&str, &str)],
) -> (Vec<Value>, std::process::Output) {
    let d = scratch(test);
    let exe = examples().join(app);
    let (nat, bal) = (d.join("native.bin"), d.join("balance.bin"));
    let devices = [("POCL_DEVICES", "pthread pthread")];
    let with_dump = |f: &std::path::Path| {
        let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        a.extend(["--dump".into(), f.to_str().unwrap().into()]);
        a
    };
    let a = with_dump(&nat);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    assert_ok(&run(&exe, &a, Via::Native, &devices), app);
    let log = d.join("balance.jsonl");
    let a = with_dump(&bal);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    let mut env = vec![
        devices[0],
        ("CLPRISM_LOG", log.to_str().unwrap()),
        ("CLPRISM_DEVICES", "all"),
        ("CLPRISM_SPLIT", "auto"),
        ("CLPRISM_BALANCE_EARLY", "on"),
        ("CLPRISM_BALANCE_SIBLINGS", siblings),
        ("CLPRISM_BALANCE_OPEN_COST", open_cost_ms),
        // the opening at the first long launch (`tests/open_at_context.rs` has the default's)
        ("CLPRISM_BALANCE_OPEN", "launch"),
    ];
    env.extend_from_slice(extra);
    let out = run(&exe, &a, Via::Preload("balance"), &env);
    assert_ok(&out, &format!("{app} balance auto"));
    assert!(
        std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
        "{app}: output differs from native"
    );
    (read_log(&log), out)
}

/// Issue 31 items 1-2: on a device with a like sibling (two PoCL `pthread` devices, counted
/// with `CLPRISM_BALANCE_SIBLINGS=any`), the first launch of a kernel runs a probe chunk on the
/// app's device; a probe whose rest takes at least `CLPRISM_BALANCE_OPEN_COST` (50 ms here)
/// opens the devices, the app's device goes on in chunks while they open, and the rest is
/// split: a one-launch app (matmul_global, 1024², 3.2 s natively here; the app's device runs
/// chunks until the program is built on the devices, so a cold build on a loaded CI machine
/// took 7/8 of a 512² launch, whose rest the trial rule then kept whole) is split at its first and
/// only launch, byte-identical to native. With the default (`gpu`: CPU siblings share the
/// app's cores and are not counted) the same launch is forwarded whole to be measured.
#[test]
fn a_first_long_launch_is_probed_then_split_over_like_siblings() {
    let recs = auto_over_like_devices(
        "balance-probe-split",
        "matmul_global",
        &["1024"],
        "any",
        "50",
    );
    assert_eq!(recs.len(), 1, "{recs:?}");
    let s = &recs[0]["schedule"];
    assert_split(&recs[0]);
    let probe = &s["probe"];
    let of = probe["of_work_groups"].as_u64().expect("a probe record");
    let ran = probe["work_groups"].as_u64().unwrap();
    // the probe, then chunks while the devices opened and the program was built on them:
    // at most seven eighths of the launch (`intercept::balance::probe_first_chunk`)
    assert!(ran > 0 && ran <= of - of / 8, "probe of {ran} of {of}: {s}");
    assert!(probe["device_ns"].as_u64().unwrap() > 0, "{s}");
    // the rest: the launch's other work-groups, over both devices
    let rest: u64 = s["chunks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["abandoned"].as_bool() != Some(true))
        .map(|c| c["work_groups"].as_u64().unwrap())
        .sum();
    assert_eq!(ran + rest, of, "{s}");

    let recs = auto_over_like_devices(
        "balance-probe-default",
        "matmul_global",
        &["512"],
        "gpu",
        "50",
    );
    let f = recs[0]["schedule"]["fallback"].as_str().unwrap_or_default();
    assert!(f.contains("measured"), "{f}");
    assert!(recs[0]["schedule"]["probe"].is_null());
}

/// A probe that finds a long launch also compiles the program for the footprint derivation
/// in the background (`exec::compile_for_footprint`), into the emulator's cache, so the
/// launch thread's first derivation does not run the compiler while the devices wait: with
/// an empty cache, the run's debug output says it compiled ahead without failing, the
/// cache holds the SPIR-V, and the launch is split and byte-identical as without it (at
/// 1024², for the cold builds: see [`a_first_long_launch_is_probed_then_split_over_like_siblings`]).
#[test]
fn a_long_probe_compiles_the_program_for_the_footprint_ahead() {
    let cache = scratch("balance-probe-compile-ahead-cache");
    let (recs, out) = auto_over_like_devices_with(
        "balance-probe-compile-ahead",
        "matmul_global",
        &["1024"],
        ("any", "50"),
        &[
            ("CLPRISM_CACHE", cache.to_str().unwrap()),
            ("CLPRISM_DEBUG", "1"),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err
        .lines()
        .find(|l| l.contains("SPIR-V compiled ahead"))
        .unwrap_or_else(|| panic!("no ahead compile in the debug output:\n{err}"));
    assert!(!line.contains("failed"), "{line}");
    fn spv_files(dir: &std::path::Path) -> usize {
        std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| e.ok())
            .map(|e| match e.file_type() {
                Ok(t) if t.is_dir() => spv_files(&e.path()),
                _ => usize::from(e.path().extension().is_some_and(|x| x == "spv")),
            })
            .sum()
    }
    let spirv = spv_files(&cache);
    assert!(spirv >= 1, "no SPIR-V in {}", cache.display());
    assert_eq!(recs.len(), 1, "{recs:?}");
    assert_split(&recs[0]);
}

/// A kernel is probed at its first launch only: Black-Scholes launched 4 times on like
/// siblings probes the first launch (the rest forwarded after it, the reason says so) and
/// judges the later ones on that figure, with no probe. Its launches are far shorter than the
/// default `CLPRISM_BALANCE_OPEN_COST` (500 ms), so the devices are never opened (no record
/// carries `devices_ready_ms`). The output stays byte-identical.
#[test]
fn only_a_kernels_first_launch_is_probed_and_a_short_one_opens_nothing() {
    let recs = auto_over_like_devices(
        "balance-probe-once",
        "blackscholes",
        &["262144", "4"],
        "any",
        "500",
    );
    assert_eq!(recs.len(), 4, "{recs:?}");
    let probed = |r: &Value| {
        let s = &r["schedule"];
        !s["probe"].is_null()
            || s["fallback"]
                .as_str()
                .is_some_and(|f| f.contains("as a probe"))
    };
    assert!(probed(&recs[0]), "{}", recs[0]["schedule"]);
    for r in &recs[1..] {
        assert!(!probed(r), "{}", r["schedule"]);
    }
    for r in &recs {
        assert!(
            r["schedule"]["devices_ready_ms"].is_null(),
            "{}",
            r["schedule"]
        );
    }
}

/// Issue 31 item 3: a large input (64 MiB and more) goes to the other devices through the
/// upload ring (`exec::staging::UploadRing`: a few pinned slots, not a pinned area of the
/// buffer's size, which costs 620 ms per GiB to allocate on an H200 host): Black-Scholes over
/// 16 Mi options (five 64 MiB arrays, inputs rewritten by the app before each launch), split
/// over the three PoCL devices twice, is byte-identical to native and its records show the
/// ring's phase (inputs that stay large go through the ring at every launch: no pinned area
/// of their size is ever made for them).
#[test]
fn large_inputs_reach_the_devices_through_the_upload_ring() {
    let d = scratch("balance-upload-ring");
    let exe = examples().join("blackscholes");
    let (nat, bal) = (d.join("native.bin"), d.join("balance.bin"));
    let args = |f: &std::path::Path| {
        vec![
            "16777216".to_string(),
            "2".into(),
            "--dump".into(),
            f.to_str().unwrap().into(),
        ]
    };
    let a = args(&nat);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    assert_ok(
        &run(&exe, &a, Via::Native, &[("POCL_DEVICES", DEVICES)]),
        "native",
    );
    let log = d.join("balance.jsonl");
    let a = args(&bal);
    let a: Vec<&str> = a.iter().map(String::as_str).collect();
    // (the first split over unlike devices is checked against a whole run, which needs
    // pre-launch copies: off here, as on like GPUs)
    let env = [("CLPRISM_BALANCE_AGREEMENT", "off")];
    assert_ok(&balanced(&exe, &a, &log, &env), "balance");
    assert!(
        std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
        "output differs from native"
    );
    let s = schedules(&log);
    assert_eq!(s.len(), 2, "{s:?}");
    for x in &s {
        assert_split(&serde_json::json!({ "schedule": x }));
        let phases: Vec<&str> = x["phases"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|p| p["name"].as_str())
            .collect();
        assert!(phases.contains(&"upload_ring"), "{phases:?}");
    }
}
