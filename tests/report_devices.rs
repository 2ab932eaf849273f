//! `clprism report --devices` (issue 21) on real logs: the kmeans example (two kernels, one
//! of which balance mode keeps whole because of its global atomics) run natively and under
//! the interposer in log, project and balance mode (`CLPRISM_DEVICES=all`) on PoCL's CPU
//! devices, as scripts/demo.sh does for every example. Checks the table's structure (columns,
//! one row per kernel, shares summing to 1, a projected-best device), the CSV and JSON
//! outputs, the `--cmp` output check and the `--plot` SVG (well-formed XML). Needs `cargo
//! build` first.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ARGS: [&str; 2] = ["4096", "2"];

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

/// Runs kmeans natively and in the three modes; returns the logs (log, project, balance) and
/// the native and balanced `--dump` files.
fn demo_logs(d: &Path) -> (Vec<PathBuf>, PathBuf, PathBuf) {
    let exe = examples().join("kmeans");
    let p = |n: &str| d.join(n);
    let native_bin = p("native.bin");
    let o = run(
        &exe,
        &[ARGS[0], ARGS[1], "--dump", native_bin.to_str().unwrap()],
        Via::Native,
        &[],
    );
    assert_ok(&o, "kmeans native");
    let mut logs = Vec::new();
    for mode in ["log", "project", "balance"] {
        let log = p(&format!("{mode}.jsonl"));
        let dump = p(&format!("{mode}.bin"));
        let o = run(
            &exe,
            &[ARGS[0], ARGS[1], "--dump", dump.to_str().unwrap()],
            Via::Preload(mode),
            &[
                ("CLPRISM_LOG", log.to_str().unwrap()),
                ("CLPRISM_DEVICES", "all"),
                ("CLPRISM_SUMMARY", "off"),
            ],
        );
        assert_ok(&o, &format!("kmeans under clprism, {mode} mode"));
        logs.push(log);
    }
    (logs, native_bin, p("balance.bin"))
}

/// A small XML well-formedness check: balanced tags, quoted attributes, escaped text.
fn check_xml(s: &str) -> Result<Vec<String>, String> {
    fn entity_ok(rest: &str) -> bool {
        let Some(end) = rest.find(';') else {
            return false;
        };
        let e = &rest[1..end];
        matches!(e, "amp" | "lt" | "gt" | "quot" | "apos")
            || e.strip_prefix('#').is_some_and(|n| {
                n.strip_prefix('x').map_or_else(
                    || n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty(),
                    |h| h.chars().all(|c| c.is_ascii_hexdigit()) && !h.is_empty(),
                )
            })
    }
    fn text_ok(t: &str) -> Result<(), String> {
        for (i, _) in t.match_indices('&') {
            if !entity_ok(&t[i..]) {
                return Err(format!("bad entity in {t:?}"));
            }
        }
        Ok(())
    }
    let mut stack: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    let mut rest = s.trim_start();
    if let Some(r) = rest.strip_prefix("<?xml") {
        rest = &r[r.find("?>").ok_or("unterminated XML declaration")? + 2..];
    }
    let mut roots = 0;
    while !rest.is_empty() {
        let lt = rest.find('<').unwrap_or(rest.len());
        let text = &rest[..lt];
        if stack.is_empty() && !text.trim().is_empty() {
            return Err(format!("text outside the root: {text:?}"));
        }
        text_ok(text)?;
        rest = &rest[lt..];
        if rest.is_empty() {
            break;
        }
        let gt = rest.find('>').ok_or("unterminated tag")?;
        let tag = &rest[1..gt];
        rest = &rest[gt + 1..];
        if let Some(name) = tag.strip_prefix('/') {
            match stack.pop() {
                Some(open) if open == name.trim() => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
            continue;
        }
        let self_closing = tag.ends_with('/');
        let tag = tag.trim_end_matches('/');
        let name: String = tag.chars().take_while(|c| !c.is_whitespace()).collect();
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_alphanumeric() || "-_:".contains(c))
        {
            return Err(format!("bad tag name {name:?}"));
        }
        // attributes: name="value" pairs
        let mut a = tag[name.len()..].trim();
        while !a.is_empty() {
            let eq = a
                .find('=')
                .ok_or(format!("attribute without value in <{tag}>"))?;
            let an = a[..eq].trim();
            if an.is_empty() || an.contains(char::is_whitespace) {
                return Err(format!("bad attribute name {an:?}"));
            }
            let v = a[eq + 1..].trim_start();
            let q = v.chars().next().ok_or("missing attribute value")?;
            if q != '"' && q != '\'' {
                return Err(format!("unquoted attribute {an}"));
            }
            let end = v[1..].find(q).ok_or("unterminated attribute")? + 1;
            let val = &v[1..end];
            if val.contains('<') {
                return Err(format!("'<' in attribute {an}"));
            }
            text_ok(val)?;
            a = v[end + 1..].trim_start();
        }
        if stack.is_empty() {
            roots += 1;
        }
        seen.push(name.clone());
        if !self_closing {
            stack.push(name);
        }
    }
    if !stack.is_empty() {
        return Err(format!("unclosed {stack:?}"));
    }
    if roots != 1 {
        return Err(format!("{roots} root elements"));
    }
    Ok(seen)
}

#[test]
fn xml_checker_rejects_broken_documents() {
    assert!(check_xml(
        "<?xml version=\"1.0\"?>\n<svg a=\"1\"><g><text>a &amp; b</text></g><rect/></svg>\n"
    )
    .is_ok());
    for bad in [
        "<svg><g></svg>",
        "<svg>a & b</svg>",
        "<svg a=1></svg>",
        "<svg></svg><svg></svg>",
        "<svg><text>x</rect></svg>",
        "<svg a=\"<\"></svg>",
    ] {
        assert!(check_xml(bad).is_err(), "{bad}");
    }
}

#[test]
fn devices_view_of_a_real_app_in_three_modes() {
    let d = scratch("report_devices");
    let (logs, native_bin, balance_bin) = demo_logs(&d);
    let recs: Vec<Value> = logs.iter().flat_map(|l| read_log(l)).collect();
    let mut kernels: Vec<String> = recs
        .iter()
        .map(|r| r["kernel"].as_str().unwrap().to_string())
        .collect();
    kernels.sort();
    kernels.dedup();
    assert_eq!(kernels, ["kmeans_assign", "kmeans_update"]);
    let balance_devices: std::collections::BTreeSet<String> = recs
        .iter()
        .filter(|r| r["mode"] == "balance")
        .flat_map(|r| {
            r["schedule"]["devices"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|d| d["index"].as_str().unwrap().to_string())
        .collect();
    assert!(balance_devices.len() >= 2, "{balance_devices:?}");
    let svg = d.join("plot.svg");
    let files: Vec<&str> = logs.iter().map(|l| l.to_str().unwrap()).collect();
    let mut args = vec!["--devices"];
    args.extend(&files);
    args.extend([
        "--cmp",
        native_bin.to_str().unwrap(),
        balance_bin.to_str().unwrap(),
    ]);

    // table: the devices section has its columns and one row per kernel
    let mut targs = args.clone();
    targs.extend(["--plot", svg.to_str().unwrap()]);
    let out = ok_stdout(&report(&targs));
    let lines: Vec<&str> = out.lines().collect();
    let at = |title: &str| {
        lines
            .iter()
            .position(|l| *l == title)
            .unwrap_or_else(|| panic!("no section {title}:\n{out}"))
    };
    let k = at("devices");
    let head = lines[k + 1];
    let mut cols = vec![
        "kernel",
        "native n",
        "device",
        "native us",
        "balance n",
        "split",
        "balance us",
        "speedup",
        "projected best",
    ];
    let share_cols: Vec<String> = balance_devices
        .iter()
        .map(|d| format!("share {d}"))
        .collect();
    cols.extend(share_cols.iter().map(String::as_str));
    for c in &cols {
        assert!(head.contains(c), "column {c} missing: {head}");
    }
    let body: Vec<&str> = lines[k + 2..]
        .iter()
        .take_while(|l| !l.starts_with("---"))
        .copied()
        .collect();
    assert_eq!(body.len(), kernels.len(), "{out}");
    for row in &body {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert!(kernels.iter().any(|k| k == cells[0]), "{row}");
        let best = cells.last().unwrap();
        assert!(
            *best != "-" && !best.ends_with('%'),
            "no projected best: {row}"
        );
        let shares: Vec<f64> = cells
            .iter()
            .filter_map(|c| c.strip_suffix('%'))
            .map(|c| c.parse::<f64>().unwrap())
            .collect();
        if cells[0] == "kmeans_update" {
            assert_eq!(shares.len(), balance_devices.len(), "{row}");
            let sum: f64 = shares.iter().sum();
            assert!((sum - 100.0).abs() < 0.5, "shares sum to {sum}: {row}");
        } else {
            // kept whole (global atomics): no share
            assert!(shares.is_empty(), "{row}");
        }
    }
    assert!(lines[k + 2 + body.len() + 1].starts_with("all kernels"));
    let kw = at("kept whole");
    assert!(lines[kw + 2].starts_with("kmeans_assign"), "{out}");
    let r = at("projected ranking");
    assert!(lines[r + 1].starts_with("kernel") && lines[r + 1].contains("best"));
    assert!(lines[r + 2..r + 4]
        .iter()
        .all(|l| kernels.iter().any(|k| l.starts_with(k.as_str()))));
    let c = at("output check");
    assert!(lines[c + 2].ends_with("identical"), "{out}");

    // CSV: every section parses, the shares of the split kernel sum to 1
    let csv = ok_stdout(&report(&[args.as_slice(), &["--format", "csv"]].concat()));
    let sections: Vec<&str> = csv.split("\n\n").collect();
    assert!(sections[0].starts_with("# devices\n"), "{csv}");
    let mut it = sections[0].lines().skip(1);
    let head: Vec<&str> = it.next().unwrap().split(',').collect();
    assert_eq!(head[0], "kernel");
    for c in [
        "native_launches",
        "native_mean_ns",
        "balance_mean_ns",
        "speedup",
        "projected_best",
    ] {
        assert!(head.contains(&c), "{c}: {head:?}");
    }
    let rows: Vec<Vec<&str>> = it.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), kernels.len() + 1, "rows and the footer: {csv}");
    for r in &rows {
        assert_eq!(r.len(), head.len(), "{r:?}");
    }
    let upd = rows.iter().find(|r| r[0] == "kmeans_update").unwrap();
    let sum: f64 = head
        .iter()
        .zip(upd)
        .filter(|(h, _)| h.starts_with("share "))
        .map(|(_, v)| v.parse::<f64>().unwrap())
        .sum();
    assert!((sum - 1.0).abs() < 1e-6, "{sum}");
    assert!(csv.contains("# projected ranking\n") && csv.contains("# output check\n"));

    // JSON: the same view
    let j: Value = serde_json::from_str(&ok_stdout(&report(
        &[args.as_slice(), &["--format", "json"]].concat(),
    )))
    .unwrap();
    assert_eq!(j["records"], recs.len());
    let ks = j["kernels"].as_array().unwrap();
    assert_eq!(ks.len(), kernels.len());
    for k in ks {
        let name = k["kernel"].as_str().unwrap();
        let best = k["projected_best"].as_str().expect("a projected best");
        assert!(j["ranking"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["kernel"] == name && r["device"] == best && r["best"].as_u64() > Some(0)));
        assert!(k["native_launches"].as_u64().unwrap() > 0);
        assert!(k["native_mean_ns"].as_f64().unwrap() > 0.0);
        assert!(k["balance_mean_ns"].as_f64().unwrap() > 0.0);
        if k["split_launches"].as_u64().unwrap() > 0 {
            let s: f64 = k["shares"]
                .as_object()
                .unwrap()
                .values()
                .map(|v| v.as_f64().unwrap())
                .sum();
            assert!((s - 1.0).abs() < 1e-6, "{name}: {s}");
        }
    }
    assert_eq!(j["output_check"]["identical"], true);

    // the SVG: well-formed, one panel title per kernel, bars
    let s = std::fs::read_to_string(&svg).unwrap();
    let tags = check_xml(&s).unwrap_or_else(|e| panic!("{e}\n{s}"));
    assert_eq!(tags[0], "svg");
    assert!(tags.iter().filter(|t| *t == "rect").count() > 4);
    for k in &kernels {
        assert!(s.contains(&format!(">{k}</text>")), "{k}");
    }
}

#[test]
fn devices_options_are_checked() {
    let e = report(&["a.jsonl", "b.jsonl", "c.jsonl"]);
    assert_eq!(e.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&e.stderr).contains("--devices"));
    let e = report(&["a.jsonl", "--cmp", "x"]);
    assert_eq!(e.status.code(), Some(2));
    let e = report(&["a.jsonl", "--cmp", "x", "y"]);
    assert_eq!(e.status.code(), Some(2), "--cmp without --devices");
    let h = ok_stdout(&report(&["--help"]));
    assert!(h.contains("--devices") && h.contains("--plot") && h.contains("--cmp"));
}
