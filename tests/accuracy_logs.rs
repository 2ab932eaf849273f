//! `clprism accuracy --measured ... --projected ...` on logs of any application (issue 19
//! item 5), on PoCL: log-mode runs of example apps with `POCL_DEVICES=pthread` and
//! `POCL_DEVICES=basic` stand in for two machines (each log holds one device, told apart
//! only by CL_DEVICE_VERSION, which the log's device line carries), and a project-mode run
//! with `pthread` gives the projections.
//!
//! Asserted: every kernel of the projected logs is matched on both devices and no kernel
//! is left out; the devices map to the `pocl-pthread` / `pocl-basic` profiles through their
//! device lines; the table, CSV and JSON hold the same rows; and every figure of every row
//! (medians, ratios, APEs, anchored times, relative error, best device) is recomputed here
//! from the raw log lines, independently of the library. No measured figure is hard-coded.

mod common;

use common::{assert_ok, examples, lib, read_log, root, run, scratch, Via};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const APPS: &[(&str, &[&str])] = &[("reduction", &[]), ("transpose", &[])];

fn clprism(args: &[&str]) -> std::process::Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_clprism"));
    for (k, _) in std::env::vars() {
        if k.starts_with("CLPRISM_") {
            c.env_remove(k);
        }
    }
    c.args(args).output().expect("spawn clprism")
}

/// Runs `app` under the interposer in `mode` on the PoCL device `dev`; returns its log.
fn app_log(dir: &Path, app: &str, args: &[&str], mode: &'static str, dev: &str) -> PathBuf {
    let log = dir.join(format!("{app}.{dev}.{mode}.jsonl"));
    let profiles = root().join("profiles");
    let out = run(
        &examples().join(app),
        args,
        Via::Preload(mode),
        &[
            ("POCL_DEVICES", dev),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_DEVICE_TIMING", "all"),
            ("CLPRISM_PROFILES", profiles.to_str().unwrap()),
            ("CLPRISM_SUMMARY", "off"),
        ],
    );
    assert_ok(&out, &format!("{app} ({mode}, {dev})"));
    log
}

fn median(mut v: Vec<f64>) -> f64 {
    assert!(!v.is_empty());
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// (program, kernel, global, local) of a launch record, as the JSON writes them.
fn key(r: &Value) -> String {
    format!(
        "{}|{}|{}|{}",
        r["program"], r["kernel"], r["global"], r["local"]
    )
}

fn key_of_row(r: &Value) -> String {
    let id = &r["id"];
    format!(
        "{}|{}|{}|{}",
        id["program"], id["kernel"], id["global"], id["local"]
    )
}

/// Median `device_ns` per kernel key of the completed launches of some logs.
fn measured(logs: &[PathBuf]) -> BTreeMap<String, f64> {
    let mut m: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for l in logs {
        for r in read_log(l) {
            if r["status"] == "complete" && r["device_ns"].as_u64().is_some_and(|t| t > 0) {
                m.entry(key(&r))
                    .or_default()
                    .push(r["device_ns"].as_f64().unwrap());
            }
        }
    }
    m.into_iter().map(|(k, v)| (k, median(v))).collect()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

#[test]
fn accuracy_from_logs_of_two_pocl_devices() {
    let _ = lib();
    let dir = scratch("accuracy_logs");
    let (mut pthread, mut basic, mut projected) = (Vec::new(), Vec::new(), Vec::new());
    for (app, args) in APPS {
        pthread.push(app_log(&dir, app, args, "log", "pthread"));
        basic.push(app_log(&dir, app, args, "log", "basic"));
        projected.push(app_log(&dir, app, args, "project", "pthread"));
    }
    // each log names its device once, with the identity that matches a profile
    for (l, host) in pthread
        .iter()
        .map(|l| (l, "pthread"))
        .chain(basic.iter().map(|l| (l, "basic")))
    {
        let first: Value =
            serde_json::from_str(std::fs::read_to_string(l).unwrap().lines().next().unwrap())
                .unwrap();
        assert_eq!(first["record"], "device", "{first}");
        assert!(
            first["version"]
                .as_str()
                .unwrap()
                .contains(&format!("HSTR: {host}")),
            "{first}"
        );
    }
    let join = |v: &[PathBuf]| {
        v.iter()
            .map(|p| p.to_str().unwrap().to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    let measured_arg = join(&[pthread.clone(), basic.clone()].concat());
    let projected_arg = join(&projected);
    let profiles = root().join("profiles");
    let acc = |format: &str| {
        let o = clprism(&[
            "accuracy",
            "--measured",
            &measured_arg,
            "--projected",
            &projected_arg,
            "--profiles",
            profiles.to_str().unwrap(),
            "--format",
            format,
        ]);
        assert_ok(&o, &format!("clprism accuracy --format {format}"));
        String::from_utf8(o.stdout).unwrap()
    };
    let table = acc("table");
    println!("{table}");
    let j: Value = serde_json::from_str(&acc("json")).unwrap();
    let csv = acc("csv");

    assert_eq!(
        j["devices"],
        serde_json::json!(["pocl-basic", "pocl-pthread"]),
        "{j}"
    );
    for m in j["device_map"].as_array().unwrap() {
        assert_eq!(m["by"], "identity", "{m}");
    }
    assert_eq!(j["unmatched"].as_array().unwrap().len(), 0, "{table}");
    let rows = j["rows"].as_array().unwrap();
    // every kernel (identity) of the projected logs has a row
    let mut kernels: Vec<String> = projected
        .iter()
        .flat_map(|l| read_log(l))
        .filter(|r| r["projection"]["devices"].is_array())
        .map(|r| key(&r))
        .collect();
    kernels.sort();
    kernels.dedup();
    let mut got: Vec<String> = rows.iter().map(key_of_row).collect();
    got.sort();
    assert_eq!(got, kernels, "{table}");
    assert!(!rows.is_empty());

    // every row recomputed from the raw logs
    let (mp, mb) = (measured(&pthread), measured(&basic));
    let own = measured(&projected);
    for r in rows {
        let k = key_of_row(r);
        let rec = projected
            .iter()
            .flat_map(|l| read_log(l))
            .find(|x| key(x) == k)
            .unwrap();
        let model = |d: &str| {
            rec["projection"]["devices"]
                .as_array()
                .unwrap()
                .iter()
                .find(|x| x["device"] == d)
                .unwrap()["projected_ns"]
                .as_f64()
                .unwrap()
        };
        assert_eq!(r["launch_device"], "pocl-pthread");
        assert_eq!(rec["projection"]["launch_device_profile"], "pocl-pthread");
        let cells = r["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 2, "{r}");
        let (l, o) = (&cells[0], &cells[1]);
        assert_eq!(
            (l["device"].as_str(), o["device"].as_str()),
            (Some("pocl-pthread"), Some("pocl-basic"))
        );
        let (tl, to) = (mp[&k], mb[&k]);
        let (pl, po) = (model("pocl-pthread"), model("pocl-basic"));
        let anchor = own[&k];
        assert!(close(l["measured_ns"].as_f64().unwrap(), tl), "{r}");
        assert!(close(o["measured_ns"].as_f64().unwrap(), to), "{r}");
        assert!(close(o["model_ns"].as_f64().unwrap(), po), "{r}");
        assert!(close(r["anchor_ns"].as_f64().unwrap(), anchor), "{r}");
        assert_eq!(r["anchor_source"], "project-run");
        let anchored = anchor * po / pl;
        assert!(close(o["anchored_ns"].as_f64().unwrap(), anchored), "{r}");
        assert!(l["anchored_ns"].is_null() && l["ape_anchored"].is_null());
        assert!(close(o["ratio_measured"].as_f64().unwrap(), to / tl), "{r}");
        assert!(
            close(o["ratio_projected"].as_f64().unwrap(), po / pl),
            "{r}"
        );
        assert!(
            close(l["ape_model"].as_f64().unwrap(), (pl - tl).abs() / tl),
            "{r}"
        );
        assert!(
            close(o["ape_model"].as_f64().unwrap(), (po - to).abs() / to),
            "{r}"
        );
        assert!(
            close(
                o["ape_anchored"].as_f64().unwrap(),
                (anchored - to).abs() / to
            ),
            "{r}"
        );
        // Panwar §V-B.1: distance of the unit vectors / √2
        let (na, np) = ((tl * tl + to * to).sqrt(), (pl * pl + po * po).sqrt());
        let rel = ((tl / na - pl / np).powi(2) + (to / na - po / np).powi(2)).sqrt()
            / std::f64::consts::SQRT_2;
        assert!(close(r["relative_error"].as_f64().unwrap(), rel), "{r}");
        let best = |a: f64, b: f64| if b < a { "pocl-basic" } else { "pocl-pthread" };
        assert_eq!(r["best_measured"], best(tl, to));
        assert_eq!(r["best_projected"], best(pl, po));
        assert_eq!(r["hit"], best(tl, to) == best(pl, po));
        assert!(table.contains(r["label"].as_str().unwrap()), "{table}");
    }
    let s = &j["summary"];
    assert_eq!(s["kernels"].as_u64(), Some(rows.len() as u64));
    assert_eq!(s["model_pairs"].as_u64(), Some(2 * rows.len() as u64));
    assert_eq!(s["anchored_pairs"].as_u64(), Some(rows.len() as u64));
    let hits = rows.iter().filter(|r| r["hit"] == true).count();
    assert_eq!(s["hits"].as_u64(), Some(hits as u64));
    assert!(
        table.contains(&format!("{hits} of {}", rows.len())),
        "{table}"
    );
    // the CSV: a header and one line per kernel and device
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("kernel,program,global,local,launch_device,device"));
    assert_eq!(lines.len(), 1 + 2 * rows.len(), "{csv}");
}
