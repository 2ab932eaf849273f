//! The memory physics behind the refinements `latency_bound`, `cache_reuse` and
//! `kernel_floor` of [`super::project::ModelOptions`]: device figures with their fallbacks,
//! the traffic each level of the cache hierarchy carries, and the latency bound.
//!
//! * **Latency bound** (Hong & Kim, ISCA'09, §4: `MWP`, the memory warp parallelism, and
//!   `Exec_cycles = Mem_L × #Mem_insts × #Rep` when too few warps are in flight to cover
//!   `Mem_L`; Little's law, throughput = bytes in flight / latency). Two parts:
//!   1. the global-memory throughput is read from the profile's curve at the *device-wide*
//!      fraction of warp slots in flight, `min(W, capacity) × warps per work-group /
//!      (CUs × max warps per CU)`, not at the per-CU occupancy: the curve was measured with
//!      every compute unit busy (`clprism characterize`), so at a fraction `f` of the
//!      device's warp slots it is Little's law's `f × slots × bytes per request / latency`
//!      below saturation, whatever spreads those warps over the CUs;
//!   2. every warp waits for its own loads: `t_global ≥ rounds × chain × latency`, with
//!      `rounds = ceil(W / capacity)` work-groups run one after the other on a warp slot,
//!      `chain = load requests per warp` (the emulator counts requests per work-group,
//!      not their dependences; as Hong & Kim, every memory instruction of a warp is one
//!      `Mem_L` after the other: `Mem_cycles = Mem_L × #Mem_insts`. Dividing by the
//!      buffers read, on the guess that loads of different buffers in one loop body
//!      overlap, was tried on the H100 PolyBench logs and kept out: see
//!      results/session12-2026-11-24/model-physics.txt), and `latency = m × L_global + (1 − m) ×
//!      L_hit` where `m` is the share of the work-group's sectors that it reads for the first
//!      time (its distinct footprint over its sectors; 1 without footprints) and `L_hit` is
//!      the L1's latency when the profile has an L1 (`l1_bytes_per_cu`: re-reads of a
//!      work-group's own sectors hit it, as in the cache levels below), else the L2's; an
//!      uncoalesced request's lines are served one after the other (Hong & Kim's departure
//!      delay), so with `k` lines per request `L_hit` goes from the L1's latency (`k = 1`)
//!      to the L2's (`k` = warp width) linearly; with `departure_delay` of
//!      [`super::project::ModelOptions`] the request instead costs `(k − 1)` SM clocks more
//!      than the latency of where it hits (the L1 passes one line per clock), first touches
//!      included (Hong & Kim §3, `Mem_L + (#Uncoal_per_mw − 1) × Departure_del_uncoal`).
//! * **Cache reuse** (Pöppl's cache-aware model; Wang §III-B.3; the hierarchical roofline,
//!   Yang et al. 2020): each level carries its own bytes and the slowest level bounds
//!   `t_global = max(t_DRAM, t_L2, t_L1)`:
//!   * L1 (per CU, when the profile gives `l1_bytes_per_cu` and some of it is left after
//!     the resident work-groups' local memory): every line the requests touch, whole (the
//!     L1 handles one 128-byte line per cycle, so an uncoalesced request of 32 lanes costs
//!     32 lines however few of their sectors it uses; with `l1_stores` of
//!     [`super::project::ModelOptions`] the store requests' lines too), at the local-memory curve (L1 and shared memory are one SRAM with one data path on NVIDIA GPUs since
//!     Volta); a work-group's re-reads of its own sectors hit it (its warps run close
//!     together, so the reuse distance is short); without an L1 they go to the L2;
//!   * L2 (device): the work-group's distinct sectors, its re-reads that the L1 missed and
//!     every stored sector (with `l2_store_cost`, [`L2_STORE_SECTOR_COST`] accesses each),
//!     at `l2_read_bytes_per_ns` (or the estimate of [`l2_read_throughput`]);
//!   * DRAM: distinct bytes only. Reads shared between work-groups (`kernel_read_bytes`
//!     below `W ×` the work-group's distinct footprint) are fetched once when the distinct
//!     footprint of the resident work-groups fits in the L2, in proportion otherwise; stores
//!     reach DRAM once per distinct written sector (the L2 is write-back).
//!
//!   A shared load is thus counted once per cache instead of once per request.
//! * **Kernel floor**: no launch is shorter on the device than an empty kernel's
//!   `END − START` ([`kernel_floor`]).

use super::occupancy::Occupancy;
use super::profile::{DeviceKind, Profile};
use super::project::LaunchShape;
use crate::emu::stats::WorkGroupStats;

/// Bytes per lane of the `global_read` benchmark's loads (`float4`), for the Little's-law
/// latency estimate.
const CHARACTERIZE_BYTES_PER_LANE: f64 = 16.0;

/// Bytes per clock per compute unit of the L2 read estimate used when a GPU profile has no
/// `l2_read_bytes_per_ns` (half of the 64 B/clock L1↔L2 path of an NVIDIA SM; about what
/// microbenchmarks measure on Hopper: ~5.5 TB/s on an H100 PCIe's 114 SMs at 1.755 GHz is
/// 27.5 B/clock/SM).
pub const L2_ESTIMATE_BYTES_PER_CLOCK_PER_CU: f64 = 32.0;

/// L2 sector accesses per stored sector (`l2_store_cost` of
/// [`super::project::ModelOptions`]). Measured on an H200 (session 26,
/// results/session26-model): PolyBench-ACC's `gemm` (1024³, one 128-byte coalesced store
/// per warp and k-iteration, 134.3 M stored sectors) makes `lts__t_sectors_op_write` =
/// 201.4 M (Nsight Compute), 1.500 L2 sector accesses per stored sector, on lines that
/// stay in the L2 (DRAM writes: 256 bytes). Our reading of the 1.5: the L2 of the GH100
/// (H100, H200) is split in two partitions, each caching for the SMs attached to it
/// (NVIDIA A100 whitepaper, "L2 cache": the same two-partition design), and a store must
/// reach the slice that homes its address, so the half of the stores homed in the far
/// partition are handled in both. Loads are not charged more (read sectors 15.5 M, about
/// the model's distinct reads, 20.6 M). Applied to every GPU profile; only the GH100 was
/// measured.
pub const L2_STORE_SECTOR_COST: f64 = 1.5;

/// Requests in flight per warp, on average, in the `global_read` benchmark's grid-stride
/// loop at one warp per compute unit, for the Little's-law latency estimate. Calibrated,
/// not derived: with 1 the estimate for the H100 profile is 406 ns, against the 214.8 ns
/// that pointer chasing measured on that H100 (2026-11-24, /work/gpu-data/h100/latency.txt);
/// 0.5 gives 203 ns (the warp does not keep a request in flight all the time: the loop's
/// other work and the request's issue take part of each iteration).
pub const CHARACTERIZE_LOADS_IN_FLIGHT: f64 = 0.5;

/// Global-memory latency of `p`, ns, and where it comes from: the measured
/// `global_latency_ns`, else (GPU profiles only) Little's law applied to the lowest point
/// of `global_read`, which `clprism characterize` measures with one warp per compute unit
/// reading `float4`: `latency = CUs × warp width × 16 B × loads in flight per warp /
/// throughput(1 / max warps per CU)` ([`CHARACTERIZE_LOADS_IN_FLIGHT`]).
/// `None` for CPU profiles without a measurement (the bound is skipped: out-of-order cores
/// and prefetchers hide latency in ways warps do not).
pub fn global_latency(p: &Profile) -> Option<(f64, &'static str)> {
    if let Some(l) = p.global_latency_ns.filter(|l| *l > 0.0) {
        return Some((l, "measured"));
    }
    streaming_latency(p).map(|l| {
        (
            l,
            "estimated by Little's law from global_read at one warp per compute unit",
        )
    })
}

/// Latency of *streaming* global loads, ns: Little's law on the lowest point of
/// `global_read`, which `clprism characterize` measures with one warp per compute unit
/// reading consecutive `float4`s in a grid-stride loop: `latency = CUs × warp width × 16 B
/// × loads in flight per warp / throughput(1 / max warps per CU)`
/// ([`CHARACTERIZE_LOADS_IN_FLIGHT`]). `None` for CPU profiles and curves without a
/// positive first point.
///
/// Why it differs from `global_latency_ns` (`streaming_latency` of
/// [`super::project::ModelOptions`]): that figure is a pointer chase over a random
/// permutation of 128-byte slots of 512 MiB (bench/latency.c), so every load also pays a
/// DRAM row miss and, mostly, a TLB miss. Wang et al. §IV-A.2 measure the miss latency a
/// warp sees with a chase whose stride is the cache line, i.e. consecutive lines; the
/// loads of a warp's serialised chain in the kernels the latency bound applies to (a
/// row or a column of a matrix walked one element or one row per iteration) are of that
/// kind: consecutive lines or a constant stride, which the DRAM's open rows and the TLB
/// serve as a stream does. The random chase puts the H200 14 % below the H100 (184 against
/// 214.8 ns); the streaming curve 3.4 % (172.0 against 166.3 B/ns at one warp per SM), the
/// two GPUs having the same GH100 die, clock and L2, and memories that differ in bandwidth
/// more than in the latency of an open row.
pub fn streaming_latency(p: &Profile) -> Option<f64> {
    if p.kind != DeviceKind::Gpu {
        return None;
    }
    let occ = 1.0 / p.limits.max_warps_per_cu.max(1) as f64;
    let bw = p.global_read.at(occ);
    (bw > 0.0).then(|| {
        p.compute_units as f64
            * p.warp_width as f64
            * CHARACTERIZE_BYTES_PER_LANE
            * CHARACTERIZE_LOADS_IN_FLIGHT
            / bw
    })
}

/// Scale (dimensionless, in (0, 1]) of the warp fraction at which the global read curve
/// is read for a kernel whose load requests carry fewer bytes than the curve's benchmark (`bytes_in_flight` of
/// [`super::project::ModelOptions`]): `min(1, B / (warp width × 16 B))`, where `B` is the
/// bytes a load request moves (transactions: sectors × sector size, over the requests) and
/// `warp width × 16 B` is what one request of `clprism characterize`'s `float4`
/// `global_read` loop moves. Little's law (Hong & Kim ISCA'09 §4, MWP: a warp has a
/// bounded number of requests in flight; Wang et al. §III-B.2, memory latency against
/// active warps): below saturation the throughput is bytes in flight / latency, so at the
/// same warps in flight a kernel of 4-byte loads (128 B per request) has a quarter of the
/// benchmark's bytes in flight and reads the curve where a quarter of the warps would.
/// A device needing more bytes in flight to saturate (the H200's HBM3e: about 4.4 TB/s ×
/// 184 ns ≈ 800 KB against the H100's 3.1 TB/s × 215 ns ≈ 660 KB) loses more of its peak,
/// so the H200/H100 time ratio of narrow-load streaming kernels lies between the latency
/// ratio and the bandwidth ratio. 1 for CPU profiles (their curves are against the
/// work-group size) and for requests of 16 bytes per lane or more; 1 without loads.
pub fn request_size_scale(stats: &WorkGroupStats, p: &Profile) -> f64 {
    request_size_scale_in_flight(stats, p, 1.0)
}

/// [`request_size_scale`] for a kernel whose warps keep `in_flight` times the benchmark's
/// requests in flight per warp: `min(1, B × in_flight / (warp width × 16 B))`. With
/// `request_in_flight` of [`super::project::ModelOptions`], `in_flight = 1 /`
/// [`CHARACTERIZE_LOADS_IN_FLIGHT`]: the benchmark's warp has half a request in flight on
/// average (the calibration that turns its curve into the latency of
/// [`global_latency`]'s estimate), while a warp of the latency chain
/// ([`latency_chain_ns`]) waits on one request at a time (Hong & Kim ISCA'09 §4: a warp
/// issues its memory request and waits `Mem_L`). Little's law with the same request count
/// in both bounds: below the curve's knee the scaled throughput then gives the chain's
/// time, instead of twice it, so that a launch whose chain crosses the curve's time does
/// not jump by 2×; at the knee (full occupancy) narrow loads still read the curve lower.
pub fn request_size_scale_in_flight(stats: &WorkGroupStats, p: &Profile, in_flight: f64) -> f64 {
    if p.kind != DeviceKind::Gpu {
        return 1.0;
    }
    let req = stats.global_loads.requests;
    if req == 0 {
        return 1.0;
    }
    let ww = if stats.warp_width > 0 {
        stats.warp_width
    } else {
        p.warp_width
    } as f64;
    let bytes = stats.global_loads.sectors as f64 * p.sector_bytes as f64 / req as f64;
    (bytes * in_flight / (ww * CHARACTERIZE_BYTES_PER_LANE)).clamp(1.0 / 64.0, 1.0)
}

/// L2-hit latency, ns: the measured `l2_latency_ns`, else half the global latency
/// (estimate; Hopper's L2 hit is about half its DRAM access in published microbenchmarks).
pub fn l2_latency(p: &Profile, global: f64) -> f64 {
    p.l2_latency_ns.filter(|l| *l > 0.0).unwrap_or(global / 2.0)
}

/// L1-hit latency, ns: the measured `l1_latency_ns`, else 1/16 of the global latency
/// (estimate).
pub fn l1_latency(p: &Profile, global: f64) -> f64 {
    p.l1_latency_ns
        .filter(|l| *l > 0.0)
        .unwrap_or(global / 16.0)
}

/// Whether the profile gives the compute units an L1 for global loads.
pub fn has_l1(p: &Profile) -> bool {
    p.l1_bytes_per_cu.is_some_and(|b| b > 0)
}

/// The shortest device time of a launch, ns: `kernel_floor_ns`, else `launch_overhead_ns`
/// (which `clprism characterize` measures the same way: median `END − START` of an empty
/// kernel; for spec profiles an estimate of the same order).
pub fn kernel_floor(p: &Profile) -> f64 {
    p.kernel_floor_ns
        .filter(|f| *f > 0.0)
        .unwrap_or(p.launch_overhead_ns)
}

/// The shortest device time of a launch that waited behind other work on its device, ns:
/// `kernel_floor_queued_ns`, else the idle floor ([`kernel_floor`]; `queued_floor` then
/// changes nothing).
pub fn kernel_floor_queued(p: &Profile) -> f64 {
    p.kernel_floor_queued_ns
        .filter(|f| *f > 0.0)
        .unwrap_or_else(|| kernel_floor(p))
}

/// `START − SUBMIT` above which a launch waited behind other work on its device, ns. On an
/// idle H100 or H200 a launch's `START − SUBMIT` is about 4 µs (the 2,624 launches of `tag`
/// and `floyd_pass` in results/gpu-2026-11-22c and results/gpu-profile-2026-11-22: median
/// 4.1 µs, 95 % below 5.7 µs; 77 above 10 µs), and the shortest launch that can run ahead
/// of it takes about 3 µs (`kernel_floor_queued_ns`): 10 µs is more than their sum. The
/// corpus's projections are the same for 7.5, 15 and 30 µs (results/session28-model).
pub const QUEUED_BEHIND_NS: u64 = 10_000;

/// Whether a launch whose log record has `START − SUBMIT` = `queued_ns` waited behind other
/// work on its device (`false` when unknown).
pub fn queued_behind_work(queued_ns: Option<u64>) -> bool {
    queued_ns.is_some_and(|q| q > QUEUED_BEHIND_NS)
}

/// L2 read throughput, bytes/ns: `l2_read_bytes_per_ns`, else for GPUs the estimate
/// [`L2_ESTIMATE_BYTES_PER_CLOCK_PER_CU`] × CUs × clock; `None` for CPU profiles without a
/// measurement (the L2 level is then not modelled).
pub fn l2_read_throughput(p: &Profile) -> Option<f64> {
    if let Some(t) = p.l2_read_bytes_per_ns.filter(|t| *t > 0.0) {
        return Some(t);
    }
    (p.kind == DeviceKind::Gpu)
        .then(|| L2_ESTIMATE_BYTES_PER_CLOCK_PER_CU * p.compute_units as f64 * p.clock_mhz / 1e3)
}

/// Distinct bytes of a list of sorted, merged `[start, end)` ranges, each widened to whole
/// `sector`s.
fn unique_bytes<'a>(ranges: impl Iterator<Item = &'a Vec<[u64; 2]>>, sector: u64) -> u64 {
    let mut total = 0u64;
    for rs in ranges {
        let mut last_end = 0u64;
        let mut first = true;
        for r in rs {
            if r[1] <= r[0] {
                continue;
            }
            let s = r[0] / sector * sector;
            let e = r[1].div_ceil(sector) * sector;
            let s = if first { s } else { s.max(last_end) };
            if e > s {
                total += e - s;
            }
            last_end = last_end.max(e);
            first = false;
        }
    }
    total
}

/// Distinct bytes read by the work-group, ranges widened to whole sectors.
pub fn unique_read_bytes(stats: &WorkGroupStats, sector: u64) -> u64 {
    unique_bytes(stats.footprints.iter().map(|f| &f.read), sector)
}

/// Distinct bytes written by the work-group, ranges widened to whole sectors.
pub fn unique_written_bytes(stats: &WorkGroupStats, sector: u64) -> u64 {
    unique_bytes(stats.footprints.iter().map(|f| &f.written), sector)
}

/// Bytes carried by each level for the whole launch (charged work-groups `n`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Traffic {
    /// Bytes read from DRAM.
    pub dram_read: f64,
    /// Bytes written to DRAM.
    pub dram_write: f64,
    /// Bytes through the L2 (reads that miss L1, and every store), when modelled.
    pub l2: Option<f64>,
    /// Bytes through the L1 (every requested load sector), when modelled.
    pub l1: Option<f64>,
}

/// What one work-group moves, as the model counts it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WorkGroupBytes {
    /// Load transactions × transaction size.
    pub load: f64,
    /// Lines touched by the load requests × line size: what the L1 processes (one line's
    /// tag and data per cycle, whatever share of it the request uses).
    pub load_lines: f64,
    /// Store transactions × transaction size.
    pub store: f64,
    /// Lines touched by the store requests × line size: what a store costs the L1, which
    /// is write-through for global memory (`l1_stores` of
    /// [`super::project::ModelOptions`]).
    pub store_lines: f64,
    /// Distinct bytes read (0 when the statistics have no footprints).
    pub unique_read: f64,
    /// Distinct bytes written (0 when the statistics have no footprints).
    pub unique_written: f64,
}

/// Traffic of each level under `cache_reuse` (module docs). `n`: work-groups charged;
/// `capacity`: resident work-groups on the device; the launch gives the NDRange's
/// work-groups, the local memory per work-group and the distinct bytes the kernel may read;
/// `store_cost`: L2 sector accesses per stored sector (1, or [`L2_STORE_SECTOR_COST`] with
/// `l2_store_cost` of [`super::project::ModelOptions`]), so that `Traffic::l2` is in bytes
/// of read-equivalent L2 work.
pub fn cache_traffic(
    wg: &WorkGroupBytes,
    p: &Profile,
    occ: &Occupancy,
    launch: &LaunchShape,
    n: f64,
    capacity: u64,
    store_cost: f64,
) -> Traffic {
    let (work_groups, local_mem_bytes, kernel_read_bytes) = (
        launch.work_groups,
        launch.resources.local_mem_bytes,
        launch.kernel_read_bytes,
    );
    if wg.unique_read <= 0.0 {
        // No footprints: nothing to tell reuse from; every request goes to DRAM.
        return Traffic {
            dram_read: wg.load * n,
            dram_write: wg.store * n,
            l2: None,
            l1: None,
        };
    }
    let u = wg.unique_read.min(wg.load);
    let reread = wg.load - u;
    // L1: some capacity left after the local memory of the resident work-groups.
    let l1_free = p.l1_bytes_per_cu.map(|b| {
        b.saturating_sub(
            occ.active_work_groups_per_cu
                .saturating_mul(local_mem_bytes),
        )
    });
    let l1_hits = matches!(l1_free, Some(f) if f > 0);
    let to_l2_read = if l1_hits { u } else { wg.load };
    // L2: the resident work-groups' distinct footprint (shared reads counted once).
    let resident = work_groups.min(capacity).max(1) as f64;
    let all = u * n;
    let kernel_distinct = kernel_read_bytes
        .map(|k| (k as f64).min(all))
        .filter(|k| *k > 0.0)
        .unwrap_or(all);
    let resident_distinct = (u * resident).min(kernel_distinct);
    let h2 = if p.l2_bytes > 0 {
        (p.l2_bytes as f64 / resident_distinct).min(1.0)
    } else {
        0.0
    };
    // Re-reads that the L1 missed hit the L2 with probability h2; shared reads across
    // work-groups are fetched once with probability h2.
    let l1_missed_rereads = if l1_hits { 0.0 } else { reread * n };
    let dram_read =
        (all - (all - kernel_distinct) * h2 + l1_missed_rereads * (1.0 - h2)).min(wg.load * n);
    let written = if wg.unique_written > 0.0 {
        wg.unique_written.min(wg.store)
    } else {
        wg.store
    };
    Traffic {
        dram_read,
        dram_write: written * n,
        l2: l2_read_throughput(p).map(|_| (to_l2_read + wg.store * store_cost) * n),
        l1: if l1_hits {
            Some(wg.load_lines * n)
        } else {
            None
        },
    }
}

/// Serialised load latency of one warp slot, ns (the latency bound of the module docs);
/// `None` when the profile has no latency (CPU without a measurement) or no loads.
/// `streaming`: first touches at [`streaming_latency`] (GPU profiles) instead of
/// [`global_latency`]; the L1 and L2 estimates, where the profile has no measurement of
/// its own, follow the latency used. `departure`: every request also waits
/// `(lines per request − 1)` SM clocks (one line per clock through the L1), and its hits
/// are at the L1's latency (the L2's without an L1), not interpolated towards the L2's.
///
/// `waits`: the chain is the warp's memory waiting periods (`WorkGroupStats::load_waits`,
/// when the statistics have them) instead of its load requests (`load_waits` of
/// [`super::project::ModelOptions`]). Hong & Kim ISCA'09 §3 (Figure 3, the memory waiting
/// period; §4's `Mem_cycles = Mem_L × #Mem_insts` when MWP is 1) charge one waiting
/// period per memory instruction, i.e. every load depends on the one before; Sim et al.
/// (PPoPP'12, GPUPerf, not in /work/shared/papers) divide the memory instructions by the
/// warp's memory-level parallelism, the requests per waiting period. The emulator counts
/// the periods themselves (`emu::interp::deps`). A period lasts as long as the slowest of
/// its `r = requests / waits` requests: it reaches DRAM unless every one of them hits,
/// `1 − (1 − m)^r` with `m` the first-touch share of the requests ([`latency_chain_ns`]'s
/// `m`, independent requests), and with `departure` its lines pass the L1 one per clock,
/// `(lines / waits − 1)` clocks (Hong & Kim §3's departure delay between the requests of a
/// warp that are in flight together). With one request per period both reduce to the
/// per-request chain.
///
/// `stores`: a warp's global store requests are waiting periods too (`store_waits` of
/// [`super::project::ModelOptions`]). Hong & Kim ISCA'09 §3-4 count every global memory
/// instruction, stores included, in `#Mem_insts`, each a `Mem_L` waiting period; Wang et
/// al. §IV-B charge every memory read *and write* of the warp's trace its profiled hit or
/// miss latency. A store completes at the L2: the L1 is write-through for global memory
/// (`l1_stores`; session 26's Nsight Compute counters on an H200 count every stored
/// sector of `gemm` at the L2, `lts__t_sectors_op_write`, on lines that stay there), so its
/// latency is the L2's ([`l2_latency`]). The warp itself does not wait on a store
/// (no register depends on it); what waits is its next load, and only a load that leaves
/// the SM: an L1 hit is answered inside the SM, while an L1 miss travels to the L2 behind
/// the store, and a thread's load must observe its own earlier stores, which an L1 that
/// does not keep the stored data guarantees only at the L2. A store therefore adds
/// `l2_latency × (the share of the warp's waiting periods that leave the L1)`, the chain's
/// first-touch share of a period, per store request and warp. Of the stored corpus
/// (results/session29-model): PolyBench-ACC's `mean_kernel` walks a column and stores its
/// accumulator every row (383 ns a row on the H100 and on the H200, one DRAM load a row);
/// `gramschmidt_kernel1` walks a column with the sum in a register (17 ns a load: the loads
/// overlap); `atax_kernel1` walks rows, its loads hit the L1, and stores every step
/// (106 ns a step).
#[allow(clippy::too_many_arguments)]
pub fn latency_chain_ns(
    stats: &WorkGroupStats,
    wg: &WorkGroupBytes,
    p: &Profile,
    rounds: u64,
    streaming: bool,
    departure: bool,
    waits: bool,
    stores: bool,
) -> Option<f64> {
    let lat = match streaming.then(|| streaming_latency(p)).flatten() {
        Some(l) => l,
        None => global_latency(p)?.0,
    };
    let ww = if stats.warp_width > 0 {
        stats.warp_width
    } else {
        p.warp_width
    } as u64;
    let warps = stats.work_items.div_ceil(ww.max(1)).max(1);
    let requests = stats.global_loads.requests as f64;
    if requests <= 0.0 {
        return None;
    }
    // Waiting periods of the warp: one per request unless the statistics say how many
    // requests were in flight together.
    let periods = if waits && stats.load_waits > 0 {
        (stats.load_waits as f64).min(requests)
    } else {
        requests
    };
    let chain = periods / warps as f64;
    let per_period = requests / periods;
    let first_touch = if wg.unique_read > 0.0 && wg.load > 0.0 {
        (wg.unique_read / wg.load).min(1.0)
    } else {
        1.0
    };
    // A period reaches DRAM when any of its requests does.
    let first_touch = 1.0 - (1.0 - first_touch).powf(per_period);
    // Re-reads of the work-group's own sectors hit its L1 when there is one, else the L2.
    // An uncoalesced request is served one line after the other (Hong & Kim's departure
    // delay of uncoalesced accesses): from the L1's latency for one line per request to
    // the L2's for one line per lane.
    let l2 = l2_latency(p, lat);
    // `stores` (`store_waits`): every store request of the warp is a waiting period at the
    // L2's latency, exposed where the warp's next waiting period leaves the L1 (the
    // period's DRAM share `first_touch`); a period served by the L1 does not wait for it.
    let store_chain = if stores {
        stats.global_stores.requests as f64 / warps as f64 * l2 * first_touch
    } else {
        0.0
    };
    let lines = stats.global_loads.lines as f64 / requests;
    if departure {
        // Every line of a request passes the L1 one per clock, hit or miss.
        let extra = (lines * per_period - 1.0).max(0.0) * 1e3 / p.clock_mhz.max(1.0);
        let hit = if has_l1(p) { l1_latency(p, lat) } else { l2 };
        let l = first_touch * lat + (1.0 - first_touch) * hit + extra;
        return Some(rounds.max(1) as f64 * (chain * l + store_chain));
    }
    let hit = if has_l1(p) {
        let l1 = l1_latency(p, lat);
        let spread = ((lines - 1.0) / (ww.max(2) - 1) as f64).clamp(0.0, 1.0);
        l1 + spread * (l2 - l1).max(0.0)
    } else {
        l2
    };
    let l = first_touch * lat + (1.0 - first_touch) * hit;
    Some(rounds.max(1) as f64 * (chain * l + store_chain))
}
