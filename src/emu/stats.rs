//! Per-work-group statistics produced by the mini-emulator (Panwar et al. §IV-C).
//!
//! The JSON shape of [`WorkGroupStats`] is part of the log schema: its top-level keys are
//! fixed so that tools can read them.

use serde::{Deserialize, Serialize};

/// Dynamic count of one instruction class: warp instructions (one per warp-level issue,
/// whatever the active mask) and lane instructions (one per active lane).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WarpLaneCount {
    /// Warp-level instructions issued.
    pub warp: u64,
    /// Lane-level instructions executed (sum of active lanes over the warp instructions).
    pub lane: u64,
}

/// Dynamic instruction counts by class.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionMix {
    /// Integer arithmetic, logic, shifts, comparisons, address arithmetic.
    pub int: WarpLaneCount,
    /// Single-precision floating-point arithmetic (add, mul, fma, compare).
    pub fp32: WarpLaneCount,
    /// Double-precision floating-point arithmetic.
    pub fp64: WarpLaneCount,
    /// Transcendental / special-function-unit work (sin, exp, log, sqrt, rsqrt, div, ...).
    pub special: WarpLaneCount,
    /// Type conversions (int↔float, widening/narrowing, saturation).
    pub conversion: WarpLaneCount,
    /// Branches (conditional and unconditional) and returns.
    pub branch: WarpLaneCount,
    /// Work-group barriers.
    pub barrier: WarpLaneCount,
    /// Atomic read-modify-write operations.
    pub atomic: WarpLaneCount,
    /// Loads and stores of any address space.
    pub memory: WarpLaneCount,
    /// Everything else (phi, select, composite construct/extract, ...).
    pub other: WarpLaneCount,
}

/// Global memory traffic of one direction (loads or stores).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalTraffic {
    /// Warp-level memory instructions.
    pub requests: u64,
    /// Distinct 32-byte sectors touched by the active lanes, summed over requests.
    pub sectors: u64,
    /// Distinct 128-byte lines touched by the active lanes, summed over requests.
    pub lines: u64,
    /// Bytes requested by the active lanes.
    pub bytes: u64,
}

/// Local (shared) memory traffic of one direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LocalTraffic {
    /// Warp-level local memory instructions.
    pub requests: u64,
    /// Extra serialised passes caused by bank conflicts (32 banks of 4 bytes; lanes that
    /// read the same word are a broadcast): a 2-way conflict adds 1 replay.
    pub bank_conflict_replays: u64,
}

/// Byte ranges `[start, end)` of one buffer argument read and written by the work-group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgFootprint {
    /// Kernel argument index.
    pub arg: u32,
    /// Sorted, disjoint, merged `[start, end)` byte ranges read.
    pub read: Vec<[u64; 2]>,
    /// Sorted, disjoint, merged `[start, end)` byte ranges written.
    pub written: Vec<[u64; 2]>,
}

fn one() -> f64 {
    1.0
}

/// Statistics of one emulated work-group.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkGroupStats {
    /// Dynamic instruction mix.
    pub instructions: InstructionMix,
    /// Global (and constant) memory loads.
    pub global_loads: GlobalTraffic,
    /// Global memory stores.
    pub global_stores: GlobalTraffic,
    /// Local memory loads.
    pub local_loads: LocalTraffic,
    /// Local memory stores.
    pub local_stores: LocalTraffic,
    /// Memory waiting periods of the work-group's warps, summed: the times a warp, issuing
    /// in order, waits for its global (and constant) loads because an instruction reads a
    /// value one of them loads; the loads issued before that wait are in flight together.
    /// A warp whose loads all depend on the one before waits once per load request; one
    /// whose loop body makes `k` independent loads waits once per iteration. 0 in logs
    /// written before it was recorded (then unknown, not none). Hong & Kim ISCA'09 §3's
    /// memory waiting period; `emu::interp::deps`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub load_waits: u64,
    /// Warp-level conditional branches whose active lanes disagreed.
    pub divergent_branches: u64,
    /// Work-group barriers executed (counted once per barrier, not per warp).
    pub barriers: u64,
    /// Atomic operations (lane level).
    pub atomics: u64,
    /// Per buffer argument: bytes read and written.
    pub footprints: Vec<ArgFootprint>,
    /// Wall time of the emulation, ns.
    pub emulation_ns: u64,
    /// True when the instruction or time budget ran out and the counts were extrapolated.
    pub budget_exhausted: bool,
    /// Factor the counts were multiplied by when the budget ran out (1 otherwise): the
    /// inverse of the fraction of the work-group's warps that were emulated (a started,
    /// unfinished warp counts by its instructions over the finished warps' mean, or as
    /// half done when none finished). Footprints are never extrapolated: they hold what was
    /// actually touched.
    #[serde(default = "one")]
    pub extrapolation_factor: f64,
    /// Warp width used (lanes).
    pub warp_width: u32,
    /// Work-items in the emulated work-group.
    pub work_items: u64,
    /// Emulated work-group id (x, y, z).
    pub group: [u64; 3],
    /// Loop entries jumped over (warp level; footprint-only emulation,
    /// `EmuConfig::skip_write_free_loops`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub skipped_loops: u64,
    /// Buffer arguments (indices, sorted) that the skipped loops may have read: their
    /// reads are not in `footprints`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped_loop_reads: Vec<u32>,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}
