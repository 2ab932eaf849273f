//! `clprism report`: readable reports of the per-kernel JSONL log (DESIGN.md §4; issue 7,
//! item 2).
//!
//! ```text
//! clprism report LOG.jsonl [--format table|csv|json] [--kernel NAME]
//! clprism report A.jsonl B.jsonl [--format table|csv|json] [--kernel NAME]
//! clprism report --devices LOG.jsonl... [--cmp A B] [--format table|csv|json] [--plot FILE.svg]
//! ```
//!
//! One log gives these sections (the last three only when the records carry the data):
//! - `kernels`: per kernel (a name in one program: one source built with other `-D` values
//!   is another program, and a name held by several programs of the log is shown as
//!   `name#program`, [`load::Launch::label`]), launches, timed launches, measured time (total, mean, min,
//!   max), share of the log's measured time, devices and statuses other than `complete`,
//!   with a totals row;
//! - `projection` (project mode): per kernel and device profile, mean projected time (pure
//!   model), mean anchored time (timed launches: the launch device's measured time × the
//!   model's ratio between the devices, Habitat; [`crate::log::schema::Projection::anchored`];
//!   it ranks the devices as the model does), mean t_compute / t_global / t_local, the most
//!   frequent bound, the mean rank and how often the device was the best (Panwar et al.
//!   §IV-D);
//! - `emulation` (project mode): mini-emulation cost per kernel: emulated launches, reuses,
//!   exhausted budgets, errors, mean emulation time and its overhead relative to the
//!   measured time of the same launches (Panwar et al. §IV-C);
//! - `balance` and `share` (balance mode): per kernel, schedulers, fallbacks, mean chunks,
//!   mean idle tail, mean time, and the speedup against single-device launches of the same
//!   kernel and global size (`schedule.scheduler == "single"` or mode `log`, in the same
//!   log or, when two logs are given, in the other one); per device, the mean share of the
//!   work-groups and the chunks it ran (Boyer ch. 4).
//!
//! Two logs give a `compare` section: per kernel, the launches and total measured time of A
//! and B and the ratio B/A, followed by the balance sections of either run if any.
//! `--kernel NAME` lists every launch of that kernel instead (per log; `name#program` for
//! one program's).
//!
//! `--devices` gives the devices view ([`devices`]) of any number of logs of one application
//! in any modes (typically a log-mode, a project-mode and a balance-mode run): one row per
//! kernel with the native time on the app's device, the balance-mode time, the speedup, the
//! share of the work-groups per balance device and the projected-best device, then the
//! projected ranking of every profiled device per kernel; `--cmp A B` adds a byte comparison
//! of two output files (e.g. the app's output from a native and a balanced run).
//! `--plot FILE` writes that view as an SVG ([`svg`]), with or without `--devices`.
//!
//! "Measured time" is `device_ns`, or for a balanced launch that has none the schedule's
//! `wall_ns` ([`load::Launch::measured_ns`]).
//!
//! A log file named `-` is read from standard input. Malformed lines are skipped and counted
//! on stderr. Exit status: 0, 1 when a log cannot be
//! read or `--kernel` names no logged kernel, 2 for a usage error.

pub mod aggregate;
pub mod devices;
pub mod load;
pub mod render;
pub mod svg;

use aggregate::{Comparison, Report};
use load::{Launch, LoadedLog};
use render::{col, Cell, Kind, Table};
use std::io::Write;
use std::path::PathBuf;

/// Usage text of `clprism report`.
pub const USAGE: &str = "\
usage: clprism report LOG.jsonl [B.jsonl] [--format table|csv|json] [--kernel NAME]
       clprism report --devices LOG.jsonl... [--cmp A B] [--format F] [--plot FILE.svg]

  one log:   per-kernel launches and measured device time; projection (model, and
             anchored: the launch device's measured time x the model's ratio between the
             devices) and emulation overhead (project mode); work share, idle tail and
             speedup (balance mode)
  two logs:  per-kernel comparison of run B against run A (launches, total time, B/A)
  --devices  any number of logs of one app, any modes (e.g. a log-, a project- and a
             balance-mode run): per kernel, native time on the app's device (log and
             project mode), balance-mode time and speedup, work-group share per balance
             device, projected-best device; then per kernel the projected ranking of every
             profiled device (projected time; measured time on the app's own profile)
  --cmp A B       with --devices: compare two output files byte for byte (e.g. the app's
                  output of a native and of a balanced run) and report the result
  --plot FILE     also write the devices view as an SVG: per kernel, bars of measured and
                  projected time per device (log scale) and the work-group shares
  --kernel NAME   every launch of one kernel (NAME#PROGRAM, as a row names a kernel
                  held by several programs: that program's)
  --format F      table (default), csv (times in ns, fractions 0..1), json
";

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned text tables.
    Table,
    /// CSV, one table per section.
    Csv,
    /// One JSON document.
    Json,
}

/// Options of `clprism report`.
#[derive(Debug, Clone, PartialEq)]
pub struct ReportOptions {
    /// One or two log files.
    pub files: Vec<PathBuf>,
    /// Output format.
    pub format: Format,
    /// `--kernel NAME`: list the launches of one kernel.
    pub kernel: Option<String>,
    /// `--devices`: the devices view of any number of logs.
    pub devices: bool,
    /// `--cmp A B`: two output files to compare byte for byte (devices view).
    pub cmp: Option<(PathBuf, PathBuf)>,
    /// `--plot FILE`: write the devices view as an SVG.
    pub plot: Option<PathBuf>,
    /// `--help`.
    pub help: bool,
}

/// Parses the arguments after `report`.
///
/// Errors: unknown option, missing value, unknown format, no file, more than two files
/// without `--devices`, `--cmp` without `--devices`, `--kernel` with `--devices`.
pub fn parse_args(args: &[String]) -> Result<ReportOptions, String> {
    let mut o = ReportOptions {
        files: Vec::new(),
        format: Format::Table,
        kernel: None,
        devices: false,
        cmp: None,
        plot: None,
        help: false,
    };
    let mut i = 0;
    let mut only_files = false;
    while i < args.len() {
        let a = &args[i];
        if only_files || !a.starts_with('-') || a == "-" {
            o.files.push(PathBuf::from(a));
            i += 1;
            continue;
        }
        if a == "--" {
            only_files = true;
            i += 1;
            continue;
        }
        if a == "-h" || a == "--help" {
            o.help = true;
            return Ok(o);
        }
        if a == "--devices" {
            o.devices = true;
            i += 1;
            continue;
        }
        if a == "--cmp" {
            match (args.get(i + 1), args.get(i + 2)) {
                (Some(x), Some(y)) => o.cmp = Some((PathBuf::from(x), PathBuf::from(y))),
                _ => return Err("option --cmp needs two files".into()),
            }
            i += 3;
            continue;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (a.as_str(), None),
        };
        if name != "--format" && name != "--kernel" && name != "--plot" {
            return Err(format!("unknown option '{a}'"));
        }
        let v = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("option {name} needs a value"))?
            }
        };
        if name == "--format" {
            o.format = match v.as_str() {
                "table" | "text" => Format::Table,
                "csv" => Format::Csv,
                "json" => Format::Json,
                _ => return Err(format!("--format '{v}' is not one of table, csv, json")),
            };
        } else if name == "--plot" {
            o.plot = Some(PathBuf::from(v));
        } else {
            o.kernel = Some(v);
        }
        i += 1;
    }
    if o.files.is_empty() {
        return Err("no log file given".into());
    }
    if o.files.len() > 2 && !o.devices {
        return Err(format!(
            "{} log files given; give one (report) or two (comparison), or use --devices",
            o.files.len()
        ));
    }
    if o.cmp.is_some() && !o.devices {
        return Err("--cmp belongs to the devices view: add --devices".into());
    }
    if o.kernel.is_some() && o.devices {
        return Err("--kernel and --devices do not go together".into());
    }
    Ok(o)
}

fn join_counts(m: &std::collections::BTreeMap<String, u64>, skip: &str) -> String {
    m.iter()
        .filter(|(k, _)| k.as_str() != skip)
        .map(|(k, v)| format!("{k}:{v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn or_dash(s: String) -> Cell {
    if s.is_empty() {
        Cell::None
    } else {
        Cell::Text(s)
    }
}

/// The `kernels` section of a report.
pub fn kernels_table(r: &Report) -> Table {
    let mut t = Table::new(
        "kernels",
        vec![
            col("kernel", "kernel", Kind::Text),
            col("launches", "launches", Kind::Int),
            col("timed", "timed", Kind::Int),
            col("total ms", "total_ns", Kind::Ms),
            col("mean us", "mean_ns", Kind::Us),
            col("min us", "min_ns", Kind::Us),
            col("max us", "max_ns", Kind::Us),
            col("share", "share", Kind::Pct),
            col("devices", "devices", Kind::Text),
            col("other status", "other_status", Kind::Text),
        ],
    );
    for k in &r.kernels {
        t.rows.push(vec![
            k.kernel.clone().into(),
            k.launches.into(),
            k.timed.into(),
            k.total_ns.into(),
            k.mean_ns.into(),
            k.min_ns.into(),
            k.max_ns.into(),
            k.share.into(),
            or_dash(k.devices.keys().cloned().collect::<Vec<_>>().join(" ")),
            or_dash(join_counts(&k.statuses, "complete")),
        ]);
    }
    t.footer = Some(vec![
        "total".into(),
        r.total.launches.into(),
        r.total.timed.into(),
        r.total.total_ns.into(),
        Cell::None,
        Cell::None,
        Cell::None,
        if r.total.total_ns > 0 {
            1.0.into()
        } else {
            Cell::None
        },
        Cell::None,
        Cell::None,
    ]);
    t
}

/// The `projection` section (empty table when no launch was projected).
pub fn projection_table(r: &Report) -> Table {
    let mut t = Table::new(
        "projection",
        vec![
            col("kernel", "kernel", Kind::Text),
            col("device", "device", Kind::Text),
            col("launches", "launches", Kind::Int),
            col("projected us", "projected_ns", Kind::Us),
            col("anchored us", "anchored_ns", Kind::Us),
            col("compute us", "t_compute_ns", Kind::Us),
            col("global us", "t_global_ns", Kind::Us),
            col("local us", "t_local_ns", Kind::Us),
            col("bound", "bound", Kind::Text),
            col("rank", "rank", Kind::Ratio),
            col("best", "best", Kind::Int),
        ],
    );
    for p in &r.projection {
        let bound = if p.bounds.len() > 1 {
            format!("{} ({})", p.bound, join_counts(&p.bounds, ""))
        } else {
            p.bound.clone()
        };
        t.rows.push(vec![
            p.kernel.clone().into(),
            p.device.clone().into(),
            p.launches.into(),
            p.mean_projected_ns.into(),
            p.mean_anchored_ns.into(),
            p.mean_t_compute_ns.into(),
            p.mean_t_global_ns.into(),
            p.mean_t_local_ns.into(),
            or_dash(bound),
            p.mean_rank.into(),
            p.best.into(),
        ]);
    }
    t
}

/// The `emulation` section (empty table when no launch carries an emulation record).
pub fn emulation_table(r: &Report) -> Table {
    let mut t = Table::new(
        "emulation",
        vec![
            col("kernel", "kernel", Kind::Text),
            col("launches", "launches", Kind::Int),
            col("reused", "reused", Kind::Int),
            col("budget out", "budget_exhausted", Kind::Int),
            col("errors", "errors", Kind::Int),
            col("mean emu us", "mean_emulation_ns", Kind::Us),
            col("total emu ms", "total_emulation_ns", Kind::Ms),
            col("overhead", "overhead", Kind::Pct),
            col("error reasons", "error_reasons", Kind::Text),
        ],
    );
    for e in &r.emulation {
        t.rows.push(vec![
            e.kernel.clone().into(),
            e.launches.into(),
            e.reused.into(),
            e.budget_exhausted.into(),
            e.errors.into(),
            e.mean_emulation_ns.into(),
            e.total_emulation_ns.into(),
            e.overhead.into(),
            or_dash(join_counts(&e.error_reasons, "")),
        ]);
    }
    t
}

/// The `balance` section (empty table when no launch was balanced).
pub fn balance_table(r: &Report) -> Table {
    let mut t = Table::new(
        "balance",
        vec![
            col("kernel", "kernel", Kind::Text),
            col("launches", "launches", Kind::Int),
            col("scheduler", "schedulers", Kind::Text),
            col("fallbacks", "fallbacks", Kind::Int),
            col("chunks", "mean_chunks", Kind::Ratio),
            col("idle tail us", "mean_idle_tail_ns", Kind::Us),
            col("mean us", "mean_ns", Kind::Us),
            col("baseline", "baseline_launches", Kind::Int),
            col("speedup", "speedup", Kind::Ratio),
        ],
    );
    for b in &r.balance {
        t.rows.push(vec![
            b.kernel.clone().into(),
            b.launches.into(),
            or_dash(join_counts(&b.schedulers, "")),
            b.fallbacks.into(),
            b.mean_chunks.into(),
            b.mean_idle_tail_ns.into(),
            b.mean_ns.into(),
            b.baseline_launches.into(),
            b.speedup.into(),
        ]);
    }
    t
}

/// The `share` section: work share per kernel and device in balance mode.
pub fn share_table(r: &Report) -> Table {
    let mut t = Table::new(
        "share",
        vec![
            col("kernel", "kernel", Kind::Text),
            col("device", "device", Kind::Text),
            col("share", "mean_share", Kind::Pct),
            col("work-groups", "work_groups", Kind::Int),
            col("chunks", "chunks", Kind::Int),
            col("abandoned", "abandoned", Kind::Int),
        ],
    );
    for s in &r.shares {
        t.rows.push(vec![
            s.kernel.clone().into(),
            s.device.clone().into(),
            s.mean_share.into(),
            s.work_groups.into(),
            s.chunks.into(),
            s.abandoned.into(),
        ]);
    }
    t
}

/// The sections of one report that have rows (always `kernels`).
pub fn report_tables(r: &Report) -> Vec<Table> {
    let mut v = vec![kernels_table(r)];
    for t in [
        projection_table(r),
        emulation_table(r),
        balance_table(r),
        share_table(r),
    ] {
        if !t.rows.is_empty() {
            v.push(t);
        }
    }
    v
}

/// The `compare` section.
pub fn compare_table(c: &Comparison) -> Table {
    let mut t = Table::new(
        "compare",
        vec![
            col("kernel", "kernel", Kind::Text),
            col("launches A", "a_launches", Kind::Int),
            col("launches B", "b_launches", Kind::Int),
            col("total A ms", "a_total_ns", Kind::Ms),
            col("total B ms", "b_total_ns", Kind::Ms),
            col("B/A", "ratio", Kind::Ratio),
        ],
    );
    let row = |r: &aggregate::CompareRow| -> Vec<Cell> {
        vec![
            r.kernel.clone().into(),
            r.a_launches.into(),
            r.b_launches.into(),
            r.a_total_ns.into(),
            r.b_total_ns.into(),
            r.ratio.into(),
        ]
    };
    t.rows = c.kernels.iter().map(row).collect();
    t.footer = Some(row(&c.total));
    t
}

/// Whether `--kernel k` names launch `l`: its kernel name, or its row name (`name#program`).
fn named(l: &Launch, k: &str) -> bool {
    l.kernel == k || l.label == k
}

/// The `launches` section: every launch of one kernel, by pid then sequence number.
pub fn launches_table(log: &LoadedLog, kernel: &str) -> Table {
    let mut ls: Vec<&Launch> = log.launches.iter().filter(|l| named(l, kernel)).collect();
    ls.sort_by_key(|l| (l.pid(), l.seq));
    let dims = |v: &Option<Vec<u64>>| {
        v.as_ref().map_or(Cell::None, |v| {
            Cell::Text(v.iter().map(u64::to_string).collect::<Vec<_>>().join("x"))
        })
    };
    let mut t = Table::new(
        &format!("launches of {kernel}"),
        vec![
            col("pid", "pid", Kind::Int),
            col("seq", "seq", Kind::Int),
            col("global", "global", Kind::Text),
            col("local", "local", Kind::Text),
            col("offset", "offset", Kind::Text),
            col("device", "device", Kind::Text),
            col("status", "status", Kind::Text),
            col("device us", "device_ns", Kind::Us),
            col("queued us", "queued_ns", Kind::Us),
            col("best", "projected_best", Kind::Text),
            col("emu us", "emulation_ns", Kind::Us),
            col("chunks", "chunks", Kind::Int),
            col("idle tail us", "idle_tail_ns", Kind::Us),
            col("wall us", "wall_ns", Kind::Us),
        ],
    );
    for l in ls {
        let s = l.schedule.as_ref();
        t.rows.push(vec![
            l.pid().map(u64::from).into(),
            l.seq.into(),
            dims(&Some(l.global.clone())),
            dims(&l.local),
            dims(&l.offset),
            or_dash(l.device_label()),
            l.status.to_string().into(),
            l.device_ns.into(),
            l.queued_ns.into(),
            l.projection.as_ref().and_then(|p| p.best_device()).into(),
            l.emulation.as_ref().and_then(|e| e.wall_ns()).into(),
            s.map(|s| s.chunks.len() as u64).into(),
            s.and_then(|s| s.idle_tail_ns).into(),
            s.and_then(|s| s.wall_ns).into(),
        ]);
    }
    // drop the project/balance columns no launch fills
    let keep: Vec<bool> = (0..t.cols.len())
        .map(|i| i < 9 || t.rows.iter().any(|r| r[i] != Cell::None))
        .collect();
    t.cols = t
        .cols
        .iter()
        .zip(&keep)
        .filter(|(_, k)| **k)
        .map(|(c, _)| c.clone())
        .collect();
    for r in &mut t.rows {
        *r = r
            .iter()
            .zip(&keep)
            .filter(|(_, k)| **k)
            .map(|(c, _)| c.clone())
            .collect();
    }
    t
}

fn header(r: &Report) -> String {
    let modes = join_counts(&r.modes, "");
    let pids = r
        .pids
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(" ");
    format!(
        "clprism report: {}\nrecords: {}  pids: {}  modes: {}\n\n",
        r.file,
        r.records,
        if pids.is_empty() { "-" } else { &pids },
        if modes.is_empty() { "-" } else { &modes },
    )
}

fn warn(msg: &str) {
    let _ = writeln!(std::io::stderr(), "clprism report: {msg}");
}

fn load_reporting(p: &std::path::Path) -> Result<LoadedLog, String> {
    let log = load::load(p).map_err(|e| format!("cannot read {}: {e}", p.display()))?;
    if log.malformed > 0 {
        warn(&format!(
            "skipped {} malformed line{} in {} (first: line {})",
            log.malformed,
            if log.malformed == 1 { "" } else { "s" },
            p.display(),
            log.first_malformed.unwrap_or(0)
        ));
    }
    if log.unreadable_extras > 0 {
        warn(&format!(
            "{} launch{} in {} had an unreadable emulation/projection/schedule object \
             (ignored)",
            log.unreadable_extras,
            if log.unreadable_extras == 1 { "" } else { "es" },
            p.display()
        ));
    }
    if log.launches.is_empty() {
        warn(&format!("no launch records in {}", p.display()));
    }
    Ok(log)
}

/// The devices view of `logs`, with the `--cmp` files compared.
pub fn devices_view(opts: &ReportOptions, logs: &[LoadedLog]) -> devices::DevicesView {
    let mut v = devices::build(logs);
    v.output_check = opts
        .cmp
        .as_ref()
        .map(|(a, b)| devices::OutputCheck::compare(a, b));
    v
}

/// Produces the whole output for parsed options and loaded logs (`logs.len()` is 1 or 2
/// without `--devices`).
///
/// Errors: `--kernel` names a kernel that no log holds.
pub fn render(opts: &ReportOptions, logs: &[LoadedLog]) -> Result<String, String> {
    if opts.devices {
        let v = devices_view(opts, logs);
        return Ok(match opts.format {
            Format::Json => json_string(&v),
            Format::Csv => render::render_all(&devices::tables(&v), true),
            Format::Table => format!(
                "{}{}",
                devices::header(&v),
                render::render_all(&devices::tables(&v), false)
            ),
        });
    }
    if let Some(k) = &opts.kernel {
        if !logs.iter().any(|l| l.launches.iter().any(|x| named(x, k))) {
            let mut names: Vec<&str> = logs
                .iter()
                .flat_map(|l| l.launches.iter().map(|x| x.label.as_str()))
                .collect();
            names.sort();
            names.dedup();
            return Err(format!(
                "no launch of kernel '{k}' (kernels: {})",
                names.join(", ")
            ));
        }
        let tables: Vec<Table> = logs
            .iter()
            .map(|l| {
                let mut t = launches_table(l, k);
                if logs.len() > 1 {
                    t.title = format!("{} in {}", t.title, l.name);
                }
                t
            })
            .collect();
        return Ok(match opts.format {
            Format::Json => {
                let v: Vec<serde_json::Value> = logs
                    .iter()
                    .map(|l| {
                        let mut ls: Vec<&Launch> =
                            l.launches.iter().filter(|x| named(x, k)).collect();
                        ls.sort_by_key(|x| (x.pid(), x.seq));
                        serde_json::json!({"file": l.name, "kernel": k, "launches": ls})
                    })
                    .collect();
                json_string(&v)
            }
            f => render::render_all(&tables, f == Format::Csv),
        });
    }
    if logs.len() == 2 {
        let c = aggregate::compare(&logs[0], &logs[1]);
        return Ok(match opts.format {
            Format::Json => json_string(&c),
            f => {
                let mut tables = vec![compare_table(&c)];
                for (tag, r) in [("A", &c.a), ("B", &c.b)] {
                    for mut t in [balance_table(r), share_table(r)] {
                        if !t.rows.is_empty() {
                            t.title = format!("{} of {tag}", t.title);
                            tables.push(t);
                        }
                    }
                }
                let body = render::render_all(&tables, f == Format::Csv);
                if f == Format::Csv {
                    body
                } else {
                    format!(
                        "clprism report: A = {}  B = {}\n\n{body}",
                        c.a.file, c.b.file
                    )
                }
            }
        });
    }
    let r = aggregate::build(&logs[0], &aggregate::Baseline::default());
    Ok(match opts.format {
        Format::Json => json_string(&r),
        Format::Csv => render::render_all(&report_tables(&r), true),
        Format::Table => format!(
            "{}{}",
            header(&r),
            render::render_all(&report_tables(&r), false)
        ),
    })
}

fn json_string<T: serde::Serialize>(v: &T) -> String {
    let mut s =
        serde_json::to_string_pretty(v).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}

/// Entry point of `clprism report`; `args` are the arguments after `report`. Returns the exit
/// status (see the module documentation).
pub fn report_main(args: &[String]) -> i32 {
    let opts = match parse_args(args) {
        Ok(o) if o.help => {
            print!("{USAGE}");
            return 0;
        }
        Ok(o) => o,
        Err(e) => {
            warn(&format!("error: {e}"));
            let _ = write!(std::io::stderr(), "{USAGE}");
            return 2;
        }
    };
    let mut logs = Vec::new();
    for f in &opts.files {
        match load_reporting(f) {
            Ok(l) => logs.push(l),
            Err(e) => {
                warn(&format!("error: {e}"));
                return 1;
            }
        }
    }
    if let Some(p) = &opts.plot {
        let svg = svg::plot(&devices_view(&opts, &logs));
        if let Err(e) = std::fs::write(p, svg) {
            warn(&format!("error: cannot write {}: {e}", p.display()));
            return 1;
        }
    }
    match render(&opts, &logs) {
        Ok(s) => {
            let mut out = std::io::stdout().lock();
            // a closed pipe (`| head`) is not an error worth reporting
            let _ = out.write_all(s.as_bytes()).and_then(|_| out.flush());
            0
        }
        Err(e) => {
            warn(&format!("error: {e}"));
            1
        }
    }
}
