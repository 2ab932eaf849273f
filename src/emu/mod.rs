//! Mini-emulator (Panwar et al. §IV-C): OpenCL C → SPIR-V, SPIR-V loader, warp-lockstep
//! interpreter of one work-group, and its hardware statistics. No OpenCL calls inside.
//!
//! # What is counted (statistics, [`WorkGroupStats`])
//! * Instructions are SPIR-V instructions as llvm-spirv emits them at -O2, counted once per
//!   warp-level issue (`warp`) and once per active lane (`lane`). Classes: `int` (integer
//!   arithmetic, logic, comparisons, address arithmetic `PtrAccessChain`), `fp32`/`fp64`
//!   (add, mul, fma/mad, compare, min/max, floor, ...), `special` (division and
//!   transcendental functions: sqrt, rsqrt, exp, log, pow, sin, ...), `conversion`
//!   (`OpConvert*`, `OpUConvert`, `OpSConvert`, `OpFConvert`, saturating conversions),
//!   `branch` (branches, switches, calls, returns), `barrier` (barriers and fences),
//!   `atomic`, `memory` (loads, stores, vload/vstore, memcpy, async copies), `other`
//!   (select, composite and vector shuffles, bit casts, work-item built-ins). Phis are not
//!   instructions here: they are copies performed on control-flow edges.
//! * Global memory (Panwar et al. §IV-C): a request is one warp-level load/store; sectors
//!   and lines are the distinct 32-byte / 128-byte segments covered by the active lanes'
//!   byte ranges (buffers are taken as 128-byte aligned). `__constant` memory counts as
//!   global loads. A vector access is one request of its full width per lane (a `float4`
//!   at unit stride: 16 sectors per warp of 32), also when LLVM scalarised it into one
//!   access per component (`module::Traffic`).
//! * Local memory: 32 banks of 4 bytes; each lane touches the words of its byte range;
//!   lanes on the same word are a broadcast; replays = (max distinct words in one bank) − 1
//!   per request.
//! * Divergence: a conditional branch or switch whose active lanes take different targets;
//!   the lanes reconverge at the branch block's immediate post-dominator.
//! * Footprints: merged `[start, end)` byte ranges of each buffer argument read and
//!   written (atomics count as both).
//!
//! # Numerical behaviour
//! IEEE single/double arithmetic as on the host (round to nearest, denormals kept);
//! `mad` and the contracted `a*b+c` (`llvm.fmuladd`, emitted as `mad`) are fused, as on
//! GPUs and PoCL. Single-precision built-ins are evaluated in double precision and rounded
//! once, which is within the OpenCL 1.2 §7.4 ULP bounds; `native_`/`half_` variants use the
//! full-precision functions. Conversions honour the `FPRoundingMode` and
//! `SaturatedConversion` decorations. The differential tests (`tests/emu_diff.rs`) compare
//! the bytes a work-group writes with PoCL's.
//!
//! Typical use:
//! ```no_run
//! use OpenCL::emu::*;
//! let fe = FrontendOptions::resolve(None, None, |k| std::env::var_os(k));
//! let spv = compile_source("kernel void k(global float* a) { a[get_global_id(0)] *= 2.0f; }", "", &fe)?;
//! let m = Module::load(&spv)?;
//! let shape = LaunchShape::new(&[1024], &[128], None);
//! let mut args = vec![ArgValue::Buffer(vec![0u8; 4096])];
//! let st = emulate(&m, "k", &shape, [0, 0, 0], &mut args, &EmuConfig::default())?;
//! println!("{}", serde_json::to_string(&st).unwrap());
//! # Ok::<(), EmuError>(())
//! ```

#![allow(clippy::needless_range_loop)]

mod cfg;
pub mod cli;
pub mod dataflow;
pub mod frontend;
pub mod hash;
mod interp;
pub mod lower;
pub mod module;
pub mod paged;
mod pointer_classes;
pub mod stats;
pub mod worker;
pub mod writes;

pub use frontend::{
    compile_cached, find_toolchain, CompilePath, FrontendOptions, Origin, Toolchain,
};
pub use module::{ArgInfo, ArgKind, KernelInfo, Module};
pub use stats::*;

/// Errors of the mini-emulator. Every variant carries a human-readable reason that the
/// log can show; none of them is fatal to the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EmuError {
    /// No usable LLVM toolchain and no cache entry.
    NoToolchain(String),
    /// The toolchain failed to compile the source (diagnostics attached).
    Frontend(String),
    /// The SPIR-V module could not be parsed or decoded.
    Malformed(String),
    /// The kernel uses a feature the emulator does not model (named).
    Unsupported(String),
    /// Launch description inconsistent with the kernel (argument kinds, sizes, group id).
    BadLaunch(String),
    /// The kernel faulted during emulation (out-of-bounds access, unreachable, ...).
    Fault(String),
    /// A panic inside the emulator (caught at the API boundary).
    Internal(String),
}

impl std::fmt::Display for EmuError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EmuError::NoToolchain(s) => write!(f, "no toolchain: {s}"),
            EmuError::Frontend(s) => write!(f, "compilation failed: {s}"),
            EmuError::Malformed(s) => write!(f, "malformed SPIR-V: {s}"),
            EmuError::Unsupported(s) => write!(f, "unsupported: {s}"),
            EmuError::BadLaunch(s) => write!(f, "bad launch: {s}"),
            EmuError::Fault(s) => write!(f, "kernel fault: {s}"),
            EmuError::Internal(s) => write!(f, "internal error: {s}"),
        }
    }
}

impl std::error::Error for EmuError {}

/// SPIR-V words.
pub type Spirv = Vec<u32>;

/// NDRange of a launch. Unused dimensions (≥ `work_dim`) are ignored (treated as 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct LaunchShape {
    /// 1, 2 or 3.
    pub work_dim: u32,
    /// Global work size per dimension (work-items).
    pub global: [u64; 3],
    /// Local work size per dimension (work-items per work-group).
    pub local: [u64; 3],
    /// Global offset per dimension (work-items).
    pub offset: [u64; 3],
}

impl LaunchShape {
    /// Shape from slices of length `work_dim` (missing dimensions are 1 / offset 0).
    pub fn new(global: &[u64], local: &[u64], offset: Option<&[u64]>) -> LaunchShape {
        let mut s = LaunchShape {
            work_dim: global.len().clamp(1, 3) as u32,
            global: [1; 3],
            local: [1; 3],
            offset: [0; 3],
        };
        for d in 0..global.len().min(3) {
            s.global[d] = global[d];
            s.local[d] = local.get(d).copied().unwrap_or(1);
            if let Some(o) = offset {
                s.offset[d] = o.get(d).copied().unwrap_or(0);
            }
        }
        s
    }
    /// Number of work-groups per dimension.
    pub fn num_groups(&self) -> [u64; 3] {
        let mut n = [1; 3];
        for d in 0..self.work_dim.min(3) as usize {
            n[d] = self.global[d].div_ceil(self.local[d].max(1));
        }
        n
    }
}

/// Value of one kernel argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgValue {
    /// Contents of a `__global`/`__constant` buffer (bytes); updated in place by the
    /// work-group's stores.
    Buffer(Vec<u8>),
    /// A `__global`/`__constant` buffer whose contents are fetched page by page on first
    /// touch ([`paged`]).
    Paged(paged::PagedBuffer),
    /// Bytes of a by-value argument (scalar, vector, struct). For a pointer argument,
    /// 8 zero bytes mean a NULL buffer.
    Scalar(Vec<u8>),
    /// Size in bytes of a `__local` pointer argument.
    Local(usize),
}

/// Emulation parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmuConfig {
    /// Lanes per warp (1..=64): 32 for NVIDIA, 64 for AMD wavefronts.
    pub warp_width: u32,
    /// Lane-instruction budget; when exceeded the emulation stops and counts are
    /// extrapolated (`budget_exhausted`).
    pub instr_budget: u64,
    /// Wall-time budget, ns; same effect as the instruction budget.
    pub time_budget_ns: u64,
    /// Footprint-only emulation: jump over the loops [`dataflow`]'s `loop_skips` proves
    /// irrelevant to which bytes are written (their values are left undefined, so every
    /// statistic but the written ranges is meaningless). Only sound for kernels whose
    /// writes [`dataflow::data_dependent_writes`] found independent of memory contents.
    /// The loops' possible reads are reported in [`WorkGroupStats::skipped_loop_reads`].
    pub skip_write_free_loops: bool,
}

impl Default for EmuConfig {
    fn default() -> Self {
        EmuConfig {
            warp_width: 32,
            instr_budget: 200_000_000,
            time_budget_ns: 5_000_000_000,
            skip_write_free_loops: false,
        }
    }
}

fn catch<T>(f: impl FnOnce() -> Result<T, EmuError>) -> Result<T, EmuError> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            Err(EmuError::Internal(msg))
        }
    }
}

/// Compiles OpenCL C `source` with the app's build `options` (only `-D`, `-I`, `-U` and
/// `-cl-std=` are applied) to SPIR-V, with the toolchain and through the on-disk cache
/// that `fe` names (see [`frontend`]).
///
/// Errors: [`EmuError::NoToolchain`] when neither a toolchain nor a cache entry exists,
/// [`EmuError::Frontend`] with the compiler's diagnostics.
pub fn compile_source(
    source: &str,
    options: &str,
    fe: &FrontendOptions,
) -> Result<Spirv, EmuError> {
    catch(|| frontend::compile_cached(source, options, fe).map(|x| x.0))
}

/// [`compile_source`], with the [`CompilePath`] that made the words (`None`: a cache entry
/// of an older version, which did not record it).
pub fn compile_source_path(
    source: &str,
    options: &str,
    fe: &FrontendOptions,
) -> Result<(Spirv, Option<CompilePath>), EmuError> {
    catch(|| frontend::compile_cached_path(source, options, fe).map(|c| (c.words, c.path)))
}

/// SPIR-V words from the bytes given to `clCreateProgramWithIL` (either byte order, told
/// by the magic number). Errors: [`EmuError::Malformed`] when the size is not a multiple
/// of 4 or the magic number is wrong.
pub fn spirv_words(il: &[u8]) -> Result<Spirv, EmuError> {
    if il.len() < 20 || !il.len().is_multiple_of(4) {
        return Err(EmuError::Malformed(
            "IL is not a SPIR-V binary (bad size)".into(),
        ));
    }
    let le: Vec<u32> = il
        .chunks_exact(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    match le[0] {
        0x0723_0203 => Ok(le),
        0x0302_2307 => Ok(le.into_iter().map(u32::swap_bytes).collect()),
        _ => Err(EmuError::Malformed(
            "IL is not SPIR-V (bad magic number)".into(),
        )),
    }
}

/// Loads a SPIR-V module (from [`compile_source`] or from `clCreateProgramWithIL`, see
/// [`spirv_words`]). Errors: [`EmuError::Malformed`], [`EmuError::Unsupported`].
pub fn load_module(words: &[u32]) -> Result<Module, EmuError> {
    catch(|| Module::load(words))
}

/// Emulates work-group `group` of kernel `kernel` launched with `shape`, with full-NDRange
/// semantics (`get_global_size` etc. return the launch's values; the global offset is
/// honoured), warp by warp (Panwar et al. §IV-C). `args` must match the kernel's
/// arguments ([`Module::kernel`]): buffers for `__global`/`__constant` pointers (mutated
/// in place by the work-group's stores), sizes for `__local` pointers, bytes otherwise.
///
/// Errors: [`EmuError::Unsupported`] (named feature), [`EmuError::BadLaunch`],
/// [`EmuError::Fault`]; a panic becomes [`EmuError::Internal`].
pub fn emulate(
    module: &Module,
    kernel: &str,
    shape: &LaunchShape,
    group: [u64; 3],
    args: &mut [ArgValue],
    cfg: &EmuConfig,
) -> Result<WorkGroupStats, EmuError> {
    let k = module
        .kernel(kernel)
        .ok_or_else(|| EmuError::BadLaunch(format!("no kernel named {kernel}")))?;
    catch(|| interp::run(module, k, shape, group, args, cfg))
}
