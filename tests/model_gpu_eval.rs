//! Offline evaluation of every model variant on project-mode logs from GPUs (ignored by
//! default: it needs the logs). Each `<app>.<tag>.jsonl` file of `MODEL_EVAL_LOGS` holds
//! one app's launch records on one device, with the emulation statistics, the measured
//! `device_ns` and `projection.launch_device_profile`; the projections are recomputed
//! from the statistics with the profiles of `MODEL_EVAL_PROFILES` (default `profiles/`)
//! by `accuracy::compare`, as `clprism accuracy --from-logs` does, plus the MAPE per
//! device when only one device is there:
//!
//! ```text
//! MODEL_EVAL_LOGS=DIR [MODEL_EVAL_PROFILES=DIR] [MODEL_EVAL_VERBOSE=1] \
//!     cargo test --release --test model_gpu_eval -- --ignored --nocapture
//! ```
//!
//! When the GPU runs had no emulator toolchain, `MODEL_EVAL_STATS=DIR[,DIR...]` names
//! project-mode logs of the same apps (same kernels and NDRanges) on another device,
//! `<app>.jsonl` (the first directory with a launch's statistics wins),
//! whose statistics and launch shapes are paired launch by launch (same sequence number,
//! kernel and NDRange) with the GPU logs; `MODEL_EVAL_LOGS` is then
//! `profile=DIR,profile=DIR` of log-mode logs `DIR/<app>.log.jsonl`. The shapes' private
//! memory (the other driver's figure) is dropped.

use std::path::PathBuf;

use OpenCL::accuracy::{compare, records, run};
use OpenCL::model::load_dir;

#[test]
#[ignore = "needs GPU logs: MODEL_EVAL_LOGS=DIR"]
fn evaluate_variants_on_gpu_logs() {
    let Ok(dir) = std::env::var("MODEL_EVAL_LOGS") else {
        eprintln!("MODEL_EVAL_LOGS is not set");
        return;
    };
    let pdir = std::env::var("MODEL_EVAL_PROFILES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("profiles"));
    let profiles = load_dir(&pdir).unwrap();
    let runs = match std::env::var("MODEL_EVAL_STATS") {
        Ok(stats) => merged_runs(&dir, &stats),
        Err(_) => run::read_logs(std::path::Path::new(&dir), &[]).unwrap(),
    };
    let rep = compare::compare(&runs, &profiles);
    let vs = compare::variants();
    let verbose = std::env::var("MODEL_EVAL_VERBOSE").is_ok();
    // MAPE per device and variant over the kernels measured and projected there.
    println!("== MAPE per device (kernels with a measured time and a projection) ==");
    print!("{:<16}", "model");
    for d in &rep.devices {
        print!(" {:>22}", d);
    }
    println!();
    for (vi, v) in vs.iter().enumerate() {
        print!("{:<16}", v.name);
        for d in &rep.devices {
            let apes: Vec<f64> = rep
                .rows
                .iter()
                .filter_map(|r| {
                    let c = r.cells.get(d)?;
                    let p = c.projected_ns.get(vi).copied().flatten()?;
                    (c.launches > 0 && c.measured_ns > 0.0)
                        .then(|| (p - c.measured_ns).abs() / c.measured_ns)
                })
                .collect();
            let n = apes.len();
            let mape = apes.iter().sum::<f64>() / n.max(1) as f64;
            let mut s = apes.clone();
            s.sort_by(|a, b| a.total_cmp(b));
            let med = s.get(n / 2).copied().unwrap_or(0.0);
            print!(
                " {:>22}",
                format!("{:.1}% (med {:.0}%, n {n})", mape * 100.0, med * 100.0)
            );
        }
        println!();
    }
    // The same per kernel (app/kernel, its shapes' APEs averaged first), and a table of
    // one row per kernel: the median measured time over its shapes and each variant's
    // APE of the mean over its shapes.
    println!("== MAPE per device, one weight per kernel (its shapes averaged) ==");
    let kernel_of = |label: &str| label.split(" [").next().unwrap_or(label).to_string();
    let mut names: Vec<String> = Vec::new();
    for r in &rep.rows {
        let k = kernel_of(&r.kernel);
        if !names.contains(&k) {
            names.push(k);
        }
    }
    for d in &rep.devices {
        let mut table = format!("{:<36} {:>10}", format!("kernel on {d}"), "meas us");
        for v in &vs {
            table += &format!(" {:>9}", &v.name[..v.name.len().min(9)]);
        }
        table += "\n";
        let mut per_variant = vec![Vec::new(); vs.len()];
        for name in &names {
            let cells: Vec<&compare::Cell> = rep
                .rows
                .iter()
                .filter(|r| kernel_of(&r.kernel) == *name)
                .filter_map(|r| r.cells.get(d))
                .filter(|c| c.launches > 0 && c.measured_ns > 0.0)
                .collect();
            if cells.is_empty() {
                continue;
            }
            let mut meas: Vec<f64> = cells.iter().map(|c| c.measured_ns).collect();
            meas.sort_by(|a, b| a.total_cmp(b));
            let mut line = format!("{:<36} {:>10.1}", name, meas[meas.len() / 2] / 1e3);
            for (vi, acc) in per_variant.iter_mut().enumerate() {
                let apes: Vec<f64> = cells
                    .iter()
                    .filter_map(|c| {
                        let p = c.projected_ns.get(vi).copied().flatten()?;
                        Some((p - c.measured_ns) / c.measured_ns)
                    })
                    .collect();
                if apes.is_empty() {
                    line += &format!(" {:>9}", "-");
                    continue;
                }
                let signed = apes.iter().sum::<f64>() / apes.len() as f64;
                let ape = apes.iter().map(|a| a.abs()).sum::<f64>() / apes.len() as f64;
                acc.push(ape);
                line += &format!(" {:>+8.0}%", signed * 100.0);
            }
            table += &line;
            table += "\n";
        }
        for (vi, v) in vs.iter().enumerate() {
            let a = &per_variant[vi];
            println!(
                "{:<16} {d}: {:.1}% over {} kernels",
                v.name,
                a.iter().sum::<f64>() / a.len().max(1) as f64 * 100.0,
                a.len()
            );
        }
        println!("(signed error of the projection per kernel, mean over its shapes)\n{table}");
    }
    if verbose {
        for (vi, v) in vs.iter().enumerate() {
            println!("== {} ==", v.name);
            for r in &rep.rows {
                let mut line = format!("{:<60}", r.kernel);
                for d in &rep.devices {
                    if let Some(c) = r.cells.get(d) {
                        let p = c.projected_ns.get(vi).copied().flatten().unwrap_or(0.0);
                        line += &format!(
                            " | {d} meas {:>10.1} us proj {:>10.1} us",
                            c.measured_ns / 1e3,
                            p / 1e3
                        );
                    }
                }
                println!("{line}");
            }
        }
    }
    if rep.devices.len() >= 2 {
        // Panwar's relative error and the best-device hits per kernel (its shapes'
        // relative errors averaged; a hit when most of its shapes pick the right device).
        println!("== per kernel (shapes averaged): relative error, best-device hits ==");
        for v in &rep.variants {
            let mut by: Vec<(String, Vec<(f64, bool)>)> = Vec::new();
            for k in &v.kernels {
                let name = kernel_of(&k.kernel);
                let e = (k.relative_error, k.best.picked_best);
                match by.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, xs)) => xs.push(e),
                    None => by.push((name, vec![e])),
                }
            }
            let n = by.len().max(1) as f64;
            let rel = by
                .iter()
                .map(|(_, xs)| xs.iter().map(|x| x.0).sum::<f64>() / xs.len() as f64)
                .sum::<f64>()
                / n;
            let hits = by
                .iter()
                .filter(|(_, xs)| 2 * xs.iter().filter(|x| x.1).count() > xs.len())
                .count();
            println!(
                "{:<16} relerr {:>5.1}%  best hits {hits} of {}",
                v.variant.name,
                rel * 100.0,
                by.len()
            );
        }
        for vi in 0..rep.variants.len() {
            if verbose || rep.variants[vi].variant.name == "recommended" {
                print!("{}", compare::render_variant(&rep, vi));
            }
        }
        print!("{}", compare::render_summary(&rep));
    }
}

/// GPU log-mode launches with the statistics of the same launches from `stats_dir`.
fn merged_runs(measured: &str, stats_dir: &str) -> Vec<compare::DeviceRun> {
    let mut out = Vec::new();
    for spec in measured.split(',') {
        let (profile, dir) = spec.split_once('=').expect("profile=DIR");
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".log.jsonl"))
            .collect();
        files.sort();
        for f in files {
            let name = f.file_name().unwrap().to_string_lossy().to_string();
            let app = name.trim_end_matches(".log.jsonl").to_string();
            // Every statistics directory in order of preference, each launch taking the
            // first that has its statistics.
            let emus: Vec<Vec<records::Launch>> = stats_dir
                .split(',')
                .filter_map(|d| {
                    records::read_log(&PathBuf::from(d).join(format!("{app}.jsonl"))).ok()
                })
                .collect();
            if emus.is_empty() {
                eprintln!("{app}: no statistics log in {stats_dir}");
                continue;
            }
            let mut launches = records::read_log(&f).unwrap();
            let (mut paired, mut missing) = (0, 0);
            for (i, l) in launches.iter_mut().enumerate() {
                let same = |e: &&records::Launch| {
                    e.kernel == l.kernel && e.global == l.global && e.local == l.local
                };
                let e = emus.iter().find_map(|emu| {
                    emu.get(i)
                        .filter(|e| same(e) && e.stats.is_some())
                        .or_else(|| emu.iter().find(|e| same(e) && e.stats.is_some()))
                });
                match e {
                    Some(e) => {
                        l.stats = e.stats.clone();
                        l.shape = e.shape.map(|mut s| {
                            s.resources.private_mem_bytes = None;
                            s.resources.registers_per_work_item = None;
                            s
                        });
                        l.launch_device_profile = Some(profile.to_string());
                        paired += 1;
                    }
                    None => missing += 1,
                }
            }
            eprintln!("{profile} {app}: {paired} launches paired, {missing} without statistics");
            out.push(compare::DeviceRun {
                app,
                profile: profile.to_string(),
                launches,
            });
        }
    }
    out
}
