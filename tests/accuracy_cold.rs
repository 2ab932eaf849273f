//! Issue 32: `clprism accuracy --measured ... --projected ...` marks a kernel whose measured
//! figure likely rests on a cold start (`accuracy::logs::cold_start`) and prints the summary
//! with all rows and without the marked ones.
//!
//! Synthetic logs of two PoCL devices (the built-in `pocl-pthread` / `pocl-basic`
//! profiles, told apart by their device lines): `slow_first` is measured by one slow
//! launch per device, the first of its process; `steady` by twelve launches of near-equal
//! time; `pair` by two launches, the second 3× the first. The marks and both summaries
//! are read from the binary's table and JSON.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use OpenCL::log::schema::{Device, DeviceDef, Launch, LaunchStatus, Projection, SCHEMA_VERSION};
use OpenCL::model::DeviceIdentity;

fn device(host: &str) -> (Device, DeviceIdentity) {
    let id = DeviceIdentity {
        name: format!("{host}-haswell"),
        vendor: "AuthenticAMD".into(),
        version: format!("OpenCL 3.0 PoCL HSTR: {host}-x86_64"),
        driver_version: "3.1".into(),
        max_compute_units: 2,
    };
    let d = Device {
        index: "0:0".into(),
        name: id.name.clone(),
        kind: "cpu".into(),
        identity: None,
    };
    (d, id)
}

fn launch(d: &Device, kernel: &str, seq: u64, ns: u64, projected: bool) -> Launch {
    let projection = projected.then(|| Projection {
        set: serde_json::from_value(serde_json::json!({"devices": [
            {"device": "pocl-pthread", "t_compute_ns": 1.0, "t_global_ns": 2.0,
             "t_local_ns": 0.0, "bound": "global", "projected_ns": 4000.0, "rank": 1},
            {"device": "pocl-basic", "t_compute_ns": 1.0, "t_global_ns": 3.0,
             "t_local_ns": 0.0, "bound": "global", "projected_ns": 8000.0, "rank": 2}]}))
        .unwrap(),
        launch_device_profile: Some("pocl-pthread".into()),
        ..Default::default()
    });
    Launch {
        schema: SCHEMA_VERSION.into(),
        seq,
        pid: 7,
        kernel: kernel.into(),
        program: "00000000000000aa".into(),
        global: vec![1024],
        local: Some(vec![64]),
        device: d.clone(),
        status: LaunchStatus::Complete,
        device_ns: Some(ns),
        queued_ns: Some(3000),
        projection,
        ..Default::default()
    }
}

/// One log of `host`: `slow_first` once (seq 0, `slow` ns), `steady` twelve times around
/// `steady` ns, `pair` twice (`steady`, then 3× it).
fn write(dir: &Path, host: &str, slow: u64, steady: u64, projected: bool) -> PathBuf {
    let (d, id) = device(host);
    let mut recs = vec![launch(&d, "slow_first", 0, slow, projected)];
    for i in 0..12 {
        // ±2 % jitter: a warm GPU's repeat
        let ns = steady + (i % 3) * steady / 50;
        recs.push(launch(&d, "steady", 1 + i, ns, projected));
    }
    recs.push(launch(&d, "pair", 20, steady, projected));
    recs.push(launch(&d, "pair", 21, 3 * steady, projected));
    let mut text = serde_json::to_string(&DeviceDef::new(7, &d, &id)).unwrap() + "\n";
    for r in &recs {
        text += &(serde_json::to_string(r).unwrap() + "\n");
    }
    let p = dir.join(format!("{host}.{projected}.jsonl"));
    std::fs::write(&p, text).unwrap();
    p
}

fn clprism(args: &[&str]) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_clprism"));
    for (k, _) in std::env::vars() {
        if k.starts_with("CLPRISM_") {
            c.env_remove(k);
        }
    }
    let out = c.args(args).output().expect("spawn clprism");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_slow_single_first_launch_is_marked_cold_and_steady_launches_are_not() {
    let dir = std::env::temp_dir().join(format!("clprism-acc-cold-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // slow_first: 40 µs on pthread (10× its projection), 9 µs on basic
    let pt = write(&dir, "pthread", 40_000, 5_000, false);
    let bs = write(&dir, "basic", 9_000, 9_000, false);
    let pj = write(&dir, "pthread", 40_000, 5_000, true);
    let measured = format!("{},{}", pt.display(), bs.display());
    let profiles = OpenCL::model::profile::builtin_dir();
    let args = |fmt: &'static str| {
        vec![
            "accuracy".to_string(),
            "--profiles".into(),
            profiles.display().to_string(),
            "--measured".into(),
            measured.clone(),
            "--projected".into(),
            pj.display().to_string(),
            "--format".into(),
            fmt.into(),
        ]
    };
    let run = |fmt| {
        let a = args(fmt);
        clprism(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let j: Value = serde_json::from_str(&run("json")).unwrap();
    let rows = j["rows"].as_array().unwrap();
    let row = |k: &str| {
        rows.iter()
            .find(|r| r["id"]["kernel"] == k)
            .unwrap_or_else(|| panic!("no row {k}: {j}"))
    };
    let cold = |k: &str| row(k)["cold"].as_array().unwrap().len();
    assert_eq!(rows.len(), 3, "{j}");
    // one launch per device, the first of its process: marked on both devices
    assert_eq!(cold("slow_first"), 2, "{}", row("slow_first"));
    for c in row("slow_first")["cells"].as_array().unwrap() {
        assert_eq!(c["launches"], 1);
        assert!(c["cold"].as_str().unwrap().contains("first of its kernel"));
    }
    // twelve steady launches: not marked
    assert_eq!(cold("steady"), 0, "{}", row("steady"));
    assert_eq!(row("steady")["cells"][0]["launches"], 12);
    // two launches, one 3× the other: marked (median 2× the faster)
    assert_eq!(cold("pair"), 2, "{}", row("pair"));
    assert_eq!(j["cold_rows"], 2);
    // both summaries: all rows, and the steady one alone
    assert_eq!(j["summary"]["kernels"], 3);
    let w = &j["summary_without_cold"];
    assert_eq!(w["kernels"], 1, "{j}");
    let steady_ape: Vec<f64> = row("steady")["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["ape_model"].as_f64().unwrap())
        .collect();
    let want = steady_ape.iter().sum::<f64>() / steady_ape.len() as f64;
    assert!(
        (w["model_mape"].as_f64().unwrap() - want).abs() < 1e-12,
        "{w}"
    );
    assert!(j["summary"]["model_mape"].as_f64().unwrap() > want);

    let t = run("table");
    let marked: Vec<&str> = t.lines().filter(|l| l.ends_with("  COLD")).collect();
    assert_eq!(marked.len(), 4, "{t}");
    assert!(marked.iter().all(|l| !l.starts_with("steady")), "{t}");
    assert_eq!(
        t.lines().filter(|l| l.starts_with("    ^ COLD ")).count(),
        4,
        "{t}"
    );
    assert!(t.contains("\nsummary: 3 kernel(s)"), "{t}");
    assert!(
        t.contains("\nwithout the 2 row(s) marked cold: 1 kernel(s)\n  model:    MAPE "),
        "{t}"
    );
    assert_eq!(t.matches("  model:    MAPE ").count(), 2, "{t}");
    assert_eq!(t.matches("  relative-performance error").count(), 2, "{t}");
    let csv = run("csv");
    assert!(csv.lines().next().unwrap().ends_with(",cold"), "{csv}");
    std::fs::remove_dir_all(&dir).ok();
}
