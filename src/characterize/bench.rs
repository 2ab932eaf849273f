//! The microbenchmarks: memory throughput against occupancy, instruction throughput per
//! class, launch overhead and host↔device copies. Kernel times are `END − START` of
//! profiling events; each figure is the best of `reps` runs after one warm-up run (the
//! best run is the least disturbed by other load, SHOC reports the same way with `-n`).
//!
//! Occupancy (Panwar §IV-A footnote 1: active warps / maximum warps per compute unit) is
//! swept as in Volkov's and SHOC's memory benchmarks:
//!
//! * GPU: `W = k × compute units` work-groups of `L` work-items, all resident (one wave),
//!   each work-item looping over the buffer with a grid stride; occupancy =
//!   `min(k, resident WGs per CU) × ceil(L / warp) / max warps per CU`;
//! * CPU: one float4 per work-item, many work-groups; the model's occupancy of a CPU
//!   profile (one work-group per compute unit) is `ceil(L / warp) / max warps per CU`, so
//!   the sweep is over the work-group size `L`, which is what changes the throughput of
//!   a CPU driver (per-work-group overhead, vectorisation across work-items).

use super::clx::{set_args, time_copy, time_kernel, Arg, Session};
use super::kernels::{InstrKernel, INSTR};
use super::progress::Progress;
use crate::exec::cl::ClResult;
use crate::model::DeviceKind;

/// Bytes of local memory moved per work-item and iteration of the `lmem` kernel (4 loads
/// and 4 stores of 4 bytes).
pub const LMEM_BYTES_PER_ITERATION: f64 = 32.0;

/// Value that the benchmark kernels compare their result with; never reached.
const NEVER: f32 = -1.0e30;

/// One point of a throughput-vs-occupancy sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Point {
    /// Occupancy fraction.
    pub occupancy: f64,
    /// Bytes per ns.
    pub bytes_per_ns: f64,
    /// Work-group size, work-items.
    pub work_group_size: usize,
    /// Work-groups launched.
    pub work_groups: usize,
}

/// A launch configuration of a sweep.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Config {
    /// Work-group size.
    pub local: usize,
    /// Resident work-groups per compute unit asked for (GPU); 0 = as many work-groups as
    /// the data needs (CPU).
    pub per_cu: usize,
    /// Occupancy fraction of the launch.
    pub occupancy: f64,
}

/// Parameters of the sweep that come from the device.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// GPU or CPU.
    pub kind: DeviceKind,
    /// Compute units.
    pub compute_units: usize,
    /// Warp width, lanes.
    pub warp: usize,
    /// Resident warps per compute unit.
    pub max_warps_per_cu: usize,
    /// Resident work-groups per compute unit.
    pub max_wg_per_cu: usize,
    /// Largest work-group.
    pub max_wg_size: usize,
}

impl Shape {
    /// Resident work-groups per compute unit for work-groups of `local` work-items
    /// (warp and work-group slot limits; the benchmark kernels use little local memory
    /// and few registers).
    pub fn resident(&self, local: usize) -> usize {
        let warps = local.div_ceil(self.warp).max(1);
        (self.max_warps_per_cu / warps)
            .min(self.max_wg_per_cu)
            .max(1)
    }

    /// Occupancy of `per_cu` work-groups of `local` work-items per compute unit.
    pub fn occupancy(&self, local: usize, per_cu: usize) -> f64 {
        let warps = local.div_ceil(self.warp).max(1);
        let k = per_cu.min(self.resident(local)).max(1);
        ((k * warps) as f64 / self.max_warps_per_cu as f64).min(1.0)
    }

    /// The configurations of a memory sweep. GPU: each power-of-two work-group size from
    /// one warp up with one work-group per compute unit, then the largest of those sizes
    /// not above 256 with 2, 3, ... resident work-groups until the compute unit is full.
    /// CPU: powers of two from one warp to the largest work-group. `quick` keeps fewer
    /// points. Occupancies are distinct and increasing.
    pub fn sweep(&self, quick: bool) -> Vec<Config> {
        let mut sizes = Vec::new();
        let mut l = self.warp.max(1);
        let cap = match self.kind {
            DeviceKind::Gpu => self.max_wg_size.min(1024),
            DeviceKind::Cpu => self.max_wg_size.min(4096),
        };
        while l <= cap {
            sizes.push(l);
            l *= 2;
        }
        if quick && sizes.len() > 4 {
            // Keep the first, the last and every other size.
            let last = *sizes.last().unwrap_or(&1);
            sizes = sizes.iter().copied().step_by(2).collect();
            if sizes.last() != Some(&last) {
                sizes.push(last);
            }
        }
        let mut out: Vec<Config> = Vec::new();
        match self.kind {
            DeviceKind::Cpu => {
                for &l in &sizes {
                    out.push(Config {
                        local: l,
                        per_cu: 0,
                        occupancy: self.occupancy(l, 1),
                    });
                }
            }
            DeviceKind::Gpu => {
                for &l in &sizes {
                    out.push(Config {
                        local: l,
                        per_cu: 1,
                        occupancy: self.occupancy(l, 1),
                    });
                }
                let base = sizes
                    .iter()
                    .copied()
                    .filter(|&l| l <= 256)
                    .max()
                    .unwrap_or(self.warp);
                let full = self.resident(base);
                let mut k = 2;
                while k <= full {
                    out.push(Config {
                        local: base,
                        per_cu: k,
                        occupancy: self.occupancy(base, k),
                    });
                    k = if quick { k * 2 } else { k + 1 };
                    if quick && k > full && k / 2 < full {
                        k = full;
                    }
                }
            }
        }
        out.sort_by(|a, b| a.occupancy.total_cmp(&b.occupancy));
        out.dedup_by(|b, a| (a.occupancy - b.occupancy).abs() < 1e-12);
        out
    }
}

/// How long and how often to measure.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Timed runs per figure (after one warm-up run); the best is kept.
    pub reps: usize,
    /// Bytes of the global-memory and copy buffers.
    pub buffer_bytes: usize,
    /// Iteration counts of compute kernels grow until one run takes at least this, ns.
    pub target_ns: u64,
    /// Launches timed for the launch overhead.
    pub launches: usize,
}

/// Best (smallest) of `reps` runs after a warm-up.
fn best_of(reps: usize, mut run: impl FnMut() -> ClResult<u64>) -> ClResult<u64> {
    run()?;
    let mut best = u64::MAX;
    for _ in 0..reps.max(1) {
        best = best.min(run()?.max(1));
    }
    Ok(best)
}

/// Grows the iteration count until a run takes at least `target_ns`; returns the count.
fn calibrate(target_ns: u64, mut run: impl FnMut(u32) -> ClResult<u64>) -> ClResult<u32> {
    let mut it: u32 = 16;
    loop {
        let t = run(it)?.max(1);
        if t >= target_ns || it >= 1 << 22 {
            return Ok(it);
        }
        let f = (target_ns as f64 / t as f64 * 1.2).clamp(2.0, 64.0);
        it = ((it as f64 * f) as u32).min(1 << 22);
    }
}

/// Global read and write throughput at each configuration of `sweep`.
///
/// Errors: the driver's code of the failing call.
pub fn global_memory(
    s: &mut Session,
    shape: &Shape,
    sweep: &[Config],
    b: &Budget,
    prog: &mut Progress,
) -> ClResult<(Vec<Point>, Vec<Point>)> {
    let bytes = b.buffer_bytes / 16 * 16;
    let n = bytes / 16;
    let buf = s.buffer(bytes)?;
    let out = s.buffer(4096)?;
    s.fill(buf, bytes, 1.0)?;
    let q = s.queue;
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for c in sweep {
        let (kr, kw, global) = match shape.kind {
            DeviceKind::Gpu => {
                let wgs = c.per_cu.max(1) * shape.compute_units;
                let kr = s.kernel("gread_stride").map_err(err)?;
                let kw = s.kernel("gwrite_stride").map_err(err)?;
                set_args(
                    kr,
                    &[
                        Arg::Mem(buf),
                        Arg::Mem(out),
                        Arg::U32(n as u32),
                        Arg::F32(NEVER),
                    ],
                )?;
                set_args(kw, &[Arg::Mem(buf), Arg::U32(n as u32)])?;
                (kr, kw, wgs * c.local)
            }
            DeviceKind::Cpu => {
                let kr = s.kernel("gread_item").map_err(err)?;
                let kw = s.kernel("gwrite_item").map_err(err)?;
                set_args(kr, &[Arg::Mem(buf), Arg::Mem(out), Arg::F32(NEVER)])?;
                set_args(kw, &[Arg::Mem(buf)])?;
                (kr, kw, n / c.local * c.local)
            }
        };
        let moved = match shape.kind {
            DeviceKind::Gpu => bytes,
            DeviceKind::Cpu => global * 16,
        } as f64;
        let point = |ns: u64| Point {
            occupancy: c.occupancy,
            bytes_per_ns: moved / ns as f64,
            work_group_size: c.local,
            work_groups: global / c.local,
        };
        prog.step(&format!(
            "global read  L={} WGs={} occ={:.3}",
            c.local,
            global / c.local,
            c.occupancy
        ));
        reads.push(point(best_of(b.reps, || {
            time_kernel(q, kr, global, c.local)
        })?));
        prog.step(&format!(
            "global write L={} WGs={} occ={:.3}",
            c.local,
            global / c.local,
            c.occupancy
        ));
        writes.push(point(best_of(b.reps, || {
            time_kernel(q, kw, global, c.local)
        })?));
    }
    Ok((reads, writes))
}

fn err(m: String) -> crate::exec::cl::ClError {
    crate::config::warn(&m);
    crate::exec::cl::ClError {
        call: "characterize",
        code: opencl_sys::CL_INVALID_KERNEL_NAME,
    }
}

/// Local memory throughput (4 loads and 4 stores of 4 bytes per work-item and iteration,
/// no bank conflicts) at each configuration of `sweep`.
///
/// Errors: the driver's code of the failing call.
pub fn local_memory(
    s: &mut Session,
    shape: &Shape,
    sweep: &[Config],
    b: &Budget,
    prog: &mut Progress,
) -> ClResult<Vec<Point>> {
    let out = s.buffer(4096)?;
    let k = s.kernel("lmem").map_err(err)?;
    let q = s.queue;
    let mut pts = Vec::new();
    for c in sweep {
        let wgs = match shape.kind {
            DeviceKind::Gpu => c.per_cu.max(1) * shape.compute_units,
            DeviceKind::Cpu => shape.compute_units * 4,
        };
        let global = wgs * c.local;
        prog.step(&format!(
            "local        L={} WGs={wgs} occ={:.3}",
            c.local, c.occupancy
        ));
        let mut run = |it: u32| -> ClResult<u64> {
            set_args(
                k,
                &[
                    Arg::Mem(out),
                    Arg::U32(it),
                    Arg::F32(NEVER),
                    Arg::Local(4 * c.local * 4),
                ],
            )?;
            time_kernel(q, k, global, c.local)
        };
        let it = calibrate(b.target_ns, &mut run)?;
        let ns = best_of(b.reps, || run(it))?;
        pts.push(Point {
            occupancy: c.occupancy,
            bytes_per_ns: global as f64 * it as f64 * LMEM_BYTES_PER_ITERATION / ns as f64,
            work_group_size: c.local,
            work_groups: wgs,
        });
    }
    Ok(pts)
}

/// Result of one instruction-throughput benchmark.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InstrResult {
    /// The benchmark.
    pub bench: InstrKernel,
    /// Lane instructions of the class per ns, whole device.
    pub per_ns: f64,
    /// Work-items launched.
    pub work_items: usize,
    /// Work-group size.
    pub local: usize,
    /// Loop iterations per work-item.
    pub iterations: u32,
}

/// The launch used for compute benchmarks: a full device (GPU: every compute unit at its
/// resident limit, CPU: 8 work-groups per compute unit).
pub fn compute_launch(shape: &Shape) -> (usize, usize) {
    let local = (shape.warp * 8).min(shape.max_wg_size).max(1);
    let wgs = match shape.kind {
        DeviceKind::Gpu => shape.resident(local) * shape.compute_units,
        DeviceKind::Cpu => 8 * shape.compute_units,
    };
    (wgs * local, local)
}

/// Runs the instruction benchmarks whose kernels were built (`fp64` only when the
/// device supports it).
///
/// Errors: the driver's code of the failing call.
pub fn instructions(
    s: &mut Session,
    shape: &Shape,
    b: &Budget,
    fp64: bool,
    prog: &mut Progress,
) -> ClResult<Vec<InstrResult>> {
    let (global, local) = compute_launch(shape);
    let out = s.buffer(global * 8)?;
    let q = s.queue;
    let mut res = Vec::new();
    for ik in INSTR {
        if ik.kernel == "fp64" && !fp64 {
            continue;
        }
        prog.step(&format!("instructions {}", ik.class));
        let k = s.kernel(ik.kernel).map_err(err)?;
        let mut run = |it: u32| -> ClResult<u64> {
            match ik.kernel {
                "atom" => set_args(k, &[Arg::Mem(out), Arg::U32(it)])?,
                "bar" => set_args(
                    k,
                    &[
                        Arg::Mem(out),
                        Arg::U32(it),
                        Arg::F32(NEVER),
                        Arg::Local(local * 4),
                    ],
                )?,
                _ => set_args(k, &[Arg::Mem(out), Arg::U32(it), Arg::F32(NEVER)])?,
            }
            time_kernel(q, k, global, local)
        };
        let it = calibrate(b.target_ns, &mut run)?;
        let ns = best_of(b.reps, || run(it))?;
        res.push(InstrResult {
            bench: *ik,
            per_ns: global as f64 * it as f64 * ik.per_iteration / ns as f64,
            work_items: global,
            local,
            iterations: it,
        });
    }
    Ok(res)
}

/// Launch overhead: median device time (`END − START`) of an empty one-work-item kernel,
/// and median wall time of enqueue + `clFinish` of the same, ns.
///
/// Errors: the driver's code of the failing call.
pub fn launch_overhead(s: &mut Session, b: &Budget, prog: &mut Progress) -> ClResult<(f64, f64)> {
    prog.step("launch overhead");
    let out = s.buffer(64)?;
    let k = s.kernel("empty").map_err(err)?;
    set_args(k, &[Arg::Mem(out)])?;
    let q = s.queue;
    let mut dev = Vec::with_capacity(b.launches);
    let mut wall = Vec::with_capacity(b.launches);
    time_kernel(q, k, 1, 1)?;
    for _ in 0..b.launches.max(1) {
        let t0 = std::time::Instant::now();
        let d = time_kernel(q, k, 1, 1)?;
        wall.push(t0.elapsed().as_nanos() as f64);
        dev.push(d as f64);
    }
    Ok((median(&mut dev), median(&mut wall)))
}

/// A pointer-chasing latency measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Latency {
    /// ns per dependent load.
    pub ns: f64,
    /// Bytes of the chased cycle (one slot per 128-byte line).
    pub footprint: usize,
    /// Dependent loads of the longer of the two timed runs.
    pub steps: u32,
}

/// One 128-byte line per slot, as 32-bit words.
const CHASE_SLOT_WORDS: usize = 32;

/// A single random cycle through the `footprint / 128` line-aligned slots (Sattolo's
/// algorithm, splitmix64 generator with a fixed seed): word `32 i` holds the word index of
/// the next slot.
pub fn chase_cycle(footprint: usize) -> Vec<u32> {
    let slots = (footprint / (CHASE_SLOT_WORDS * 4)).max(2);
    let mut order: Vec<u32> = (0..slots as u32).collect();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = x;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    for i in (1..slots).rev() {
        let j = (next() % i as u64) as usize;
        order.swap(i, j);
    }
    let mut words = vec![0u32; slots * CHASE_SLOT_WORDS];
    for k in 0..slots {
        let (a, b) = (order[k] as usize, order[(k + 1) % slots]);
        words[a * CHASE_SLOT_WORDS] = b * CHASE_SLOT_WORDS as u32;
    }
    words
}

/// Latency of a dependent global load through a footprint of `footprint` bytes, ns: one
/// work-item chases pointers through [`chase_cycle`]; after a warm-up pass over the whole
/// cycle, `(t(2s) − t(s)) / s` with `s` dependent loads grown until `t(s)` reaches a tenth of
/// `b.target_ns`, best of `b.reps` (the difference removes the launch's fixed cost).
///
/// Errors: the driver's code of the failing call.
pub fn latency(
    s: &mut Session,
    footprint: usize,
    b: &Budget,
    prog: &mut Progress,
    what: &str,
) -> ClResult<Latency> {
    prog.step(&format!("latency {what} ({} KiB)", footprint >> 10));
    let words = chase_cycle(footprint);
    let bytes: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    let buf = s.buffer(bytes.len())?;
    let out = s.buffer(64)?;
    // SAFETY: `bytes` lives for the blocking write into clprism's own buffer.
    unsafe { crate::exec::cl::write(s.queue, buf, 0, &bytes, true)? };
    drop(bytes);
    let k = s.kernel("chase").map_err(err)?;
    let q = s.queue;
    let mut run = |steps: u32| -> ClResult<u64> {
        set_args(
            k,
            &[Arg::Mem(buf), Arg::Mem(out), Arg::U32(steps), Arg::U32(0)],
        )?;
        time_kernel(q, k, 1, 1)
    };
    let slots = (words.len() / CHASE_SLOT_WORDS) as u32;
    run(slots)?; // warm-up: every slot once (brings a cache-sized footprint in)
    let steps = calibrate((b.target_ns / 10).max(1), &mut run)?;
    let mut best = f64::INFINITY;
    for _ in 0..b.reps.max(1) {
        let t1 = run(steps)? as f64;
        let t2 = run(steps.saturating_mul(2))? as f64;
        let per = (t2 - t1) / steps as f64;
        if per > 0.0 {
            best = best.min(per);
        }
    }
    Ok(Latency {
        ns: if best.is_finite() { best } else { 0.0 },
        footprint: words.len() * 4,
        steps: steps.saturating_mul(2),
    })
}

/// An L2 read-throughput measurement.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct L2Read {
    /// Best bytes per ns over the buffer sizes tried.
    pub bytes_per_ns: f64,
    /// Buffer size of the best figure, bytes.
    pub buffer: usize,
    /// Every `(buffer bytes, bytes per ns)` tried.
    pub sizes: [(usize, f64); 4],
    /// Passes over the buffer per launch.
    pub passes: u32,
    /// Work-items and work-group size of the launch.
    pub launch: (usize, usize),
}

/// L2 read throughput: the full-occupancy launch of [`compute_launch`] reads a buffer of
/// 1, 2, 4 and 8 × (work-items × 16 B) in 16 grid-stride float4 passes (`gread_l2`), each
/// pass shifted by 67 work-groups so that no compute unit re-reads what its L1 holds; the
/// best throughput over the sizes is the L2's (larger sizes fall out of the L2 into DRAM),
/// each size best of `b.reps` after a warm-up.
///
/// Errors: the driver's code of the failing call.
pub fn l2_read(
    s: &mut Session,
    shape: &Shape,
    max_bytes: usize,
    b: &Budget,
    prog: &mut Progress,
) -> ClResult<L2Read> {
    let (global, local) = compute_launch(shape);
    let passes: u32 = 16;
    let out = s.buffer(global * 4)?;
    let k = s.kernel("gread_l2").map_err(err)?;
    let q = s.queue;
    let mut sizes = [(0usize, 0.0f64); 4];
    for (i, f) in [1usize, 2, 4, 8].iter().enumerate() {
        let bytes = (global * 16 * f).min(max_bytes.max(global * 16)) / 16 * 16;
        prog.step(&format!("L2 read {} KiB", bytes >> 10));
        let buf = s.buffer(bytes)?;
        s.fill(buf, bytes, 1.0)?;
        let n = bytes / 16;
        let shift = ((67 * local) % n.max(1)) as u32;
        set_args(
            k,
            &[
                Arg::Mem(buf),
                Arg::Mem(out),
                Arg::U32(n as u32),
                Arg::U32(passes),
                Arg::U32(shift),
                Arg::F32(NEVER),
            ],
        )?;
        let ns = best_of(b.reps, || time_kernel(q, k, global, local))?;
        sizes[i] = (bytes, bytes as f64 * passes as f64 / ns as f64);
    }
    let best = sizes
        .iter()
        .copied()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap_or((0, 0.0));
    Ok(L2Read {
        bytes_per_ns: best.1,
        buffer: best.0,
        sizes,
        passes,
        launch: (global, local),
    })
}

/// Median of `v` (0 for an empty slice).
pub fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Host→device and device→host copy throughput (bytes/ns) of blocking
/// `clEnqueueWriteBuffer` / `clEnqueueReadBuffer` of `buffer_bytes` from/to pageable
/// host memory, timed with profiling events.
///
/// Errors: the driver's code of the failing call.
pub fn copies(s: &mut Session, b: &Budget, prog: &mut Progress) -> ClResult<(f64, f64)> {
    prog.step("host<->device copies");
    let bytes = b.buffer_bytes;
    let m = s.buffer(bytes)?;
    let mut host = vec![1u8; bytes];
    let q = s.queue;
    let h2d = best_of(b.reps, || time_copy(q, m, &mut host, true))?;
    let d2h = best_of(b.reps, || time_copy(q, m, &mut host, false))?;
    Ok((bytes as f64 / h2d as f64, bytes as f64 / d2h as f64))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> Shape {
        Shape {
            kind: DeviceKind::Gpu,
            compute_units: 132,
            warp: 32,
            max_warps_per_cu: 64,
            max_wg_per_cu: 32,
            max_wg_size: 1024,
        }
    }

    #[test]
    fn gpu_sweep_covers_low_to_full_occupancy() {
        let sh = h100();
        for quick in [false, true] {
            let sw = sh.sweep(quick);
            // One warp per SM is the lowest point; a full SM (64 warps) the highest.
            assert!((sw[0].occupancy - 1.0 / 64.0).abs() < 1e-12);
            assert!((sw.last().unwrap().occupancy - 1.0).abs() < 1e-12, "{sw:?}");
            assert!(sw.windows(2).all(|w| w[0].occupancy < w[1].occupancy));
            for c in &sw {
                assert!(c.local <= 1024 && c.per_cu >= 1);
                assert!(c.per_cu <= sh.resident(c.local));
            }
        }
        assert!(sh.sweep(true).len() < sh.sweep(false).len());
    }

    #[test]
    fn occupancy_formula() {
        let sh = h100();
        // 256 work-items = 8 warps; 4 per SM = 32 of 64 warps.
        assert!((sh.occupancy(256, 4) - 0.5).abs() < 1e-12);
        // 1024 work-items = 32 warps: 2 resident at most.
        assert_eq!(sh.resident(1024), 2);
        assert!((sh.occupancy(1024, 5) - 1.0).abs() < 1e-12);
    }

    #[test]
    fn cpu_sweep_is_over_work_group_size() {
        let sh = Shape {
            kind: DeviceKind::Cpu,
            compute_units: 2,
            warp: 8,
            max_warps_per_cu: 512,
            max_wg_per_cu: 1,
            max_wg_size: 4096,
        };
        let sw = sh.sweep(false);
        assert_eq!(sw.first().unwrap().local, 8);
        assert_eq!(sw.last().unwrap().local, 4096);
        assert!((sw.last().unwrap().occupancy - 1.0).abs() < 1e-12);
        assert!(sw.iter().all(|c| c.per_cu == 0));
    }

    #[test]
    fn chase_cycle_is_one_cycle_through_every_slot() {
        let w = chase_cycle(64 * 128);
        assert_eq!(w.len(), 64 * 32);
        let mut seen = [false; 64];
        let mut p = 0usize;
        for _ in 0..64 {
            assert_eq!(p % 32, 0);
            assert!(!seen[p / 32], "slot {} visited twice", p / 32);
            seen[p / 32] = true;
            p = w[p] as usize;
        }
        assert_eq!(p, 0, "the walk returns to its start after every slot");
        assert!(seen.iter().all(|s| *s));
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        assert_eq!(median(&mut []), 0.0);
    }
}
