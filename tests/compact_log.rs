//! The compact project-mode log (issue 19 item 4, schema `clprism.launch/2`): an app
//! launching one kernel 1,000 times writes a log under 2 MB (the emulation once, in a
//! definition line, and a small reference per launch), and `clprism report` and `clprism
//! accuracy` give the same results on it as on its expanded form (`clprism schema
//! --expand`, every launch self-contained as version 1 wrote it).

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

const LAUNCHES: usize = 1000;

fn clprism(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_clprism"))
        .args(args)
        .output()
        .unwrap()
}

/// Runs many_launches under project mode on one PoCL device; returns the log's path.
fn project_log(dir: &Path, device: &str, file: &str) -> std::path::PathBuf {
    let log = dir.join(file);
    let n = LAUNCHES.to_string();
    let out = run(
        &c_program("many_launches"),
        &[&n],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", device),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_SUMMARY", "off"),
        ],
    );
    assert_ok(&out, &format!("many_launches on {device}"));
    log
}

#[test]
fn thousand_launches_log_is_compact_and_reads_the_same() {
    let d = scratch("compact_log");
    let (ca, cb, ea, eb) = (
        d.join("compact"),
        d.join("expanded"),
        d.join("acc_compact"),
        d.join("acc_expanded"),
    );
    for p in [&ca, &cb] {
        std::fs::create_dir_all(p).unwrap();
    }
    let logs = [
        project_log(&ca, "pthread", "many.0_0.jsonl"),
        project_log(&ca, "basic", "many.0_1.jsonl"),
    ];
    for log in &logs {
        let size = std::fs::metadata(log).unwrap().len();
        assert!(
            size < 2 << 20,
            "{}: {size} bytes for {LAUNCHES} launches",
            log.display()
        );
        let raw = read_log_raw(log);
        let defs: Vec<&Value> = raw.iter().filter(|v| v["record"] == "emulation").collect();
        assert_eq!(defs.len(), 1, "one emulation key, one definition");
        // and one device definition line, first
        assert_eq!(raw.len(), LAUNCHES + 2);
        assert_eq!(raw[0]["record"], "device", "{}", raw[0]);
        let raw: Vec<Value> = raw[1..].to_vec();
        // the definition comes before every reference to it, and holds the statistics
        assert!(raw[0].get("record").is_some(), "{}", raw[0]);
        assert!(defs[0]["emulation"]["stats"]["instructions"].is_object());
        assert!(!defs[0]["projection"]["devices"]
            .as_array()
            .unwrap()
            .is_empty());
        let mut emulated = 0;
        for r in &raw[1..] {
            let (e, p) = (&r["emulation"], &r["projection"]);
            assert_eq!(e["key"], defs[0]["key"], "{r}");
            assert!(
                e.get("stats").is_none() && p.get("devices").is_none(),
                "{r}"
            );
            emulated += (e["status"] == "ok") as usize;
            assert!(
                p["best"].is_string() && p["launch_device_rank"].is_u64(),
                "{r}"
            );
            assert!(p["launch_device_ns"].as_f64().unwrap() > 0.0, "{r}");
            assert!(r.to_string().len() < 2048, "{r}");
        }
        assert_eq!(emulated, 1, "one emulation, every other launch reused");
        // the expanded form: every launch self-contained, as resolved here on the JSON
        // values independently of the library
        let expanded = clprism(&["schema", "--expand", log.to_str().unwrap()]);
        assert_ok(&expanded, "clprism schema --expand");
        let x = cb.join(log.file_name().unwrap());
        std::fs::write(&x, &expanded.stdout).unwrap();
        let mine = expand_values(raw);
        let theirs: Vec<Value> = read_log_raw(&x)
            .into_iter()
            .filter(|v| v.get("record").is_none())
            .collect();
        assert_eq!(theirs.len(), LAUNCHES);
        assert_eq!(
            mine, theirs,
            "schema --expand and the test's expansion differ"
        );
        assert!(theirs.iter().all(|r| r["emulation"]["stats"].is_object()
            && r["projection"]["devices"].is_array()
            && r["emulation"].get("key").is_none()));
        let check = clprism(&[
            "schema",
            "--check",
            log.to_str().unwrap(),
            x.to_str().unwrap(),
        ]);
        assert_ok(&check, "clprism schema --check");
        // report: the same projection and emulation sections
        let rep = |f: &Path| -> Value {
            let o = clprism(&["report", f.to_str().unwrap(), "--format", "json"]);
            assert_ok(&o, "clprism report");
            let mut v: Value = serde_json::from_slice(&o.stdout).unwrap();
            v.as_object_mut().unwrap().remove("file");
            v
        };
        let (rc, rx) = (rep(log), rep(&x));
        assert_eq!(
            rc, rx,
            "report differs between the compact and the expanded log"
        );
        let rows = rc["projection"].as_array().unwrap();
        assert!(!rows.is_empty(), "{rc}");
        assert!(rows
            .iter()
            .all(|r| r["launches"].as_u64() == Some(LAUNCHES as u64)));
        assert_eq!(rc["unreadable_extras"], 0, "{rc}");
        assert_eq!(rc["emulation"][0]["reused"], (LAUNCHES - 1) as u64, "{rc}");
    }
    // accuracy: the same comparison from both forms (two devices)
    let profiles = root().join("profiles");
    let acc = |logs: &Path, out: &Path| -> Value {
        let o = clprism(&[
            "accuracy",
            "--from-logs",
            logs.to_str().unwrap(),
            "--profiles",
            profiles.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ]);
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        assert!(o.status.code().is_some(), "{text}");
        serde_json::from_str(&std::fs::read_to_string(out.join("accuracy.json")).unwrap()).unwrap()
    };
    let (a, b) = (acc(&ca, &ea), acc(&cb, &eb));
    assert_eq!(
        a, b,
        "accuracy differs between the compact and the expanded logs"
    );
    let rows = a["report"]["rows"].as_array().unwrap();
    assert!(
        rows.iter()
            .any(|r| r["kernel"].as_str().is_some_and(|k| k.contains("axpy"))),
        "{a}"
    );
}
