//! `clprism accuracy`: runs the example apps natively on each device present, under the
//! interposer in project mode, and compares every kernel's measured device time with its
//! projection on that device (Panwar et al. §V-B; Wang et al. §V), for the baseline model
//! and each refinement (DESIGN.md §6).
//!
//! ```text
//! clprism accuracy [--examples DIR] [--profiles DIR] [--out DIR] [--lib PATH]
//!     [--devices P:D,...] [--apps A,B,...] [--args APP=ARGS]... [--timeout S]
//!     [--from-logs DIR] [--verbose]
//! clprism accuracy --measured LOG[,LOG...] --projected LOG[,LOG...] [--profiles DIR]
//!     [--format table|csv|json] [--anchor project-run|measured-log]
//! ```
//!
//! * [`logs`]: any application, from logs the user ran (measured on several devices,
//!   projected on one; anchored projection);
//! * [`records`]: reading the launch records of a project-mode log;
//! * [`compare`]: per-kernel medians, projections per [`crate::model::ModelOptions`]
//!   variant, metrics and tables;
//! * [`run`]: the device list, running the apps, reading logs back.

pub mod compare;
pub mod logs;
pub mod records;
pub mod run;

use run::{RunSpec, Target};
use serde_json::json;
use std::path::PathBuf;
use std::time::Duration;

const USAGE: &str = "\
usage: clprism accuracy [--examples DIR] [--profiles DIR] [--out DIR] [--lib PATH]
                        [--devices P:D,...] [--apps A,B,...] [--args APP=ARGS]...
                        [--timeout SECONDS] [--from-logs DIR] [--verbose]
       clprism accuracy --measured LOG[,LOG...] --projected LOG[,LOG...]
                        [--profiles DIR] [--format table|csv|json]
                        [--anchor project-run|measured-log] [--reproject]
                        [--model SPEC] [--queue-state measured|projected]

Runs each example app (default: those of examples/run_all.sh found in --examples,
default examples/build) on every OpenCL device (or --devices), under the interposer
(--lib, default libOpenCL.so next to clprism) in project mode, and compares each kernel's
measured device time with its projection from the emulated statistics and the device's
profile (--profiles, default profiles). Prints per kernel the measured and projected
times, the absolute percentage error per device, the relative-performance error and
whether the projected-best device is the actual best (Panwar §V), then a summary per
model variant (baseline, waves, launch_overhead, cache_reuse, issue_slots, all).
  --out DIR        write accuracy.json, accuracy.txt and the logs (DIR/logs) there
  --args APP=ARGS  extra arguments of one app (space-separated), e.g. matmul_global=1024
  --from-logs DIR  compare the logs of an earlier run (DIR/<app>.<P>_<D>.jsonl) instead
  --verbose        the per-kernel table of every variant, not only the baseline

Any application, from logs (no app is run): --measured takes logs of the app run on
two or more devices or machines (any mode, CLPRISM_DEVICE_TIMING=all or adaptive),
--projected the log of a project-mode run on one of them (both repeatable, or
comma-separated; a suite: one log per app, kernels are matched by program (source and
build options: other -D values are another kernel, named kernel#program), kernel name,
global and local size). Each log's devices are mapped to profiles (--profiles) as
project mode does (the log's device lines). Prints per kernel and device the median
measured time, the model's and the anchored projection (the launch device's measured
time x the model's ratio between the devices), the measured and projected ratio to the
launch device (*), the APE (model; anchored off the launch device), Panwar's relative-
performance error and whether the projected-best device is the measured best; then
MAPE, median APE, relative error and hits. A figure that likely rests on a cold start
(two launches whose median is > 1.10x the faster, or one launch, the first of its kernel
in its process, under 120 us) ends in COLD with a reason line; the summary is printed
with every row and again without the marked rows (docs/projection.md, Cold starts).
  --format F       table (default), csv (one line per kernel and device) or json
  --anchor A       the measured time anchored on: project-run (default: the project-mode
                   run's own launches, as its records hold) or measured-log (the measured
                   logs of the launch device; e.g. when the emulation shared the CPU)
  --reproject      project every launch again from its logged statistics and launch shape
                   with this build's model and every profile of --profiles, instead of
                   reading the projections the run wrote (a model change measured on the
                   same logs)
  --model SPEC     the model options of --reproject (implies it): a comma-separated list
                   starting from recommended (default), panwar or all, then +FLAG or
                   -FLAG per refinement (waves, launch_overhead, cache_reuse, issue_slots,
                   latency_bound, kernel_floor, bytes_in_flight, additive_floor,
                   conversion_as_int, streaming_latency, request_in_flight,
                   l2_store_cost, in_flight_dram, departure_delay, l1_stores,
                   load_waits, issue_partitions, prune_other, queued_floor,
                   store_waits, in_flight_measured), e.g.
                   recommended,-bytes_in_flight (an ablation on the same logs)
  --queue-state Q  with --reproject: whose queue state (START - SUBMIT over 10 us: the
                   launch waited behind other work; the queued_floor refinement) a
                   device's model time uses: measured (default: each device's measured
                   launches, each projected idle or queued as it ran there) or projected
                   (the project-mode run's launches, for every device, as project mode
                   itself must)
Exit status: 0 when every app ran (or every log was read) and at least one kernel was
compared, 1 otherwise, 2 on usage errors.
";

/// Parsed command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Example binaries.
    pub examples: PathBuf,
    /// Profiles directory.
    pub profiles: PathBuf,
    /// Output directory.
    pub out: Option<PathBuf>,
    /// Interposer library.
    pub lib: Option<PathBuf>,
    /// Device indices to use (all when empty).
    pub devices: Vec<String>,
    /// Apps to run (the default list when empty).
    pub apps: Vec<String>,
    /// Extra arguments per app.
    pub app_args: Vec<(String, Vec<String>)>,
    /// Per-app time limit.
    pub timeout: Duration,
    /// Compare existing logs.
    pub from_logs: Option<PathBuf>,
    /// Every variant's table.
    pub verbose: bool,
    /// `--measured`: logs of measured runs (any application).
    pub measured: Vec<PathBuf>,
    /// `--projected`: project-mode logs (any application).
    pub projected: Vec<PathBuf>,
    /// `--format`: `table`, `csv` or `json` (`--measured` mode).
    pub format: String,
    /// `--anchor`: where the anchored projection's measured time comes from.
    pub anchor: logs::Anchor,
    /// `--reproject`: projections recomputed from the logged statistics.
    pub reproject: bool,
    /// `--model`: the options of the re-projection (default: recommended).
    pub model: Option<crate::model::ModelOptions>,
    /// `--queue-state`: whose queue state the re-projection uses per device.
    pub queue_state: logs::QueueState,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            examples: PathBuf::from("examples/build"),
            profiles: PathBuf::from("profiles"),
            out: None,
            lib: None,
            devices: Vec::new(),
            apps: Vec::new(),
            app_args: Vec::new(),
            timeout: Duration::from_secs(600),
            from_logs: None,
            verbose: false,
            measured: Vec::new(),
            projected: Vec::new(),
            format: "table".into(),
            anchor: logs::Anchor::default(),
            reproject: false,
            model: None,
            queue_state: logs::QueueState::default(),
        }
    }
}

fn list(s: &str) -> Vec<String> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(str::to_string)
        .collect()
}

/// Parses the arguments after `accuracy`.
///
/// Errors: unknown option or missing/malformed value (`Err("")` for `--help`).
pub fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--examples" => o.examples = PathBuf::from(val(a)?),
            "--profiles" => o.profiles = PathBuf::from(val(a)?),
            "--out" => o.out = Some(PathBuf::from(val(a)?)),
            "--lib" => o.lib = Some(PathBuf::from(val(a)?)),
            "--devices" => o.devices = list(&val(a)?),
            "--apps" => o.apps = list(&val(a)?),
            "--args" => {
                let v = val(a)?;
                let (app, rest) = v
                    .split_once('=')
                    .ok_or_else(|| format!("--args '{v}' is not APP=ARGS"))?;
                o.app_args.push((
                    app.to_string(),
                    rest.split_whitespace().map(str::to_string).collect(),
                ));
            }
            "--timeout" => {
                let v = val(a)?;
                let s: f64 = v
                    .parse()
                    .ok()
                    .filter(|s: &f64| *s > 0.0 && s.is_finite())
                    .ok_or_else(|| format!("--timeout '{v}' is not a positive number"))?;
                o.timeout = Duration::from_secs_f64(s);
            }
            "--from-logs" => o.from_logs = Some(PathBuf::from(val(a)?)),
            "--verbose" => o.verbose = true,
            "--measured" => o
                .measured
                .extend(list(&val(a)?).into_iter().map(PathBuf::from)),
            "--projected" => o
                .projected
                .extend(list(&val(a)?).into_iter().map(PathBuf::from)),
            "--format" => {
                let v = val(a)?;
                if !["table", "csv", "json"].contains(&v.as_str()) {
                    return Err(format!("--format '{v}' is not table, csv or json"));
                }
                o.format = v;
            }
            "--anchor" => {
                let v = val(a)?;
                o.anchor = logs::Anchor::parse(&v)
                    .ok_or_else(|| format!("--anchor '{v}' is not project-run or measured-log"))?;
            }
            "--reproject" => o.reproject = true,
            "--queue-state" => {
                let v = val(a)?;
                o.queue_state = logs::QueueState::parse(&v)
                    .ok_or_else(|| format!("--queue-state '{v}' is not measured or projected"))?;
            }
            "--model" => {
                let v = val(a)?;
                o.model = Some(crate::model::ModelOptions::parse_spec(&v)?);
                o.reproject = true;
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if o.measured.is_empty() != o.projected.is_empty() {
        return Err("--measured and --projected go together".into());
    }
    if !o.measured.is_empty() && o.from_logs.is_some() {
        return Err("--from-logs reads the examples' logs; not with --measured".into());
    }
    Ok(o)
}

fn abs(p: &std::path::Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Runs (or reads) and compares; returns the report, the text printed, and the failures.
///
/// Errors: profiles that do not load, no real OpenCL library, no interposer library, an
/// unwritable output directory.
pub fn accuracy(o: &Options) -> Result<(compare::Report, String, Vec<String>), String> {
    let profiles = crate::model::load_dir(&o.profiles).map_err(|e| e.to_string())?;
    // Reading earlier logs needs no OpenCL device: without one, columns come from the
    // logs' `launch_device_profile`.
    let mut targets: Vec<Target> = match (run::targets(&profiles), &o.from_logs) {
        (Ok(t), _) => t,
        (Err(_), Some(_)) => Vec::new(),
        (Err(e), None) => return Err(e),
    };
    if !o.devices.is_empty() {
        targets.retain(|t| o.devices.contains(&t.index));
    }
    let mut failures = Vec::new();
    let runs = if let Some(dir) = &o.from_logs {
        run::read_logs(dir, &targets)?
    } else {
        if targets.is_empty() {
            return Err("no OpenCL device to run on".into());
        }
        let exe = std::env::current_exe().ok();
        let lib = crate::launcher::find_library(
            o.lib.as_deref(),
            crate::config::from_env_quiet().lib.as_deref(),
            exe.as_deref(),
        )?;
        let logs = match &o.out {
            Some(d) => d.join("logs"),
            None => std::env::temp_dir().join(format!("clprism-accuracy-{}", std::process::id())),
        };
        std::fs::create_dir_all(&logs).map_err(|e| format!("{}: {e}", logs.display()))?;
        let spec = RunSpec {
            examples: abs(&o.examples),
            lib,
            profiles: abs(&o.profiles),
            logs,
            app_args: o.app_args.clone(),
            timeout: o.timeout,
        };
        let apps: Vec<String> = if o.apps.is_empty() {
            run::APPS
                .iter()
                .filter(|a| spec.examples.join(a).is_file())
                .map(|a| a.to_string())
                .collect()
        } else {
            o.apps.clone()
        };
        if apps.is_empty() {
            return Err(format!(
                "no example app in {} (build them with `make -C examples`)",
                spec.examples.display()
            ));
        }
        let mut runs = Vec::new();
        let n = apps.len() * targets.len();
        let mut i = 0;
        for t in &targets {
            for app in &apps {
                i += 1;
                eprintln!(
                    "[{i}/{n}] {app} on {} ({}, profile {})",
                    t.index,
                    t.identity.name,
                    t.profile.as_deref().unwrap_or("none")
                );
                match run::run_app(&spec, app, t) {
                    Ok(r) => runs.push(r),
                    Err(e) => {
                        eprintln!("clprism accuracy: {e}");
                        failures.push(e);
                    }
                }
            }
        }
        runs
    };
    let rep = compare::compare(&runs, &profiles);
    let mut text = String::new();
    for t in &targets {
        text += &format!(
            "device {}: {} -> profile {}\n",
            t.index,
            t.identity.name,
            t.profile.as_deref().unwrap_or("none (not projected)")
        );
    }
    let n_var = if o.verbose { rep.variants.len() } else { 1 };
    for vi in 0..n_var {
        text += &compare::render_variant(&rep, vi);
    }
    text += &compare::render_summary(&rep);
    if let Some(d) = &o.out {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
        let full: String = (0..rep.variants.len())
            .map(|vi| compare::render_variant(&rep, vi))
            .collect::<String>()
            + &compare::render_summary(&rep);
        let j = json!({
            "devices": targets.iter().map(|t| json!({
                "index": t.index, "name": t.identity.name, "profile": t.profile,
            })).collect::<Vec<_>>(),
            "failures": failures,
            "report": rep,
        });
        let w = |name: &str, s: String| {
            std::fs::write(d.join(name), s).map_err(|e| format!("{}: {e}", d.join(name).display()))
        };
        w(
            "accuracy.json",
            serde_json::to_string_pretty(&j).map_err(|e| e.to_string())? + "\n",
        )?;
        w("accuracy.txt", full)?;
    }
    Ok((rep, text, failures))
}

/// `clprism accuracy --measured ... --projected ...`: the comparison as text, CSV or
/// JSON, and the number of kernels compared.
///
/// Errors: profiles that do not load, a log that cannot be read.
pub fn accuracy_from_logs(o: &Options) -> Result<(String, usize), String> {
    let profiles = crate::model::load_dir(&o.profiles).map_err(|e| e.to_string())?;
    let model = o.reproject.then(|| {
        o.model
            .unwrap_or_else(crate::model::ModelOptions::recommended)
    });
    let rep = logs::compare_logs_queue(
        &o.measured,
        &o.projected,
        &profiles,
        o.anchor,
        model,
        o.queue_state,
    )?;
    let text = match o.format.as_str() {
        "csv" => logs::render_csv(&rep),
        "json" => serde_json::to_string_pretty(&rep).map_err(|e| e.to_string())? + "\n",
        _ => logs::render_table(&rep),
    };
    Ok((text, rep.rows.len()))
}

/// Entry point of `clprism accuracy`; returns the exit code.
pub fn accuracy_main(args: &[String]) -> i32 {
    let o = match parse_args(args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            print!("{USAGE}");
            return 0;
        }
        Err(e) => {
            eprint!("clprism accuracy: {e}\n{USAGE}");
            return 2;
        }
    };
    if !o.measured.is_empty() {
        return match accuracy_from_logs(&o) {
            Ok((text, n)) => {
                print!("{text}");
                if n == 0 {
                    eprintln!("clprism accuracy: no kernel compared");
                }
                i32::from(n == 0)
            }
            Err(e) => {
                eprintln!("clprism accuracy: {e}");
                1
            }
        };
    }
    match accuracy(&o) {
        Ok((rep, text, failures)) => {
            print!("{text}");
            let compared = rep.variants.first().map_or(0, |v| v.kernels.len());
            if !failures.is_empty() || compared == 0 {
                eprintln!(
                    "clprism accuracy: {} app run(s) failed, {compared} kernel(s) compared",
                    failures.len()
                );
                1
            } else {
                0
            }
        }
        Err(e) => {
            eprintln!("clprism accuracy: {e}");
            1
        }
    }
}

#[cfg(test)]
mod tests {
    /// `--help` names every refinement flag the model has.
    #[test]
    fn the_usage_names_every_model_flag() {
        for flag in crate::model::project::ModelOptions::FLAGS {
            assert!(super::USAGE.contains(flag), "--model's help lacks {flag}");
        }
    }

    use super::*;

    #[test]
    fn args() {
        let a: Vec<String> = [
            "--devices",
            "0:0, 0:1",
            "--args",
            "matmul_global=512 2",
            "--timeout",
            "30",
            "--verbose",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = parse_args(&a).unwrap();
        assert_eq!(o.devices, vec!["0:0", "0:1"]);
        assert_eq!(
            o.app_args,
            vec![(
                "matmul_global".to_string(),
                vec!["512".to_string(), "2".to_string()]
            )]
        );
        assert_eq!(o.timeout, Duration::from_secs(30));
        assert!(o.verbose);
        assert!(parse_args(&["--timeout".into(), "-1".into()]).is_err());
        assert!(parse_args(&["--args".into(), "x".into()]).is_err());
        assert!(parse_args(&["--nope".into()]).is_err());
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let o = parse_args(&v(&[
            "--measured",
            "a.jsonl,b.jsonl",
            "--measured",
            "c.jsonl",
            "--projected",
            "p.jsonl",
            "--format",
            "csv",
            "--anchor",
            "measured-log",
        ]))
        .unwrap();
        assert_eq!(o.measured.len(), 3);
        assert_eq!(o.projected, vec![PathBuf::from("p.jsonl")]);
        assert_eq!(o.format, "csv");
        assert_eq!(o.anchor, logs::Anchor::MeasuredLog);
        assert!(parse_args(&v(&["--measured", "a.jsonl"])).is_err());
        assert!(parse_args(&v(&["--format", "xml"])).is_err());
        assert!(parse_args(&v(&["--anchor", "x"])).is_err());
        assert_eq!(o.queue_state, logs::QueueState::Measured);
        let q = |s: &str| {
            parse_args(&v(&[
                "--measured",
                "a,b",
                "--projected",
                "p",
                "--queue-state",
                s,
            ]))
            .map(|o| o.queue_state)
        };
        assert_eq!(q("projected"), Ok(logs::QueueState::Projected));
        assert_eq!(q("measured"), Ok(logs::QueueState::Measured));
        assert!(q("idle").is_err());
    }
}
