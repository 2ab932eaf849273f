//! SPIR-V loader of the mini-emulator (DESIGN.md §5): parses an OpenCL (Kernel capability)
//! SPIR-V module with `rspirv`, lays out types, allocates a register slot range per SSA
//! value, pre-decodes every instruction into a compact `Inst` with resolved operand slots,
//! builds each function's CFG and computes immediate post-dominators (the reconvergence
//! points of the SIMT stack, Panwar et al. §IV-C).
//!
//! OpenCL SPIR-V control flow is unstructured, so merge annotations are not relied upon.
//! Built-ins are `Input` variables decorated `BuiltIn`.
//!
//! Layout (after naga's SPIR-V front end): [`ir`] (the pre-decoded instructions), `error`
//! (operand accessors), `types` (type layout and slots), `load` (module-scope declarations,
//! functions, CFG, kernels), `function` (the instruction decoder), `ext_inst` (OpenCL.std
//! extended instructions) and `vector` (scalarised vector accesses, counted whole).

#![allow(clippy::type_complexity, clippy::needless_range_loop)]

use super::cfg::ipdoms;
use super::EmuError;
use rspirv::dr::{self, Operand};
use rspirv::spirv;
use spirv::{BuiltIn, Decoration, Op, StorageClass};
use std::collections::HashMap;

mod error;
mod ext_inst;
mod function;
pub(crate) mod ir;
mod load;
mod types;
mod vector;

use error::*;
use function::*;
pub(crate) use ir::*;
use types::*;
use vector::*;

/// How a kernel argument is passed (from its SPIR-V parameter type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum ArgKind {
    /// `__global` pointer: a buffer.
    Global,
    /// `__constant` pointer: a buffer.
    Constant,
    /// `__local` pointer: the app gives a size in bytes.
    Local,
    /// Value passed by copy (scalars, vectors).
    Scalar,
    /// Struct passed by value (a `ByVal` pointer parameter in SPIR-V).
    ByVal,
}

/// Static description of one kernel argument.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ArgInfo {
    /// Address space / passing mode.
    pub kind: ArgKind,
    /// Size of the value in bytes (8 for pointers; the struct size for ByVal).
    pub size: u32,
    /// Argument name when the module carries one (OpName), else empty.
    pub name: String,
    #[serde(skip)]
    pub(crate) slot: u32,
    #[serde(skip)]
    pub(crate) leaves: Vec<(u32, Sc)>,
}

/// A kernel entry point.
#[derive(Debug, Clone)]
pub struct KernelInfo {
    /// Kernel name.
    pub name: String,
    /// Arguments in order.
    pub args: Vec<ArgInfo>,
    pub(crate) func: u32,
    /// Unsupported feature used by the kernel or a callee, if any.
    pub(crate) unsupported: Option<String>,
    /// True when the kernel or a callee contains an atomic operation on memory that is not
    /// work-group local (`__global`, or a pointer whose address space is unknown): such a
    /// kernel cannot be split across devices safely (DESIGN.md §7).
    pub global_atomics: bool,
    /// True when the kernel or a callee does floating-point arithmetic that a device's
    /// compiler may round or contract its own way ([`Inst::rounds_float`]): two devices of
    /// other compilers may compute other bytes for it, so balance mode splits it only over
    /// devices like the app's device (`CLPRISM_BALANCE_FLOAT`).
    pub float_arithmetic: bool,
    /// The NDRange built-ins the kernel or a callee reads whose value depends on the launch's
    /// extent or origin ([`NdRangeReads`]): a chunk launched over part of the NDRange at a
    /// global offset sees other values for them than the whole launch would.
    pub ndrange_reads: NdRangeReads,
    /// Loops that footprint emulation jumps over ([`crate::emu::dataflow::loop_skips`]): the pc
    /// of each branch that enters one → the redirections it takes.
    pub(crate) loop_skips: HashMap<u32, Vec<SkipBranch>>,
}

/// Which built-ins of the NDRange's extent or origin a kernel reads (from its SPIR-V, through
/// its callees), for balance mode's chunks (OpenCL 3.0 §6.15.1: `get_global_size`,
/// `get_num_groups` are the launch's; `get_group_id` counts from its global offset;
/// `get_global_linear_id` subtracts it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NdRangeReads {
    /// `get_global_size` or `get_num_groups` (`GlobalSize`, `NumWorkgroups`).
    pub extent: bool,
    /// `get_group_id` or `get_global_offset` (`WorkgroupId`, `GlobalOffset`).
    pub origin: bool,
    /// `get_global_linear_id` (`GlobalLinearId`): the chunk's origin and extent both.
    pub linear_id: bool,
}

impl NdRangeReads {
    /// The reads of built-in `b`.
    pub(crate) fn of(b: ir::Bi) -> Self {
        use ir::Bi;
        Self {
            extent: matches!(b, Bi::GlobalSize | Bi::NumGroups),
            origin: matches!(b, Bi::GroupId | Bi::GlobalOffset),
            linear_id: b == Bi::GlobalLinearId,
        }
    }

    /// Both sets of reads.
    pub fn union(self, o: Self) -> Self {
        Self {
            extent: self.extent || o.extent,
            origin: self.origin || o.origin,
            linear_id: self.linear_id || o.linear_id,
        }
    }
}

/// A branch into a loop that footprint emulation redirects to the loop's exit.
#[derive(Debug, Clone)]
pub(crate) struct SkipBranch {
    /// Block index of the loop header (the branch target that is redirected).
    pub header: u32,
    /// Block index of the loop's exit.
    pub exit: u32,
    /// Kernel arguments the loop may read; `None`: any buffer argument.
    pub reads: Option<Box<[u32]>>,
}

#[derive(Debug, Clone)]
pub(crate) struct FuncInfo {
    pub entry: u32,
    pub params: Vec<(u32, u32)>,
    pub ret: Option<(u32, u32)>,
    pub callees: Vec<u32>,
    pub unsupported: Option<String>,
    pub global_atomics: bool,
    pub float_arithmetic: bool,
    pub ndrange_reads: NdRangeReads,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct BlockInfo {
    pub start: u32,
    pub ipdom: u32,
}

/// A loaded, pre-decoded SPIR-V module (see the module docs).
#[derive(Debug, Clone)]
pub struct Module {
    pub(crate) kernels: Vec<KernelInfo>,
    pub(crate) code: Vec<Inst>,
    pub(crate) class: Vec<u8>,
    /// Per instruction, the scalar instructions it stands for ([`Inst::issues`]).
    pub(crate) issues: Vec<u32>,
    pub(crate) blocks: Vec<BlockInfo>,
    pub(crate) funcs: Vec<FuncInfo>,
    pub(crate) phis: Vec<(u32, u32)>,
    pub(crate) nslots: u32,
    pub(crate) consts: Vec<(u32, u64)>,
    /// Bytes of module-scope `__local` variables (offsets from 0 of the local arena).
    pub(crate) local_static: u64,
    /// Bytes of private memory per work-item (function variables, static layout).
    pub(crate) private_size: u64,
    /// Initial contents of the constant/program-scope arena.
    pub(crate) const_data: Vec<u8>,
}

/// Checks the framing of a SPIR-V word stream before rspirv sees it: a 5-word header and
/// instructions whose word counts are at least 1 and stay inside the stream. rspirv 0.12
/// indexes past the end of the stream (a panic, e.g. in `Decoder::string`) when an
/// instruction's word count runs beyond it (found by `fuzz/fuzz_targets/spirv_load.rs`).
fn check_stream(words: &[u32]) -> Result<(), EmuError> {
    if words.len() < 5 {
        return Err(e("SPIR-V parse: shorter than its header"));
    }
    let mut i = 5;
    while i < words.len() {
        let n = (words[i] >> 16) as usize;
        if n == 0 || i + n > words.len() {
            return Err(e(format!(
                "SPIR-V parse: instruction at word {i} has a bad word count {n}"
            )));
        }
        i += n;
    }
    Ok(())
}

impl Module {
    /// Loads and pre-decodes a SPIR-V module given as 32-bit words.
    ///
    /// Errors: [`EmuError::Malformed`] for a module that cannot be parsed or decoded,
    /// [`EmuError::Unsupported`] for module-wide constructs outside the emulator's scope.
    /// Kernels that use unsupported features (images, pipes, printf, device-side enqueue,
    /// ...) load, and report the feature by name when emulated.
    pub fn load(words: &[u32]) -> Result<Module, EmuError> {
        check_stream(words)?;
        // rspirv can panic on some malformed inputs: contain it here.
        std::panic::catch_unwind(|| {
            let m = rspirv::dr::load_words(words).map_err(|x| e(format!("SPIR-V parse: {x}")))?;
            Self::from_dr(&m)
        })
        .unwrap_or_else(|_| Err(e("SPIR-V parser failed on a malformed module")))
    }

    /// Kernel names in module order.
    pub fn kernel_names(&self) -> Vec<String> {
        self.kernels.iter().map(|k| k.name.clone()).collect()
    }

    /// Kernel description by name.
    pub fn kernel(&self, name: &str) -> Option<&KernelInfo> {
        self.kernels.iter().find(|k| k.name == name)
    }
}
