//! `clprism report` on a real log: tests/c/report_app.c run under the interposer
//! (LD_PRELOAD, and through `clprism run`) on PoCL's two pthread devices; the report's tables
//! are checked against the raw records and against what the app says it launched.
//! Needs `cargo build` first.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

fn report(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_clprism"))
        .arg("report")
        .args(args)
        .output()
        .expect("spawn")
}

fn ok_stdout(o: &Output) -> String {
    assert_ok(o, "clprism report");
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// Per kernel from the raw records: (launches, timed, Σ device_ns, statuses).
fn raw(recs: &[Value]) -> BTreeMap<String, (u64, u64, u64, BTreeMap<String, u64>)> {
    let mut m: BTreeMap<String, (u64, u64, u64, BTreeMap<String, u64>)> = BTreeMap::new();
    for r in recs {
        let e = m
            .entry(r["kernel"].as_str().unwrap().to_string())
            .or_default();
        e.0 += 1;
        if let Some(ns) = r["device_ns"].as_u64() {
            e.1 += 1;
            e.2 += ns;
        }
        *e.3.entry(r["status"].as_str().unwrap().to_string())
            .or_default() += 1;
    }
    m
}

fn app_counts(o: &Output) -> BTreeMap<String, u64> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("count "))
        .map(|l| {
            let (k, n) = l.split_once(' ').unwrap();
            (k.to_string(), n.parse().unwrap())
        })
        .collect()
}

fn produce_log(dir: &Path, name: &str) -> (std::path::PathBuf, Output) {
    let app = c_program("report_app");
    let log = dir.join(name);
    let o = run(
        &app,
        &[],
        Via::Preload("log"),
        &[
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_SUMMARY", "off"),
        ],
    );
    assert_ok(&o, "report_app under clprism");
    (log, o)
}

#[test]
fn report_of_a_real_log_is_consistent_with_its_records() {
    let d = scratch("report_real");
    let (log, app_out) = produce_log(&d, "real.jsonl");
    let recs = read_log(&log);
    let printed = launches_printed(&app_out) as u64;
    assert_eq!(recs.len() as u64, printed);
    let raw = raw(&recs);
    let counts = app_counts(&app_out);
    let f = log.to_str().unwrap();

    // JSON: launch counts equal the app's, totals equal the sums of device_ns
    let j: Value = serde_json::from_str(&ok_stdout(&report(&[f, "--format", "json"]))).unwrap();
    assert_eq!(j["records"], printed);
    assert_eq!(j["malformed"], 0);
    assert_eq!(j["total"]["launches"], printed);
    let rows = j["kernels"].as_array().unwrap();
    assert_eq!(rows.len(), counts.len());
    let mut grand = 0;
    for r in rows {
        let k = r["kernel"].as_str().unwrap();
        let (launches, timed, total, statuses) = &raw[k];
        assert_eq!(r["launches"], counts[k], "{k}: launches vs the app");
        assert_eq!(r["launches"], *launches);
        assert_eq!(r["timed"], *timed);
        assert_eq!(r["total_ns"], *total);
        let st: BTreeMap<String, u64> = serde_json::from_value(r["statuses"].clone()).unwrap();
        assert_eq!(&st, statuses);
        grand += total;
    }
    assert_eq!(j["total"]["total_ns"], grand);
    // the rejected launch of "add" is there and is not timed
    assert_eq!(raw["add"].3.get("enqueue_failed"), Some(&1));
    assert_eq!(
        rows.iter().find(|r| r["kernel"] == "add").unwrap()["timed"],
        raw["add"].0 - 1
    );
    // "scale" ran on the last device, the others on the first one
    let devs = |k: &str| -> Vec<String> {
        rows.iter().find(|r| r["kernel"] == k).unwrap()["devices"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(devs("add"), vec!["0:0"]);
    assert_eq!(devs("fill2d"), vec!["0:0"]);
    assert_eq!(devs("scale").len(), 1);

    // table: structure, one row per kernel, launch counts add up
    let out = ok_stdout(&report(&[f]));
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].ends_with("real.jsonl"));
    assert!(lines[1].starts_with(&format!("records: {printed}  pids: ")));
    let k = lines.iter().position(|l| *l == "kernels").unwrap();
    assert!(lines[k + 1].starts_with("kernel") && lines[k + 1].contains("launches"));
    let body: Vec<&str> = lines[k + 2..]
        .iter()
        .take_while(|l| !l.starts_with("---"))
        .copied()
        .collect();
    assert_eq!(body.len(), counts.len());
    let mut sum = 0;
    for l in &body {
        let cells: Vec<&str> = l.split_whitespace().collect();
        assert_eq!(cells[1].parse::<u64>().unwrap(), counts[cells[0]]);
        sum += cells[1].parse::<u64>().unwrap();
    }
    let footer: Vec<&str> = lines[k + 2 + body.len() + 1].split_whitespace().collect();
    assert_eq!(footer[0], "total");
    assert_eq!(footer[1].parse::<u64>().unwrap(), sum);
    assert_eq!(sum, printed);
    let add_row = body.iter().find(|l| l.starts_with("add ")).unwrap();
    assert!(add_row.contains("enqueue_failed:1"), "{add_row}");

    // --kernel: every launch of fill2d, with its 2D shape
    let out = ok_stdout(&report(&[f, "--kernel", "fill2d", "--format", "csv"]));
    let mut it = out.lines();
    let head: Vec<&str> = it.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = it.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len() as u64, counts["fill2d"]);
    let g = head.iter().position(|h| *h == "global").unwrap();
    let l = head.iter().position(|h| *h == "local").unwrap();
    for r in &rows {
        assert_eq!(r[g], "64x32");
        assert_eq!(r[l], "8x8");
    }
}

#[test]
fn comparing_two_real_runs() {
    let d = scratch("report_real_compare");
    let (a, out_a) = produce_log(&d, "a.jsonl");
    // the second run goes through `clprism run`
    let b = d.join("b.jsonl");
    let o = Command::new(env!("CARGO_BIN_EXE_clprism"))
        .args([
            "run",
            "--log",
            b.to_str().unwrap(),
            "--summary",
            "off",
            "--",
        ])
        .arg(c_program("report_app"))
        .env(
            "POCL_DEVICES",
            std::env::var("POCL_DEVICES").unwrap_or_else(|_| POCL.into()),
        )
        .env_remove("CLPRISM_MODE")
        .output()
        .unwrap();
    assert_ok(&o, "clprism run report_app");
    let (ra, rb) = (raw(&read_log(&a)), raw(&read_log(&b)));
    let j: Value = serde_json::from_str(&ok_stdout(&report(&[
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--format",
        "json",
    ])))
    .unwrap();
    let rows = j["kernels"].as_array().unwrap();
    assert_eq!(rows.len(), app_counts(&out_a).len());
    for r in rows {
        let k = r["kernel"].as_str().unwrap();
        assert_eq!(r["a_launches"], ra[k].0);
        assert_eq!(r["b_launches"], rb[k].0);
        assert_eq!(r["a_total_ns"], ra[k].2);
        assert_eq!(r["b_total_ns"], rb[k].2);
        let want = rb[k].2 as f64 / ra[k].2 as f64;
        assert!((r["ratio"].as_f64().unwrap() - want).abs() < 1e-9 * want.max(1.0));
    }
    assert_eq!(j["total"]["a_launches"], j["total"]["b_launches"]);
}
