//! Projection of a kernel's runtime on a device from the statistics of one emulated
//! work-group (Panwar et al. §IV-C.2 and §IV-D; DESIGN.md §6).
//!
//! Baseline (all [`ModelOptions`] off), for `W` work-groups:
//!
//! * full-kernel statistics = per-work-group statistics × `W` (Panwar §IV-C.2: the
//!   emulated work-group is one work-group, linearly extrapolated);
//! * `t_compute = Σ_class lane_instructions_class / throughput_class` (Panwar §IV-D);
//! * `t_global = load_transactions × size / read_tp(occ) + store_transactions × size /
//!   write_tp(occ)` (Panwar §IV-D, reads and writes separately). The transaction is the
//!   32-byte sector by default: it is the unit in which NVIDIA GPUs since Fermi move data
//!   between L2 and DRAM and the emulator's finest coalescing count, so uncoalesced
//!   accesses cost what they cost in DRAM traffic; a profile may choose 128-byte lines
//!   instead (`global_load_granularity: "line"`, e.g. Fermi's L1-cached loads);
//! * `t_local = (requests + bank-conflict replays) × warp_width × bank_bytes /
//!   local_tp(occ)`, loads and stores together; `warp_width` is the width the emulator
//!   counted requests with (a 32-lane request of 4-byte words is 128 bytes whatever the
//!   device's bank count, so a 16-bank device takes two passes through its throughput);
//! * `t_kernel = max(t_compute, t_global, t_local)`, bound = the argmax.
//!
//! Refinements, each behind a flag of [`ModelOptions`] so that it can be measured:
//!
//! * `waves` (Quintanilla eq. 4.1): the kernel runs in `ceil(W / (active WGs per CU ×
//!   CUs))` waves of full width, so `W` is replaced by `waves × active WGs per CU × CUs`;
//! * `launch_overhead` (Boyer ch. 3; Wang §V): `profile.launch_overhead_ns` is added;
//! * `cache_reuse` (Pöppl, cache-aware model; Wang §III-B.3 cache behaviour analysis;
//!   hierarchical roofline): DRAM carries distinct bytes only (shared reads fetched once
//!   per L2 when the resident work-groups' distinct footprint fits), the L2 the
//!   work-group's distinct sectors, its L1 misses and the stores, the L1 every requested
//!   sector; `t_global = max` over the levels ([`super::memory`]);
//! * `issue_slots`: count warp instructions × warp width instead of lane instructions in
//!   `t_compute` (divergent warps occupy all their lanes' issue slots);
//! * `latency_bound` (Hong & Kim ISCA'09 MWP/CWP; Little's law): the global throughput at
//!   the device-wide fraction of warp slots in flight, and `t_global ≥ rounds × serialised
//!   loads per warp × latency` ([`super::memory`]);
//! * `kernel_floor`: `t_kernel ≥` the device's empty-kernel time
//!   ([`super::memory::kernel_floor`]), so µs launches are never projected at ns;
//! * `additive_floor` (with `kernel_floor`; Quintanilla §4.1.2: a launch's overhead is of
//!   the order of µs and depends on the system and the kernel; Boyer ch. 3): the launch
//!   costs the floor *plus* its body, `t = floor + max(t_compute, t_global, t_local)`,
//!   instead of the larger of the two: the empty kernel's `END − START` is the launch's
//!   fixed work before the first work-group starts and after the last one ends (dispatch,
//!   the completion's memory flush), which the body does not overlap. On the logs of
//!   `results/session23-2026-11-28` it lowers the error of 10–100 µs PolyBench launches
//!   (jacobi-2d −34 % → −2 % on the H100) and raises it for launches that measure below
//!   the profile's floor (several H200 launches of 3.6–5.3 µs against its 5.79 µs floor);
//! * `bytes_in_flight` (Little's law for the kernel's own requests; Panwar §IV-B: global
//!   throughput depends on occupancy *and word size*; Wang §IV-A.2: memory latency against
//!   the active warps; Hong & Kim ISCA'09 §4, MWP): `clprism characterize` measures the
//!   read curve with `float4` loads, 512 bytes per 32-lane request. A kernel whose requests
//!   move `B` bytes has `B / 512` of the benchmark's bytes in flight at the same warps, so
//!   in the throughput-bound regime (the serialised-latency bound of `latency_bound` below
//!   the curve's time) the curve is read at the warp fraction × `min(1, B / 512)`
//!   ([`super::memory::request_size_scale`]). A device that needs more bytes in flight to
//!   saturate loses more: the H200 (4.4 TB/s × 184 ns ≈ 800 KB) more than the H100
//!   (3.1 TB/s × 215 ns ≈ 660 KB): PolyBench's 4-byte streaming kernels (fdtd-2d,
//!   gemver kernel 1, jacobi-2d kernel 2) get an H200/H100 time ratio of 0.83–0.85
//!   instead of the bandwidth ratio 0.71–0.72 (measured 0.81–0.94;
//!   results/session23-2026-11-28/model-ablation.txt). In the latency-bound regime the
//!   per-warp chain already is Little's law for the kernel's requests and nothing changes;
//! * `conversion_as_int` (Wang §III-A.1: `trunc`/`ext` conversions and `getelementptr`
//!   are pruned from the trace as costing no time): the emulator's `conversion` class
//!   holds integer widenings and narrowings (`uint` and `size_t` index arithmetic; on
//!   NVIDIA GPUs folded into 64-bit address arithmetic such as `IMAD.WIDE` or plain integer
//!   ops) together with int↔float conversions, while the profile's `conversion` throughput
//!   is measured with int↔float conversions only (`convert_int`/`convert_float`, 3.5× slower
//!   than int on the H100). The class is charged at the int throughput: an upper bound for
//!   widenings, which Wang drops altogether, and a lower one for int↔float conversions. The
//!   naive matrix product (`examples/kernels/matmul_global.cl`: two widenings per
//!   iteration) goes from 45 % too slow to 4 % on both GPUs.
//! * `streaming_latency` (with `latency_bound`; on since session 30): the chain's first touches
//!   at the latency of streaming loads, Little's law on `global_read` at one warp per CU
//!   ([`super::memory::streaming_latency`]), not the random pointer chase of
//!   `global_latency_ns` (Wang §IV-A.2 measures the miss latency with a chase whose stride
//!   is the cache line). The chain-bound PolyBench kernels measure H200/H100 = 1.00 on
//!   average; the chase gives 0.857, the streaming curves 0.967. Off: on the logs of
//!   results/session24-model it raised the pooled MAPE (33.4 → 39.1 %), through
//!   `bytes_in_flight`'s switch on three matrix products with extrapolated statistics.
//!   On since session 30 (results/session30-model): with those statistics emulated whole
//!   (session 29) that switch no longer occurs; on the whole corpus (55 kernels × H100 and
//!   H200) the chain-bound kernels' H200/H100 ratio goes from 0.92-0.94 to 0.96-0.99
//!   (measured 0.99-1.03), the anchored H200 MAPE 12.5 → 11.2 % (10.1 → 8.8 % with the
//!   measured queue states of `clprism accuracy`), Panwar's relative error 3.6 → 3.1 %, the
//!   pooled MAPE 14.9 → 14.8 % (H100 15.01 → 15.04 %: gramschmidt kernel 3, −35 → −37 %).
//!   The random chase's 14 % gap between the two GPUs is a property of random DRAM rows
//!   and TLB misses that a row or column walk does not pay; the same die, clock and L2
//!   serve both, and the streaming curves differ by 3.4 %;
//! * `request_in_flight` (with `bytes_in_flight`; off by default): the request-size scale
//!   with one request in flight per kernel warp against the benchmark's 0.5
//!   ([`super::memory::request_size_scale_in_flight`]), so that the scaled curve and the
//!   chain count requests alike. Off: pooled MAPE 33.9 % (fdtd-2d and gemver kernel 1 lose
//!   what `bytes_in_flight` gained there).
//! * `l2_store_cost` (with `cache_reuse`): the L2 level charges a stored sector
//!   [`super::memory::L2_STORE_SECTOR_COST`] = 1.5 sector accesses. Measured on an H200
//!   (session 26, results/session26-model): PolyBench-ACC's `gemm`, which stores its
//!   accumulator every k-iteration (`c[i][j] += ...` through pointers that may alias, so
//!   neither the compiler nor the hardware keeps it in a register), makes 1.500 L2 write
//!   sector accesses per stored sector, and stays at 73 % of the L2's peak throughput
//!   while its loads hit the L1 (94 %); without the store in the loop (the sum in a
//!   register) the same loads take 0.32 ms instead of 1.10 ms. A store reaches the slice
//!   that homes its address in the GH100's two-partition L2 (half the stores cross to the
//!   far partition and are handled in both). The naive matrix products that accumulate
//!   into global memory at full occupancy (gemm, 2mm, 3mm) are L2-bound by their stores:
//!   projected 44-52 % too fast without it, 20-32 % with it (on since session 26);
//! * `in_flight_dram` (with `bytes_in_flight`): the throughput-bound regime of
//!   `bytes_in_flight` is decided on the DRAM level (the chain shorter than DRAM's time),
//!   not on the slowest level: the request-size scale is Little's law for the DRAM curve,
//!   and a launch whose L2 or L1 level outlasts its chain is not thereby DRAM
//!   throughput-bound. Without it, `l2_store_cost` lifts the L2 level of 2mm's and 3mm's
//!   first kernels (statistics extrapolated from one warp) above their chain on the H200,
//!   which re-reads their DRAM curve at 16 % of the warps (+146-163 %). On since session
//!   26; alone it changes no kernel of results/session26-model's corpora.
//! * `departure_delay` (with `latency_bound`): in the serialised-latency chain a load
//!   request that touches `k` lines costs `(k − 1)` SM clocks on top of the latency of the
//!   level it hits (Hong & Kim ISCA'09 §3: an uncoalesced memory warp's latency is
//!   `Mem_L + (#Uncoal_per_mw − 1) × Departure_del_uncoal`), the departure being the L1's
//!   one line per clock per SM (the profiles' measured local-memory peak, 33,398 B/ns on the
//!   H100's 132 SMs at 1.98 GHz, is 128 B per clock per SM, and the L1 and shared memory
//!   are one data path since Volta), instead of a latency interpolated from the L1's to
//!   the L2's by lines per request: an uncoalesced request whose lines are in the L1 does
//!   not go to the L2. PolyBench-ACC's row walks (`atax`/`mvt` kernel 1: a work-item per
//!   row, 32 lines per request, 2 warps per SM) go from +52 / +26 % to 0 / −6 % on the
//!   H100 / H200; with 8 warps per SM (`bicg` kernel 1, `gemver` kernel 3) the L1 level of
//!   `cache_reuse` (the SM's line rate shared by its warps) now bounds them, at the
//!   measured H200/H100 ratio (1.00 projected, 1.01 measured;
//!   results/session27-model). On since session 27.
//! * `l1_stores` (with `cache_reuse`): the L1 level carries the lines of the store requests
//!   as well as the loads', one line per clock each: the L1 is write-through for global
//!   memory, and a store request passes its pipeline (tags, then the write to the L2) like
//!   a load. Measured on an H200 (session 26, results/session26-model/gemm-variants-ncu-h200.txt,
//!   Nsight Compute): PolyBench-ACC's `gemm` with its store in the k-loop and the same
//!   loop with the sum in a register make the same loads, but the first keeps
//!   `l1tex__throughput` at 45.3 % of peak for 1.19 ms and the second at 78.3 % for
//!   0.329 ms: the stores (one line per warp and iteration, as many as a third of the
//!   lines) double the L1's work, i.e. a store line costs at least what a load line does.
//!   One line each is charged (the lower bound). The row walks that write what they read
//!   (PolyBench-ACC `adi` kernels 1 and 3: 32 lines per request, loads and stores) go from
//!   −30 / −21 % to −10 / −2 % on both GPUs (results/session27-model). On since session 27.
//! * `issue_partitions` (with `latency_bound`): the instruction throughputs are whole-device
//!   figures, measured with every warp scheduler of every compute unit busy. An NVIDIA SM
//!   is four processing blocks since Maxwell, each with its own warp scheduler and
//!   dispatch unit (one warp instruction per clock) and its own quarter of the SM's INT32,
//!   FP32, FP64 and special-function lanes, and a warp is issued by one of them for its
//!   lifetime (NVIDIA H100 whitepaper, "H100 SM architecture"; the profile's
//!   `schedulers_per_cu`). A compute unit holding `w` < `S` warps therefore issues from `w`
//!   schedulers only, and `t_compute` is multiplied by `S / min(S, w)`, `w` being the warps
//!   of the work-groups a busy compute unit holds (`min(ceil(W / CUs), active WGs per
//!   CU)` of them). This is the issue side of Hong & Kim's CWP (ISCA'09 §3: too few warps to
//!   cover the pipeline). Example apps' `nbody_step` (32 work-groups of two warps on 132
//!   SMs, compute-bound by its special-function `rsqrt`) goes from 34 % too fast to 9-10 %
//!   too slow with `prune_other` (results/session28-model). On since session 28.
//! * `prune_other`: the emulator's `other` class (copies, composite construction and
//!   extraction, vector shuffles, reads of built-in variables) costs no issue slot. Wang
//!   §III-A.1 keeps only the arithmetic and memory operations in the trace and drops what
//!   costs no time (address arithmetic, conversions "and so on"); vector components are
//!   registers to a GPU, so a `float4`'s construction and extraction are renamings. Alone
//!   it moves only `nbody_step` (its `other` lanes equal its fp32 lanes: −34 → −36 %), with
//!   `issue_partitions` see above. On since session 28.
//! * `queued_floor` (with `kernel_floor`): a launch has two fixed costs, not one. The
//!   profile's `kernel_floor_ns` is `END − START` of an empty kernel launched on an idle
//!   GPU (`bench/latency.c` and `clprism characterize` wait for every launch). A launch
//!   that the application enqueued while earlier work still ran on the device
//!   ([`LaunchShape::queued`]: `START − SUBMIT` over [`super::memory::QUEUED_BEHIND_NS`]
//!   in its log record) has its commands fetched and decoded by the GPU's front end while
//!   the launch ahead of it runs, so less of its fixed work falls between its `START` and
//!   `END`: Quintanilla §4.1 (a launch's overhead is of the order of µs and "depends on
//!   the overall system, as well as the kernel") measures it between kernels submitted
//!   back to back, and the gap between two queued kernels is smaller than an idle launch.
//!   Such a launch costs the profile's `kernel_floor_queued_ns`, the median `END − START`
//!   of the near-empty `tag` launches (examples/mt_launch) that waited behind other work:
//!   3.33 µs on the H100 (13 launches) and 3.23 µs on the H200 (43), against 5.95 / 5.66
//!   µs for the same kernel's launches on an idle GPU (787 / 757 launches; the profiles'
//!   `bench/latency.c` floors are 6.02 / 5.79 µs; results/session28-model/queued-floor.py).
//!   The queue state is read from GPU records only (PoCL's idle `START − SUBMIT` is 7.5-20
//!   µs) and is unknown at the enqueue, so project mode's own projections keep the idle
//!   floor; `clprism accuracy` sets it from the projected log. On since session 28b.
//! * `store_waits` (with `latency_bound`): the serialised-latency chain charges each of a
//!   warp's global store requests a waiting period at the L2's latency, in proportion to
//!   the share of its waiting periods that leave the L1 ([`super::memory::latency_chain_ns`]:
//!   Hong & Kim ISCA'09 §3-4 count stores among `#Mem_insts`, Wang §IV-B charges every
//!   memory read and write its latency; a store completes at the L2, and only a load that
//!   misses the L1 waits behind it). PolyBench-ACC's accumulating column walks store their
//!   accumulator every row (~380 ns a row on both GPUs): `mean_kernel` and `std_kernel`
//!   go from 38-51 % too fast to 6-33 %; kernel 2 of atax/bicg/mvt/gemver stay within
//!   4-9 % on the H100 and get an H200/H100 ratio of 0.921 (0.860 before, 0.995
//!   measured); the row walks
//!   (loads in the L1) move by at most 10 points (atax/mvt kernel 1: 0 / −6 % → +10 / 0 %).
//!   With `load_waits` and `in_flight_measured`; session 29.
//! * `in_flight_measured` (with `bytes_in_flight`): the request-size scale of
//!   `bytes_in_flight` is applied only where the scaled warp fraction lies within the
//!   measured `global_read` curve (at or above its first point, one warp per compute unit).
//!   Below it the curve is `curve_at`'s linear extrapolation, Little's law at the
//!   benchmark's requests in flight, i.e. a latency bound itself, and the kernel's own
//!   chain (its requests and waits) is the better one (Hong & Kim ISCA'09 §4: with too few
//!   warps for MWP the kernel is latency-bound). Without it, `load_waits` put
//!   `kmeans_update` (16 warps on 132 SMs) on the H200 at 4.5× its H100 time: its shorter
//!   chain crossed the curve's time there and the curve was re-read at a quarter of an
//!   already extrapolated fraction. Alone it changes no kernel of the corpus; session 29.

use super::memory::{self, WorkGroupBytes};
use super::occupancy::{occupancy, KernelResources, Limiter, OccupancyError};
use super::profile::{Curve, DeviceKind, Granularity, Profile};
use crate::emu::stats::{InstructionMix, WarpLaneCount, WorkGroupStats};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Switches for the refinements of the baseline model (all off = Panwar §IV-D).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelOptions {
    /// Wave quantisation, Quintanilla eq. 4.1.
    #[serde(default)]
    pub waves: bool,
    /// Add the profile's fixed launch overhead (Boyer ch. 3, Wang §V).
    #[serde(default)]
    pub launch_overhead: bool,
    /// Cache reuse from sector footprints (Pöppl; Wang §III-B.3).
    #[serde(default)]
    pub cache_reuse: bool,
    /// Warp instructions × warp width instead of lane instructions in `t_compute`.
    #[serde(default)]
    pub issue_slots: bool,
    /// Memory-level parallelism: throughput at the device-wide warps in flight and the
    /// serialised-latency bound (Hong & Kim ISCA'09 §4, MWP; Little's law).
    #[serde(default, skip_serializing_if = "is_false")]
    pub latency_bound: bool,
    /// No launch below the device's kernel floor (`Profile::kernel_floor_ns`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub kernel_floor: bool,
    /// Little's law with the kernel's own request size: in the throughput-bound regime the
    /// global read curve, measured with `float4` loads (512 bytes per 32-lane request), is
    /// read at the warp fraction scaled by the kernel's bytes per load request over the
    /// benchmark's ([`super::memory::request_size_scale`]; module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub bytes_in_flight: bool,
    /// With `kernel_floor`: the launch takes the floor *plus* its body,
    /// `t = floor + max(t_compute, t_global, t_local)`, instead of the larger of the two
    /// (module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub additive_floor: bool,
    /// Conversions charged at the int throughput instead of the profile's conversion
    /// throughput: most conversions of OpenCL kernels widen or narrow integer indices
    /// (`uint`/`size_t` address arithmetic), which GPUs fold into 64-bit address
    /// arithmetic or execute as integer ops, while the profile's figure is measured with
    /// int↔float conversions (Wang §III-A.1; module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub conversion_as_int: bool,
    /// With `latency_bound`: the serialised-latency chain charges a warp's first touches
    /// at the latency of *streaming* loads, Little's law on the profile's `global_read`
    /// curve at one warp per compute unit ([`super::memory::streaming_latency`]), instead
    /// of the random pointer chase's `global_latency_ns` (Wang §IV-A.2: the miss latency is
    /// a chase with the cache line as stride; module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub streaming_latency: bool,
    /// With `bytes_in_flight`: the kernel's warps keep one request in flight, the
    /// benchmark's half a request ([`super::memory::request_size_scale_in_flight`]), so the
    /// read curve is read at twice the request-size scale (at most 1).
    #[serde(default, skip_serializing_if = "is_false")]
    pub request_in_flight: bool,
    /// With `cache_reuse`: the L2 level charges every stored sector
    /// [`super::memory::L2_STORE_SECTOR_COST`] sector accesses instead of one (a store
    /// reaches the L2 slice that homes its address; module docs, session 26's H200
    /// measurement in results/session26-model).
    #[serde(default, skip_serializing_if = "is_false")]
    pub l2_store_cost: bool,
    /// With `bytes_in_flight`: the throughput-bound regime in which the read curve is read
    /// at the request-size scale is decided on the DRAM level alone (the serialised-latency
    /// chain shorter than DRAM's time at the unscaled curve), not on the slowest level: the
    /// scale is Little's law for the DRAM curve (module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub in_flight_dram: bool,
    /// With `latency_bound`: a load request of `k` lines is served one line per SM clock
    /// (Hong & Kim's departure delay of uncoalesced requests), so it costs
    /// `(k - 1)` clocks on top of the latency of where it hits, instead of the chain's
    /// interpolation from the L1's latency to the L2's by lines per request
    /// ([`super::memory::latency_chain_ns`]; module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub departure_delay: bool,
    /// With `cache_reuse`: the L1 level of the hierarchy carries the lines of the store
    /// requests as well as those of the loads (the L1 is write-through for global memory
    /// and every store request passes its pipeline on the way to the L2; module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub l1_stores: bool,
    /// With `latency_bound`: the serialised-latency chain counts a warp's memory waiting
    /// periods (`WorkGroupStats::load_waits`: loads in flight together wait once) instead
    /// of one per load request, where the statistics have them
    /// ([`super::memory::latency_chain_ns`]; module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub load_waits: bool,
    /// With `latency_bound`: `t_compute` is issued by the warp schedulers that have a warp,
    /// `min(S, warps per busy compute unit)` of the profile's `schedulers_per_cu` = `S`
    /// (a warp stays on one processing block of the SM; module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub issue_partitions: bool,
    /// The emulator's `other` class (copies, composite construction and extraction,
    /// vector shuffles, built-in variable reads) costs no issue slot: Wang §III-A.1 keeps
    /// only arithmetic and memory operations in the trace (module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub prune_other: bool,
    /// With `kernel_floor`: a launch that waited behind other work on its device
    /// ([`LaunchShape::queued`]) costs the profile's `kernel_floor_queued_ns` instead of
    /// `kernel_floor_ns` (the part of the fixed work the GPU's front end does while the
    /// launch ahead of it runs; module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub queued_floor: bool,
    /// With `latency_bound`: every global store request of a warp is a memory waiting
    /// period of the serialised-latency chain as well, at the L2's latency (where a store
    /// completes), exposed where the warp's next waiting period leaves the L1
    /// ([`super::memory::latency_chain_ns`]; module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub store_waits: bool,
    /// With `bytes_in_flight`: the request-size scale is applied only where the scaled
    /// warp fraction lies within the part of `global_read` that was measured (at or above
    /// its first point); below it the curve is itself Little's law at the benchmark's
    /// requests in flight and the kernel's own chain decides (module docs).
    #[serde(default, skip_serializing_if = "is_false")]
    pub in_flight_measured: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

fn is_zero_f64(x: &f64) -> bool {
    *x == 0.0
}

impl ModelOptions {
    /// The baseline of Panwar §IV-D (every refinement off).
    pub fn panwar() -> Self {
        Self::default()
    }

    /// The refinement flags by name, in the order of the struct (the names of `--model`).
    pub const FLAGS: &'static [&'static str] = &[
        "waves",
        "launch_overhead",
        "cache_reuse",
        "issue_slots",
        "latency_bound",
        "kernel_floor",
        "bytes_in_flight",
        "additive_floor",
        "conversion_as_int",
        "streaming_latency",
        "request_in_flight",
        "l2_store_cost",
        "in_flight_dram",
        "departure_delay",
        "l1_stores",
        "load_waits",
        "issue_partitions",
        "prune_other",
        "queued_floor",
        "store_waits",
        "in_flight_measured",
    ];

    /// The flag called `name` ([`Self::FLAGS`]), `None` for an unknown name.
    pub fn flag_mut(&mut self, name: &str) -> Option<&mut bool> {
        Some(match name {
            "waves" => &mut self.waves,
            "launch_overhead" => &mut self.launch_overhead,
            "cache_reuse" => &mut self.cache_reuse,
            "issue_slots" => &mut self.issue_slots,
            "latency_bound" => &mut self.latency_bound,
            "kernel_floor" => &mut self.kernel_floor,
            "bytes_in_flight" => &mut self.bytes_in_flight,
            "additive_floor" => &mut self.additive_floor,
            "conversion_as_int" => &mut self.conversion_as_int,
            "streaming_latency" => &mut self.streaming_latency,
            "request_in_flight" => &mut self.request_in_flight,
            "l2_store_cost" => &mut self.l2_store_cost,
            "in_flight_dram" => &mut self.in_flight_dram,
            "departure_delay" => &mut self.departure_delay,
            "l1_stores" => &mut self.l1_stores,
            "load_waits" => &mut self.load_waits,
            "issue_partitions" => &mut self.issue_partitions,
            "prune_other" => &mut self.prune_other,
            "queued_floor" => &mut self.queued_floor,
            "store_waits" => &mut self.store_waits,
            "in_flight_measured" => &mut self.in_flight_measured,
            _ => return None,
        })
    }

    /// Options from a comma-separated spec: an optional base (`recommended`, the default,
    /// `panwar` or `all`) followed by `+FLAG` / `-FLAG` (or a bare `FLAG`, switched on) per
    /// refinement of [`Self::FLAGS`]; e.g. `recommended,-cache_reuse` (an ablation).
    ///
    /// Errors: an unknown name, or a base after the first item.
    pub fn parse_spec(spec: &str) -> Result<ModelOptions, String> {
        let mut o = Self::recommended();
        for (i, item) in spec.split(',').map(str::trim).enumerate() {
            match item {
                "" => continue,
                "recommended" | "panwar" | "all" if i > 0 => {
                    return Err(format!("model base '{item}' must come first"))
                }
                "recommended" => o = Self::recommended(),
                "panwar" => o = Self::panwar(),
                "all" => o = Self::all(),
                _ => {
                    let (on, name) = match item.as_bytes()[0] {
                        b'+' => (true, &item[1..]),
                        b'-' => (false, &item[1..]),
                        _ => (true, item),
                    };
                    *o.flag_mut(name).ok_or_else(|| {
                        format!(
                            "unknown model option '{name}' (known: {})",
                            Self::FLAGS.join(", ")
                        )
                    })? = on;
                }
            }
        }
        Ok(o)
    }

    /// Every refinement on.
    pub fn all() -> Self {
        ModelOptions {
            waves: true,
            launch_overhead: true,
            cache_reuse: true,
            issue_slots: true,
            latency_bound: true,
            kernel_floor: true,
            bytes_in_flight: true,
            additive_floor: true,
            conversion_as_int: true,
            streaming_latency: true,
            request_in_flight: true,
            l2_store_cost: true,
            in_flight_dram: true,
            departure_delay: true,
            l1_stores: true,
            load_waits: true,
            issue_partitions: true,
            prune_other: true,
            queued_floor: true,
            store_waits: true,
            in_flight_measured: true,
        }
    }

    /// The recommended model: `latency_bound`, `cache_reuse` and `kernel_floor`, the
    /// refinements that lowered the error on the H100/H200 PolyBench-ACC logs of
    /// 2026-11-24 (results/session12-2026-11-24/model-physics.txt: MAPE per kernel 27 % on
    /// each device against the baseline's 86 % and 76 %, Panwar's relative error 4.8 %
    /// against 9.1 %, best device 38 of 45 kernels as the baseline); each of the three
    /// removed raises the MAPE (to 42–126 %), `waves`, `issue_slots` and `launch_overhead`
    /// added do not lower it. Since session 23 also `bytes_in_flight`,
    /// `conversion_as_int` and `additive_floor`, each of which lowered the summed error on
    /// the logs re-projected there (results/session23-2026-11-28/model-ablation.txt).
    /// `streaming_latency` and `request_in_flight` (session 24) stayed off: neither lowered
    /// the pooled error (results/session24-model/model-ablation.txt; `streaming_latency`
    /// is on since session 30, below). Since session 26
    /// also `l2_store_cost` with `in_flight_dram`: pooled MAPE 27.4 → 25.8 %, the matrix
    /// products that store in their loop from 44-52 % to 20-32 % too fast, every other
    /// kernel of both corpora unchanged (results/session26-model/model-ablation.txt). Since
    /// session 27 also `departure_delay` and `l1_stores`: pooled MAPE 25.8 → 23.9 %,
    /// PolyBench's row walks (atax, mvt, bicg, gemver, gesummv, adi) closer on both GPUs
    /// and at the measured H200/H100 ratio, the examples unchanged
    /// (results/session27-model/model-ablation.txt). Since session 28 also
    /// `issue_partitions` and `prune_other`: pooled MAPE 23.3 → 22.8 % on the statistics of
    /// the unrolling front end (`emu::frontend::UNROLL`; 24.0 → 23.5 % on the stored ones),
    /// `nbody_step` from 34 % too fast to 9-10 % too slow, PolyBench unchanged
    /// (results/session28-model). Since session 28b also `queued_floor`: pooled MAPE 22.2 →
    /// 19.8 % (H100 20.6 → 19.2 %, H200 23.7 → 20.5 %), the short launches the examples
    /// enqueue behind other work (`fwt_stage`, `transpose`, `reduce`) from 50-66 % too slow
    /// to −5…+30 %, PolyBench unchanged (its statistics come from PoCL, whose records carry
    /// no GPU queue state; results/session28-model, "queued floor"). Since session 29 also
    /// `load_waits`, `store_waits` and `in_flight_measured` together: pooled MAPE 19.6 →
    /// 14.9 % (H100 19.1 → 15.0 %, H200 20.1 → 14.7 %) on the statistics with the five
    /// extrapolated PolyBench-ACC kernels emulated whole, the accumulating column walks
    /// (38-51 % too fast) and `kmeans_update` (165-203 % too slow) within 6-33 %. Alone,
    /// `store_waits` gives 18.4 %, `load_waits` 25.1 % (its shorter chain tips
    /// `kmeans_update` on the H200 into `bytes_in_flight`'s scaled curve, which
    /// `in_flight_measured` stops), `in_flight_measured` changes nothing
    /// (results/session29-model/ablation.txt). Since session 30 also `streaming_latency`:
    /// anchored H200 MAPE 12.5 → 11.2 %, Panwar's relative error 3.6 → 3.1 %, pooled MAPE
    /// 14.86 → 14.81 % (H100 15.01 → 15.04 %, H200 14.71 → 14.58 %); the latency-bound
    /// walks' H200/H100 ratio 0.92-0.94 → 0.96-0.99 (measured 0.99-1.03;
    /// results/session30-model). Project mode, balance mode's projected-best device (`exec::best`) and
    /// `clprism emu` use it; `clprism accuracy` reports every variant, the baseline
    /// included.
    pub fn recommended() -> Self {
        ModelOptions {
            latency_bound: true,
            kernel_floor: true,
            cache_reuse: true,
            bytes_in_flight: true,
            conversion_as_int: true,
            additive_floor: true,
            l2_store_cost: true,
            in_flight_dram: true,
            departure_delay: true,
            l1_stores: true,
            issue_partitions: true,
            prune_other: true,
            queued_floor: true,
            load_waits: true,
            store_waits: true,
            in_flight_measured: true,
            streaming_latency: true,
            ..Self::panwar()
        }
    }
}

/// The launch being projected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LaunchShape {
    /// Work-groups in the NDRange.
    pub work_groups: u64,
    /// Per-work-group resources (work-group size, local memory, private memory/registers).
    pub resources: KernelResources,
    /// Distinct bytes the whole kernel reads from global memory, when known (e.g. the
    /// total size of the buffers it reads); used by `cache_reuse` only.
    pub kernel_read_bytes: Option<u64>,
    /// The launch waited behind other work on its device: its log record's
    /// `START − SUBMIT` exceeds [`super::memory::QUEUED_BEHIND_NS`]
    /// ([`super::memory::queued_behind_work`]); used by `queued_floor` only. Unknown at
    /// the enqueue (a project-mode record's shape has it `false`); the comparison of logs
    /// sets it from the record's `queued_ns`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub queued: bool,
}

impl LaunchShape {
    /// Shape of an NDRange: `global` and `local` sizes (work-items per dimension, 1 to 3
    /// dimensions) and local memory per work-group (static + dynamic, bytes). A partial
    /// last work-group counts as a work-group (OpenCL 2.0 non-uniform work-groups).
    ///
    /// Errors: [`ModelError::BadNdRange`] when the dimensions differ, are not 1..=3, or a
    /// size is 0.
    pub fn from_ndrange(
        global: &[u64],
        local: &[u64],
        local_mem_bytes: u64,
    ) -> Result<LaunchShape, ModelError> {
        if global.is_empty() || global.len() > 3 || global.len() != local.len() {
            return Err(ModelError::BadNdRange(format!(
                "global {global:?} and local {local:?} must have the same 1 to 3 dimensions"
            )));
        }
        if global.iter().chain(local).any(|&x| x == 0) {
            return Err(ModelError::BadNdRange(format!(
                "zero size in global {global:?} / local {local:?}"
            )));
        }
        let mut wgs: u64 = 1;
        let mut wg_size: u64 = 1;
        for (g, l) in global.iter().zip(local) {
            wgs = wgs.saturating_mul(g.div_ceil(*l));
            wg_size = wg_size.saturating_mul(*l);
        }
        Ok(LaunchShape {
            work_groups: wgs,
            resources: KernelResources {
                work_group_size: wg_size,
                local_mem_bytes,
                private_mem_bytes: None,
                registers_per_work_item: None,
            },
            kernel_read_bytes: None,
            queued: false,
        })
    }
}

/// The component that bounds the projected time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Instruction issue.
    Compute,
    /// Global memory.
    Global,
    /// Local memory.
    Local,
    /// The launch's fixed cost exceeds all three: the launch overhead (with
    /// `ModelOptions::launch_overhead`) or the kernel floor (with `kernel_floor`).
    Launch,
}

impl fmt::Display for Bound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Bound::Compute => "compute",
            Bound::Global => "global",
            Bound::Local => "local",
            Bound::Launch => "launch",
        })
    }
}

/// Projection of one launch on one device (the log's `projection` record holds one per
/// device).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    /// Profile name.
    pub device: String,
    /// Instruction time, ns.
    pub t_compute_ns: f64,
    /// Global memory time, ns.
    pub t_global_ns: f64,
    /// Local memory time, ns.
    pub t_local_ns: f64,
    /// The serialised-latency bound of `latency_bound`, ns (already in `t_global_ns`, which
    /// is at least this; 0 without `latency_bound` or loads). `t_global_ns == t_latency_ns`
    /// tells a latency-bound launch from a throughput-bound one. (absent in older logs: 0)
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub t_latency_ns: f64,
    /// Which component bounds the time.
    pub bound: Bound,
    /// `max(t_compute, t_global, t_local)` (+ launch overhead when enabled), ns.
    pub projected_ns: f64,
    /// 1 = fastest among the devices projected together; equal times share a rank
    /// (1, 1, 3); 0 before ranking.
    pub rank: u32,
    /// Occupancy fraction used for the throughput curves. (absent in hand-written logs: the default)
    #[serde(default)]
    pub occupancy: f64,
    /// Resource limiting the occupancy. (absent in hand-written logs: the default)
    #[serde(default)]
    pub limiter: Limiter,
    /// Resident work-groups per compute unit. (absent in hand-written logs: the default)
    #[serde(default)]
    pub active_work_groups_per_cu: u64,
    /// Waves, `ceil(W / (active WGs per CU × CUs))` (reported whether or not the `waves`
    /// refinement is on; absent in hand-written logs: 0).
    #[serde(default)]
    pub waves: u64,
}

/// A device for which no projection could be made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skipped {
    /// Profile name.
    pub device: String,
    /// Why (e.g. the work-group does not fit).
    pub reason: String,
}

/// Projections of one launch on every profiled device, ranked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ProjectionSet {
    /// The options used.
    pub options: ModelOptions,
    /// One per device that could run the launch, in profile order, with ranks set.
    pub devices: Vec<Projection>,
    /// Devices that could not run it.
    pub skipped: Vec<Skipped>,
}

impl ProjectionSet {
    /// The projected-fastest device (rank 1; the first one on ties).
    pub fn best(&self) -> Option<&Projection> {
        self.devices.iter().find(|p| p.rank == 1)
    }
}

/// Why a projection failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ModelError {
    /// The kernel cannot run on the device.
    Occupancy(OccupancyError),
    /// The NDRange has no work-group.
    EmptyNdRange,
    /// Inconsistent global/local sizes.
    BadNdRange(String),
    /// No statistics were given.
    NoStats,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Occupancy(e) => write!(f, "occupancy: {e}"),
            ModelError::EmptyNdRange => write!(f, "the NDRange has no work-group"),
            ModelError::BadNdRange(m) => write!(f, "bad NDRange: {m}"),
            ModelError::NoStats => write!(f, "no work-group statistics"),
        }
    }
}

impl std::error::Error for ModelError {}

impl From<OccupancyError> for ModelError {
    fn from(e: OccupancyError) -> Self {
        ModelError::Occupancy(e)
    }
}

fn class_counts(m: &InstructionMix) -> [WarpLaneCount; 10] {
    [
        m.int,
        m.fp32,
        m.fp64,
        m.special,
        m.conversion,
        m.branch,
        m.barrier,
        m.atomic,
        m.memory,
        m.other,
    ]
}

/// Compute time of one work-group, ns.
fn compute_ns_per_wg(stats: &WorkGroupStats, profile: &Profile, opts: &ModelOptions) -> f64 {
    let ww = stats_warp_width(stats, profile) as f64;
    class_counts(&stats.instructions)
        .iter()
        .zip(profile.instruction_throughput.entries())
        .map(|(c, (name, tp))| {
            let tp = if opts.conversion_as_int && name == "conversion" {
                profile.instruction_throughput.int
            } else {
                tp
            };
            if opts.prune_other && name == "other" {
                return 0.0;
            }
            let n = if opts.issue_slots && c.warp > 0 {
                c.warp as f64 * ww
            } else {
                c.lane as f64
            };
            n / tp
        })
        .sum()
}

fn stats_warp_width(stats: &WorkGroupStats, profile: &Profile) -> u32 {
    if stats.warp_width > 0 {
        stats.warp_width
    } else {
        profile.warp_width
    }
}

fn transaction_bytes(t: &crate::emu::stats::GlobalTraffic, g: Granularity, p: &Profile) -> f64 {
    match g {
        Granularity::Sector => t.sectors as f64 * p.sector_bytes as f64,
        Granularity::Line => t.lines as f64 * p.line_bytes as f64,
    }
}

/// A throughput curve at `occ`; with `latency_bound`, no warp gets more throughput than
/// at the lowest occupancy measured up to `occ` (Little's law: throughput = warps in
/// flight × bytes / latency grows at most linearly with the warps), so below the curve's
/// first point it falls linearly to 0 instead of staying at the first point's value, and
/// a curve that grows faster than linearly somewhere (measurement noise) does not make
/// more work-groups finish sooner.
fn curve_at(c: &Curve, occ: f64, opts: &ModelOptions) -> f64 {
    let v = c.at(occ);
    if !opts.latency_bound || occ <= 0.0 {
        return v;
    }
    let Some(first) = c.0.first() else {
        return v;
    };
    let per_occ =
        c.0.iter()
            .filter(|q| q[0] <= occ)
            .map(|q| q[1] / q[0])
            .fold(first[1] / first[0], f64::min);
    v.min(per_occ * occ)
}

/// Global memory time, ns, of `n` charged work-groups, as `(DRAM, caches)`: Panwar's
/// `load / read_tp(occ) + store / write_tp(occ)` (caches 0), or with `cache_reuse` the
/// DRAM level of [`memory::cache_traffic`] and the slower of its L2 and L1 levels; the
/// global time is the larger of the two.
#[allow(clippy::too_many_arguments)]
fn global_ns(
    wg: &WorkGroupBytes,
    launch: &LaunchShape,
    p: &Profile,
    occ: &super::occupancy::Occupancy,
    occ_f: f64,
    read_scale: f64,
    n: f64,
    capacity: u64,
    opts: &ModelOptions,
) -> (f64, f64) {
    let (read_tp, write_tp) = (
        curve_at(&p.global_read, occ_f * read_scale, opts),
        curve_at(&p.global_write, occ_f, opts),
    );
    if !opts.cache_reuse {
        return (wg.load * n / read_tp + wg.store * n / write_tp, 0.0);
    }
    let store_cost = if opts.l2_store_cost {
        memory::L2_STORE_SECTOR_COST
    } else {
        1.0
    };
    let tr = memory::cache_traffic(wg, p, occ, launch, n, capacity, store_cost);
    let dram = tr.dram_read / read_tp + tr.dram_write / write_tp;
    let l2 = match (tr.l2, memory::l2_read_throughput(p)) {
        (Some(b), Some(tp)) => b / tp,
        _ => 0.0,
    };
    // The L1s' throughput: the local curve at the per-CU occupancy (the curve's low
    // end is the latency of the benchmark's dependent chain, which `latency_bound` already
    // charges), times the share of CUs that have a work-group.
    let cus = p.compute_units.max(1) as u64;
    let busy = launch.work_groups.min(cus) as f64 / cus as f64;
    // With `l1_stores`, the store requests' lines pass the same L1 pipeline on their way
    // to the L2 (module docs).
    let stores = if opts.l1_stores {
        wg.store_lines * n
    } else {
        0.0
    };
    let l1 = tr
        .l1
        .map(|b| (b + stores) / (p.local.at(occ.fraction) * busy))
        .unwrap_or(0.0);
    (dram, l2.max(l1))
}

/// Project one launch on one device. The returned projection has `rank` 0.
///
/// Errors: [`ModelError::EmptyNdRange`] for 0 work-groups, [`ModelError::Occupancy`] when
/// the work-group cannot run on the device.
pub fn project(
    stats: &WorkGroupStats,
    launch: &LaunchShape,
    profile: &Profile,
    opts: &ModelOptions,
) -> Result<Projection, ModelError> {
    if launch.work_groups == 0 {
        return Err(ModelError::EmptyNdRange);
    }
    let occ = occupancy(profile, &launch.resources)?;
    let capacity = occ
        .active_work_groups_per_cu
        .saturating_mul(profile.compute_units as u64)
        .max(1);
    let waves = launch.work_groups.div_ceil(capacity);
    // Work-groups whose cost is charged (Panwar §IV-C.2; Quintanilla eq. 4.1 with waves).
    // With `latency_bound`, a single partial wave is charged as what it is: its lower
    // throughput comes from the device-wide warps in flight instead.
    let n = if opts.waves && !(opts.latency_bound && waves == 1) {
        waves as f64 * capacity as f64
    } else {
        launch.work_groups as f64
    };

    let mut t_compute = compute_ns_per_wg(stats, profile, opts) * n;
    if opts.latency_bound {
        // Fewer work-groups than compute units: only that many issue instructions (the
        // throughputs are whole-device figures).
        let cus = profile.compute_units.max(1) as u64;
        t_compute *= cus as f64 / launch.work_groups.min(cus) as f64;
        // `issue_partitions`: a compute unit with fewer warps than warp schedulers issues
        // from that many of them only.
        if let (true, Some(s)) = (opts.issue_partitions, profile.schedulers_per_cu) {
            let s = s.max(1) as u64;
            let per_cu = launch
                .work_groups
                .div_ceil(cus)
                .min(occ.active_work_groups_per_cu.max(1));
            let warps = (per_cu * occ.warps_per_work_group).max(1);
            t_compute *= s as f64 / warps.min(s) as f64;
        }
    }

    let wg = WorkGroupBytes {
        load: transaction_bytes(
            &stats.global_loads,
            profile.global_load_granularity,
            profile,
        ),
        store: transaction_bytes(
            &stats.global_stores,
            profile.global_store_granularity,
            profile,
        ),
        load_lines: stats.global_loads.lines as f64 * profile.line_bytes as f64,
        store_lines: stats.global_stores.lines as f64 * profile.line_bytes as f64,
        unique_read: memory::unique_read_bytes(stats, profile.sector_bytes as u64) as f64,
        unique_written: memory::unique_written_bytes(stats, profile.sector_bytes as u64) as f64,
    };
    // When the emulation budget ran out the counts were extrapolated but the footprints
    // hold what was touched: scale them alike (at most the bytes requested), so that the
    // share of first touches stays what the emulated part showed.
    let x = if stats.extrapolation_factor.is_finite() && stats.extrapolation_factor > 1.0 {
        stats.extrapolation_factor
    } else {
        1.0
    };
    let wg = WorkGroupBytes {
        unique_read: (wg.unique_read * x).min(wg.load.max(wg.unique_read)),
        unique_written: (wg.unique_written * x).min(wg.store.max(wg.unique_written)),
        ..wg
    };
    // Fraction of warp slots whose throughput the curves give: the per-CU occupancy
    // (Panwar), or with `latency_bound` the device-wide share of warp slots in flight.
    // CPU profiles: their curves are against the work-group size, and fewer work-groups
    // than cores leave cores idle (`share`).
    let cus = profile.compute_units.max(1) as u64;
    let (occ_f, share) = match (opts.latency_bound, profile.kind) {
        (true, DeviceKind::Gpu) => {
            let in_flight = launch.work_groups.min(capacity) * occ.warps_per_work_group;
            let slots = cus * profile.limits.max_warps_per_cu as u64;
            (
                (in_flight as f64 / slots.max(1) as f64).min(occ.fraction),
                1.0,
            )
        }
        (true, DeviceKind::Cpu) => (
            occ.fraction,
            launch.work_groups.min(cus) as f64 / cus as f64,
        ),
        (false, _) => (occ.fraction, 1.0),
    };
    let (t_dram, t_caches) = global_ns(&wg, launch, profile, &occ, occ_f, 1.0, n, capacity, opts);
    let (t_dram, t_caches) = (t_dram / share, t_caches / share);
    let t_global = t_dram.max(t_caches);
    let chain = if opts.latency_bound {
        memory::latency_chain_ns(
            stats,
            &wg,
            profile,
            waves,
            opts.streaming_latency,
            opts.departure_delay,
            opts.load_waits,
            opts.store_waits,
        )
        .unwrap_or(0.0)
    } else {
        0.0
    };
    // `bytes_in_flight`: in the throughput-bound regime (the serialised-latency bound does
    // not exceed the curve's time: enough warps in flight to approach the curve), the read
    // curve is read where the kernel's bytes in flight put it; in the latency-bound regime
    // the per-warp chain above already is Little's law for the kernel's own requests.
    let scale = if opts.bytes_in_flight {
        let in_flight = if opts.request_in_flight {
            1.0 / memory::CHARACTERIZE_LOADS_IN_FLIGHT
        } else {
            1.0
        };
        memory::request_size_scale_in_flight(stats, profile, in_flight)
    } else {
        1.0
    };
    // With `in_flight_dram` the regime is the DRAM level's: the scaled curve is DRAM's, so
    // a chain shorter than an L2 or L1 level but longer than DRAM's time leaves it unread.
    let regime_ns = if opts.in_flight_dram {
        t_dram
    } else {
        t_global
    };
    // With `in_flight_measured`, only where the scaled fraction is within the measured curve.
    let measured = !opts.in_flight_measured
        || profile
            .global_read
            .0
            .first()
            .is_some_and(|q| occ_f * scale >= q[0]);
    let t_global = if scale < 1.0 && chain < regime_ns && measured {
        let (d, c) = global_ns(&wg, launch, profile, &occ, occ_f, scale, n, capacity, opts);
        d.max(c) / share
    } else {
        t_global
    };
    let t_global = t_global.max(chain);

    let ww = stats_warp_width(stats, profile) as f64;
    let passes = (stats.local_loads.requests
        + stats.local_loads.bank_conflict_replays
        + stats.local_stores.requests
        + stats.local_stores.bank_conflict_replays) as f64;
    let t_local =
        passes * ww * profile.bank_bytes as f64 * n / curve_at(&profile.local, occ_f, opts) / share;

    let mut bound = Bound::Compute;
    let mut t = t_compute;
    if t_global > t {
        bound = Bound::Global;
        t = t_global;
    }
    if t_local > t {
        bound = Bound::Local;
        t = t_local;
    }
    if opts.kernel_floor {
        let floor = if opts.queued_floor && launch.queued {
            memory::kernel_floor_queued(profile)
        } else {
            memory::kernel_floor(profile)
        };
        if floor > t {
            bound = Bound::Launch;
        }
        t = if opts.additive_floor {
            floor + t
        } else {
            t.max(floor)
        };
    }
    if opts.launch_overhead {
        if profile.launch_overhead_ns > t {
            bound = Bound::Launch;
        }
        t += profile.launch_overhead_ns;
    }
    Ok(Projection {
        device: profile.name.clone(),
        t_compute_ns: t_compute,
        t_global_ns: t_global,
        t_local_ns: t_local,
        t_latency_ns: chain,
        bound,
        projected_ns: t,
        rank: 0,
        occupancy: occ_f,
        limiter: occ.limiter,
        active_work_groups_per_cu: occ.active_work_groups_per_cu,
        waves,
    })
}

/// Set `rank` on every projection: 1 for the smallest `projected_ns`; equal times share a
/// rank and the next rank skips (1, 1, 3).
pub fn rank_projections(ps: &mut [Projection]) {
    let times: Vec<f64> = ps.iter().map(|p| p.projected_ns).collect();
    for (i, p) in ps.iter_mut().enumerate() {
        let faster = times
            .iter()
            .enumerate()
            .filter(|&(j, &t)| j != i && t < times[i])
            .count();
        p.rank = faster as u32 + 1;
    }
}

/// Project one launch on every profile and rank the results.
///
/// `stats`: statistics of the emulated work-group; normally one entry. When several are
/// given (emulations at different warp widths, e.g. 32 and 64), each profile uses the one
/// whose `warp_width` equals its own, else the first.
///
/// Errors: [`ModelError::NoStats`] when `stats` is empty, [`ModelError::EmptyNdRange`] /
/// [`ModelError::BadNdRange`]-class problems of the launch itself. Devices on which the
/// work-group cannot run are listed in `skipped`, not errors.
pub fn project_all(
    stats: &[WorkGroupStats],
    launch: &LaunchShape,
    profiles: &[super::profile::Profile],
    opts: &ModelOptions,
) -> Result<ProjectionSet, ModelError> {
    let first = stats.first().ok_or(ModelError::NoStats)?;
    if launch.work_groups == 0 {
        return Err(ModelError::EmptyNdRange);
    }
    let mut set = ProjectionSet {
        options: *opts,
        ..Default::default()
    };
    for p in profiles {
        let s = stats
            .iter()
            .find(|s| s.warp_width == p.warp_width)
            .unwrap_or(first);
        match project(s, launch, p, opts) {
            Ok(pr) => set.devices.push(pr),
            Err(e) => set.skipped.push(Skipped {
                device: p.name.clone(),
                reason: e.to_string(),
            }),
        }
    }
    rank_projections(&mut set.devices);
    Ok(set)
}
