//! Offline projection of logged emulation statistics (ignored by default: it needs the
//! logs). Reads every `*.jsonl` of `MODEL_STATS_DIR` (project-mode logs of any device,
//! e.g. results/session12-2026-11-24/model-physics-pocl-stats.tgz unpacked), projects each
//! launch with statistics on the GPU profiles of `MODEL_STATS_PROFILES` (default
//! `profiles/`) with the options of `MODEL_STATS_SPEC` (`ModelOptions::parse_spec`,
//! default `recommended`), and prints one line per app, kernel and NDRange: launches, the
//! median projected µs per profile and the components of the first launch (compute, global,
//! local µs, bound), for comparison with measured times taken elsewhere:
//!
//! ```text
//! MODEL_STATS_DIR=/tmp/pocl MODEL_STATS_SPEC=recommended,-cache_reuse \
//!     cargo test --release --test model_polybench_stats -- --ignored --nocapture
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use OpenCL::accuracy::records;
use OpenCL::model::{load_dir, project, DeviceKind, ModelOptions};

/// One launch on one profile: projected, compute, global, local µs, the bound and the
/// regime (`latency` where the serialised-latency chain is the global time).
type Row = (f64, f64, f64, f64, String);

#[test]
#[ignore = "needs project-mode logs: MODEL_STATS_DIR=DIR"]
fn project_logged_statistics() {
    let Ok(dir) = std::env::var("MODEL_STATS_DIR") else {
        eprintln!("MODEL_STATS_DIR is not set");
        return;
    };
    let pdir = std::env::var("MODEL_STATS_PROFILES")
        .map(PathBuf::from)
        .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("profiles"));
    let spec = std::env::var("MODEL_STATS_SPEC").unwrap_or_else(|_| "recommended".into());
    let opts = ModelOptions::parse_spec(&spec).unwrap();
    let profiles: Vec<_> = load_dir(&pdir)
        .unwrap()
        .into_iter()
        .filter(|p| p.kind == DeviceKind::Gpu && p.name.starts_with('h'))
        .collect();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    println!("# spec {spec}: {opts:?}");
    for f in files {
        let app = f.file_stem().unwrap().to_string_lossy().to_string();
        let mut rows: BTreeMap<String, Vec<Vec<Row>>> = BTreeMap::new();
        for l in records::read_log(&f).unwrap() {
            let (Some(st), Some((shape, _))) = (l.stats.as_ref(), l.projection_shape()) else {
                continue;
            };
            let key = format!(
                "{app}/{} {:?}/{:?}",
                l.kernel,
                l.global,
                l.local.clone().unwrap_or_default()
            );
            let per: Vec<_> = profiles
                .iter()
                .filter_map(|p| project(st, &shape, p, &opts).ok())
                .map(|p| {
                    (
                        p.projected_ns / 1e3,
                        p.t_compute_ns / 1e3,
                        p.t_global_ns / 1e3,
                        p.t_local_ns / 1e3,
                        if p.bound == OpenCL::model::Bound::Global
                            && p.t_latency_ns > 0.0
                            && p.t_latency_ns >= p.t_global_ns
                        {
                            "latency".to_string()
                        } else {
                            p.bound.to_string()
                        },
                    )
                })
                .collect();
            if per.len() == profiles.len() {
                rows.entry(key).or_default().push(per);
            }
        }
        for (k, v) in rows {
            print!("{k}\tn={}", v.len());
            for (i, p) in profiles.iter().enumerate() {
                let mut t: Vec<f64> = v.iter().map(|x| x[i].0).collect();
                t.sort_by(|a, b| a.total_cmp(b));
                let (_, c, g, lo, b) = &v[0][i];
                print!(
                    "\t{}={:.2}\t(c {c:.1} g {g:.1} l {lo:.1} {b})",
                    p.name,
                    t[t.len() / 2]
                );
            }
            println!();
        }
    }
}
