//! `clprism report` on synthetic logs written by the tests: the tables' structure and their
//! consistency with the raw records (launch counts add up, totals equal sums, shares sum to
//! one), in log, project and balance mode, comparison of two runs, `--kernel`, malformed
//! lines and usage errors. Every expected figure is computed here from the records written.

mod common;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn clprism() -> Command {
    Command::new(env!("CARGO_BIN_EXE_clprism"))
}

fn report(args: &[&str]) -> Output {
    clprism().arg("report").args(args).output().expect("spawn")
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "clprism report failed ({:?}): {}",
        o.status,
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// Deterministic pseudo-random numbers (64-bit LCG, Knuth's constants).
struct Lcg(u64);
impl Lcg {
    fn next(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) % n
    }
}

fn rec(seq: u64, pid: u32, kernel: &str, mode: &str, global: &[u64], dev: &str) -> Value {
    json!({"schema":"clprism.launch/1","seq":seq,"time_ns":1_000_000 + seq,"pid":pid,
        "thread":pid,"mode":mode,"kernel":kernel,"program":"00aa","work_dim":global.len(),
        "global":global,"local":null,"offset":null,
        "device":{"index":dev,"name":"pthread-test","type":"cpu"},
        "status":"complete","device_ns":null,"queued_ns":null})
}

fn write_log(path: &Path, recs: &[Value], junk: &[&str]) {
    let mut s = String::new();
    for (i, r) in recs.iter().enumerate() {
        s.push_str(&r.to_string());
        s.push('\n');
        if let Some(j) = junk.get(i) {
            s.push_str(j);
            s.push('\n');
        }
    }
    std::fs::write(path, s).unwrap();
}

/// A text table section: heading cells, rows, footer (after the rule), split on 2+ spaces.
struct TextTable {
    head: Vec<String>,
    rows: Vec<Vec<String>>,
    footer: Option<Vec<String>>,
}

fn split_cells(line: &str) -> Vec<String> {
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(String::from)
        .collect()
}

fn text_section(out: &str, title: &str) -> TextTable {
    let lines: Vec<&str> = out.lines().collect();
    let start = lines
        .iter()
        .position(|l| *l == title)
        .unwrap_or_else(|| panic!("no section '{title}' in:\n{out}"));
    let head = split_cells(lines[start + 1]);
    let mut rows = Vec::new();
    let mut footer = None;
    let mut i = start + 2;
    while i < lines.len() && !lines[i].is_empty() {
        if lines[i].chars().all(|c| c == '-') {
            footer = Some(split_cells(lines[i + 1]));
            break;
        }
        let cells = split_cells(lines[i]);
        assert_eq!(cells.len(), head.len(), "row '{}' of {title}", lines[i]);
        rows.push(cells);
        i += 1;
    }
    TextTable { head, rows, footer }
}

impl TextTable {
    fn col(&self, name: &str) -> usize {
        self.head
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.head))
    }
}

/// CSV sections (`# title` lines) as title -> (heading, rows).
fn csv_sections(out: &str) -> BTreeMap<String, (Vec<String>, Vec<Vec<String>>)> {
    let mut m = BTreeMap::new();
    let mut title = "kernels".to_string();
    let mut cur: Option<(Vec<String>, Vec<Vec<String>>)> = None;
    for l in out.lines().chain(std::iter::once("")) {
        if let Some(t) = l.strip_prefix("# ") {
            title = t.to_string();
        } else if l.is_empty() {
            if let Some(c) = cur.take() {
                m.insert(title.clone(), c);
            }
        } else {
            // no field of these tests holds a quoted comma
            let cells: Vec<String> = l.split(',').map(String::from).collect();
            match &mut cur {
                None => cur = Some((cells, Vec::new())),
                Some((_, rows)) => rows.push(cells),
            }
        }
    }
    m
}

/// Log mode: 4 kernels, 2 pids, some launches without a device time, 3 malformed lines.
fn log_mode_records() -> Vec<Value> {
    let mut rng = Lcg(7);
    let kernels = ["alpha", "beta", "gamma", "delta_long_kernel_name"];
    let mut recs = Vec::new();
    for seq in 0..60u64 {
        let k = kernels[rng.next(4) as usize];
        let pid = if seq < 30 { 100 } else { 200 };
        let dev = if rng.next(2) == 0 { "0:0" } else { "0:1" };
        let mut r = rec(seq, pid, k, "log", &[1024 * (1 + rng.next(3))], dev);
        match rng.next(10) {
            0 => {
                r["status"] = json!("enqueue_failed");
                r["error_code"] = json!(-54);
            }
            1 => r["status"] = json!("incomplete"),
            _ => {
                r["device_ns"] = json!(1000 + rng.next(5_000_000));
                r["queued_ns"] = json!(rng.next(10_000));
            }
        }
        recs.push(r);
    }
    recs
}

#[derive(Default, Debug)]
struct Expect {
    launches: u64,
    timed: u64,
    total: u64,
    min: Option<u64>,
    max: Option<u64>,
}

fn expected(recs: &[Value]) -> BTreeMap<String, Expect> {
    let mut m: BTreeMap<String, Expect> = BTreeMap::new();
    for r in recs {
        let e = m
            .entry(r["kernel"].as_str().unwrap().to_string())
            .or_default();
        e.launches += 1;
        let t = r["device_ns"]
            .as_u64()
            .or_else(|| r["schedule"]["wall_ns"].as_u64());
        if let Some(t) = t {
            e.timed += 1;
            e.total += t;
            e.min = Some(e.min.map_or(t, |m| m.min(t)));
            e.max = Some(e.max.map_or(t, |m| m.max(t)));
        }
    }
    m
}

#[test]
fn log_mode_json_csv_and_table_agree_with_the_records() {
    let d = common::scratch("report_log_mode");
    let f = d.join("log.jsonl");
    let recs = log_mode_records();
    write_log(
        &f,
        &recs,
        &[
            "",
            "",
            "this is not json",
            "",
            "{\"kernel\": 3}",
            "",
            "[1,2,3]",
        ],
    );
    let f = f.to_str().unwrap();
    let exp = expected(&recs);
    let n = recs.len() as u64;
    let grand: u64 = exp.values().map(|e| e.total).sum();

    // JSON: exact figures
    let o = report(&[f, "--format", "json"]);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(
        stderr.contains("skipped 3 malformed lines"),
        "stderr: {stderr}"
    );
    let j: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(j["records"], n);
    assert_eq!(j["malformed"], 3);
    assert_eq!(j["pids"], json!([100, 200]));
    assert_eq!(j["total"]["launches"], n);
    assert_eq!(j["total"]["total_ns"], grand);
    let rows = j["kernels"].as_array().unwrap();
    assert_eq!(rows.len(), exp.len());
    let mut share_sum = 0.0;
    let mut prev_total = u64::MAX;
    for r in rows {
        let e = &exp[r["kernel"].as_str().unwrap()];
        assert_eq!(r["launches"], e.launches);
        assert_eq!(r["timed"], e.timed);
        assert_eq!(r["total_ns"], e.total);
        assert_eq!(r["min_ns"].as_u64(), e.min);
        assert_eq!(r["max_ns"].as_u64(), e.max);
        let mean = r["mean_ns"].as_f64().unwrap();
        assert!((mean - e.total as f64 / e.timed as f64).abs() < 1e-6);
        let statuses: u64 = r["statuses"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum();
        assert_eq!(statuses, e.launches, "statuses add up to launches");
        share_sum += r["share"].as_f64().unwrap();
        // sorted by total time, largest first
        let t = r["total_ns"].as_u64().unwrap();
        assert!(t <= prev_total);
        prev_total = t;
    }
    assert!((share_sum - 1.0).abs() < 1e-9);

    // CSV: integers in ns, footer = sums
    let csv = stdout(&report(&[f, "--format=csv"]));
    let secs = csv_sections(&csv);
    let (head, rows) = &secs["kernels"];
    let c = |name: &str| head.iter().position(|h| h == name).unwrap();
    let (body, foot) = rows.split_at(rows.len() - 1);
    assert_eq!(foot[0][c("kernel")], "total");
    assert_eq!(body.len(), exp.len());
    let mut launches = 0;
    let mut total = 0;
    for r in body {
        let e = &exp[&r[c("kernel")]];
        assert_eq!(r[c("launches")].parse::<u64>().unwrap(), e.launches);
        assert_eq!(r[c("total_ns")].parse::<u64>().unwrap(), e.total);
        launches += e.launches;
        total += e.total;
    }
    assert_eq!(foot[0][c("launches")].parse::<u64>().unwrap(), launches);
    assert_eq!(foot[0][c("total_ns")].parse::<u64>().unwrap(), total);
    assert_eq!(launches, n);

    // table: one row per kernel, launches add up to the footer and the record count, the
    // totals (rounded to µs in ms) add up within rounding
    let out = stdout(&report(&[f]));
    assert!(out.starts_with("clprism report: "));
    assert!(out.contains(&format!("records: {n}  pids: 100 200  modes: log:{n}")));
    let t = text_section(&out, "kernels");
    assert_eq!(
        t.head,
        vec![
            "kernel",
            "launches",
            "timed",
            "total ms",
            "mean us",
            "min us",
            "max us",
            "share",
            "devices",
            "other status"
        ]
    );
    assert_eq!(t.rows.len(), exp.len());
    let sum: u64 = t
        .rows
        .iter()
        .map(|r| r[t.col("launches")].parse::<u64>().unwrap())
        .sum();
    let foot = t.footer.as_ref().unwrap();
    assert_eq!(foot[0], "total");
    assert_eq!(foot[1].parse::<u64>().unwrap(), sum);
    assert_eq!(sum, n);
    let ms_sum: f64 = t
        .rows
        .iter()
        .map(|r| r[t.col("total ms")].parse::<f64>().unwrap())
        .sum();
    let ms_total: f64 = foot[3].parse().unwrap();
    assert!((ms_sum - ms_total).abs() <= 0.0005 * exp.len() as f64 + 1e-9);
    assert!((ms_total - grand as f64 / 1e6).abs() <= 0.0005);
    for r in &t.rows {
        let e = &exp[&r[0]];
        let other = &r[t.col("other status")];
        assert_eq!(
            other == "-",
            e.timed == e.launches,
            "kernel {}: other status '{other}'",
            r[0]
        );
    }
    // no projection/balance sections for a log-mode run
    assert!(!out.contains("\nprojection\n") && !out.contains("\nbalance\n"));
}

fn projection(kernel_bias: u64, rng: &mut Lcg) -> (Value, String) {
    let profiles = ["a100", "mi250", "cpu-x"];
    let mut devs: Vec<(String, f64, String)> = profiles
        .iter()
        .map(|p| {
            let t = 1000.0 + (rng.next(100_000) + kernel_bias) as f64;
            let bound = ["compute", "global", "local"][rng.next(3) as usize];
            (p.to_string(), t, bound.to_string())
        })
        .collect();
    devs.sort_by(|a, b| a.1.total_cmp(&b.1));
    let best = devs[0].0.clone();
    let arr: Vec<Value> = devs
        .iter()
        .enumerate()
        .map(|(i, (p, t, b))| {
            json!({"device":p,"t_compute_ns":t*0.5,"t_global_ns":*t,"t_local_ns":t*0.1,
                   "bound":b,"projected_ns":*t,"rank":i+1})
        })
        .collect();
    (json!({"devices": arr, "best": best}), best)
}

#[test]
fn project_mode_projection_and_emulation_sections() {
    let d = common::scratch("report_project_mode");
    let f = d.join("project.jsonl");
    let mut rng = Lcg(11);
    let mut recs = Vec::new();
    for seq in 0..24u64 {
        let k = if seq % 3 == 0 { "matmul" } else { "saxpy" };
        let mut r = rec(seq, 7, k, "project", &[4096], "0:0");
        r["device_ns"] = json!(10_000 + rng.next(90_000));
        let (p, _) = projection(if k == "matmul" { 50_000 } else { 0 }, &mut rng);
        r["projection"] = p;
        r["emulation"] = if seq % 7 == 6 {
            json!({"error": "unsupported opcode"})
        } else {
            json!({"instructions": {}, "global_loads": {}, "emulation_ns": 200_000 + rng.next(800_000),
                   "budget_exhausted": seq % 5 == 0, "reused": seq % 4 == 1})
        };
        recs.push(r);
    }
    std::fs::write(
        &f,
        recs.iter()
            .map(|r| r.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    let f = f.to_str().unwrap();
    let j: Value = serde_json::from_str(&stdout(&report(&[f, "--format", "json"]))).unwrap();

    // projection: per (kernel, profile): launches, mean projected time, best count, bound
    let proj = j["projection"].as_array().unwrap();
    assert_eq!(proj.len(), 2 * 3);
    let mut best_total = 0;
    for p in proj {
        let k = p["kernel"].as_str().unwrap();
        let dev = p["device"].as_str().unwrap();
        let mine: Vec<&Value> = recs
            .iter()
            .filter(|r| r["kernel"] == k)
            .map(|r| {
                r["projection"]["devices"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["device"] == dev)
                    .unwrap()
            })
            .collect();
        assert_eq!(p["launches"], mine.len() as u64);
        let mean: f64 = mine
            .iter()
            .map(|x| x["projected_ns"].as_f64().unwrap())
            .sum::<f64>()
            / mine.len() as f64;
        assert!((p["mean_projected_ns"].as_f64().unwrap() - mean).abs() < 1e-6);
        let best = recs
            .iter()
            .filter(|r| r["kernel"] == k && r["projection"]["best"] == dev)
            .count() as u64;
        assert_eq!(p["best"], best);
        best_total += best;
        let mut bounds: BTreeMap<&str, u64> = BTreeMap::new();
        for x in &mine {
            *bounds.entry(x["bound"].as_str().unwrap()).or_default() += 1;
        }
        let top = bounds.values().max().unwrap();
        assert_eq!(bounds[p["bound"].as_str().unwrap()], *top);
        let r = p["mean_rank"].as_f64().unwrap();
        assert!((1.0..=3.0).contains(&r));
    }
    assert_eq!(best_total, recs.len() as u64, "one best device per launch");

    // emulation: counts, mean emulation time, overhead = emulation time / measured time
    let emu = j["emulation"].as_array().unwrap();
    assert_eq!(emu.len(), 2);
    for e in emu {
        let k = e["kernel"].as_str().unwrap();
        let mine: Vec<&Value> = recs.iter().filter(|r| r["kernel"] == k).collect();
        assert_eq!(e["launches"], mine.len() as u64);
        let errs = mine
            .iter()
            .filter(|r| r["emulation"]["error"].is_string())
            .count() as u64;
        assert_eq!(e["errors"], errs);
        let reused = mine
            .iter()
            .filter(|r| r["emulation"]["reused"] == true)
            .count() as u64;
        assert_eq!(e["reused"], reused);
        let ns: Vec<u64> = mine
            .iter()
            .filter_map(|r| r["emulation"]["emulation_ns"].as_u64())
            .collect();
        let total: u64 = ns.iter().sum();
        assert_eq!(e["total_emulation_ns"], total);
        let mean = total as f64 / ns.len() as f64;
        assert!((e["mean_emulation_ns"].as_f64().unwrap() - mean).abs() < 1e-6);
        let measured: u64 = mine.iter().map(|r| r["device_ns"].as_u64().unwrap()).sum();
        let ovh = e["overhead"].as_f64().unwrap();
        assert!((ovh - total as f64 / measured as f64).abs() < 1e-9);
    }

    // table: the sections are there with one row per (kernel, profile) / kernel
    let out = stdout(&report(&[f]));
    let t = text_section(&out, "projection");
    assert_eq!(t.rows.len(), 6);
    let launches: u64 = t
        .rows
        .iter()
        .map(|r| r[t.col("launches")].parse::<u64>().unwrap())
        .sum();
    assert_eq!(launches, 3 * recs.len() as u64);
    let best: u64 = t
        .rows
        .iter()
        .map(|r| r[t.col("best")].parse::<u64>().unwrap())
        .sum();
    assert_eq!(best, recs.len() as u64);
    let t = text_section(&out, "emulation");
    assert_eq!(t.rows.len(), 2);
    assert!(t
        .rows
        .iter()
        .any(|r| r.last().unwrap().contains("unsupported opcode")));
}

/// A balanced launch: chunks alternate between the two devices; `abandon` marks the last
/// chunk abandoned and re-given to device 0.
fn balanced(seq: u64, kernel: &str, global: u64, wall: u64, rng: &mut Lcg, abandon: bool) -> Value {
    let wgs = global / 64;
    let mut chunks = Vec::new();
    let mut first = 0;
    let mut i = 0;
    while first < wgs {
        let count = (1 + rng.next(6)).min(wgs - first);
        chunks.push(json!({"device": i % 2, "first_wg": first, "count": count,
            "enqueue_ns": 10, "start_ns": 20, "end_ns": 30, "abandoned": false}));
        first += count;
        i += 1;
    }
    if abandon {
        let last = chunks.last_mut().unwrap();
        last["abandoned"] = json!(true);
        let (f, c) = (last["first_wg"].clone(), last["count"].clone());
        chunks.push(
            json!({"device": 0, "first_wg": f, "count": c, "enqueue_ns": 40,
            "start_ns": 50, "end_ns": 60, "abandoned": false}),
        );
    }
    let mut r = rec(seq, 9, kernel, "balance", &[global], "0:0");
    r["schedule"] = json!({"scheduler": "boyer",
        "devices": [{"index": "0:0", "name": "devA"}, {"index": "0:1", "name": "devB"}],
        "chunks": chunks, "work_groups": wgs, "idle_tail_ns": 1000 + rng.next(9000),
        "merge": "footprint", "fallback": null, "wall_ns": wall});
    r
}

fn single(seq: u64, kernel: &str, global: u64, t: u64) -> Value {
    let mut r = rec(seq, 9, kernel, "balance", &[global], "0:0");
    r["device_ns"] = json!(t);
    r["schedule"] = json!({"scheduler": "single", "devices": [{"index": "0:0", "name": "devA"}],
        "chunks": [], "work_groups": global / 64, "fallback": null, "wall_ns": t});
    r
}

#[test]
fn balance_mode_share_idle_tail_and_speedup() {
    let d = common::scratch("report_balance_mode");
    let f = d.join("balance.jsonl");
    let mut rng = Lcg(3);
    let mut recs = Vec::new();
    // baselines for "stencil" at 8192 (mean 40 µs); none for 4096
    for (i, t) in [30_000u64, 50_000, 40_000].iter().enumerate() {
        recs.push(single(i as u64, "stencil", 8192, *t));
    }
    for i in 0..8u64 {
        recs.push(balanced(
            10 + i,
            "stencil",
            8192,
            10_000 + 2_000 * i,
            &mut rng,
            i == 3,
        ));
    }
    for i in 0..4u64 {
        recs.push(balanced(20 + i, "stencil", 4096, 9_000, &mut rng, false));
    }
    // a fallback
    let mut fb = rec(30, 9, "stencil", "balance", &[8192], "0:0");
    fb["device_ns"] = json!(45_000);
    fb["schedule"] = json!({"scheduler": "boyer", "devices": [], "chunks": [],
        "work_groups": 128, "fallback": "kernel writes through a pointer it computed",
        "wall_ns": 45_000});
    recs.push(fb);
    // a second kernel with explicit share arrays
    for i in 0..5u64 {
        let mut r = balanced(40 + i, "blur", 1024, 5_000, &mut rng, false);
        r["schedule"]["share"] = json!([0.25, 0.75]);
        recs.push(r);
    }
    std::fs::write(
        &f,
        recs.iter()
            .map(|r| r.to_string() + "\n")
            .collect::<String>(),
    )
    .unwrap();
    let f = f.to_str().unwrap();
    let j: Value = serde_json::from_str(&stdout(&report(&[f, "--format", "json"]))).unwrap();

    let bal = j["balance"].as_array().unwrap();
    let stencil = bal.iter().find(|b| b["kernel"] == "stencil").unwrap();
    let is_boyer = |r: &&Value| r["kernel"] == "stencil" && r["schedule"]["scheduler"] == "boyer";
    let boyer: Vec<&Value> = recs.iter().filter(is_boyer).collect();
    assert_eq!(stencil["launches"], boyer.len() as u64);
    assert_eq!(stencil["fallbacks"], 1);
    assert_eq!(stencil["schedulers"]["boyer"], boyer.len() as u64);
    // speedup: launches at 8192 (fallback included) against the mean of the 3 single ones
    let base = (30_000.0 + 50_000.0 + 40_000.0) / 3.0;
    let matched: Vec<u64> = boyer
        .iter()
        .filter(|r| r["global"] == json!([8192]))
        .map(|r| r["schedule"]["wall_ns"].as_u64().unwrap())
        .collect();
    assert_eq!(stencil["matched"], matched.len() as u64);
    assert_eq!(stencil["baseline_launches"], 3);
    let want = base * matched.len() as f64 / matched.iter().sum::<u64>() as f64;
    assert!((stencil["speedup"].as_f64().unwrap() - want).abs() < 1e-9);
    // idle tail and chunks: over the launches that did not fall back
    let ok: Vec<&&Value> = boyer
        .iter()
        .filter(|r| r["schedule"]["fallback"].is_null())
        .collect();
    let idle: f64 = ok
        .iter()
        .map(|r| r["schedule"]["idle_tail_ns"].as_f64().unwrap())
        .sum::<f64>()
        / ok.len() as f64;
    assert!((stencil["mean_idle_tail_ns"].as_f64().unwrap() - idle).abs() < 1e-6);
    let chunks: f64 = ok
        .iter()
        .map(|r| r["schedule"]["chunks"].as_array().unwrap().len() as f64)
        .sum::<f64>()
        / ok.len() as f64;
    assert!((stencil["mean_chunks"].as_f64().unwrap() - chunks).abs() < 1e-9);

    // shares: per kernel they sum to 1; work-groups per device = non-abandoned chunk counts,
    // and over the devices they add up to the NDRange work-groups of every launch
    let shares = j["shares"].as_array().unwrap();
    for k in ["stencil", "blur"] {
        let rows: Vec<&Value> = shares.iter().filter(|s| s["kernel"] == k).collect();
        assert_eq!(rows.len(), 2, "{k}: two devices");
        let sum: f64 = rows.iter().map(|s| s["mean_share"].as_f64().unwrap()).sum();
        assert!((sum - 1.0).abs() < 1e-9, "{k}: shares sum to {sum}");
        let wg: u64 = rows
            .iter()
            .map(|s| s["work_groups"].as_u64().unwrap())
            .sum();
        let want_wg: u64 = recs
            .iter()
            .filter(|r| r["kernel"] == k && r["schedule"]["scheduler"] == "boyer")
            .filter(|r| r["schedule"]["fallback"].is_null())
            .map(|r| r["schedule"]["work_groups"].as_u64().unwrap())
            .sum();
        assert_eq!(wg, want_wg, "{k}");
        for s in rows {
            let idx = if s["device"].as_str().unwrap().starts_with("0:0") {
                0
            } else {
                1
            };
            let mine: u64 = recs
                .iter()
                .filter(|r| r["kernel"] == k && r["schedule"]["scheduler"] == "boyer")
                .flat_map(|r| r["schedule"]["chunks"].as_array().unwrap().iter())
                .filter(|c| c["device"] == idx && c["abandoned"] == false)
                .map(|c| c["count"].as_u64().unwrap())
                .sum();
            assert_eq!(s["work_groups"], mine);
        }
    }
    let abandoned: u64 = shares
        .iter()
        .map(|s| s["abandoned"].as_u64().unwrap())
        .sum();
    assert_eq!(abandoned, 1);
    let blur_a = shares
        .iter()
        .find(|s| s["kernel"] == "blur" && s["device"] == "0:0 devA")
        .unwrap();
    assert!((blur_a["mean_share"].as_f64().unwrap() - 0.25).abs() < 1e-12);
    let blur = bal.iter().find(|b| b["kernel"] == "blur").unwrap();
    assert!(blur["speedup"].is_null(), "no baseline for blur");

    // table
    let out = stdout(&report(&[f]));
    let t = text_section(&out, "balance");
    assert_eq!(t.rows.len(), 2);
    let t = text_section(&out, "share");
    assert_eq!(t.rows.len(), 4);
    let pct: f64 = t
        .rows
        .iter()
        .filter(|r| r[0] == "stencil")
        .map(|r| {
            r[t.col("share")]
                .trim_end_matches('%')
                .parse::<f64>()
                .unwrap()
        })
        .sum();
    assert!((pct - 100.0).abs() < 0.11);
}

#[test]
fn comparing_two_runs() {
    let d = common::scratch("report_compare");
    let (fa, fb) = (d.join("a.jsonl"), d.join("b.jsonl"));
    let mut rng = Lcg(5);
    let mut a = Vec::new();
    for seq in 0..12u64 {
        let k = ["stencil", "only_in_a"][(seq % 2) as usize];
        let mut r = rec(seq, 1, k, "log", &[8192], "0:0");
        r["device_ns"] = json!(20_000 + rng.next(40_000));
        a.push(r);
    }
    let mut b = Vec::new();
    for seq in 0..9u64 {
        b.push(balanced(
            seq,
            "stencil",
            8192,
            8_000 + rng.next(10_000),
            &mut rng,
            false,
        ));
    }
    let mut r = rec(9, 2, "only_in_b", "balance", &[64], "0:0");
    r["device_ns"] = json!(500);
    b.push(r);
    write_log(&fa, &a, &[]);
    write_log(&fb, &b, &[]);
    let (fa, fb) = (fa.to_str().unwrap(), fb.to_str().unwrap());
    let ea = expected(&a);
    let eb = expected(&b);

    let j: Value = serde_json::from_str(&stdout(&report(&[fa, fb, "--format", "json"]))).unwrap();
    let rows = j["kernels"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        let k = r["kernel"].as_str().unwrap();
        let (la, ta) = ea.get(k).map_or((0, None), |e| (e.launches, Some(e.total)));
        let (lb, tb) = eb.get(k).map_or((0, None), |e| (e.launches, Some(e.total)));
        assert_eq!(r["a_launches"], la);
        assert_eq!(r["b_launches"], lb);
        assert_eq!(r["a_total_ns"].as_u64(), ta);
        assert_eq!(r["b_total_ns"].as_u64(), tb);
        match (ta, tb) {
            (Some(x), Some(y)) => {
                assert!((r["ratio"].as_f64().unwrap() - y as f64 / x as f64).abs() < 1e-12)
            }
            _ => assert!(r["ratio"].is_null()),
        }
    }
    assert_eq!(j["total"]["a_launches"], a.len() as u64);
    assert_eq!(j["total"]["b_launches"], b.len() as u64);
    // B's balanced stencil launches are compared against A's log-mode stencil launches
    let sb = j["b"]["balance"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["kernel"] == "stencil")
        .unwrap();
    let base = ea["stencil"].total as f64 / ea["stencil"].launches as f64;
    let want = base * 9.0 / eb["stencil"].total as f64;
    assert_eq!(sb["baseline_launches"], ea["stencil"].launches);
    assert!((sb["speedup"].as_f64().unwrap() - want).abs() < 1e-9);

    // table: compare section with launches adding up; B's balance section follows
    let out = stdout(&report(&[fa, fb]));
    let t = text_section(&out, "compare");
    assert_eq!(t.rows.len(), 3);
    let foot = t.footer.unwrap();
    for (col, n) in [(1, a.len()), (2, b.len())] {
        let s: u64 = t.rows.iter().map(|r| r[col].parse::<u64>().unwrap()).sum();
        assert_eq!(s, n as u64);
        assert_eq!(foot[col].parse::<u64>().unwrap(), s);
    }
    let only_a = t.rows.iter().find(|r| r[0] == "only_in_a").unwrap();
    assert_eq!(only_a[4], "-");
    assert_eq!(only_a[5], "-");
    assert!(out.contains("\nbalance of B\n"));
    assert!(!out.contains("\nbalance of A\n"));
}

#[test]
fn kernel_listing_shows_every_launch() {
    let d = common::scratch("report_kernel_listing");
    let f: PathBuf = d.join("log.jsonl");
    let mut recs = log_mode_records();
    recs.reverse(); // completion order differs from enqueue order
    write_log(&f, &recs, &[]);
    let f = f.to_str().unwrap();
    let mine: Vec<&Value> = recs.iter().filter(|r| r["kernel"] == "beta").collect();
    let out = stdout(&report(&[f, "--kernel", "beta"]));
    let t = text_section(&out, "launches of beta");
    assert_eq!(
        t.head,
        vec![
            "pid",
            "seq",
            "global",
            "local",
            "offset",
            "device",
            "status",
            "device us",
            "queued us"
        ]
    );
    assert_eq!(t.rows.len(), mine.len());
    let keys: Vec<(u64, u64)> = t
        .rows
        .iter()
        .map(|r| (r[0].parse().unwrap(), r[1].parse().unwrap()))
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted, "listed by pid then seq");
    for r in &t.rows {
        let seq: u64 = r[1].parse().unwrap();
        let raw = mine.iter().find(|x| x["seq"] == seq).unwrap();
        assert_eq!(r[t.col("status")], raw["status"].as_str().unwrap());
        assert_eq!(r[t.col("global")], raw["global"][0].to_string());
        assert_eq!(r[t.col("device")], raw["device"]["index"].as_str().unwrap());
    }
    // CSV: exact device times
    let csv = stdout(&report(&[f, "--kernel=beta", "--format", "csv"]));
    let (head, rows) = &csv_sections(&csv)["kernels"];
    let c = head.iter().position(|h| h == "device_ns").unwrap();
    let total: u64 = rows.iter().filter_map(|r| r[c].parse::<u64>().ok()).sum();
    assert_eq!(total, expected(&recs)["beta"].total);
    // the log can come on standard input
    let o = clprism()
        .args(["report", "-", "--kernel", "beta", "--format", "csv"])
        .stdin(std::fs::File::open(f).unwrap())
        .output()
        .unwrap();
    assert_eq!(stdout(&o), csv);
    // unknown kernel: exit 1 with the known names
    let o = report(&[f, "--kernel", "nope"]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("nope") && e.contains("alpha") && e.contains("beta"),
        "{e}"
    );
}

#[test]
fn usage_errors_and_unreadable_files() {
    let d = common::scratch("report_usage");
    let f = d.join("x.jsonl");
    std::fs::write(&f, "").unwrap();
    let f = f.to_str().unwrap();
    assert_eq!(report(&[]).status.code(), Some(2));
    assert_eq!(report(&[f, "--format", "xml"]).status.code(), Some(2));
    assert_eq!(report(&[f, f, f]).status.code(), Some(2));
    assert_eq!(report(&[f, "--bogus"]).status.code(), Some(2));
    let o = report(&[d.join("missing.jsonl").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot read"));
    // an empty log is a valid, empty report
    let o = report(&[f]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("no launch records"));
    let t = text_section(&stdout(&o), "kernels");
    assert!(t.rows.is_empty());
    assert_eq!(t.footer.unwrap()[1], "0");
    assert_eq!(
        clprism().arg("nonsense").output().unwrap().status.code(),
        Some(2)
    );
    assert!(stdout(&report(&["--help"])).contains("usage: clprism report"));
}
