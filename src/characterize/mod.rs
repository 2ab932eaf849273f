//! `clprism characterize`: OpenCL microbenchmarks in the spirit of SHOC (Danalis et al.,
//! GPGPU-3 2010) that write a device profile (DESIGN.md §6, Panwar et al. §IV-B; schema in
//! `profiles/README.md`).
//!
//! ```text
//! clprism characterize [--device P:D] [--out FILE] [--quick] [--name NAME] [--pin]
//!     [--runs N] [--quiet] [--only latency,floor,l2 --update FILE]
//! ```
//!
//! Measured, through the real OpenCL library with profiling events:
//! coalesced global read and write throughput and local memory throughput against
//! occupancy ([`bench::global_memory`], [`bench::local_memory`]), instruction throughput
//! per class ([`bench::instructions`]), launch overhead and kernel floor
//! ([`bench::launch_overhead`]), host↔device copy throughput ([`bench::copies`]), global and
//! L2 load latency by pointer chasing ([`bench::latency`]) and L2 read throughput
//! ([`bench::l2_read`]). `--only latency,floor,l2 --update FILE` measures the last three
//! alone (seconds) and writes them into an existing profile. What cannot be measured comes from
//! `clGetDeviceInfo` (or, for NVIDIA occupancy limits, from the CUDA guide's table for the
//! compute capability the driver reports), see [`device`]. Every number of the written
//! profile has a `sources` entry.
//!
//! Modules: [`clx`] (OpenCL calls), [`kernels`] (benchmark sources), [`bench`](mod@bench)
//! (measurements), [`device`] (driver facts), [`assemble`] (profile), [`progress`].

pub mod assemble;
pub mod bench;
pub mod clx;
pub mod device;
pub mod kernels;
pub mod progress;

use bench::{Budget, Shape};
use clx::Session;
use opencl_sys::*;
use std::path::PathBuf;

const USAGE: &str = "\
usage: clprism characterize [--device P:D] [--out FILE] [--quick] [--name NAME] [--pin]
                            [--runs N] [--quiet] [--only LIST --update FILE]

Runs OpenCL microbenchmarks on one device and writes its profile JSON (profiles/README.md).
  --device P:D   platform:device index (clinfo order; default 0:0)
  --out FILE     write the profile there (default: stdout)
  --quick        fewer occupancy points, fewer repetitions, smaller buffers (< 2 min)
  --name NAME    profile name (default: derived from the device name)
  --pin          also match on the compute-unit count (a host-specific profile)
  --runs N       run the whole suite N times and keep each figure's best run (for hosts
                 shared with other work; default 1)
  --quiet        no progress bar
  --only LIST    run only these benchmarks (comma-separated: latency, floor, l2) and write
                 their figures into the profile named by --update (in place, or to --out):
                 latency = pointer-chasing global, L2 and L1 latency
                 (global_latency_ns, l2_latency_ns, l1_latency_ns), floor = empty-kernel device time (kernel_floor_ns),
                 l2 = L2 read throughput (l2_read_bytes_per_ns); a few seconds each
  --update FILE  the profile that --only updates
";

/// The benchmarks `--only` can run alone.
pub const ONLY_BENCHMARKS: [&str; 3] = ["latency", "floor", "l2"];

/// Parsed command line.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Options {
    /// `(platform, device)`.
    pub device: (usize, usize),
    /// Output file (stdout when None).
    pub out: Option<PathBuf>,
    /// Short run.
    pub quick: bool,
    /// Profile name.
    pub name: Option<String>,
    /// Pin `match.max_compute_units`.
    pub pin: bool,
    /// No progress bar.
    pub quiet: bool,
    /// Runs of the whole suite; each figure is the best over the runs (default 1).
    pub runs: usize,
    /// `--only`: run only these of [`ONLY_BENCHMARKS`] (with `update`).
    pub only: Option<Vec<String>>,
    /// `--update`: the profile that `--only` updates.
    pub update: Option<PathBuf>,
}

/// Parses the arguments after `characterize`.
///
/// Errors: unknown option, missing or malformed value (`Err("")` for `--help`).
pub fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut o = Options {
        runs: 1,
        ..Options::default()
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut val = |name: &str| {
            it.next()
                .cloned()
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match a.as_str() {
            "--device" => {
                let v = val("--device")?;
                let (p, d) = v
                    .split_once(':')
                    .ok_or_else(|| format!("--device '{v}' is not P:D"))?;
                o.device = (
                    p.parse()
                        .map_err(|_| format!("--device '{v}': bad platform"))?,
                    d.parse()
                        .map_err(|_| format!("--device '{v}': bad device"))?,
                );
            }
            "--out" => o.out = Some(PathBuf::from(val("--out")?)),
            "--name" => o.name = Some(val("--name")?),
            "--quick" => o.quick = true,
            "--runs" => {
                let v = val("--runs")?;
                o.runs = v
                    .parse()
                    .ok()
                    .filter(|n| *n > 0)
                    .ok_or_else(|| format!("--runs '{v}' is not a positive integer"))?;
            }
            "--only" => {
                let v = val("--only")?;
                let list: Vec<String> = v.split(',').map(|x| x.trim().to_string()).collect();
                if let Some(bad) = list.iter().find(|x| !ONLY_BENCHMARKS.contains(&x.as_str())) {
                    return Err(format!(
                        "--only: unknown benchmark '{bad}' (one of {})",
                        ONLY_BENCHMARKS.join(", ")
                    ));
                }
                o.only = Some(list);
            }
            "--update" => o.update = Some(PathBuf::from(val("--update")?)),
            "--pin" => o.pin = true,
            "--quiet" => o.quiet = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument '{other}'")),
        }
    }
    if o.only.is_some() != o.update.is_some() {
        return Err("--only and --update go together".into());
    }
    Ok(o)
}

/// Profile name from a device name: lower case, runs of other characters as `-`.
pub fn slug(name: &str) -> String {
    let mut s = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    let t = s.trim_matches('-').to_string();
    if t.is_empty() {
        "device".into()
    } else {
        t
    }
}

/// `YYYY-MM-DD` (UTC) of a Unix time in seconds (Howard Hinnant's civil-from-days).
pub fn utc_date(unix_secs: u64) -> String {
    let z = (unix_secs / 86400) as i64 + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}-{m:02}-{d:02}")
}

/// The command line as it would be typed, with the driver-selecting environment.
fn command_line(args: &[String]) -> String {
    let mut parts = Vec::new();
    for v in ["POCL_DEVICES", "CUDA_VISIBLE_DEVICES"] {
        if let Ok(x) = std::env::var(v) {
            parts.push(format!("{v}={x}"));
        }
    }
    parts.push("clprism characterize".into());
    parts.extend(args.iter().cloned());
    parts.join(" ")
}

/// The device, its driver facts, an open session with the benchmark kernels built, and the
/// sweep shape and budget.
struct Setup {
    facts: device::DeviceFacts,
    s: Session,
    shape: Shape,
    budget: Budget,
    warp_width: (u32, String),
    fp64: bool,
}

fn setup(o: &Options) -> Result<Setup, String> {
    crate::loader::real().map_err(|e| format!("no real OpenCL library: {e}"))?;
    let devs = crate::registry::device::enumerate();
    let dev = devs
        .iter()
        .find(|d| (d.0, d.1) == o.device)
        .map(|d| d.2)
        .ok_or_else(|| {
            format!(
                "no device {}:{} (devices: {})",
                o.device.0,
                o.device.1,
                devs.iter()
                    .map(|d| format!("{}:{}", d.0, d.1))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        })?;
    let facts = device::read_facts(dev);
    let ce = |e: crate::exec::cl::ClError| e.to_string();
    let mut s = Session::open(dev).map_err(ce)?;
    let mem_kernels = [
        "empty",
        "gread_stride",
        "gwrite_stride",
        "gread_item",
        "gwrite_item",
        "lmem",
        "bar",
        "atom",
        "fp32",
        "int32",
        "special",
        "conv",
    ];
    s.build(kernels::MEMORY, &mem_kernels)?;
    s.build(kernels::LATENCY, &["chase", "gread_l2"])?;
    let fp64 = facts.fp64 && s.build(kernels::FP64, &["fp64"]).is_ok();
    let warp_width = match &facts.warp_width {
        Some(w) => (w.value, w.source.clone()),
        None => {
            let k = s.kernel("fp32")?;
            let m = clx::kernel_wg_info(k, dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)
                .unwrap_or(1)
                .max(1);
            (
                m as u32,
                format!(
                    "driver: CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE = {m} of the fp32 \
                     benchmark kernel (clGetKernelWorkGroupInfo)"
                ),
            )
        }
    };
    let ww = warp_width.0.max(1) as usize;
    let max_wg = facts.max_work_group_size.value as usize;
    let shape = Shape {
        kind: facts.kind,
        compute_units: facts.compute_units.value.max(1) as usize,
        warp: ww,
        max_warps_per_cu: facts
            .max_warps_per_cu
            .as_ref()
            .map(|w| w.value as usize)
            .unwrap_or_else(|| max_wg.div_ceil(ww))
            .max(1),
        max_wg_per_cu: facts.max_wg_per_cu.value.max(1) as usize,
        max_wg_size: max_wg.max(1),
    };
    let gpu = facts.kind == crate::model::DeviceKind::Gpu;
    let want: usize = match (gpu, o.quick) {
        (true, true) => 256 << 20,
        (true, false) => 1 << 30,
        (false, true) => 64 << 20,
        (false, false) => 256 << 20,
    };
    let budget = Budget {
        reps: if o.quick { 3 } else { 7 },
        // Largest power of two not above the wanted size and half the largest allocation.
        buffer_bytes: pow2_floor(want.min(alloc_cap(&facts))),
        target_ns: match (gpu, o.quick) {
            (true, true) => 2_000_000,
            (true, false) => 10_000_000,
            (false, true) => 20_000_000,
            (false, false) => 100_000_000,
        },
        launches: if o.quick { 50 } else { 500 },
    };
    Ok(Setup {
        facts,
        s,
        shape,
        budget,
        warp_width,
        fp64,
    })
}

fn alloc_cap(facts: &device::DeviceFacts) -> usize {
    (facts.max_alloc as usize / 2).max(1 << 20)
}

fn pow2_floor(x: usize) -> usize {
    1usize << (usize::BITS - 1 - x.max(1).leading_zeros())
}

/// Runs the named benchmarks of [`ONLY_BENCHMARKS`]. The latency footprints: global, the
/// larger of 8 × the driver's L2 size and 256 MiB (GPU; 64 MiB `--quick` / CPU quick),
/// within half the largest allocation; L2, 2 MiB or half the driver's L2 size if smaller
/// (more than any one compute unit's L1); L1, 16 KiB.
fn run_extras(
    st: &mut Setup,
    which: &[&str],
    quick: bool,
    prog: &mut progress::Progress,
) -> Result<assemble::Extras, String> {
    let ce = |e: crate::exec::cl::ClError| e.to_string();
    let mut e = assemble::Extras::default();
    let cap = alloc_cap(&st.facts);
    let l2 = st.facts.l2_bytes.value as usize;
    if which.contains(&"floor") {
        let (dev, _) = bench::launch_overhead(&mut st.s, &st.budget, prog).map_err(ce)?;
        e.floor = Some((dev, st.budget.launches));
    }
    if which.contains(&"latency") {
        let base: usize = if quick { 64 << 20 } else { 256 << 20 };
        let dram = pow2_floor(base.max(l2.saturating_mul(8)).min(cap));
        e.dram_latency =
            Some(bench::latency(&mut st.s, dram, &st.budget, prog, "global").map_err(ce)?);
        let small = if l2 > 0 {
            (2usize << 20).min(l2 / 2)
        } else {
            2 << 20
        };
        e.l2_latency =
            Some(bench::latency(&mut st.s, small.max(4096), &st.budget, prog, "L2").map_err(ce)?);
        e.l1_latency =
            Some(bench::latency(&mut st.s, 16 << 10, &st.budget, prog, "L1").map_err(ce)?);
    }
    if which.contains(&"l2") {
        e.l2_read = Some(bench::l2_read(&mut st.s, &st.shape, cap, &st.budget, prog).map_err(ce)?);
    }
    Ok(e)
}

/// Runs the benchmarks on the chosen device and returns the profile.
///
/// Errors: no real OpenCL library, no such device, a build failure or a driver error
/// (named with its call and code).
pub fn characterize(o: &Options, command: &str) -> Result<crate::model::Profile, String> {
    let mut st = setup(o)?;
    let load_before = load_average();
    let ce = |e: crate::exec::cl::ClError| e.to_string();
    let sweep = st.shape.sweep(o.quick);
    let n_instr = kernels::INSTR
        .iter()
        .filter(|k| st.fp64 || k.kernel != "fp64")
        .count();
    let runs = o.runs.max(1);
    let mut prog = progress::Progress::new((sweep.len() * 3 + n_instr + 9) * runs, o.quiet);
    let mut best: Option<assemble::Measurements> = None;
    for _ in 0..runs {
        let (s, shape, budget) = (&mut st.s, &st.shape, &st.budget);
        let (gr, gw) = bench::global_memory(s, shape, &sweep, budget, &mut prog).map_err(ce)?;
        let local = bench::local_memory(s, shape, &sweep, budget, &mut prog).map_err(ce)?;
        let instr = bench::instructions(s, shape, budget, st.fp64, &mut prog).map_err(ce)?;
        let (ldev, lwall) = bench::launch_overhead(s, budget, &mut prog).map_err(ce)?;
        let (h2d, d2h) = bench::copies(s, budget, &mut prog).map_err(ce)?;
        let mut extras = run_extras(&mut st, &["latency", "l2"], o.quick, &mut prog)?;
        extras.floor = Some((ldev, st.budget.launches));
        let m = assemble::Measurements {
            warp_width: st.warp_width.clone(),
            global_read: gr,
            global_write: gw,
            local,
            instr,
            launch_device_ns: ldev,
            launch_wall_ns: lwall,
            h2d,
            d2h,
            buffer_bytes: st.budget.buffer_bytes,
            reps: st.budget.reps,
            runs: 1,
            extras,
        };
        match &mut best {
            Some(b) => b.keep_best(&m),
            None => best = Some(m),
        }
    }
    prog.finish();
    let m = best.ok_or("no run")?;
    let naming = assemble::Naming {
        name: o
            .name
            .clone()
            .unwrap_or_else(|| slug(&st.facts.identity.name)),
        measured: measured_prefix(command),
        pin_compute_units: o.pin,
    };
    let mut p = assemble::assemble(&st.facts, &m, &naming)?;
    if let (Some(a), Some(b)) = (load_before, load_average()) {
        // Other work on the host lowers CPU-device figures; say how busy it was.
        p.notes = Some(format!(
            "{} Host load average (1 min) {a:.2} before and {b:.2} after the run.",
            p.notes.unwrap_or_default()
        ));
    }
    Ok(p)
}

fn measured_prefix(command: &str) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format!(
        "measured {} by clprism characterize, command: `{command}`",
        utc_date(now)
    )
}

/// `--only LIST --update FILE`: runs only the listed benchmarks and returns the profile of
/// `FILE` with their figures (and `sources` entries) replaced; the rest of the profile is
/// kept as it was.
///
/// Errors: the profile does not load, or what [`characterize`] reports.
pub fn update_only(o: &Options, command: &str) -> Result<crate::model::Profile, String> {
    let (Some(only), Some(file)) = (&o.only, &o.update) else {
        return Err("--only needs --update FILE".into());
    };
    let mut p = crate::model::load_file(file).map_err(|e| e.to_string())?;
    let mut st = setup(o)?;
    let which: Vec<&str> = only.iter().map(|s| s.as_str()).collect();
    let mut prog = progress::Progress::new(which.len() * 4 + 1, o.quiet);
    let runs = o.runs.max(1);
    let mut e = assemble::Extras::default();
    for _ in 0..runs {
        let r = run_extras(&mut st, &which, o.quick, &mut prog)?;
        e.keep_best(&r);
    }
    prog.finish();
    e.apply(&mut p, &measured_prefix(command));
    p.validate().map_err(|e| e.to_string())?;
    Ok(p)
}

/// The 1-minute load average of the host (`/proc/loadavg`), when available.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn opt(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "-".into())
}

/// One-line-per-figure summary of a profile (stderr of `clprism characterize`).
pub fn summary(p: &crate::model::Profile) -> String {
    let curve = |c: &crate::model::Curve| {
        c.0.iter()
            .map(|q| format!("{:.3}:{}", q[0], q[1]))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let t = &p.instruction_throughput;
    format!(
        "profile {}: {} CUs, warp {}, {} MHz\n\
         global read  (occ:B/ns) {}\n\
         global write (occ:B/ns) {}\n\
         local        (occ:B/ns) {}\n\
         instr/ns int {} fp32 {} fp64 {} special {} conversion {} barrier {} atomic {}\n\
         launch overhead {} ns, host->device {} B/ns, device->host {} B/ns\n\
         kernel floor {} ns, latency global {} ns, L2 {} ns, L1 {} ns, L2 read {} B/ns\n",
        p.name,
        p.compute_units,
        p.warp_width,
        p.clock_mhz,
        curve(&p.global_read),
        curve(&p.global_write),
        curve(&p.local),
        t.int,
        t.fp32,
        t.fp64,
        t.special,
        t.conversion,
        t.barrier,
        t.atomic,
        p.launch_overhead_ns,
        p.host_to_device_bytes_per_ns,
        p.device_to_host_bytes_per_ns,
        opt(p.kernel_floor_ns),
        opt(p.global_latency_ns),
        opt(p.l2_latency_ns),
        opt(p.l1_latency_ns),
        opt(p.l2_read_bytes_per_ns)
    )
}

/// Entry point of `clprism characterize`; returns the exit code (0 ok, 1 failure, 2 usage).
pub fn characterize_main(args: &[String]) -> i32 {
    let o = match parse_args(args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            print!("{USAGE}");
            return 0;
        }
        Err(e) => {
            eprint!("clprism characterize: {e}\n{USAGE}");
            return 2;
        }
    };
    let t0 = std::time::Instant::now();
    let run = if o.only.is_some() {
        update_only
    } else {
        characterize
    };
    let p = match run(&o, &command_line(args)) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("clprism characterize: {e}");
            return 1;
        }
    };
    let json = match serde_json::to_string_pretty(&p) {
        Ok(j) => j + "\n",
        Err(e) => {
            eprintln!("clprism characterize: {e}");
            return 1;
        }
    };
    match o.out.as_ref().or(o.update.as_ref()) {
        Some(f) => {
            if let Err(e) = std::fs::write(f, &json) {
                eprintln!("clprism characterize: cannot write {}: {e}", f.display());
                return 1;
            }
        }
        None => print!("{json}"),
    }
    eprint!("{}", summary(&p));
    eprintln!(
        "clprism characterize: {:.1} s{}",
        t0.elapsed().as_secs_f64(),
        o.out
            .as_ref()
            .or(o.update.as_ref())
            .map(|f| format!(", wrote {}", f.display()))
            .unwrap_or_default()
    );
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args() {
        let a: Vec<String> = [
            "--device", "1:2", "--quick", "--out", "x.json", "--pin", "--runs", "3",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let o = parse_args(&a).unwrap();
        assert_eq!(o.device, (1, 2));
        assert!(o.quick && o.pin);
        assert_eq!(o.runs, 3);
        assert_eq!(parse_args(&[]).unwrap().runs, 1);
        assert!(parse_args(&["--runs".into(), "0".into()]).is_err());
        assert_eq!(o.out, Some(PathBuf::from("x.json")));
        assert!(parse_args(&["--device".into(), "3".into()]).is_err());
        assert!(parse_args(&["--bogus".into()]).is_err());
        assert_eq!(parse_args(&["--help".into()]), Err(String::new()));
        let a: Vec<String> = ["--only", "latency,floor", "--update", "p.json"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let o = parse_args(&a).unwrap();
        assert_eq!(o.only, Some(vec!["latency".into(), "floor".into()]));
        assert_eq!(o.update, Some(PathBuf::from("p.json")));
        assert!(parse_args(&a[..2]).is_err(), "--only without --update");
        assert!(
            parse_args(&["--only".into(), "x".into(), "--update".into(), "p".into()])
                .unwrap_err()
                .contains("unknown benchmark")
        );
    }

    #[test]
    fn slugs_and_dates() {
        assert_eq!(slug("NVIDIA H100 80GB HBM3"), "nvidia-h100-80gb-hbm3");
        assert_eq!(slug("  "), "device");
        assert_eq!(utc_date(0), "1970-01-01");
        // 2026-11-21 00:00:00 UTC = 20778 days after the epoch.
        assert_eq!(utc_date(20778 * 86400 + 3600), "2026-11-21");
        assert_eq!(utc_date(951_782_400), "2000-02-29");
    }
}
