//! Turning the measurements and the driver's facts into a [`Profile`] with a source for
//! every number (schema: `profiles/README.md`).

use super::bench::{InstrResult, L2Read, Latency, Point};
use super::device::DeviceFacts;
use crate::model::{ClassThroughput, Curve, DeviceKind, DeviceMatch, OccupancyLimits, Profile};
use std::collections::BTreeMap;

/// Everything measured by one run.
#[derive(Debug, Clone, Default)]
pub struct Measurements {
    /// Warp width and its source (driver or kernel query).
    pub warp_width: (u32, String),
    /// Global read sweep.
    pub global_read: Vec<Point>,
    /// Global write sweep.
    pub global_write: Vec<Point>,
    /// Local memory sweep.
    pub local: Vec<Point>,
    /// Instruction benchmarks.
    pub instr: Vec<InstrResult>,
    /// Median `END − START` of an empty kernel, ns.
    pub launch_device_ns: f64,
    /// Median wall time of enqueue + finish of an empty kernel, ns.
    pub launch_wall_ns: f64,
    /// Host→device bytes/ns.
    pub h2d: f64,
    /// Device→host bytes/ns.
    pub d2h: f64,
    /// Bytes per copy / global buffer.
    pub buffer_bytes: usize,
    /// Timed runs per figure.
    pub reps: usize,
    /// Runs of the whole suite merged with [`Measurements::keep_best`] (1 = one run).
    pub runs: usize,
    /// Latencies, kernel floor and L2 throughput (also measured alone by `--only`).
    pub extras: Extras,
}

/// The figures of `clprism characterize --only latency,floor,l2`, each `None` when not
/// measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Extras {
    /// Kernel floor: median `END − START` of an empty one-work-item kernel, ns, and the
    /// launches it is the median of.
    pub floor: Option<(f64, usize)>,
    /// Pointer chasing through a footprint far larger than the L2.
    pub dram_latency: Option<Latency>,
    /// Pointer chasing through a footprint that fits in the L2 but not in one L1.
    pub l2_latency: Option<Latency>,
    /// Pointer chasing through 16 KiB (fits in one compute unit's L1).
    pub l1_latency: Option<Latency>,
    /// L2 read throughput.
    pub l2_read: Option<L2Read>,
}

impl Extras {
    /// Keeps, figure by figure, the better of two runs (lower floor and latencies, higher
    /// throughput).
    pub fn keep_best(&mut self, o: &Extras) {
        let lower = |a: Option<Latency>, b: Option<Latency>| match (a, b) {
            (Some(x), Some(y)) => Some(if y.ns > 0.0 && y.ns < x.ns { y } else { x }),
            (x, y) => x.or(y),
        };
        self.dram_latency = lower(self.dram_latency, o.dram_latency);
        self.l2_latency = lower(self.l2_latency, o.l2_latency);
        self.l1_latency = lower(self.l1_latency, o.l1_latency);
        self.floor = match (self.floor, o.floor) {
            (Some(x), Some(y)) => Some(if y.0 > 0.0 && y.0 < x.0 { y } else { x }),
            (x, y) => x.or(y),
        };
        self.l2_read = match (self.l2_read, o.l2_read) {
            (Some(x), Some(y)) => Some(if y.bytes_per_ns > x.bytes_per_ns {
                y
            } else {
                x
            }),
            (x, y) => x.or(y),
        };
    }

    /// Writes the measured figures into `p` with their `sources` entries (`measured`: the
    /// `measured <date> by clprism characterize, command: ...` prefix). Figures that were
    /// not measured, or came out non-positive, leave `p` as it was.
    pub fn apply(&self, p: &mut Profile, measured: &str) {
        let mut set = |key: &str, text: String| {
            p.sources.insert(key.into(), format!("{measured}: {text}"));
        };
        if let Some((ns, launches)) = self.floor.filter(|f| f.0 > 0.0) {
            set(
                "kernel_floor_ns",
                format!(
                    "median END - START (profiling events) of an empty 1-work-item kernel over \
                     {launches} timed launches: the device time below which the kernel_floor refinement projects no launch"
                ),
            );
            p.kernel_floor_ns = Some(ns.round().max(1.0));
        }
        for (key, lat, what) in [
            (
                "global_latency_ns",
                self.dram_latency,
                "far larger than the last-level cache",
            ),
            (
                "l2_latency_ns",
                self.l2_latency,
                "larger than one compute unit's L1, within the L2",
            ),
            (
                "l1_latency_ns",
                self.l1_latency,
                "within one compute unit's L1",
            ),
        ] {
            if let Some(l) = lat.filter(|l| l.ns > 0.0) {
                set(
                    key,
                    format!(
                        "pointer chasing by one work-item through a random single cycle of \
                         128-byte slots, footprint {} KiB ({what}); (t(2s) - t(s)) / s with \
                         s = {} dependent loads, after a warm-up pass, best of the timed runs",
                        l.footprint >> 10,
                        l.steps / 2
                    ),
                );
                let v = Some(round_sig(l.ns));
                match key {
                    "global_latency_ns" => p.global_latency_ns = v,
                    "l2_latency_ns" => p.l2_latency_ns = v,
                    _ => p.l1_latency_ns = v,
                }
            }
        }
        if let Some(r) = self.l2_read.filter(|r| r.bytes_per_ns > 0.0) {
            let sizes = r
                .sizes
                .iter()
                .map(|(b, t)| format!("{} KiB -> {:.1} B/ns", b >> 10, t))
                .collect::<Vec<_>>()
                .join("; ");
            set(
                "l2_read_bytes_per_ns",
                format!(
                    "{} grid-stride float4 passes over one buffer by {} work-items in \
                     work-groups of {} (full occupancy), each pass shifted by 67 work-groups \
                     (no L1 reuse); best over the buffer sizes ({sizes}), best of the timed runs",
                    r.passes, r.launch.0, r.launch.1
                ),
            );
            p.l2_read_bytes_per_ns = Some(round_sig(r.bytes_per_ns));
        }
    }
}

impl Measurements {
    /// Keeps, figure by figure, the better of `self` and `other` (a later run of the same
    /// benchmarks): the higher throughput of each sweep point (same occupancy and
    /// work-group size) and instruction class, the lower launch overhead, the faster copies.
    /// A run that is less disturbed by other work on the host wins each figure.
    pub fn keep_best(&mut self, other: &Measurements) {
        let merge = |a: &mut Vec<Point>, b: &[Point]| {
            for q in b {
                match a.iter_mut().find(|p| {
                    p.work_group_size == q.work_group_size
                        && (p.occupancy - q.occupancy).abs() < 1e-12
                }) {
                    Some(p) if q.bytes_per_ns > p.bytes_per_ns => *p = *q,
                    Some(_) => {}
                    None => a.push(*q),
                }
            }
        };
        merge(&mut self.global_read, &other.global_read);
        merge(&mut self.global_write, &other.global_write);
        merge(&mut self.local, &other.local);
        for r in &other.instr {
            match self
                .instr
                .iter_mut()
                .find(|x| x.bench.class == r.bench.class)
            {
                Some(x) if r.per_ns > x.per_ns => *x = *r,
                Some(_) => {}
                None => self.instr.push(*r),
            }
        }
        if other.launch_device_ns > 0.0 && other.launch_device_ns < self.launch_device_ns {
            self.launch_device_ns = other.launch_device_ns;
            self.launch_wall_ns = other.launch_wall_ns;
        }
        self.extras.keep_best(&other.extras);
        self.h2d = self.h2d.max(other.h2d);
        self.d2h = self.d2h.max(other.d2h);
        self.runs += other.runs;
    }
}

/// How the profile is named and matched.
#[derive(Debug, Clone)]
pub struct Naming {
    /// Profile name.
    pub name: String,
    /// `measured <date> by clprism characterize, command: ...` prefix.
    pub measured: String,
    /// Pin the profile to the measured compute-unit count (`match.max_compute_units`).
    pub pin_compute_units: bool,
}

/// A curve from sweep points: sorted by occupancy, one point per occupancy (the highest
/// throughput), non-positive or non-finite throughputs dropped.
///
/// Errors: no usable point.
pub fn curve_from_points(points: &[Point]) -> Result<Curve, String> {
    let mut v: Vec<[f64; 2]> = points
        .iter()
        .filter(|p| p.bytes_per_ns.is_finite() && p.bytes_per_ns > 0.0)
        .filter(|p| p.occupancy.is_finite() && p.occupancy > 0.0 && p.occupancy <= 1.0)
        .map(|p| [p.occupancy, p.bytes_per_ns])
        .collect();
    v.sort_by(|a, b| a[0].total_cmp(&b[0]));
    let mut out: Vec<[f64; 2]> = Vec::with_capacity(v.len());
    for p in v {
        match out.last_mut() {
            Some(l) if (l[0] - p[0]).abs() < 1e-12 => l[1] = l[1].max(p[1]),
            _ => out.push(p),
        }
    }
    if out.is_empty() {
        return Err("no valid measurement point".into());
    }
    for p in &mut out {
        p[0] = (p[0] * 1e6).round() / 1e6;
        p[1] = round_sig(p[1]);
    }
    Ok(Curve(out))
}

/// `x` rounded to 4 significant digits (the measurements are not more precise).
pub fn round_sig(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let d = 4 - x.abs().log10().ceil() as i32;
    let f = 10f64.powi(d);
    (x * f).round() / f
}

fn describe_points(pts: &[Point]) -> String {
    pts.iter()
        .map(|p| {
            format!(
                "occ {:.4}: L={} x {} WGs -> {:.4} B/ns",
                p.occupancy, p.work_group_size, p.work_groups, p.bytes_per_ns
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn best(m: &Measurements) -> String {
    if m.runs > 1 {
        format!(
            "best of {} timed runs (profiling events) in each of {} suite runs, best run kept",
            m.reps, m.runs
        )
    } else {
        format!("best of {} timed runs (profiling events)", m.reps)
    }
}

/// The `match` of a profile for the device: PoCL devices by the `HSTR: <driver>` of
/// CL_DEVICE_VERSION (pthread / basic / cpu share the CPU name), other devices by name and
/// vendor; optionally pinned to the compute-unit count.
pub fn device_match(facts: &DeviceFacts, pin: bool) -> DeviceMatch {
    let id = &facts.identity;
    let mut m = DeviceMatch::default();
    if let Some(i) = id.version.find("HSTR: ") {
        let rest = &id.version[i..];
        let end = rest.find('-').unwrap_or(rest.len());
        m.version_contains = Some(rest[..end].trim().to_string());
    } else {
        if !id.name.trim().is_empty() {
            m.name_contains = vec![id.name.trim().to_string()];
        }
        if !id.vendor.trim().is_empty() {
            m.vendor_contains = Some(id.vendor.trim().to_string());
        }
    }
    if pin || m.criteria() == 0 {
        m.max_compute_units = Some(id.max_compute_units);
    }
    m
}

/// The per-class instruction throughputs (work-item instructions per ns) from the measured
/// benchmarks, with each figure's source in `src`.
///
/// Errors: a benchmark that did not run.
fn instruction_throughput(
    m: &Measurements,
    n: &Naming,
    src: &mut BTreeMap<String, String>,
) -> Result<ClassThroughput, String> {
    let meas = |detail: String| format!("{}: {detail}", n.measured);
    let get = |c: &str| m.instr.iter().find(|r| r.bench.class == c);
    let mut tp: BTreeMap<&str, f64> = BTreeMap::new();
    for r in &m.instr {
        tp.insert(r.bench.class, round_sig(r.per_ns));
        src.insert(
            format!("instruction_throughput.{}", r.bench.class),
            meas(format!(
                "{}; {} work-items in work-groups of {}, {} iterations, {}",
                r.bench.what,
                r.work_items,
                r.local,
                r.iterations,
                best(m)
            )),
        );
    }
    let int = *tp.get("int").ok_or("the int benchmark did not run")?;
    let fp32 = *tp.get("fp32").ok_or("the fp32 benchmark did not run")?;
    if get("fp64").is_none() {
        tp.insert("fp64", round_sig(fp32 / 64.0));
        src.insert(
            "instruction_throughput.fp64".into(),
            "ESTIMATED: the device does not support fp64 (CL_DEVICE_DOUBLE_FP_CONFIG = 0); \
             fp32 throughput / 64 stands for software emulation"
                .into(),
        );
    }
    for c in ["branch", "memory", "other"] {
        tp.insert(c, int);
        src.insert(
            format!("instruction_throughput.{c}"),
            format!(
                "derived: = the measured int throughput (one issue slot per lane \
                 instruction); not measured separately ({})",
                n.measured
            ),
        );
    }
    let t = |c: &str| tp.get(c).copied().unwrap_or(int);
    let instruction_throughput = ClassThroughput {
        int,
        fp32,
        fp64: t("fp64"),
        special: t("special"),
        conversion: t("conversion"),
        branch: t("branch"),
        barrier: t("barrier"),
        atomic: t("atomic"),
        memory: t("memory"),
        other: t("other"),
    };
    for c in ["special", "conversion", "barrier", "atomic"] {
        if !tp.contains_key(c) {
            return Err(format!("the {c} benchmark did not run"));
        }
    }
    Ok(instruction_throughput)
}

/// Builds and validates the profile.
///
/// Errors: a sweep without usable points, or a profile that fails validation (e.g. a
/// throughput of 0).
pub fn assemble(facts: &DeviceFacts, m: &Measurements, n: &Naming) -> Result<Profile, String> {
    let mut src: BTreeMap<String, String> = BTreeMap::new();
    let meas = |detail: String| format!("{}: {detail}", n.measured);
    let ww = m.warp_width.0.max(1);
    src.insert("warp_width".into(), m.warp_width.1.clone());
    src.insert("compute_units".into(), facts.compute_units.source.clone());
    src.insert("clock_mhz".into(), facts.clock_mhz.source.clone());

    let instruction_throughput = instruction_throughput(m, n, &mut src)?;

    let global_read = curve_from_points(&m.global_read).map_err(|e| format!("global_read: {e}"))?;
    let global_write =
        curve_from_points(&m.global_write).map_err(|e| format!("global_write: {e}"))?;
    let local = curve_from_points(&m.local).map_err(|e| format!("local: {e}"))?;
    let how = match facts.kind {
        DeviceKind::Gpu => "all work-groups resident (one wave), grid-stride loop over",
        DeviceKind::Cpu => "one float4 per work-item over",
    };
    src.insert(
        "global_read".into(),
        meas(format!(
            "coalesced float4 reads, {how} {} MiB, {}; {}",
            m.buffer_bytes >> 20,
            best(m),
            describe_points(&m.global_read)
        )),
    );
    src.insert(
        "global_write".into(),
        meas(format!(
            "coalesced float4 writes, {how} {} MiB, {}; {}",
            m.buffer_bytes >> 20,
            best(m),
            describe_points(&m.global_write)
        )),
    );
    src.insert(
        "local".into(),
        meas(format!(
            "4 loads + 4 stores of 4 B per work-item and iteration (volatile __local), conflict-free, {}; {}",
            best(m),
            describe_points(&m.local)
        )),
    );
    src.insert(
        "sector_bytes".into(),
        "emulator sector size (DESIGN.md §5)".into(),
    );
    src.insert("line_bytes".into(), facts.line_bytes.source.clone());
    src.insert("local_banks".into(), facts.banks.source.clone());
    src.insert("bank_bytes".into(), facts.banks.source.clone());
    src.insert("l2_bytes".into(), facts.l2_bytes.source.clone());
    src.insert(
        "limits.max_work_groups_per_cu".into(),
        facts.max_wg_per_cu.source.clone(),
    );
    let max_warps = match &facts.max_warps_per_cu {
        Some(w) => {
            src.insert("limits.max_warps_per_cu".into(), w.source.clone());
            w.value
        }
        None => {
            let v = facts.max_work_group_size.value.div_ceil(ww).max(1);
            src.insert(
                "limits.max_warps_per_cu".into(),
                "derived: max_work_group_size / warp_width (one work-group per compute unit \
                 must fit)"
                    .into(),
            );
            v
        }
    };
    src.insert(
        "limits.local_mem_per_cu_bytes".into(),
        facts.local_mem_per_cu.source.clone(),
    );
    src.insert(
        "limits.max_work_group_size".into(),
        facts.max_work_group_size.source.clone(),
    );
    if let Some(r) = &facts.registers_per_cu {
        src.insert("limits.registers_per_cu".into(), r.source.clone());
    }
    if let Some(r) = &facts.register_allocation_unit {
        src.insert("limits.register_allocation_unit".into(), r.source.clone());
    }
    src.insert(
        "launch_overhead_ns".into(),
        meas(format!(
            "median END - START (profiling events) of an empty 1-work-item kernel over the \
             timed launches (lowest median of {} suite run(s)); median wall time of enqueue + \
             clFinish was {:.0} ns",
            m.runs.max(1),
            m.launch_wall_ns
        )),
    );
    src.insert(
        "host_to_device_bytes_per_ns".into(),
        meas(format!(
            "blocking clEnqueueWriteBuffer of {} MiB from pageable host memory, {}",
            m.buffer_bytes >> 20,
            best(m)
        )),
    );
    src.insert(
        "device_to_host_bytes_per_ns".into(),
        meas(format!(
            "blocking clEnqueueReadBuffer of {} MiB to pageable host memory, {}",
            m.buffer_bytes >> 20,
            best(m)
        )),
    );
    let id = &facts.identity;
    let p = Profile {
        name: n.name.clone(),
        vendor: id.vendor.clone(),
        kind: facts.kind,
        device_match: device_match(facts, n.pin_compute_units),
        compute_units: facts.compute_units.value,
        warp_width: ww,
        clock_mhz: facts.clock_mhz.value,
        instruction_throughput,
        global_read,
        global_write,
        local,
        sector_bytes: 32,
        line_bytes: facts.line_bytes.value.max(32) / 32 * 32,
        global_load_granularity: Default::default(),
        global_store_granularity: Default::default(),
        local_banks: facts.banks.value.0,
        bank_bytes: facts.banks.value.1,
        l2_bytes: facts.l2_bytes.value,
        limits: OccupancyLimits {
            max_work_groups_per_cu: facts.max_wg_per_cu.value,
            max_warps_per_cu: max_warps,
            registers_per_cu: facts.registers_per_cu.as_ref().map(|r| r.value),
            register_allocation_unit: facts.register_allocation_unit.as_ref().map(|r| r.value),
            local_mem_per_cu_bytes: facts.local_mem_per_cu.value,
            local_mem_allocation_unit: None,
            max_work_group_size: facts.max_work_group_size.value,
        },
        launch_overhead_ns: m.launch_device_ns.round(),
        kernel_floor_ns: None,
        kernel_floor_queued_ns: None,
        global_latency_ns: None,
        l2_latency_ns: None,
        l1_latency_ns: None,
        l2_read_bytes_per_ns: None,
        l1_bytes_per_cu: None,
        schedulers_per_cu: None,
        host_to_device_bytes_per_ns: round_sig(m.h2d),
        device_to_host_bytes_per_ns: round_sig(m.d2h),
        sources: src,
        notes: Some(format!(
            "{} / {} / {} / {} ({} compute units). Written by `clprism characterize`; \
             numbers marked `driver:` come from clGetDeviceInfo, `spec:` from the named \
             document, `derived:`/`ESTIMATED:` as stated.",
            id.name, id.vendor, id.version, id.driver_version, id.max_compute_units
        )),
        path: None,
    };
    let mut p = p;
    m.extras.apply(&mut p, &n.measured);
    p.validate().map_err(|e| e.to_string())?;
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::characterize::device::Sourced;
    use crate::characterize::kernels::INSTR;
    use crate::model::DeviceIdentity;

    fn pt(occ: f64, tp: f64) -> Point {
        Point {
            occupancy: occ,
            bytes_per_ns: tp,
            work_group_size: 64,
            work_groups: 2,
        }
    }

    #[test]
    fn curve_sorted_deduplicated_and_cleaned() {
        let c = curve_from_points(&[
            pt(0.5, 10.0),
            pt(0.25, 4.0),
            pt(0.5, 12.0),
            pt(1.0, f64::NAN),
            pt(0.75, 0.0),
        ])
        .unwrap();
        assert_eq!(c.0, vec![[0.25, 4.0], [0.5, 12.0]]);
        assert!(curve_from_points(&[pt(0.5, 0.0)]).is_err());
    }

    #[test]
    fn rounding_keeps_four_digits() {
        assert_eq!(round_sig(12345.0), 12350.0);
        assert_eq!(round_sig(0.0012344), 0.001234);
    }

    fn s<T>(v: T) -> Sourced<T> {
        Sourced {
            value: v,
            source: "driver: test".into(),
        }
    }

    fn facts(version: &str) -> DeviceFacts {
        DeviceFacts {
            identity: DeviceIdentity {
                name: "cpu-x".into(),
                vendor: "V".into(),
                version: version.into(),
                driver_version: "1".into(),
                max_compute_units: 2,
            },
            kind: DeviceKind::Cpu,
            compute_units: s(2),
            clock_mhz: s(2000.0),
            warp_width: None,
            max_work_group_size: s(4096),
            local_mem_per_wg: 65536,
            local_mem_per_cu: s(65536),
            max_wg_per_cu: s(1),
            max_warps_per_cu: None,
            registers_per_cu: None,
            register_allocation_unit: None,
            l2_bytes: s(1 << 20),
            line_bytes: s(64),
            banks: s((1, 4)),
            max_alloc: 1 << 30,
            fp64: false,
        }
    }

    #[test]
    fn pocl_devices_match_by_driver_name() {
        let m = device_match(
            &facts("OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skx"),
            false,
        );
        assert_eq!(m.version_contains.as_deref(), Some("HSTR: pthread"));
        assert_eq!(m.max_compute_units, None);
        let m = device_match(&facts("OpenCL 3.0 CUDA"), true);
        assert_eq!(m.name_contains, vec!["cpu-x".to_string()]);
        assert_eq!(m.max_compute_units, Some(2));
    }

    #[test]
    fn assembled_profile_validates_and_sources_every_number() {
        let f = facts("OpenCL 3.0 PoCL HSTR: basic-x");
        let instr = INSTR
            .iter()
            .filter(|k| k.class != "fp64")
            .map(|k| InstrResult {
                bench: *k,
                per_ns: 3.0,
                work_items: 1024,
                local: 64,
                iterations: 100,
            })
            .collect();
        let m = Measurements {
            warp_width: (8, "driver: test".into()),
            global_read: vec![pt(0.1, 5.0), pt(1.0, 9.0)],
            global_write: vec![pt(1.0, 7.0)],
            local: vec![pt(1.0, 20.0)],
            instr,
            launch_device_ns: 1500.4,
            launch_wall_ns: 4000.0,
            h2d: 10.0,
            d2h: 11.0,
            buffer_bytes: 64 << 20,
            reps: 3,
            runs: 1,
            extras: Extras::default(),
        };
        let n = Naming {
            name: "t".into(),
            measured: "measured 2026-11-21 by clprism characterize, command: `x`".into(),
            pin_compute_units: false,
        };
        let p = assemble(&f, &m, &n).unwrap();
        assert_eq!(p.limits.max_warps_per_cu, 4096 / 8);
        assert_eq!(p.instruction_throughput.branch, 3.0);
        // No fp64 support: estimated from fp32, and said so.
        // (rounded to 4 significant digits)
        assert!((p.instruction_throughput.fp64 - 3.0 / 64.0).abs() < 1e-4);
        assert!(p.sources["instruction_throughput.fp64"].starts_with("ESTIMATED"));
        assert!(p.sources["global_read"].starts_with("measured 2026-11-21"));
        assert_eq!(p.launch_overhead_ns, 1500.0);
        // Round trip through JSON and the loader's validation.
        let json = serde_json::to_string_pretty(&p).unwrap();
        let q = Profile::from_json(&json, std::path::Path::new("t.json")).unwrap();
        assert_eq!(q.global_read, p.global_read);
        // Merging a second run keeps the better figure of each.
        let mut m3 = m.clone();
        let mut other = m.clone();
        other.global_read[0].bytes_per_ns = 8.0; // better than 5.0
        other.global_read[1].bytes_per_ns = 1.0; // worse than 9.0
        other.launch_device_ns = 900.0;
        other.h2d = 5.0;
        m3.keep_best(&other);
        assert_eq!(m3.global_read.len(), 2);
        assert_eq!(m3.global_read[0].bytes_per_ns, 8.0);
        assert_eq!(m3.global_read[1].bytes_per_ns, 9.0);
        assert_eq!(m3.launch_device_ns, 900.0);
        assert_eq!(m3.h2d, 10.0);
        assert_eq!(m3.runs, 2);
        // A missing benchmark is an error, not a silent default.
        let mut m2 = m.clone();
        m2.instr.retain(|r| r.bench.class != "atomic");
        assert!(assemble(&f, &m2, &n).unwrap_err().contains("atomic"));
    }
}
