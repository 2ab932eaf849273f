//! Measured against projected kernel times, per kernel and device, for the baseline model
//! of Panwar §IV-D and each refinement of DESIGN.md §6 (metrics of Panwar §V-B and Wang
//! §V, [`crate::model::metrics`]).
//!
//! A *kernel* here is one launch configuration of one app: (app, kernel name, global size,
//! local size), and its program when the app's run holds the name in several (one source
//! built with other `-D` values). On each device its measured time is the median `device_ns` of its
//! completed launches, and its projected time the median over the same launches of
//! [`crate::model::project::project`] applied to the launch's emulated work-group statistics
//! (`emulation.stats`) with that device's profile. The projection is recomputed here rather
//! than read from the record, so that every [`ModelOptions`] variant can be compared.
//! Kernels missing on a device, or without statistics, are listed in `skipped`.

use super::records::Launch;
use crate::model::{
    metrics::{AccuracySummary, KernelAccuracy},
    project, ModelOptions, Profile,
};
use serde::Serialize;
use std::collections::BTreeMap;

/// A model variant: a name and its options.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Variant {
    /// `baseline`, `waves`, `launch_overhead`, `cache_reuse`, `issue_slots`,
    /// `latency_bound`, `kernel_floor`, `recommended` or `all`.
    pub name: &'static str,
    /// The options.
    pub options: ModelOptions,
}

/// The baseline, each refinement alone, the recommended set and all together.
pub fn variants() -> Vec<Variant> {
    let b = ModelOptions::panwar();
    vec![
        Variant {
            name: "baseline",
            options: b,
        },
        Variant {
            name: "waves",
            options: ModelOptions { waves: true, ..b },
        },
        Variant {
            name: "launch_overhead",
            options: ModelOptions {
                launch_overhead: true,
                ..b
            },
        },
        Variant {
            name: "cache_reuse",
            options: ModelOptions {
                cache_reuse: true,
                ..b
            },
        },
        Variant {
            name: "issue_slots",
            options: ModelOptions {
                issue_slots: true,
                ..b
            },
        },
        Variant {
            name: "latency_bound",
            options: ModelOptions {
                latency_bound: true,
                ..b
            },
        },
        Variant {
            name: "kernel_floor",
            options: ModelOptions {
                kernel_floor: true,
                ..b
            },
        },
        Variant {
            name: "recommended",
            options: ModelOptions::recommended(),
        },
        Variant {
            name: "all",
            options: ModelOptions::all(),
        },
    ]
}

/// The launches of one app on one device.
#[derive(Debug, Clone)]
pub struct DeviceRun {
    /// App name.
    pub app: String,
    /// Profile of the device (its name is the device's column).
    pub profile: String,
    /// Launch records.
    pub launches: Vec<Launch>,
}

/// One kernel's figures on one device.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cell {
    /// Completed launches with a device time.
    pub launches: usize,
    /// Median measured device time, ns.
    pub measured_ns: f64,
    /// Median projected time per variant (same order as [`variants`]), ns; `None` when no
    /// launch had statistics or the profile cannot run the work-group.
    pub projected_ns: Vec<Option<f64>>,
    /// True when the launch shape (local memory included) came from the record; false
    /// when it was rebuilt from the NDRange with no local memory.
    pub shape_recorded: bool,
}

/// One kernel across devices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// `app/kernel [global/local]`.
    pub kernel: String,
    /// Per device (profile name).
    pub cells: BTreeMap<String, Cell>,
}

/// Metrics of one variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct VariantResult {
    /// The variant.
    pub variant: Variant,
    /// Per compared kernel.
    pub kernels: Vec<KernelAccuracy>,
    /// Averages; `None` when no kernel could be compared.
    pub summary: Option<AccuracySummary>,
}

/// The whole comparison (`clprism accuracy --out DIR` writes it as `accuracy.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// Device columns (profile names), in order.
    pub devices: Vec<String>,
    /// Every kernel seen.
    pub rows: Vec<Row>,
    /// Per variant.
    pub variants: Vec<VariantResult>,
    /// Kernels not compared, with the reason.
    pub skipped: Vec<(String, String)>,
}

/// Median of `v` (`None` when empty).
pub fn median(mut v: Vec<f64>) -> Option<f64> {
    if v.is_empty() {
        return None;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    Some(if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    })
}

fn dims(v: &[u64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join("x")
}

/// Row label of a launch of `app`, its kernel named as `names` name it (`kernel#program`
/// when the run holds the name in several programs).
pub fn kernel_label(app: &str, l: &Launch, names: &crate::log::schema::KernelLabels) -> String {
    format!(
        "{app}/{} [{}/{}]",
        names.label(&l.kernel, &l.program),
        dims(&l.global),
        l.local.as_deref().map(dims).unwrap_or_else(|| "-".into())
    )
}

/// Figures of the launches of one kernel on one device.
fn cell(launches: &[&Launch], profile: Option<&Profile>, vs: &[Variant]) -> Cell {
    let done: Vec<&&Launch> = launches
        .iter()
        .filter(|l| l.status == "complete" && l.device_ns.is_some_and(|t| t > 0))
        .collect();
    let measured = median(
        done.iter()
            .filter_map(|l| l.device_ns)
            .map(|t| t as f64)
            .collect(),
    );
    let mut shape_recorded = !done.is_empty();
    let projected = vs
        .iter()
        .map(|v| {
            let p = profile?;
            let times: Vec<f64> = done
                .iter()
                .filter_map(|l| {
                    let st = l.stats.as_ref()?;
                    let (shape, rec) = l.projection_shape()?;
                    shape_recorded &= rec;
                    project(st, &shape, p, &v.options)
                        .ok()
                        .map(|x| x.projected_ns)
                })
                .collect();
            median(times)
        })
        .collect();
    Cell {
        launches: done.len(),
        measured_ns: measured.unwrap_or(0.0),
        projected_ns: projected,
        shape_recorded,
    }
}

/// Compares measured and projected times. `runs`: every (app, device) run; `profiles`:
/// the loaded profiles (a run whose profile is not among them gets no projection).
pub fn compare(runs: &[DeviceRun], profiles: &[Profile]) -> Report {
    let vs = variants();
    let mut devices: Vec<String> = Vec::new();
    for r in runs {
        if !devices.contains(&r.profile) {
            devices.push(r.profile.clone());
        }
    }
    // label -> device -> launches
    let mut groups: BTreeMap<String, BTreeMap<String, Vec<&Launch>>> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for r in runs {
        // per run: one source built with other `-D` values is a row per build, and an app
        // whose source differs by device still matches across devices
        let names = crate::log::schema::KernelLabels::new(
            r.launches.iter().map(|l| (&*l.kernel, &*l.program)),
        );
        for l in &r.launches {
            let label = kernel_label(&r.app, l, &names);
            if !groups.contains_key(&label) {
                order.push(label.clone());
            }
            groups
                .entry(label)
                .or_default()
                .entry(r.profile.clone())
                .or_default()
                .push(l);
        }
    }
    let mut rows = Vec::new();
    for label in &order {
        let g = &groups[label];
        let cells = g
            .iter()
            .map(|(d, ls)| {
                let p = profiles.iter().find(|p| &p.name == d);
                (d.clone(), cell(ls, p, &vs))
            })
            .collect();
        rows.push(Row {
            kernel: label.clone(),
            cells,
        });
    }
    let mut skipped = Vec::new();
    let mut results: Vec<VariantResult> = vs
        .iter()
        .map(|v| VariantResult {
            variant: *v,
            kernels: Vec::new(),
            summary: None,
        })
        .collect();
    for row in &rows {
        let missing: Vec<&String> = devices
            .iter()
            .filter(|d| row.cells.get(*d).is_none_or(|c| c.launches == 0))
            .collect();
        if !missing.is_empty() {
            skipped.push((
                row.kernel.clone(),
                format!(
                    "no completed launch with a device time on {}",
                    missing
                        .iter()
                        .map(|s| s.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
            continue;
        }
        if devices.len() < 2 {
            skipped.push((row.kernel.clone(), "fewer than 2 devices".into()));
            continue;
        }
        let actual: Vec<f64> = devices.iter().map(|d| row.cells[d].measured_ns).collect();
        for (vi, res) in results.iter_mut().enumerate() {
            let proj: Option<Vec<f64>> = devices
                .iter()
                .map(|d| row.cells[d].projected_ns[vi])
                .collect();
            let Some(proj) = proj else {
                if vi == 0 {
                    skipped.push((
                        row.kernel.clone(),
                        "no projection on every device (no emulation statistics, or no \
                         profile for a device)"
                            .into(),
                    ));
                }
                continue;
            };
            match KernelAccuracy::new(&row.kernel, &devices, &actual, &proj) {
                Ok(k) => res.kernels.push(k),
                Err(e) => {
                    if vi == 0 {
                        skipped.push((row.kernel.clone(), e.to_string()));
                    }
                }
            }
        }
    }
    for r in &mut results {
        r.summary = AccuracySummary::from_kernels(&r.kernels).ok();
    }
    Report {
        devices,
        rows,
        variants: results,
        skipped,
    }
}

fn us(ns: f64) -> String {
    if ns >= 1e7 {
        format!("{:.0}", ns / 1e3)
    } else {
        format!("{:.1}", ns / 1e3)
    }
}

/// The per-kernel table of one variant (times in µs, errors in %).
pub fn render_variant(rep: &Report, vi: usize) -> String {
    let Some(res) = rep.variants.get(vi) else {
        return String::new();
    };
    let mut out = format!("== model: {} ==\n", res.variant.name);
    let mut hdr = format!("{:<44}", "kernel [global/local]");
    for d in &rep.devices {
        hdr += &format!(" | {:>28}", format!("{d}: meas/proj us APE%"));
    }
    hdr += " | relerr% | best (penalty%)\n";
    out += &hdr;
    for k in &res.kernels {
        let mut line = format!("{:<44}", truncate(&k.kernel, 44));
        for i in 0..k.devices.len() {
            line += &format!(
                " | {:>28}",
                format!(
                    "{} / {} {:.0}",
                    us(k.actual_ns[i]),
                    us(k.projected_ns[i]),
                    k.ape[i] * 100.0
                )
            );
        }
        let best = if k.best.picked_best {
            "ok".to_string()
        } else {
            format!(
                "{} not {} ({:.0})",
                k.devices[k.best.projected_best],
                k.devices[k.best.actual_best],
                k.best.penalty * 100.0
            )
        };
        line += &format!(" | {:>7.1} | {best}\n", k.relative_error * 100.0);
        out += &line;
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        s.chars().take(n - 1).collect::<String>() + "~"
    }
}

/// One line per variant: kernels, mean relative-performance error, best-pick share, mean
/// and max penalty, MAPE overall and per device.
pub fn render_summary(rep: &Report) -> String {
    let mut out = format!(
        "== summary ({} devices: {}) ==\n{:<16} {:>7} {:>9} {:>9} {:>9} {:>9} {:>8}  MAPE per device\n",
        rep.devices.len(),
        rep.devices.join(", "),
        "model",
        "kernels",
        "relerr%",
        "bestpick%",
        "penalty%",
        "maxpen%",
        "MAPE%"
    );
    for r in &rep.variants {
        match &r.summary {
            Some(s) => {
                let per: Vec<String> = s
                    .mape_per_device
                    .iter()
                    .map(|(d, m)| format!("{d} {:.0}%", m * 100.0))
                    .collect();
                out += &format!(
                    "{:<16} {:>7} {:>9.1} {:>9.0} {:>9.1} {:>9.1} {:>8.0}  {}\n",
                    r.variant.name,
                    s.kernels,
                    s.mean_relative_error * 100.0,
                    s.best_picked_share * 100.0,
                    s.mean_penalty * 100.0,
                    s.max_penalty * 100.0,
                    s.mape * 100.0,
                    per.join(", ")
                );
            }
            None => out += &format!("{:<16} {:>7}\n", r.variant.name, 0),
        }
    }
    let rebuilt = rep
        .rows
        .iter()
        .filter(|r| {
            r.cells
                .values()
                .any(|c| c.launches > 0 && !c.shape_recorded)
        })
        .count();
    if rebuilt > 0 {
        out += &format!(
            "note: for {rebuilt} kernel(s) the log has no `launch_shape`: projected from the \
             NDRange with no local memory and no kernel read-set (occupancy of kernels with \
             __local memory and the cache_reuse whole-kernel bound may differ from project \
             mode's own projection)\n"
        );
    }
    if !rep.skipped.is_empty() {
        out += &format!("not compared ({}):\n", rep.skipped.len());
        for (k, why) in &rep.skipped {
            out += &format!("  {k}: {why}\n");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::accuracy::records::parse_line;
    use crate::emu::stats::WorkGroupStats;
    use crate::model::{load_dir, LaunchShape};

    /// Statistics produced by `clprism emulate` (commands in tests/data/accuracy/README.md).
    fn stats(file: &str) -> WorkGroupStats {
        let p = format!("{}/tests/data/accuracy/{file}", env!("CARGO_MANIFEST_DIR"));
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    fn profiles() -> Vec<Profile> {
        let all = load_dir(std::path::Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/profiles"
        )))
        .unwrap();
        all.into_iter()
            .filter(|p| p.name == "pocl-basic" || p.name == "pocl-pthread")
            .collect()
    }

    /// A project-mode launch record line.
    fn line(
        kernel: &str,
        global: &[u64],
        local: &[u64],
        ns: Option<u64>,
        st: Option<&WorkGroupStats>,
        dev: &str,
    ) -> String {
        use crate::log::schema;
        let rec = schema::Launch {
            schema: schema::SCHEMA_VERSION.into(),
            kernel: kernel.into(),
            program: "00".into(),
            work_dim: global.len() as u32,
            global: global.to_vec(),
            local: Some(local.to_vec()),
            device: schema::Device {
                index: "0:0".into(),
                name: dev.into(),
                kind: "cpu".into(),
                ..Default::default()
            },
            status: if ns.is_some() {
                schema::LaunchStatus::Complete
            } else {
                schema::LaunchStatus::Incomplete
            },
            device_ns: ns,
            queued_ns: Some(1),
            emulation: st.map(|s| schema::Emulation::with_stats(s.clone(), false)),
            projection: st.map(|_| schema::Projection {
                launch_device_profile: Some(dev.into()),
                ..Default::default()
            }),
            ..Default::default()
        };
        serde_json::to_string(&rec).unwrap()
    }

    fn proj(st: &WorkGroupStats, g: &[u64], l: &[u64], p: &Profile, o: ModelOptions) -> f64 {
        let shape = LaunchShape::from_ndrange(g, l, 0).unwrap();
        project(st, &shape, p, &o).unwrap().projected_ns
    }

    fn run(app: &str, profile: &str, lines: &[String]) -> DeviceRun {
        DeviceRun {
            app: app.into(),
            profile: profile.into(),
            launches: lines
                .iter()
                .map(|l| parse_line(l).unwrap().unwrap())
                .collect(),
        }
    }

    #[test]
    fn measured_proportional_to_baseline_has_zero_relative_error() {
        let ps = profiles();
        assert_eq!(ps.len(), 2);
        let mm = stats("matmul_global_64.stats.json");
        let rd = stats("reduce_4096.stats.json");
        let kernels: [(&str, &WorkGroupStats, Vec<u64>, Vec<u64>); 2] = [
            ("matmul_global", &mm, vec![64, 64], vec![16, 16]),
            ("reduce", &rd, vec![4096], vec![256]),
        ];
        let mut runs = Vec::new();
        for p in &ps {
            // Measured = 2 × the baseline projection: same relative performance, APE 100 %.
            let lines: Vec<String> = kernels
                .iter()
                .map(|(k, s, g, l)| {
                    let t = 2.0 * proj(s, g, l, p, ModelOptions::panwar());
                    line(k, g, l, Some(t.round() as u64), Some(s), &p.name)
                })
                .collect();
            run_push(&mut runs, "app", &p.name, &lines);
        }
        let rep = compare(&runs, &ps);
        assert_eq!(rep.devices.len(), 2);
        assert!(rep.skipped.is_empty(), "{:?}", rep.skipped);
        let base = &rep.variants[0];
        assert_eq!(base.variant.name, "baseline");
        assert_eq!(base.kernels.len(), 2);
        for k in &base.kernels {
            // Zero up to the rounding of the measured times to whole ns (≤ 0.5 ns on times
            // of ≥ 10 µs: relative 5e-5).
            assert!(k.relative_error < 1e-4, "{k:?}");
            assert!(k.best.picked_best);
            for a in &k.ape {
                // |p − 2p| / 2p = 0.5 up to the rounding of the measured ns.
                assert!((a - 0.5).abs() < 1e-3, "{a}");
            }
        }
        let s = base.summary.as_ref().unwrap();
        assert_eq!(s.best_picked_share, 1.0);
        assert!((s.mape - 0.5).abs() < 1e-3);
        // Every variant compared the same kernels, and the launch-overhead variant is the
        // baseline plus each profile's overhead.
        assert!(rep.variants.iter().all(|v| v.kernels.len() == 2));
        let lo = rep
            .variants
            .iter()
            .find(|v| v.variant.name == "launch_overhead")
            .unwrap();
        for (kb, kl) in base.kernels.iter().zip(&lo.kernels) {
            for (i, d) in kb.devices.iter().enumerate() {
                let p = ps.iter().find(|p| &p.name == d).unwrap();
                let want = kb.projected_ns[i] + p.launch_overhead_ns;
                assert!((kl.projected_ns[i] - want).abs() < 1e-6 * want);
            }
        }
        let text = render_variant(&rep, 0) + &render_summary(&rep);
        assert!(text.contains("app/matmul_global [64x64/16x16]"), "{text}");
        assert!(text.contains("baseline"));
    }

    fn run_push(runs: &mut Vec<DeviceRun>, app: &str, prof: &str, lines: &[String]) {
        runs.push(run(app, prof, lines));
    }

    #[test]
    fn wrong_pick_has_the_penalty_of_the_measured_times() {
        let ps = profiles();
        let rd = stats("reduce_4096.stats.json");
        let (g, l) = (vec![4096u64], vec![256u64]);
        let p0 = proj(&rd, &g, &l, &ps[0], ModelOptions::panwar());
        let p1 = proj(&rd, &g, &l, &ps[1], ModelOptions::panwar());
        // Measured times in the opposite order of the projected ones.
        let (m0, m1) = if p0 < p1 {
            (3000u64, 1000u64)
        } else {
            (1000, 3000)
        };
        let runs = vec![
            run(
                "a",
                &ps[0].name,
                &[line("reduce", &g, &l, Some(m0), Some(&rd), &ps[0].name)],
            ),
            run(
                "a",
                &ps[1].name,
                &[line("reduce", &g, &l, Some(m1), Some(&rd), &ps[1].name)],
            ),
        ];
        let rep = compare(&runs, &ps);
        let k = &rep.variants[0].kernels[0];
        assert!(!k.best.picked_best);
        assert!((k.best.penalty - 2.0).abs() < 1e-12);
        assert_eq!(
            rep.variants[0].summary.as_ref().unwrap().best_picked_share,
            0.0
        );
    }

    #[test]
    fn medians_incomplete_launches_and_missing_kernels() {
        let ps = profiles();
        let rd = stats("reduce_4096.stats.json");
        let (g, l) = (vec![4096u64], vec![256u64]);
        let d0 = &ps[0].name;
        let d1 = &ps[1].name;
        let runs = vec![
            run(
                "a",
                d0,
                &[
                    line("reduce", &g, &l, Some(100), Some(&rd), d0),
                    line("reduce", &g, &l, Some(300), Some(&rd), d0),
                    line("reduce", &g, &l, Some(200), Some(&rd), d0),
                    line("reduce", &g, &l, None, Some(&rd), d0),
                    // only on device 0
                    line("other", &g, &l, Some(5), Some(&rd), d0),
                    // no statistics
                    line("nostats", &g, &l, Some(5), None, d0),
                ],
            ),
            run(
                "a",
                d1,
                &[
                    line("reduce", &g, &l, Some(50), Some(&rd), d1),
                    line("nostats", &g, &l, Some(5), None, d1),
                ],
            ),
        ];
        let rep = compare(&runs, &ps);
        let row = rep
            .rows
            .iter()
            .find(|r| r.kernel.starts_with("a/reduce"))
            .unwrap();
        assert_eq!(row.cells[d0].launches, 3);
        assert_eq!(row.cells[d0].measured_ns, 200.0);
        assert!(!row.cells[d0].shape_recorded);
        assert_eq!(rep.variants[0].kernels.len(), 1);
        let why: BTreeMap<_, _> = rep.skipped.iter().cloned().collect();
        assert!(why["a/other [4096/256]"].contains(d1.as_str()));
        assert!(why["a/nostats [4096/256]"].contains("no projection"));
    }

    #[test]
    fn median_helper() {
        assert_eq!(median(vec![]), None);
        assert_eq!(median(vec![5.0, 1.0, 3.0]), Some(3.0));
        assert_eq!(median(vec![4.0, 1.0]), Some(2.5));
    }
}
