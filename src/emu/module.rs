//! SPIR-V loader of the mini-emulator (DESIGN.md §5): parses an OpenCL (Kernel capability)
//! SPIR-V module with `rspirv`, lays out types, allocates a register slot range per SSA
//! value, pre-decodes every instruction into a compact `Inst` with resolved operand slots,
//! builds each function's CFG and computes immediate post-dominators (the reconvergence
//! points of the SIMT stack, Panwar et al. §IV-C).
//!
//! OpenCL SPIR-V control flow is unstructured, so merge annotations are not relied upon.
//! Built-ins are `Input` variables decorated `BuiltIn`.

#![allow(clippy::type_complexity, clippy::needless_range_loop)]

use super::cfg::ipdoms;
use super::EmuError;
use rspirv::dr::{self, Operand};
use rspirv::spirv;
use spirv::{BuiltIn, Decoration, Op, StorageClass};
use std::collections::HashMap;

/// Scalar kinds of register leaves. Integers are held zero-extended to their width in a
/// `u64`; floats as their bit pattern; pointers as 64-bit tagged addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sc {
    B1,
    I8,
    I16,
    I32,
    I64,
    F16,
    F32,
    F64,
}

impl Sc {
    /// Size in memory, bytes.
    pub(crate) fn bytes(self) -> u32 {
        match self {
            Sc::B1 | Sc::I8 => 1,
            Sc::I16 | Sc::F16 => 2,
            Sc::I32 | Sc::F32 => 4,
            Sc::I64 | Sc::F64 => 8,
        }
    }
    /// Width in bits of the value.
    pub(crate) fn bits(self) -> u32 {
        match self {
            Sc::B1 => 1,
            s => s.bytes() * 8,
        }
    }
    pub(crate) fn is_float(self) -> bool {
        matches!(self, Sc::F16 | Sc::F32 | Sc::F64)
    }
}

/// Pointer tags (bits 60..63 of a pointer value). Offsets are in bits 0..39; for global
/// buffers the argument index is in bits 40..59.
pub(crate) const TAG_SHIFT: u32 = 60;
pub(crate) const TAG_GLOBAL: u64 = 1;
pub(crate) const TAG_LOCAL: u64 = 2;
pub(crate) const TAG_PRIVATE: u64 = 3;
pub(crate) const TAG_CONST: u64 = 4;
pub(crate) const BUF_SHIFT: u32 = 40;
pub(crate) const OFF_MASK: u64 = (1u64 << BUF_SHIFT) - 1;

/// Block index meaning "function exit" (virtual post-dominator root).
pub(crate) const EXIT: u32 = u32::MAX;

#[derive(Debug, Clone)]
enum Ty {
    Void,
    Bool,
    Int(u32),
    Float(u32),
    Vector(u32, u32),
    Array(u32, u64),
    Struct(Vec<u32>, bool),
    Pointer(StorageClass, u32),
    Function,
    Opaque(&'static str),
}

/// Binary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    IAdd,
    ISub,
    IMul,
    UDiv,
    SDiv,
    UMod,
    SRem,
    SMod,
    Shl,
    LShr,
    AShr,
    Or,
    Xor,
    And,
    FAdd,
    FSub,
    FMul,
    FDiv,
    FRem,
    FMod,
    IEq,
    INe,
    UGt,
    UGe,
    ULt,
    ULe,
    SGt,
    SGe,
    SLt,
    SLe,
    FOEq,
    FONe,
    FOLt,
    FOGt,
    FOLe,
    FOGe,
    FUEq,
    FUNe,
    FULt,
    FUGt,
    FULe,
    FUGe,
    FOrd,
    FUnord,
    LAnd,
    LOr,
    LEq,
    LNe,
}

/// Unary operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UnOp {
    Not,
    SNeg,
    FNeg,
    LNot,
    IsNan,
    IsInf,
    IsFinite,
    IsNormal,
    SignBit,
    BitCount,
    BitReverse,
}

/// Conversions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConvOp {
    FToU,
    FToS,
    SToF,
    UToF,
    UConv,
    SConv,
    FConv,
    SatSToU,
    SatUToS,
}

/// Rounding modes of conversions (FPRoundingMode decoration).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Round {
    Default,
    Rte,
    Rtz,
    Rtp,
    Rtn,
}

/// Atomic read-modify-write operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtomOp {
    Load,
    Store,
    Xchg,
    CmpXchg,
    Inc,
    Dec,
    Add,
    Sub,
    SMin,
    UMin,
    SMax,
    UMax,
    And,
    Or,
    Xor,
    FlagTestSet,
    FlagClear,
}

/// Work-item built-ins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Bi {
    GlobalId,
    LocalId,
    GroupId,
    NumGroups,
    GlobalSize,
    LocalSize,
    EnqueuedLocalSize,
    GlobalOffset,
    WorkDim,
    LocalIndex,
    GlobalLinearId,
    SubgroupSize,
    SubgroupMaxSize,
    NumSubgroups,
    SubgroupId,
    SubgroupLocalId,
}

/// Instruction classes of the statistics (indices into the class counters).
pub(crate) mod cls {
    pub const INT: u8 = 0;
    pub const FP32: u8 = 1;
    pub const FP64: u8 = 2;
    pub const SPECIAL: u8 = 3;
    pub const CONV: u8 = 4;
    pub const BRANCH: u8 = 5;
    pub const BARRIER: u8 = 6;
    pub const ATOMIC: u8 = 7;
    pub const MEMORY: u8 = 8;
    pub const OTHER: u8 = 9;
    /// Not counted (lifetime markers, no-ops).
    pub const NONE: u8 = 10;
}

/// A range of phi copies `(dst slot, src slot)` in [`Module::phis`].
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PhiRange {
    pub start: u32,
    pub len: u32,
}

/// Pre-decoded instruction with resolved register slots. Vector operations carry their
/// component count `n`; the components of a value occupy `n` consecutive slots.
#[derive(Debug, Clone)]
pub(crate) enum Inst {
    Bin {
        op: BinOp,
        k: Sc,
        n: u32,
        d: u32,
        a: u32,
        b: u32,
    },
    /// Shift/binary with a scalar `b` broadcast (VectorTimesScalar).
    VecTimesScalar {
        k: Sc,
        n: u32,
        d: u32,
        a: u32,
        b: u32,
    },
    Un {
        op: UnOp,
        k: Sc,
        n: u32,
        d: u32,
        a: u32,
    },
    Conv {
        op: ConvOp,
        from: Sc,
        to: Sc,
        n: u32,
        d: u32,
        a: u32,
        sat: bool,
        round: Round,
    },
    Select {
        n: u32,
        d: u32,
        c: u32,
        cvec: bool,
        a: u32,
        b: u32,
    },
    Copy {
        d: u32,
        s: u32,
        n: u32,
    },
    Construct {
        d: u32,
        parts: Box<[(u32, u32)]>,
    },
    Shuffle {
        d: u32,
        srcs: Box<[u32]>,
    },
    ExtractDyn {
        d: u32,
        v: u32,
        n: u32,
        idx: u32,
        ik: Sc,
    },
    InsertDyn {
        d: u32,
        v: u32,
        n: u32,
        x: u32,
        idx: u32,
        ik: Sc,
    },
    Repack {
        d: u32,
        s: u32,
        from: Box<[Sc]>,
        to: Box<[Sc]>,
    },
    Dot {
        k: Sc,
        n: u32,
        d: u32,
        a: u32,
        b: u32,
    },
    AnyAll {
        all: bool,
        n: u32,
        d: u32,
        a: u32,
    },
    PtrChain {
        d: u32,
        base: u32,
        off: i64,
        terms: Box<[(u32, i64, Sc)]>,
    },
    Load {
        d: u32,
        p: u32,
        leaves: Box<[(u32, Sc)]>,
        size: u32,
    },
    Store {
        p: u32,
        v: u32,
        leaves: Box<[(u32, Sc)]>,
        size: u32,
    },
    CopyMem {
        dst: u32,
        src: u32,
        size: u64,
        size_slot: Option<(u32, Sc)>,
    },
    Atomic {
        op: AtomOp,
        k: Sc,
        d: Option<u32>,
        p: u32,
        v: u32,
        cmp: u32,
    },
    Ext {
        op: spirv::CLOp,
        k: Sc,
        n: u32,
        d: u32,
        args: [u32; 3],
        /// Kind of the second argument where it differs (ldexp/pown/rootn int, shuffle mask).
        k2: Sc,
        /// Bit j set: argument j is a scalar broadcast over the `n` components.
        bcast: u8,
    },
    /// `shuffle(x, mask)` / `shuffle2(x, y, mask)` built-ins.
    DynShuffle {
        d: u32,
        nout: u32,
        a: u32,
        b: Option<u32>,
        nin: u32,
        m: u32,
        mk: Sc,
    },
    /// `async_work_group_(strided_)copy`: `n` elements of `esize` bytes; `stride` applies to
    /// the global side (`dst_local` tells which side is local).
    AsyncCopy {
        d: u32,
        dst: u32,
        src: u32,
        n: u32,
        nk: Sc,
        stride: u32,
        sk: Sc,
        esize: u32,
        dst_local: bool,
    },
    /// `vloadn`/`vload_half[n]`/`vloada_halfn`: `n` elements from `p + off·stride`
    /// elements (`stride` is `n`, except 4 for `vloada_half3`).
    VLoad {
        d: u32,
        off: u32,
        p: u32,
        n: u32,
        /// Elements per step of `off`.
        stride: u32,
        k: Sc,
        half: bool,
    },
    /// `vstoren`/`vstore_half[n][_r]`/`vstorea_halfn[_r]`: `n` elements to `p + off·stride`
    /// elements (`stride` is `n`, except 4 for `vstorea_half3`).
    VStore {
        v: u32,
        off: u32,
        p: u32,
        n: u32,
        /// Elements per step of `off`.
        stride: u32,
        k: Sc,
        half: Option<Round>,
    },
    Builtin {
        d: u32,
        b: Bi,
        n: u32,
        /// Component offset (for an access chain into a built-in vector).
        comp: Option<u32>,
        k: Sc,
    },
    Br {
        t: u32,
        phis: PhiRange,
    },
    BrCond {
        c: u32,
        t: u32,
        f: u32,
        tp: PhiRange,
        fp: PhiRange,
        reconv: u32,
    },
    Switch {
        sel: u32,
        k: Sc,
        default: u32,
        dp: PhiRange,
        cases: Box<[(u64, u32, PhiRange)]>,
        reconv: u32,
    },
    Return {
        v: Option<(u32, u32, u32)>,
    },
    Call {
        func: u32,
        d: Option<(u32, u32)>,
        args: Box<[(u32, u32, u32)]>,
    },
    Barrier,
    Nop,
    Unreachable,
}

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
    /// Loops that footprint emulation jumps over ([`super::dataflow::loop_skips`]): the pc
    /// of each branch that enters one → the redirections it takes.
    pub(crate) loop_skips: HashMap<u32, Vec<SkipBranch>>,
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

fn e(msg: impl Into<String>) -> EmuError {
    EmuError::Malformed(msg.into())
}

fn op_id(o: Option<&Operand>) -> Result<u32, EmuError> {
    match o {
        Some(Operand::IdRef(i))
        | Some(Operand::IdScope(i))
        | Some(Operand::IdMemorySemantics(i)) => Ok(*i),
        other => Err(e(format!("expected an id operand, got {other:?}"))),
    }
}

fn op_lit(o: Option<&Operand>) -> Result<u64, EmuError> {
    match o {
        Some(Operand::LiteralBit32(v)) => Ok(*v as u64),
        Some(Operand::LiteralBit64(v)) => Ok(*v),
        Some(Operand::LiteralExtInstInteger(v)) => Ok(*v as u64),
        other => Err(e(format!("expected a literal operand, got {other:?}"))),
    }
}

struct Ctx {
    types: HashMap<u32, Ty>,
    /// slot of each value id, and its leaf count
    slot: HashMap<u32, (u32, u32)>,
    /// value type of each id
    vty: HashMap<u32, u32>,
    nslots: u32,
    consts: Vec<(u32, u64)>,
    const_vals: HashMap<u32, Vec<u64>>,
    builtin_vars: HashMap<u32, Bi>,
    /// pointers (access chains) into built-in vectors: id -> (builtin, component)
    builtin_ptrs: HashMap<u32, (Bi, u32)>,
    decorations: HashMap<u32, Vec<(Decoration, Vec<Operand>)>>,
    names: HashMap<u32, String>,
    local_static: u64,
    private_size: u64,
    const_data: Vec<u8>,
    cl_ext: Option<u32>,
}

/// Elements between consecutive `offset` steps of a vector load or store of `n` elements:
/// `n`, except for the aligned half forms (`vloada_half3`, `vstorea_half3[_r]`), whose
/// 3-element vectors are laid out like 4-element ones (OpenCL C's vector data load and
/// store functions: they address `p + offset * 4`). Using `n` there made the emulator
/// store `vstorea_half3(v, 1, p)` at `p + 3` instead of `p + 4`, so the write footprint
/// that balance mode reads back from each device missed the last half (piglit's
/// `vstorea_half` offset tests on `float3` and `double3`).
fn aligned_stride(aligned: bool, n: u32) -> u32 {
    if aligned && n == 3 {
        4
    } else {
        n
    }
}

fn align_up(x: u64, a: u64) -> u64 {
    if a <= 1 {
        x
    } else {
        x.div_ceil(a).saturating_mul(a)
    }
}

impl Ctx {
    fn ty(&self, id: u32) -> Result<&Ty, EmuError> {
        self.types
            .get(&id)
            .ok_or_else(|| e(format!("unknown type %{id}")))
    }
    fn size_align(&self, id: u32) -> Result<(u64, u64), EmuError> {
        Ok(match self.ty(id)? {
            Ty::Void | Ty::Function => (0, 1),
            Ty::Bool => (1, 1),
            Ty::Int(w) | Ty::Float(w) => {
                let b = (*w as u64).div_ceil(8).max(1);
                (b, b)
            }
            Ty::Vector(el, n) => {
                let (s, _) = self.size_align(*el)?;
                let n2 = if *n == 3 { 4 } else { *n as u64 };
                (s * n2, s * n2)
            }
            Ty::Array(el, len) => {
                let (s, a) = self.size_align(*el)?;
                (s.saturating_mul(*len), a)
            }
            Ty::Struct(m, packed) => {
                let mut off = 0u64;
                let mut al = 1u64;
                for &t in m {
                    let (s, a) = self.size_align(t)?;
                    let a = if *packed { 1 } else { a };
                    off = align_up(off, a).saturating_add(s);
                    al = al.max(a);
                }
                (align_up(off, al), al)
            }
            Ty::Pointer(..) => (8, 8),
            Ty::Opaque(n) => return Err(EmuError::Unsupported(n.to_string())),
        })
    }
    fn member_offsets(&self, id: u32) -> Result<Vec<u64>, EmuError> {
        match self.ty(id)? {
            Ty::Struct(m, packed) => {
                let mut off = 0u64;
                let mut v = Vec::new();
                for &t in m {
                    let (s, a) = self.size_align(t)?;
                    let a = if *packed { 1 } else { a };
                    off = align_up(off, a);
                    v.push(off);
                    off = off.saturating_add(s);
                }
                Ok(v)
            }
            _ => Err(e("member offsets of a non-struct")),
        }
    }
    fn scalar(&self, id: u32) -> Result<Sc, EmuError> {
        Ok(match self.ty(id)? {
            Ty::Bool => Sc::B1,
            Ty::Int(8) => Sc::I8,
            Ty::Int(16) => Sc::I16,
            Ty::Int(32) => Sc::I32,
            Ty::Int(64) => Sc::I64,
            Ty::Float(16) => Sc::F16,
            Ty::Float(32) => Sc::F32,
            Ty::Float(64) => Sc::F64,
            Ty::Pointer(..) => Sc::I64,
            Ty::Vector(el, _) => self.scalar(*el)?,
            t => return Err(e(format!("not a scalar type: {t:?}"))),
        })
    }
    fn ncomp(&self, id: u32) -> Result<u32, EmuError> {
        Ok(match self.ty(id)? {
            Ty::Vector(_, n) => *n,
            _ => 1,
        })
    }
    /// Leaves (byte offset, scalar kind) of a type, flattened.
    fn leaves(&self, id: u32, base: u64, out: &mut Vec<(u32, Sc)>) -> Result<(), EmuError> {
        if out.len() > 1 << 16 {
            return Err(EmuError::Unsupported(
                "aggregate values larger than 65536 scalars".into(),
            ));
        }
        match self.ty(id)?.clone() {
            Ty::Vector(el, n) => {
                let (s, _) = self.size_align(el)?;
                let k = self.scalar(el)?;
                for i in 0..n as u64 {
                    out.push(((base + i * s) as u32, k));
                }
            }
            Ty::Array(el, len) => {
                let (s, _) = self.size_align(el)?;
                for i in 0..len {
                    self.leaves(el, base + i * s, out)?;
                }
            }
            Ty::Struct(m, _) => {
                let offs = self.member_offsets(id)?;
                for (t, o) in m.iter().zip(offs) {
                    self.leaves(*t, base + o, out)?;
                }
            }
            Ty::Void | Ty::Function => {}
            // Handles (images, samplers, events, ...) are opaque 64-bit values.
            Ty::Opaque(_) => out.push((base as u32, Sc::I64)),
            _ => out.push((base as u32, self.scalar(id)?)),
        }
        Ok(())
    }
    fn leaf_vec(&self, id: u32) -> Result<Vec<(u32, Sc)>, EmuError> {
        let mut v = Vec::new();
        self.leaves(id, 0, &mut v)?;
        Ok(v)
    }
    fn nleaves(&self, id: u32) -> Result<u32, EmuError> {
        Ok(self.leaf_vec(id)?.len() as u32)
    }
    /// Leaf index range of composite member `idx` of type `id`.
    fn member_leaf(&self, id: u32, idx: u64) -> Result<(u32, u32), EmuError> {
        match self.ty(id)?.clone() {
            Ty::Vector(_, n) => {
                if idx >= n as u64 {
                    return Err(e("vector index out of range"));
                }
                Ok((idx as u32, id))
            }
            Ty::Array(el, len) => {
                if idx >= len {
                    return Err(e("array index out of range"));
                }
                Ok((idx as u32 * self.nleaves(el)?, el))
            }
            Ty::Struct(m, _) => {
                let mut acc = 0;
                for (i, t) in m.iter().enumerate() {
                    if i as u64 == idx {
                        return Ok((acc, *t));
                    }
                    acc += self.nleaves(*t)?;
                }
                Err(e("struct index out of range"))
            }
            _ => Err(e("composite index into a scalar")),
        }
    }
    fn elem_type(&self, id: u32) -> Result<u32, EmuError> {
        match self.ty(id)? {
            Ty::Vector(el, _) | Ty::Array(el, _) => Ok(*el),
            _ => Err(e("element type of a non-vector")),
        }
    }
    fn alloc(&mut self, id: u32, ty: u32) -> Result<u32, EmuError> {
        let n = self.nleaves(ty)?.max(1);
        let s = self.nslots;
        self.nslots = self
            .nslots
            .checked_add(n)
            .filter(|x| *x <= 1 << 24)
            .ok_or_else(|| EmuError::Unsupported("more than 16 M register slots".into()))?;
        self.slot.insert(id, (s, n));
        self.vty.insert(id, ty);
        Ok(s)
    }
    /// Slot and component count of a value (an error for an unknown id: malformed input).
    fn sn(&self, id: u32) -> Result<(u32, u32), EmuError> {
        self.slot
            .get(&id)
            .copied()
            .ok_or_else(|| e(format!("use of unknown value %{id}")))
    }
    /// Component count of a value.
    fn n(&self, id: u32) -> Result<u32, EmuError> {
        self.sn(id).map(|x| x.1)
    }
    /// Type id of a value.
    fn vt(&self, id: u32) -> Result<u32, EmuError> {
        self.vty
            .get(&id)
            .copied()
            .ok_or_else(|| e(format!("value %{id} has no type")))
    }
    fn s(&self, id: u32) -> Result<u32, EmuError> {
        self.slot
            .get(&id)
            .map(|x| x.0)
            .ok_or_else(|| e(format!("use of unknown value %{id}")))
    }
    fn deco(&self, id: u32, d: Decoration) -> Option<&Vec<Operand>> {
        self.decorations
            .get(&id)
            .and_then(|v| v.iter().find(|(x, _)| *x == d).map(|(_, o)| o))
    }
    /// Serialises the leaves of constant `id` into bytes.
    fn const_bytes(&self, id: u32, ty: u32, out: &mut [u8]) -> Result<(), EmuError> {
        let vals = self
            .const_vals
            .get(&id)
            .ok_or_else(|| e(format!("initializer %{id} is not a constant")))?;
        let lv = self.leaf_vec(ty)?;
        for ((off, k), v) in lv.iter().zip(vals) {
            let b = k.bytes() as usize;
            let o = *off as usize;
            if o + b <= out.len() {
                out[o..o + b].copy_from_slice(&v.to_le_bytes()[..b]);
            }
        }
        Ok(())
    }
}

fn int_mask(bits: u32) -> u64 {
    if bits >= 64 {
        !0
    } else {
        (1u64 << bits) - 1
    }
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

    fn from_dr(m: &dr::Module) -> Result<Module, EmuError> {
        let mut cx = Ctx {
            types: HashMap::new(),
            slot: HashMap::new(),
            vty: HashMap::new(),
            nslots: 0,
            consts: Vec::new(),
            const_vals: HashMap::new(),
            builtin_vars: HashMap::new(),
            builtin_ptrs: HashMap::new(),
            decorations: HashMap::new(),
            names: HashMap::new(),
            local_static: 0,
            private_size: 0,
            const_data: Vec::new(),
            cl_ext: None,
        };
        for i in &m.ext_inst_imports {
            if let (Some(id), Some(Operand::LiteralString(s))) = (i.result_id, i.operands.first()) {
                if s == "OpenCL.std" {
                    cx.cl_ext = Some(id);
                }
            }
        }
        for a in &m.annotations {
            if a.class.opcode == Op::Decorate {
                if let (Some(Operand::IdRef(t)), Some(Operand::Decoration(d))) =
                    (a.operands.first(), a.operands.get(1))
                {
                    cx.decorations
                        .entry(*t)
                        .or_default()
                        .push((*d, a.operands[2..].to_vec()));
                }
            }
        }
        for n in &m.debug_names {
            if n.class.opcode == Op::Name {
                if let (Some(Operand::IdRef(t)), Some(Operand::LiteralString(s))) =
                    (n.operands.first(), n.operands.get(1))
                {
                    cx.names.insert(*t, s.clone());
                }
            }
        }
        // Types, constants, module-scope variables.
        // A result id defined twice could make a type contain itself (a cycle that the
        // recursive size/leaf walks would follow until the stack overflows: found by
        // fuzz/fuzz_targets/spirv_load.rs); valid SPIR-V defines each id once.
        let mut defined = std::collections::HashSet::new();
        for i in &m.types_global_values {
            let rid = i.result_id.unwrap_or(0);
            if i.result_id.is_some() && !defined.insert(rid) {
                return Err(e(format!("result id %{rid} is defined twice")));
            }
            let ops = &i.operands;
            match i.class.opcode {
                Op::TypeVoid => {
                    cx.types.insert(rid, Ty::Void);
                }
                Op::TypeBool => {
                    cx.types.insert(rid, Ty::Bool);
                }
                Op::TypeInt => {
                    cx.types.insert(rid, Ty::Int(op_lit(ops.first())? as u32));
                }
                Op::TypeFloat => {
                    cx.types.insert(rid, Ty::Float(op_lit(ops.first())? as u32));
                }
                Op::TypeVector => {
                    let el = op_id(ops.first())?;
                    let n = op_lit(ops.get(1))? as u32;
                    if !matches!(
                        cx.types.get(&el),
                        Some(Ty::Int(_) | Ty::Float(_) | Ty::Bool)
                    ) || !(1..=16).contains(&n)
                    {
                        return Err(e("bad vector type"));
                    }
                    cx.types.insert(rid, Ty::Vector(el, n));
                }
                Op::TypeArray => {
                    let el = op_id(ops.first())?;
                    if !cx.types.contains_key(&el) {
                        return Err(e("array of an undefined type"));
                    }
                    let len_id = op_id(ops.get(1))?;
                    let len = cx
                        .const_vals
                        .get(&len_id)
                        .and_then(|v| v.first().copied())
                        .ok_or_else(|| e("array length is not a constant"))?;
                    cx.types.insert(rid, Ty::Array(el, len));
                }
                Op::TypeStruct => {
                    let mem: Result<Vec<u32>, _> = ops.iter().map(|o| op_id(Some(o))).collect();
                    // Members must be defined before use (no cycles).
                    if mem
                        .as_ref()
                        .is_ok_and(|m| m.iter().any(|t| !cx.types.contains_key(t)))
                    {
                        return Err(e("struct member of an undefined type"));
                    }
                    let packed = cx.deco(rid, Decoration::CPacked).is_some();
                    cx.types.insert(rid, Ty::Struct(mem?, packed));
                }
                Op::TypePointer => {
                    let sc = match ops.first() {
                        Some(Operand::StorageClass(s)) => *s,
                        _ => return Err(e("bad OpTypePointer")),
                    };
                    cx.types.insert(rid, Ty::Pointer(sc, op_id(ops.get(1))?));
                }
                Op::TypeFunction => {
                    cx.types.insert(rid, Ty::Function);
                }
                Op::TypeImage | Op::TypeSampledImage => {
                    cx.types.insert(rid, Ty::Opaque("images"));
                }
                Op::TypeSampler => {
                    cx.types.insert(rid, Ty::Opaque("samplers"));
                }
                Op::TypePipe | Op::TypeReserveId | Op::TypePipeStorage => {
                    cx.types.insert(rid, Ty::Opaque("pipes"));
                }
                Op::TypeQueue | Op::TypeDeviceEvent => {
                    cx.types.insert(rid, Ty::Opaque("device-side enqueue"));
                }
                Op::TypeEvent => {
                    cx.types.insert(rid, Ty::Int(64));
                }
                Op::TypeOpaque => {
                    cx.types.insert(rid, Ty::Opaque("opaque types"));
                }
                Op::TypeForwardPointer => {}
                Op::Constant | Op::SpecConstant => {
                    let ty = i.result_type.unwrap_or(0);
                    let k = cx.scalar(ty)?;
                    let v = op_lit(ops.first())? & int_mask(k.bits());
                    let s = cx.alloc(rid, ty)?;
                    cx.consts.push((s, v));
                    cx.const_vals.insert(rid, vec![v]);
                }
                Op::ConstantTrue
                | Op::ConstantFalse
                | Op::SpecConstantTrue
                | Op::SpecConstantFalse => {
                    let ty = i.result_type.unwrap_or(0);
                    let v =
                        matches!(i.class.opcode, Op::ConstantTrue | Op::SpecConstantTrue) as u64;
                    let s = cx.alloc(rid, ty)?;
                    cx.consts.push((s, v));
                    cx.const_vals.insert(rid, vec![v]);
                }
                Op::ConstantNull | Op::Undef => {
                    let ty = i.result_type.unwrap_or(0);
                    let n = cx.nleaves(ty)?;
                    let s = cx.alloc(rid, ty)?;
                    for j in 0..n {
                        cx.consts.push((s + j, 0));
                    }
                    cx.const_vals.insert(rid, vec![0; n as usize]);
                }
                Op::ConstantComposite | Op::SpecConstantComposite => {
                    let ty = i.result_type.unwrap_or(0);
                    let mut vals = Vec::new();
                    for o in ops {
                        let c = op_id(Some(o))?;
                        vals.extend(
                            cx.const_vals
                                .get(&c)
                                .ok_or_else(|| e("composite of non-constants"))?
                                .iter()
                                .copied(),
                        );
                    }
                    let s = cx.alloc(rid, ty)?;
                    for (j, v) in vals.iter().enumerate() {
                        cx.consts.push((s + j as u32, *v));
                    }
                    cx.const_vals.insert(rid, vals);
                }
                Op::ConstantSampler => {
                    // Only image built-ins use samplers, and those are reported as
                    // unsupported when a kernel reaches them.
                    let ty = i.result_type.unwrap_or(0);
                    let s = cx.alloc(rid, ty)?;
                    cx.consts.push((s, 0));
                    cx.const_vals.insert(rid, vec![0]);
                }
                Op::SpecConstantOp => {
                    return Err(EmuError::Unsupported("OpSpecConstantOp".into()));
                }
                Op::Variable => {
                    let pty = i.result_type.unwrap_or(0);
                    let sc = match ops.first() {
                        Some(Operand::StorageClass(s)) => *s,
                        _ => return Err(e("bad OpVariable")),
                    };
                    let pointee = match cx.ty(pty)? {
                        Ty::Pointer(_, p) => *p,
                        _ => return Err(e("variable of non-pointer type")),
                    };
                    if sc == StorageClass::Input {
                        let b = match cx.deco(rid, Decoration::BuiltIn).and_then(|o| o.first()) {
                            Some(Operand::BuiltIn(b)) => *b,
                            _ => {
                                return Err(EmuError::Unsupported(
                                    "Input variable without BuiltIn".into(),
                                ))
                            }
                        };
                        let bi = match b {
                            BuiltIn::GlobalInvocationId => Bi::GlobalId,
                            BuiltIn::LocalInvocationId => Bi::LocalId,
                            BuiltIn::WorkgroupId => Bi::GroupId,
                            BuiltIn::NumWorkgroups => Bi::NumGroups,
                            BuiltIn::GlobalSize => Bi::GlobalSize,
                            BuiltIn::WorkgroupSize => Bi::LocalSize,
                            BuiltIn::EnqueuedWorkgroupSize => Bi::EnqueuedLocalSize,
                            BuiltIn::GlobalOffset => Bi::GlobalOffset,
                            BuiltIn::WorkDim => Bi::WorkDim,
                            BuiltIn::LocalInvocationIndex => Bi::LocalIndex,
                            BuiltIn::GlobalLinearId => Bi::GlobalLinearId,
                            BuiltIn::SubgroupSize => Bi::SubgroupSize,
                            BuiltIn::SubgroupMaxSize => Bi::SubgroupMaxSize,
                            BuiltIn::NumSubgroups | BuiltIn::NumEnqueuedSubgroups => {
                                Bi::NumSubgroups
                            }
                            BuiltIn::SubgroupId => Bi::SubgroupId,
                            BuiltIn::SubgroupLocalInvocationId => Bi::SubgroupLocalId,
                            other => {
                                return Err(EmuError::Unsupported(format!("built-in {other:?}")))
                            }
                        };
                        cx.builtin_vars.insert(rid, bi);
                        continue;
                    }
                    let (size, align) = cx.size_align(pointee)?;
                    let (tag, off) = match sc {
                        StorageClass::Workgroup => {
                            let off = align_up(cx.local_static, align.max(4));
                            cx.local_static = off.saturating_add(size);
                            (TAG_LOCAL, off)
                        }
                        StorageClass::CrossWorkgroup | StorageClass::UniformConstant => {
                            let off = align_up(cx.const_data.len() as u64, align.max(8));
                            let end = (off + size) as usize;
                            if end > (64 << 20) {
                                return Err(EmuError::Unsupported(
                                    "program-scope data over 64 MiB".into(),
                                ));
                            }
                            cx.const_data.resize(end, 0);
                            if let Some(init) = ops.get(1) {
                                let init = op_id(Some(init))?;
                                let mut buf = vec![0u8; size as usize];
                                cx.const_bytes(init, pointee, &mut buf)?;
                                cx.const_data[off as usize..end].copy_from_slice(&buf);
                            }
                            (TAG_CONST, off)
                        }
                        StorageClass::Private | StorageClass::Function => {
                            // Program-scope private variables: per work-item copy; we place
                            // them in the private arena (initialisers unsupported).
                            if ops.get(1).is_some() {
                                return Err(EmuError::Unsupported(
                                    "initialised private globals".into(),
                                ));
                            }
                            let off = align_up(cx.private_size, align.max(8));
                            cx.private_size = off.saturating_add(size);
                            (TAG_PRIVATE, off)
                        }
                        other => {
                            return Err(EmuError::Unsupported(format!("storage class {other:?}")))
                        }
                    };
                    let s = cx.alloc(rid, pty)?;
                    let v = (tag << TAG_SHIFT) | off;
                    cx.consts.push((s, v));
                    cx.const_vals.insert(rid, vec![v]);
                }
                Op::Line | Op::NoLine | Op::ExtInst => {}
                other => {
                    return Err(EmuError::Unsupported(format!("module-scope {other:?}")));
                }
            }
        }

        // Function ids → indices; allocate parameter and result slots first.
        let mut fidx: HashMap<u32, u32> = HashMap::new();
        for (i, f) in m.functions.iter().enumerate() {
            let id = f
                .def
                .as_ref()
                .and_then(|d| d.result_id)
                .ok_or_else(|| e("function without id"))?;
            fidx.insert(id, i as u32);
        }
        let mut funcs = Vec::new();
        // Block indices.
        let mut bidx: HashMap<u32, u32> = HashMap::new();
        let mut nblocks = 0u32;
        for f in &m.functions {
            for b in &f.blocks {
                let l = b
                    .label
                    .as_ref()
                    .and_then(|l| l.result_id)
                    .ok_or_else(|| e("block without label"))?;
                // a label defined twice would map blocks of one function into another's
                // range (out-of-bounds index: fuzzer find)
                if bidx.insert(l, nblocks).is_some() {
                    return Err(e(format!("block label %{l} is defined twice")));
                }
                nblocks += 1;
            }
        }
        // Allocate slots for every result id in functions (values are global in SPIR-V).
        for f in &m.functions {
            let def = f.def.as_ref().ok_or_else(|| e("function without def"))?;
            let rty = def.result_type.unwrap_or(0);
            let mut params = Vec::new();
            for p in &f.parameters {
                let (id, ty) = (p.result_id.unwrap_or(0), p.result_type.unwrap_or(0));
                let s = cx.alloc(id, ty)?;
                params.push((s, cx.n(id)?));
            }
            let ret = if matches!(cx.ty(rty)?, Ty::Void) {
                None
            } else {
                let n = cx.nleaves(rty)?.max(1);
                let s = cx.nslots;
                cx.nslots += n;
                Some((s, n))
            };
            funcs.push(FuncInfo {
                entry: 0,
                params,
                ret,
                callees: Vec::new(),
                unsupported: None,
                global_atomics: false,
            });
            for b in &f.blocks {
                for i in &b.instructions {
                    if let (Some(id), Some(ty)) = (i.result_id, i.result_type) {
                        if i.class.opcode == Op::Variable {
                            // Private variable: static offset in the private arena (no
                            // recursion in OpenCL C, so one frame per function suffices).
                            let pointee = match cx.ty(ty)? {
                                Ty::Pointer(_, p) => *p,
                                _ => return Err(e("variable of non-pointer type")),
                            };
                            let (size, align) = cx.size_align(pointee)?;
                            let off = align_up(cx.private_size, align.max(8));
                            cx.private_size = off.saturating_add(size);
                            let s = cx.alloc(id, ty)?;
                            cx.consts.push((s, (TAG_PRIVATE << TAG_SHIFT) | off));
                            continue;
                        }
                        if matches!(cx.ty(ty), Ok(Ty::Void)) {
                            continue;
                        }
                        if cx.types.contains_key(&ty) {
                            cx.alloc(id, ty)?;
                        }
                    }
                }
            }
        }

        let mut code: Vec<Inst> = Vec::new();
        let mut class: Vec<u8> = Vec::new();
        let mut blocks = vec![
            BlockInfo {
                start: 0,
                ipdom: EXIT
            };
            nblocks as usize
        ];
        let mut phis: Vec<(u32, u32)> = Vec::new();
        // Phi table: block label -> list of (phi result id, [(value id, pred label)])
        let mut phi_tab: HashMap<u32, Vec<(u32, Vec<(u32, u32)>)>> = HashMap::new();
        for f in &m.functions {
            for b in &f.blocks {
                let l = b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
                for i in &b.instructions {
                    if i.class.opcode == Op::Phi {
                        let mut inc = Vec::new();
                        for p in i.operands.chunks(2) {
                            inc.push((op_id(p.first())?, op_id(p.get(1))?));
                        }
                        phi_tab
                            .entry(l)
                            .or_default()
                            .push((i.result_id.unwrap_or(0), inc));
                    }
                }
            }
        }

        for (fi, f) in m.functions.iter().enumerate() {
            if f.blocks.is_empty() {
                // A declaration (import): callable only if something links it, which
                // nothing does here.
                let id = f.def.as_ref().and_then(|d| d.result_id).unwrap_or(0);
                let name = cx
                    .names
                    .get(&id)
                    .cloned()
                    .unwrap_or_else(|| format!("%{id}"));
                funcs[fi].unsupported = Some(format!("call to the external function {name}"));
                continue;
            }
            let mut dec = Decoder {
                cx: &mut cx,
                code: &mut code,
                class: &mut class,
                phis: &mut phis,
                phi_tab: &phi_tab,
                bidx: &bidx,
                fidx: &fidx,
                funcs_ret: None,
                unsupported: None,
                callees: Vec::new(),
                global_atomics: false,
            };
            dec.funcs_ret = funcs[fi].ret;
            // successors for post-dominators
            let first = *f
                .blocks
                .first()
                .and_then(|b| b.label.as_ref())
                .and_then(|l| l.result_id)
                .and_then(|l| bidx.get(&l))
                .ok_or_else(|| e("function without blocks"))?;
            let nb = f.blocks.len();
            let mut succ: Vec<Vec<usize>> = vec![Vec::new(); nb];
            for (bi, b) in f.blocks.iter().enumerate() {
                let gb = first + bi as u32;
                blocks[gb as usize].start = dec.code.len() as u32;
                let cur = b.label.as_ref().and_then(|l| l.result_id).unwrap_or(0);
                for i in &b.instructions {
                    dec.decode(i, cur)?;
                }
                if let Some(t) = b.instructions.last() {
                    for o in &t.operands {
                        if let Operand::IdRef(x) = o {
                            if matches!(
                                t.class.opcode,
                                Op::Branch | Op::BranchConditional | Op::Switch
                            ) {
                                if let Some(&g) = bidx.get(x) {
                                    if g >= first && ((g - first) as usize) < nb {
                                        succ[bi].push((g - first) as usize);
                                    }
                                }
                            }
                        }
                    }
                }
            }
            let unsupported = dec.unsupported.take();
            let global_atomics = dec.global_atomics;
            let callees = std::mem::take(&mut dec.callees);
            let ipd = ipdoms(&succ);
            for (bi, p) in ipd.iter().enumerate() {
                blocks[(first as usize) + bi].ipdom = match p {
                    Some(x) => first + *x as u32,
                    None => EXIT,
                };
            }
            funcs[fi].entry = first;
            funcs[fi].unsupported = unsupported;
            funcs[fi].global_atomics = global_atomics;
            funcs[fi].callees = callees;
        }
        // Fill reconvergence points now that ipdoms are known.
        for f in 0..funcs.len() {
            let _ = f;
        }
        let mut starts: Vec<(u32, u32)> = blocks
            .iter()
            .enumerate()
            .map(|(i, b)| (b.start, i as u32))
            .collect();
        starts.sort();
        for pc in 0..code.len() {
            if let Inst::BrCond { reconv, .. } | Inst::Switch { reconv, .. } = &mut code[pc] {
                // block containing pc: the last start <= pc
                let pos = starts.partition_point(|&(s, _)| s <= pc as u32);
                // several blocks can't start at the same pc (each has a terminator)
                let b = starts[pos - 1].1;
                *reconv = blocks[b as usize].ipdom;
            }
        }

        // Kernels.
        let mut kernels = Vec::new();
        for ep in &m.entry_points {
            let fid = op_id(ep.operands.get(1))?;
            let name = match ep.operands.get(2) {
                Some(Operand::LiteralString(s)) => s.clone(),
                _ => return Err(e("entry point without name")),
            };
            let fi = *fidx
                .get(&fid)
                .ok_or_else(|| e("entry point to unknown function"))?;
            let f = &m.functions[fi as usize];
            let mut args = Vec::new();
            for p in &f.parameters {
                let (id, ty) = (p.result_id.unwrap_or(0), p.result_type.unwrap_or(0));
                let byval = cx
                    .decorations
                    .get(&id)
                    .map(|v| {
                        v.iter().any(|(d, o)| {
                            *d == Decoration::FuncParamAttr
                                && matches!(
                                    o.first(),
                                    Some(Operand::FunctionParameterAttribute(
                                        spirv::FunctionParameterAttribute::ByVal
                                    ))
                                )
                        })
                    })
                    .unwrap_or(false);
                let (kind, size) = match cx.ty(ty)?.clone() {
                    Ty::Pointer(sc, pointee) => match sc {
                        StorageClass::CrossWorkgroup | StorageClass::Generic => {
                            (ArgKind::Global, 8)
                        }
                        StorageClass::UniformConstant => (ArgKind::Constant, 8),
                        StorageClass::Workgroup => (ArgKind::Local, 8),
                        StorageClass::Function if byval => {
                            (ArgKind::ByVal, cx.size_align(pointee)?.0 as u32)
                        }
                        other => {
                            return Err(EmuError::Unsupported(format!(
                                "kernel argument in {other:?}"
                            )))
                        }
                    },
                    Ty::Opaque(n) => {
                        kernels.push(KernelInfo {
                            name: name.clone(),
                            args: Vec::new(),
                            func: fi,
                            unsupported: Some(n.to_string()),
                            global_atomics: false,
                            loop_skips: HashMap::new(),
                        });
                        args.clear();
                        break;
                    }
                    _ => (ArgKind::Scalar, cx.size_align(ty)?.0 as u32),
                };
                let slot = cx.s(id)?;
                let leaves = cx.leaf_vec(ty)?;
                args.push(ArgInfo {
                    kind,
                    size,
                    name: cx.names.get(&id).cloned().unwrap_or_default(),
                    slot,
                    leaves,
                });
            }
            if kernels
                .last()
                .map(|k: &KernelInfo| k.name == name)
                .unwrap_or(false)
            {
                continue;
            }
            // Unsupported features of the kernel and its callees.
            let mut seen = vec![false; funcs.len()];
            let mut stack = vec![fi];
            let mut unsup = None;
            let mut global_atomics = false;
            while let Some(x) = stack.pop() {
                if std::mem::replace(&mut seen[x as usize], true) {
                    continue;
                }
                global_atomics |= funcs[x as usize].global_atomics;
                if unsup.is_none() {
                    unsup = funcs[x as usize].unsupported.clone();
                }
                stack.extend(funcs[x as usize].callees.iter().copied());
            }
            let loop_skips = m
                .functions
                .iter()
                .find(|g| g.def.as_ref().and_then(|d| d.result_id) == Some(fid))
                .map(|g| skip_branches(g, &bidx, &blocks, &code, m))
                .unwrap_or_default();
            kernels.push(KernelInfo {
                name,
                args,
                func: fi,
                unsupported: unsup,
                global_atomics,
                loop_skips,
            });
        }
        Ok(Module {
            kernels,
            code,
            class,
            blocks,
            funcs,
            phis,
            nslots: cx.nslots,
            consts: cx.consts,
            local_static: cx.local_static,
            private_size: cx.private_size,
            const_data: cx.const_data,
        })
    }
}

/// The loop skips of kernel function `f` keyed by the pc of each entering branch.
fn skip_branches(
    f: &dr::Function,
    bidx: &HashMap<u32, u32>,
    blocks: &[BlockInfo],
    code: &[Inst],
    m: &dr::Module,
) -> HashMap<u32, Vec<SkipBranch>> {
    let mut out: HashMap<u32, Vec<SkipBranch>> = HashMap::new();
    for s in super::dataflow::loop_skips(m, f) {
        let (Some(&header), Some(&exit)) = (bidx.get(&s.header), bidx.get(&s.exit)) else {
            continue;
        };
        for p in &s.entries {
            let Some(b) = bidx.get(p).and_then(|b| blocks.get(*b as usize)) else {
                continue;
            };
            // the block's terminator: its first branch
            let Some(pc) = (b.start as usize..code.len()).find(|pc| {
                matches!(
                    code[*pc],
                    Inst::Br { .. }
                        | Inst::BrCond { .. }
                        | Inst::Switch { .. }
                        | Inst::Return { .. }
                        | Inst::Unreachable
                )
            }) else {
                continue;
            };
            if matches!(code[pc], Inst::Br { .. } | Inst::BrCond { .. }) {
                out.entry(pc as u32).or_default().push(SkipBranch {
                    header,
                    exit,
                    reads: s.reads.clone().map(Vec::into_boxed_slice),
                });
            }
        }
    }
    out
}


struct Decoder<'a> {
    cx: &'a mut Ctx,
    code: &'a mut Vec<Inst>,
    class: &'a mut Vec<u8>,
    phis: &'a mut Vec<(u32, u32)>,
    phi_tab: &'a HashMap<u32, Vec<(u32, Vec<(u32, u32)>)>>,
    bidx: &'a HashMap<u32, u32>,
    fidx: &'a HashMap<u32, u32>,
    funcs_ret: Option<(u32, u32)>,
    unsupported: Option<String>,
    callees: Vec<u32>,
    global_atomics: bool,
}

impl<'a> Decoder<'a> {
    fn push(&mut self, i: Inst, c: u8) {
        self.code.push(i);
        self.class.push(c);
    }
    fn unsup(&mut self, what: impl Into<String>) {
        if self.unsupported.is_none() {
            self.unsupported = Some(what.into());
        }
        self.push(Inst::Unreachable, cls::NONE);
    }
    fn phi_range(&mut self, from: u32, to: u32) -> Result<PhiRange, EmuError> {
        let start = self.phis.len() as u32;
        if let Some(list) = self.phi_tab.get(&to) {
            for (res, inc) in list {
                let Some((v, _)) = inc.iter().find(|(_, p)| *p == from) else {
                    continue;
                };
                let (ds, n) = *self.cx.slot.get(res).ok_or_else(|| e("phi without slot"))?;
                let ss = self.cx.s(*v)?;
                for j in 0..n {
                    self.phis.push((ds + j, ss + j));
                }
            }
        }
        Ok(PhiRange {
            start,
            len: self.phis.len() as u32 - start,
        })
    }
    fn block(&self, id: u32) -> Result<u32, EmuError> {
        self.bidx
            .get(&id)
            .copied()
            .ok_or_else(|| e(format!("branch to unknown block %{id}")))
    }
    fn fclass(k: Sc) -> u8 {
        match k {
            Sc::F64 => cls::FP64,
            Sc::F32 | Sc::F16 => cls::FP32,
            _ => cls::INT,
        }
    }
    fn rounding(&self, id: u32) -> Round {
        match self
            .cx
            .deco(id, Decoration::FPRoundingMode)
            .and_then(|o| o.first())
        {
            Some(Operand::FPRoundingMode(m)) => match m {
                spirv::FPRoundingMode::RTE => Round::Rte,
                spirv::FPRoundingMode::RTZ => Round::Rtz,
                spirv::FPRoundingMode::RTP => Round::Rtp,
                spirv::FPRoundingMode::RTN => Round::Rtn,
            },
            _ => Round::Default,
        }
    }

    fn decode(&mut self, i: &dr::Instruction, cur: u32) -> Result<(), EmuError> {
        let o = &i.operands;
        let rid = i.result_id.unwrap_or(0);
        let rty = i.result_type.unwrap_or(0);
        let opc = i.class.opcode;
        macro_rules! id {
            ($n:expr) => {
                op_id(o.get($n))?
            };
        }
        macro_rules! sl {
            ($n:expr) => {
                self.cx.s(op_id(o.get($n))?)?
            };
        }
        let bin = |op: Op| -> Option<BinOp> {
            Some(match op {
                Op::IAdd => BinOp::IAdd,
                Op::ISub => BinOp::ISub,
                Op::IMul => BinOp::IMul,
                Op::UDiv => BinOp::UDiv,
                Op::SDiv => BinOp::SDiv,
                Op::UMod => BinOp::UMod,
                Op::SRem => BinOp::SRem,
                Op::SMod => BinOp::SMod,
                Op::ShiftLeftLogical => BinOp::Shl,
                Op::ShiftRightLogical => BinOp::LShr,
                Op::ShiftRightArithmetic => BinOp::AShr,
                Op::BitwiseOr => BinOp::Or,
                Op::BitwiseXor => BinOp::Xor,
                Op::BitwiseAnd => BinOp::And,
                Op::FAdd => BinOp::FAdd,
                Op::FSub => BinOp::FSub,
                Op::FMul => BinOp::FMul,
                Op::FDiv => BinOp::FDiv,
                Op::FRem => BinOp::FRem,
                Op::FMod => BinOp::FMod,
                Op::IEqual => BinOp::IEq,
                Op::INotEqual => BinOp::INe,
                Op::UGreaterThan => BinOp::UGt,
                Op::UGreaterThanEqual => BinOp::UGe,
                Op::ULessThan => BinOp::ULt,
                Op::ULessThanEqual => BinOp::ULe,
                Op::SGreaterThan => BinOp::SGt,
                Op::SGreaterThanEqual => BinOp::SGe,
                Op::SLessThan => BinOp::SLt,
                Op::SLessThanEqual => BinOp::SLe,
                Op::FOrdEqual => BinOp::FOEq,
                Op::FOrdNotEqual | Op::LessOrGreater => BinOp::FONe,
                Op::FOrdLessThan => BinOp::FOLt,
                Op::FOrdGreaterThan => BinOp::FOGt,
                Op::FOrdLessThanEqual => BinOp::FOLe,
                Op::FOrdGreaterThanEqual => BinOp::FOGe,
                Op::FUnordEqual => BinOp::FUEq,
                Op::FUnordNotEqual => BinOp::FUNe,
                Op::FUnordLessThan => BinOp::FULt,
                Op::FUnordGreaterThan => BinOp::FUGt,
                Op::FUnordLessThanEqual => BinOp::FULe,
                Op::FUnordGreaterThanEqual => BinOp::FUGe,
                Op::Ordered => BinOp::FOrd,
                Op::Unordered => BinOp::FUnord,
                Op::LogicalAnd => BinOp::LAnd,
                Op::LogicalOr => BinOp::LOr,
                Op::LogicalEqual => BinOp::LEq,
                Op::LogicalNotEqual => BinOp::LNe,
                _ => return None,
            })
        };
        if let Some(b) = bin(opc) {
            let a = sl!(0);
            let bb = sl!(1);
            let aty = self.cx.vty.get(&id!(0)).copied().unwrap_or(rty);
            let k = self.cx.scalar(aty)?;
            let n = self.cx.ncomp(rty)?;
            let c = match b {
                BinOp::FDiv => cls::SPECIAL,
                _ => Self::fclass(k),
            };
            let d = self.cx.s(rid)?;
            self.push(
                Inst::Bin {
                    op: b,
                    k,
                    n,
                    d,
                    a,
                    b: bb,
                },
                c,
            );
            return Ok(());
        }
        let un = match opc {
            Op::Not => Some(UnOp::Not),
            Op::SNegate => Some(UnOp::SNeg),
            Op::FNegate => Some(UnOp::FNeg),
            Op::LogicalNot => Some(UnOp::LNot),
            Op::IsNan => Some(UnOp::IsNan),
            Op::IsInf => Some(UnOp::IsInf),
            Op::IsFinite => Some(UnOp::IsFinite),
            Op::IsNormal => Some(UnOp::IsNormal),
            Op::SignBitSet => Some(UnOp::SignBit),
            Op::BitCount => Some(UnOp::BitCount),
            Op::BitReverse => Some(UnOp::BitReverse),
            _ => None,
        };
        if let Some(u) = un {
            let a = sl!(0);
            let aty = self.cx.vty.get(&id!(0)).copied().unwrap_or(rty);
            let k = self.cx.scalar(aty)?;
            let n = self.cx.ncomp(rty)?;
            let d = self.cx.s(rid)?;
            self.push(Inst::Un { op: u, k, n, d, a }, Self::fclass(k));
            return Ok(());
        }
        let conv = match opc {
            Op::ConvertFToU => Some(ConvOp::FToU),
            Op::ConvertFToS => Some(ConvOp::FToS),
            Op::ConvertSToF => Some(ConvOp::SToF),
            Op::ConvertUToF => Some(ConvOp::UToF),
            Op::UConvert => Some(ConvOp::UConv),
            Op::SConvert => Some(ConvOp::SConv),
            Op::FConvert => Some(ConvOp::FConv),
            Op::SatConvertSToU => Some(ConvOp::SatSToU),
            Op::SatConvertUToS => Some(ConvOp::SatUToS),
            _ => None,
        };
        if let Some(cv) = conv {
            let a = sl!(0);
            let aty = self.cx.vty.get(&id!(0)).copied().unwrap_or(rty);
            let from = self.cx.scalar(aty)?;
            let to = self.cx.scalar(rty)?;
            let n = self.cx.ncomp(rty)?;
            let d = self.cx.s(rid)?;
            let sat = self.cx.deco(rid, Decoration::SaturatedConversion).is_some()
                || matches!(cv, ConvOp::SatSToU | ConvOp::SatUToS);
            let round = self.rounding(rid);
            self.push(
                Inst::Conv {
                    op: cv,
                    from,
                    to,
                    n,
                    d,
                    a,
                    sat,
                    round,
                },
                cls::CONV,
            );
            return Ok(());
        }
        match opc {
            Op::Phi
            | Op::Label
            | Op::Line
            | Op::NoLine
            | Op::LifetimeStart
            | Op::LifetimeStop
            | Op::SelectionMerge
            | Op::LoopMerge
            | Op::Nop
            | Op::Name => {}
            Op::Variable => {
                // Function-scope variable: its address is a constant; an initialiser is
                // stored where the variable is declared.
                if let Some(init) = o.get(1) {
                    let init = op_id(Some(init))?;
                    let ity = *self
                        .cx
                        .vty
                        .get(&init)
                        .ok_or_else(|| e("untyped initialiser"))?;
                    let leaves = self.cx.leaf_vec(ity)?;
                    let size = self.cx.size_align(ity)?.0 as u32;
                    let (p, v) = (self.cx.s(rid)?, self.cx.s(init)?);
                    self.push(
                        Inst::Store {
                            p,
                            v,
                            leaves: leaves.into(),
                            size,
                        },
                        cls::MEMORY,
                    );
                }
            }
            Op::Undef => {
                let d = self.cx.s(rid)?;
                let n = self.cx.n(rid)?;
                self.push(
                    Inst::Construct {
                        d,
                        parts: vec![].into(),
                    },
                    cls::NONE,
                );
                let _ = n;
            }
            Op::Select => {
                let c = sl!(0);
                let cvec = self
                    .cx
                    .ncomp(self.cx.vty.get(&id!(0)).copied().unwrap_or(0))
                    .unwrap_or(1)
                    > 1;
                let n = self.cx.n(rid)?;
                let d = self.cx.s(rid)?;
                let (a, b) = (sl!(1), sl!(2));
                self.push(
                    Inst::Select {
                        n,
                        d,
                        c,
                        cvec,
                        a,
                        b,
                    },
                    cls::OTHER,
                );
            }
            Op::CopyObject
            | Op::ConvertPtrToU
            | Op::ConvertUToPtr
            | Op::PtrCastToGeneric
            | Op::GenericCastToPtr
            | Op::GenericCastToPtrExplicit
            | Op::Bitcast => {
                let sid = id!(0);
                let d = self.cx.s(rid)?;
                let s = self.cx.s(sid)?;
                let sty = self.cx.vty.get(&sid).copied().unwrap_or(rty);
                let fl = self.cx.leaf_vec(sty)?;
                let tl = self.cx.leaf_vec(rty)?;
                let same = fl.len() == tl.len()
                    && fl.iter().zip(&tl).all(|(a, b)| a.1.bytes() == b.1.bytes());
                if same || matches!(opc, Op::ConvertPtrToU | Op::ConvertUToPtr) && fl.len() == 1 {
                    if fl.len() == 1 && tl.len() == 1 && fl[0].1.bits() != tl[0].1.bits() {
                        // pointer <-> narrower int
                        self.push(
                            Inst::Conv {
                                op: ConvOp::UConv,
                                from: fl[0].1,
                                to: tl[0].1,
                                n: 1,
                                d,
                                a: s,
                                sat: false,
                                round: Round::Default,
                            },
                            cls::OTHER,
                        );
                    } else {
                        self.push(
                            Inst::Copy {
                                d,
                                s,
                                n: tl.len() as u32,
                            },
                            cls::OTHER,
                        );
                    }
                } else {
                    // Reinterpretation with a different shape (e.g. uchar4 <-> uint): go
                    // through bytes. vec3 has the padding of vec4 in memory but as a value
                    // the bytes are packed.
                    self.push(
                        Inst::Repack {
                            d,
                            s,
                            from: fl.iter().map(|x| x.1).collect(),
                            to: tl.iter().map(|x| x.1).collect(),
                        },
                        cls::OTHER,
                    );
                }
            }
            Op::CompositeExtract => {
                let sid = id!(0);
                let mut ty = self
                    .cx
                    .vty
                    .get(&sid)
                    .copied()
                    .ok_or_else(|| e("extract from untyped"))?;
                let mut off = 0;
                for ix in &o[1..] {
                    let (lo, t) = self.cx.member_leaf(ty, op_lit(Some(ix))?)?;
                    off += lo;
                    ty = if matches!(self.cx.ty(ty)?, Ty::Vector(..)) {
                        self.cx.elem_type(ty)?
                    } else {
                        t
                    };
                }
                let d = self.cx.s(rid)?;
                let s = self.cx.s(sid)? + off;
                let n = self.cx.n(rid)?;
                self.push(Inst::Copy { d, s, n }, cls::OTHER);
            }
            Op::CompositeInsert => {
                let obj = id!(0);
                let comp = id!(1);
                let mut ty = rty;
                let mut off = 0;
                for ix in &o[2..] {
                    let (lo, t) = self.cx.member_leaf(ty, op_lit(Some(ix))?)?;
                    off += lo;
                    ty = if matches!(self.cx.ty(ty)?, Ty::Vector(..)) {
                        self.cx.elem_type(ty)?
                    } else {
                        t
                    };
                }
                let d = self.cx.s(rid)?;
                let total = self.cx.n(rid)?;
                let cs = self.cx.s(comp)?;
                let os = self.cx.s(obj)?;
                let on = self.cx.n(obj)?;
                let mut parts = Vec::new();
                if off > 0 {
                    parts.push((cs, off));
                }
                parts.push((os, on));
                if off + on < total {
                    parts.push((cs + off + on, total - off - on));
                }
                self.push(
                    Inst::Construct {
                        d,
                        parts: parts.into(),
                    },
                    cls::OTHER,
                );
            }
            Op::CompositeConstruct => {
                let d = self.cx.s(rid)?;
                let mut parts = Vec::new();
                for x in o {
                    let x = op_id(Some(x))?;
                    let (s, n) = *self
                        .cx
                        .slot
                        .get(&x)
                        .ok_or_else(|| e("construct from unknown"))?;
                    parts.push((s, n));
                }
                self.push(
                    Inst::Construct {
                        d,
                        parts: parts.into(),
                    },
                    cls::OTHER,
                );
            }
            Op::VectorExtractDynamic => {
                let v = sl!(0);
                let vid = id!(0);
                let n = self.cx.n(vid)?;
                let idx_id = id!(1);
                let idx = self.cx.s(idx_id)?;
                let ik = self.cx.scalar(self.cx.vt(idx_id)?)?;
                let d = self.cx.s(rid)?;
                self.push(Inst::ExtractDyn { d, v, n, idx, ik }, cls::OTHER);
            }
            Op::VectorInsertDynamic => {
                let v = sl!(0);
                let x = sl!(1);
                let n = self.cx.n(rid)?;
                let idx_id = id!(2);
                let idx = self.cx.s(idx_id)?;
                let ik = self.cx.scalar(self.cx.vt(idx_id)?)?;
                let d = self.cx.s(rid)?;
                self.push(
                    Inst::InsertDyn {
                        d,
                        v,
                        n,
                        x,
                        idx,
                        ik,
                    },
                    cls::OTHER,
                );
            }
            Op::VectorShuffle => {
                let a = id!(0);
                let b = id!(1);
                let (sa, na) = self.cx.sn(a)?;
                let sb = self.cx.s(b)?;
                let mut srcs = Vec::new();
                // undefined components (0xFFFFFFFF) read slot of component 0
                for c in &o[2..] {
                    let c = op_lit(Some(c))? as u32;
                    srcs.push(if c == u32::MAX {
                        sa
                    } else if c < na {
                        sa + c
                    } else {
                        sb + (c - na)
                    });
                }
                let d = self.cx.s(rid)?;
                self.push(
                    Inst::Shuffle {
                        d,
                        srcs: srcs.into(),
                    },
                    cls::OTHER,
                );
            }
            Op::VectorTimesScalar => {
                let k = self.cx.scalar(rty)?;
                let n = self.cx.ncomp(rty)?;
                let d = self.cx.s(rid)?;
                let (a, b) = (sl!(0), sl!(1));
                self.push(Inst::VecTimesScalar { k, n, d, a, b }, Self::fclass(k));
            }
            Op::Dot => {
                let aid = id!(0);
                let k = self.cx.scalar(rty)?;
                let n = self.cx.n(aid)?;
                let d = self.cx.s(rid)?;
                let (a, b) = (sl!(0), sl!(1));
                self.push(Inst::Dot { k, n, d, a, b }, Self::fclass(k));
            }
            Op::Any | Op::All => {
                let aid = id!(0);
                let n = self.cx.n(aid)?;
                let d = self.cx.s(rid)?;
                let a = sl!(0);
                self.push(
                    Inst::AnyAll {
                        all: opc == Op::All,
                        n,
                        d,
                        a,
                    },
                    cls::INT,
                );
            }
            Op::AccessChain
            | Op::InBoundsAccessChain
            | Op::PtrAccessChain
            | Op::InBoundsPtrAccessChain => {
                let base = id!(0);
                let bty = *self
                    .cx
                    .vty
                    .get(&base)
                    .ok_or_else(|| e("access chain on untyped base"))?;
                if let Some(&bi) = self.cx.builtin_vars.get(&base) {
                    // pointer into a built-in vector: index must be constant
                    let skip = if matches!(opc, Op::PtrAccessChain | Op::InBoundsPtrAccessChain) {
                        2
                    } else {
                        1
                    };
                    let ix = o.get(skip).map(|x| op_id(Some(x))).transpose()?;
                    let comp = match ix {
                        Some(ix) => *self
                            .cx
                            .const_vals
                            .get(&ix)
                            .and_then(|v| v.first())
                            .ok_or_else(|| {
                                EmuError::Unsupported(
                                    "dynamic index into a built-in variable".into(),
                                )
                            })? as u32,
                        None => 0,
                    };
                    self.cx.builtin_ptrs.insert(rid, (bi, comp));
                    return Ok(());
                }
                let mut pointee = match self.cx.ty(bty)? {
                    Ty::Pointer(_, p) => *p,
                    _ => return Err(e("access chain on non-pointer")),
                };
                let mut off: i64 = 0;
                let mut terms: Vec<(u32, i64, Sc)> = Vec::new();
                let mut idx_iter = o[1..].iter();
                let add_term = |cx: &Ctx,
                                ixid: u32,
                                stride: i64,
                                off: &mut i64,
                                terms: &mut Vec<(u32, i64, Sc)>|
                 -> Result<(), EmuError> {
                    let k = cx.scalar(*cx.vty.get(&ixid).ok_or_else(|| e("untyped index"))?)?;
                    if let Some(v) = cx.const_vals.get(&ixid).and_then(|v| v.first()) {
                        let sh = 64 - k.bits();
                        let sv = ((*v << sh) as i64) >> sh;
                        *off = off.wrapping_add(sv.wrapping_mul(stride));
                    } else {
                        terms.push((cx.s(ixid)?, stride, k));
                    }
                    Ok(())
                };
                if matches!(opc, Op::PtrAccessChain | Op::InBoundsPtrAccessChain) {
                    let el = op_id(idx_iter.next())?;
                    let stride = self.cx.size_align(pointee)?.0 as i64;
                    add_term(self.cx, el, stride, &mut off, &mut terms)?;
                }
                for ix in idx_iter {
                    let ixid = op_id(Some(ix))?;
                    match self.cx.ty(pointee)?.clone() {
                        Ty::Struct(m, _) => {
                            let v = *self
                                .cx
                                .const_vals
                                .get(&ixid)
                                .and_then(|v| v.first())
                                .ok_or_else(|| e("non-constant struct index"))?;
                            let offs = self.cx.member_offsets(pointee)?;
                            off += *offs
                                .get(v as usize)
                                .ok_or_else(|| e("struct index out of range"))?
                                as i64;
                            pointee = m[v as usize];
                        }
                        Ty::Array(el, _) | Ty::Vector(el, _) => {
                            let stride = self.cx.size_align(el)?.0 as i64;
                            add_term(self.cx, ixid, stride, &mut off, &mut terms)?;
                            pointee = el;
                        }
                        _ => return Err(e("access chain into a scalar")),
                    }
                }
                let d = self.cx.s(rid)?;
                let b = self.cx.s(base)?;
                self.push(
                    Inst::PtrChain {
                        d,
                        base: b,
                        off,
                        terms: terms.into(),
                    },
                    cls::INT,
                );
            }
            Op::Load => {
                let p = id!(0);
                if let Some(&bi) = self.cx.builtin_vars.get(&p) {
                    let d = self.cx.s(rid)?;
                    let n = self.cx.n(rid)?;
                    let k = self.cx.scalar(rty)?;
                    self.push(
                        Inst::Builtin {
                            d,
                            b: bi,
                            n,
                            comp: None,
                            k,
                        },
                        cls::OTHER,
                    );
                    return Ok(());
                }
                if let Some(&(bi, c)) = self.cx.builtin_ptrs.get(&p) {
                    let d = self.cx.s(rid)?;
                    let k = self.cx.scalar(rty)?;
                    self.push(
                        Inst::Builtin {
                            d,
                            b: bi,
                            n: 1,
                            comp: Some(c),
                            k,
                        },
                        cls::OTHER,
                    );
                    return Ok(());
                }
                let leaves = self.cx.leaf_vec(rty)?;
                let size = self.cx.size_align(rty)?.0 as u32;
                let d = self.cx.s(rid)?;
                let ps = self.cx.s(p)?;
                self.push(
                    Inst::Load {
                        d,
                        p: ps,
                        leaves: leaves.into(),
                        size,
                    },
                    cls::MEMORY,
                );
            }
            Op::Store => {
                let p = id!(0);
                let v = id!(1);
                let vty = *self
                    .cx
                    .vty
                    .get(&v)
                    .ok_or_else(|| e("store of untyped value"))?;
                let leaves = self.cx.leaf_vec(vty)?;
                let size = self.cx.size_align(vty)?.0 as u32;
                let ps = self.cx.s(p)?;
                let vs = self.cx.s(v)?;
                self.push(
                    Inst::Store {
                        p: ps,
                        v: vs,
                        leaves: leaves.into(),
                        size,
                    },
                    cls::MEMORY,
                );
            }
            Op::CopyMemory | Op::CopyMemorySized => {
                let dst = sl!(0);
                let src = sl!(1);
                let (size, size_slot) = if opc == Op::CopyMemorySized {
                    let sid = id!(2);
                    match self.cx.const_vals.get(&sid).and_then(|v| v.first()) {
                        Some(v) => (*v, None),
                        None => (
                            0,
                            Some((self.cx.s(sid)?, self.cx.scalar(self.cx.vt(sid)?)?)),
                        ),
                    }
                } else {
                    let pty = self.cx.vt(id!(0))?;
                    let pointee = match self.cx.ty(pty)? {
                        Ty::Pointer(_, p) => *p,
                        _ => return Err(e("copy through non-pointer")),
                    };
                    (self.cx.size_align(pointee)?.0, None)
                };
                self.push(
                    Inst::CopyMem {
                        dst,
                        src,
                        size,
                        size_slot,
                    },
                    cls::MEMORY,
                );
            }
            Op::AtomicLoad
            | Op::AtomicStore
            | Op::AtomicExchange
            | Op::AtomicCompareExchange
            | Op::AtomicCompareExchangeWeak
            | Op::AtomicIIncrement
            | Op::AtomicIDecrement
            | Op::AtomicIAdd
            | Op::AtomicISub
            | Op::AtomicSMin
            | Op::AtomicUMin
            | Op::AtomicSMax
            | Op::AtomicUMax
            | Op::AtomicAnd
            | Op::AtomicOr
            | Op::AtomicXor
            | Op::AtomicFlagTestAndSet
            | Op::AtomicFlagClear => {
                let p = sl!(0);
                let local_only = match self.cx.vty.get(&id!(0)).map(|t| self.cx.ty(*t)) {
                    Some(Ok(Ty::Pointer(sc, _))) => {
                        matches!(sc, StorageClass::Workgroup | StorageClass::Function)
                    }
                    _ => false,
                };
                self.global_atomics |= !local_only;
                let aop = match opc {
                    Op::AtomicLoad => AtomOp::Load,
                    Op::AtomicStore => AtomOp::Store,
                    Op::AtomicExchange => AtomOp::Xchg,
                    Op::AtomicCompareExchange | Op::AtomicCompareExchangeWeak => AtomOp::CmpXchg,
                    Op::AtomicIIncrement => AtomOp::Inc,
                    Op::AtomicIDecrement => AtomOp::Dec,
                    Op::AtomicIAdd => AtomOp::Add,
                    Op::AtomicISub => AtomOp::Sub,
                    Op::AtomicSMin => AtomOp::SMin,
                    Op::AtomicUMin => AtomOp::UMin,
                    Op::AtomicSMax => AtomOp::SMax,
                    Op::AtomicUMax => AtomOp::UMax,
                    Op::AtomicAnd => AtomOp::And,
                    Op::AtomicOr => AtomOp::Or,
                    Op::AtomicXor => AtomOp::Xor,
                    Op::AtomicFlagTestAndSet => AtomOp::FlagTestSet,
                    _ => AtomOp::FlagClear,
                };
                let (k, d) = match aop {
                    AtomOp::Store | AtomOp::FlagClear => {
                        let pty = self.cx.vt(id!(0))?;
                        let pointee = match self.cx.ty(pty)? {
                            Ty::Pointer(_, p) => *p,
                            _ => return Err(e("atomic on non-pointer")),
                        };
                        (self.cx.scalar(pointee).unwrap_or(Sc::I32), None)
                    }
                    AtomOp::FlagTestSet => (Sc::I32, Some(self.cx.s(rid)?)),
                    _ => (self.cx.scalar(rty)?, Some(self.cx.s(rid)?)),
                };
                let (v, cmp) = match aop {
                    AtomOp::Store => (sl!(3), 0),
                    AtomOp::CmpXchg => (sl!(4), sl!(5)),
                    AtomOp::Load
                    | AtomOp::Inc
                    | AtomOp::Dec
                    | AtomOp::FlagTestSet
                    | AtomOp::FlagClear => (0, 0),
                    _ => (sl!(3), 0),
                };
                self.push(
                    Inst::Atomic {
                        op: aop,
                        k,
                        d,
                        p,
                        v,
                        cmp,
                    },
                    cls::ATOMIC,
                );
            }
            Op::ControlBarrier => self.push(Inst::Barrier, cls::BARRIER),
            Op::MemoryBarrier => self.push(Inst::Nop, cls::BARRIER),
            Op::Branch => {
                let t = id!(0);
                let phis = self.phi_range(cur, t)?;
                let t = self.block(t)?;
                self.push(Inst::Br { t, phis }, cls::BRANCH);
            }
            Op::BranchConditional => {
                let c = sl!(0);
                let (t, f) = (id!(1), id!(2));
                let tp = self.phi_range(cur, t)?;
                let fp = if f == t {
                    PhiRange {
                        start: tp.start,
                        len: tp.len,
                    }
                } else {
                    self.phi_range(cur, f)?
                };
                let (t, f) = (self.block(t)?, self.block(f)?);
                self.push(
                    Inst::BrCond {
                        c,
                        t,
                        f,
                        tp,
                        fp,
                        reconv: EXIT,
                    },
                    cls::BRANCH,
                );
            }
            Op::Switch => {
                let selid = id!(0);
                let sel = self.cx.s(selid)?;
                let k = self.cx.scalar(self.cx.vt(selid)?)?;
                let def = id!(1);
                let dp = self.phi_range(cur, def)?;
                let default = self.block(def)?;
                let mut cases = Vec::new();
                for c in o[2..].chunks(2) {
                    let lit = op_lit(c.first())? & int_mask(k.bits());
                    let t = op_id(c.get(1))?;
                    let p = self.phi_range(cur, t)?;
                    cases.push((lit, self.block(t)?, p));
                }
                self.push(
                    Inst::Switch {
                        sel,
                        k,
                        default,
                        dp,
                        cases: cases.into(),
                        reconv: EXIT,
                    },
                    cls::BRANCH,
                );
            }
            Op::Return => self.push(Inst::Return { v: None }, cls::BRANCH),
            Op::ReturnValue => {
                let v = id!(0);
                let (s, n) = *self
                    .cx
                    .slot
                    .get(&v)
                    .ok_or_else(|| e("return of unknown value"))?;
                let (rs, _) = self
                    .funcs_ret
                    .ok_or_else(|| e("ReturnValue in void function"))?;
                self.push(
                    Inst::Return {
                        v: Some((s, rs, n)),
                    },
                    cls::BRANCH,
                );
            }
            Op::Unreachable | Op::Kill => self.push(Inst::Unreachable, cls::NONE),
            Op::FunctionCall => {
                let f = id!(0);
                let fi = match self.fidx.get(&f).copied() {
                    Some(x) => x,
                    None => {
                        self.unsup(format!("call to an external function %{f}"));
                        return Ok(());
                    }
                };
                self.callees.push(fi);
                let mut args = Vec::new();
                for a in &o[1..] {
                    let a = op_id(Some(a))?;
                    let (s, n) = *self
                        .cx
                        .slot
                        .get(&a)
                        .ok_or_else(|| e("call argument unknown"))?;
                    args.push((s, 0u32, n));
                }
                let d = if matches!(self.cx.ty(rty)?, Ty::Void) {
                    None
                } else {
                    Some((self.cx.s(rid)?, self.cx.n(rid)?))
                };
                // param slots are filled at run time from FuncInfo
                self.push(
                    Inst::Call {
                        func: fi,
                        d,
                        args: args.into(),
                    },
                    cls::BRANCH,
                );
            }
            Op::ExtInst => {
                let set = id!(0);
                if Some(set) != self.cx.cl_ext {
                    self.unsup("non-OpenCL extended instruction set");
                    return Ok(());
                }
                let num = op_lit(o.get(1))? as u32;
                let Some(op) = spirv::CLOp::from_u32(num) else {
                    self.unsup(format!("OpenCL.std instruction {num}"));
                    return Ok(());
                };
                self.decode_ext(op, i, rid, rty)?;
            }
            Op::GroupAsyncCopy => {
                // (scope, dst, src, num elements, stride, event)
                let dst_id = id!(1);
                let pty = *self
                    .cx
                    .vty
                    .get(&dst_id)
                    .ok_or_else(|| e("untyped copy pointer"))?;
                let (sc, pointee) = match self.cx.ty(pty)? {
                    Ty::Pointer(sc, p) => (*sc, *p),
                    _ => return Err(e("async copy through a non-pointer")),
                };
                let esize = self.cx.size_align(pointee)?.0 as u32;
                let (nid, sid) = (id!(3), id!(4));
                let nk = self.cx.scalar(self.cx.vt(nid)?)?;
                let sk = self.cx.scalar(self.cx.vt(sid)?)?;
                let inst = Inst::AsyncCopy {
                    d: self.cx.s(rid)?,
                    dst: self.cx.s(dst_id)?,
                    src: sl!(2),
                    n: self.cx.s(nid)?,
                    nk,
                    stride: self.cx.s(sid)?,
                    sk,
                    esize,
                    dst_local: sc == StorageClass::Workgroup,
                };
                self.push(inst, cls::MEMORY);
            }
            Op::GroupWaitEvents => self.push(Inst::Nop, cls::BARRIER),
            Op::EnqueueKernel | Op::GetKernelNDrangeSubGroupCount | Op::GetKernelWorkGroupSize => {
                self.unsup("device-side enqueue")
            }
            o if format!("{o:?}").starts_with("Image")
                || format!("{o:?}").starts_with("Sampled") =>
            {
                self.unsup("images")
            }
            o if format!("{o:?}").contains("Pipe") => self.unsup("pipes"),
            o if format!("{o:?}").starts_with("Group") => {
                self.unsup("work-group collective functions")
            }
            other => self.unsup(format!("{other:?}")),
        }
        Ok(())
    }

    fn decode_ext(
        &mut self,
        op: spirv::CLOp,
        i: &dr::Instruction,
        rid: u32,
        rty: u32,
    ) -> Result<(), EmuError> {
        use spirv::CLOp as C;
        let o = &i.operands;
        let arg = |j: usize| -> Result<u32, EmuError> { op_id(o.get(2 + j)) };
        match op {
            C::printf => {
                self.unsup("printf");
                return Ok(());
            }
            C::prefetch => {
                self.push(Inst::Nop, cls::MEMORY);
                return Ok(());
            }
            C::vloadn | C::vload_half | C::vload_halfn | C::vloada_halfn => {
                let off = self.cx.s(arg(0)?)?;
                let p = self.cx.s(arg(1)?)?;
                let n = self.cx.n(rid)?;
                let half = !matches!(op, C::vloadn);
                let k = self.cx.scalar(rty)?;
                let d = self.cx.s(rid)?;
                let stride = aligned_stride(op == C::vloada_halfn, n);
                self.push(
                    Inst::VLoad {
                        d,
                        off,
                        p,
                        n,
                        stride,
                        k,
                        half,
                    },
                    cls::MEMORY,
                );
                return Ok(());
            }
            C::vstoren
            | C::vstore_half
            | C::vstore_half_r
            | C::vstore_halfn
            | C::vstore_halfn_r
            | C::vstorea_halfn
            | C::vstorea_halfn_r => {
                let vid = arg(0)?;
                let v = self.cx.s(vid)?;
                let off = self.cx.s(arg(1)?)?;
                let p = self.cx.s(arg(2)?)?;
                let n = self.cx.n(vid)?;
                let k = self.cx.scalar(self.cx.vt(vid)?)?;
                let half = match op {
                    C::vstoren => None,
                    C::vstore_half_r | C::vstore_halfn_r | C::vstorea_halfn_r => {
                        Some(match o.get(5) {
                            Some(Operand::FPRoundingMode(m)) => match m {
                                spirv::FPRoundingMode::RTE => Round::Rte,
                                spirv::FPRoundingMode::RTZ => Round::Rtz,
                                spirv::FPRoundingMode::RTP => Round::Rtp,
                                spirv::FPRoundingMode::RTN => Round::Rtn,
                            },
                            // rspirv does not know OpenCL.std's operand kinds: the mode
                            // comes as a plain word (RTE 0, RTZ 1, RTP 2, RTN 3).
                            Some(Operand::IdRef(n)) | Some(Operand::LiteralBit32(n)) => match n {
                                1 => Round::Rtz,
                                2 => Round::Rtp,
                                3 => Round::Rtn,
                                _ => Round::Rte,
                            },
                            _ => Round::Rte,
                        })
                    }
                    _ => Some(Round::Rte),
                };
                let aligned = matches!(op, C::vstorea_halfn | C::vstorea_halfn_r);
                let stride = aligned_stride(aligned, n);
                self.push(
                    Inst::VStore {
                        v,
                        off,
                        p,
                        n,
                        stride,
                        k,
                        half,
                    },
                    cls::MEMORY,
                );
                return Ok(());
            }
            _ => {}
        }
        if matches!(op, C::shuffle | C::shuffle2) {
            let x = arg(0)?;
            let two = op == C::shuffle2;
            let mid = arg(if two { 2 } else { 1 })?;
            let inst = Inst::DynShuffle {
                d: self.cx.s(rid)?,
                nout: self.cx.n(rid)?,
                a: self.cx.s(x)?,
                b: if two { Some(self.cx.s(arg(1)?)?) } else { None },
                nin: self.cx.n(x)?,
                m: self.cx.s(mid)?,
                mk: self.cx.scalar(self.cx.vt(mid)?)?,
            };
            self.push(inst, cls::OTHER);
            return Ok(());
        }
        let nargs = o.len().saturating_sub(2).min(3);
        let mut args = [0u32; 3];
        for (j, a) in args.iter_mut().enumerate().take(nargs) {
            *a = self.cx.s(arg(j)?)?;
        }
        let a0 = arg(0)?;
        let a0ty = *self.cx.vty.get(&a0).unwrap_or(&rty);
        // Geometric functions take vectors and may return scalars: use the argument shape.
        let (k, n) = match op {
            C::length
            | C::distance
            | C::fast_length
            | C::fast_distance
            | C::normalize
            | C::fast_normalize
            | C::cross => (self.cx.scalar(a0ty)?, self.cx.n(a0)?),
            C::shuffle | C::shuffle2 => (self.cx.scalar(rty)?, self.cx.n(a0)?),
            _ => (self.cx.scalar(rty)?, self.cx.n(rid)?),
        };
        let k2 = if nargs >= 2 {
            let a1 = arg(1)?;
            self.cx.scalar(*self.cx.vty.get(&a1).unwrap_or(&rty))?
        } else {
            k
        };
        let k2 = match op {
            // int ilogb(floatn x): k2 is the argument's kind
            C::ilogb => self.cx.scalar(a0ty)?,
            C::shuffle2 if nargs >= 3 => {
                let a2 = arg(2)?;
                self.cx.scalar(*self.cx.vty.get(&a2).unwrap_or(&rty))?
            }
            _ => k2,
        };
        let c = match op {
            C::s_abs
            | C::s_abs_diff
            | C::s_add_sat
            | C::u_add_sat
            | C::s_hadd
            | C::u_hadd
            | C::s_rhadd
            | C::u_rhadd
            | C::s_clamp
            | C::u_clamp
            | C::clz
            | C::ctz
            | C::s_mad_hi
            | C::u_mad_sat
            | C::s_mad_sat
            | C::s_max
            | C::u_max
            | C::s_min
            | C::u_min
            | C::s_mul_hi
            | C::rotate
            | C::s_sub_sat
            | C::u_sub_sat
            | C::u_upsample
            | C::s_upsample
            | C::popcount
            | C::s_mad24
            | C::u_mad24
            | C::s_mul24
            | C::u_mul24
            | C::u_abs
            | C::u_abs_diff
            | C::u_mul_hi
            | C::u_mad_hi
            | C::bitselect
            | C::select
            | C::shuffle
            | C::shuffle2 => {
                if k.is_float() {
                    Self::fclass(k)
                } else {
                    cls::INT
                }
            }
            C::fabs
            | C::fma
            | C::mad
            | C::fmax
            | C::fmin
            | C::fmax_common
            | C::fmin_common
            | C::fclamp
            | C::floor
            | C::ceil
            | C::trunc
            | C::rint
            | C::round
            | C::copysign
            | C::fdim
            | C::mix
            | C::step
            | C::sign
            | C::degrees
            | C::radians
            | C::maxmag
            | C::minmag
            | C::cross
            | C::nan
            | C::fract
            | C::smoothstep => Self::fclass(k),
            _ => cls::SPECIAL,
        };
        let d = self.cx.s(rid)?;
        // A scalar argument of a vector function (e.g. fmax(float4, float) when the front
        // end did not splat it) is broadcast. Pointer-output functions (fract, frexp, modf,
        // sincos, remquo, lgamma_r) pass the pointer slot in args as well.
        let mut bcast = 0u8;
        if n > 1 {
            for j in 0..nargs {
                let aid = arg(j)?;
                let is_ptr = matches!(
                    self.cx.vty.get(&aid).and_then(|t| self.cx.types.get(t)),
                    Some(Ty::Pointer(..))
                );
                if !is_ptr && self.cx.slot.get(&aid).map(|x| x.1).unwrap_or(1) == 1 {
                    bcast |= 1 << j;
                }
            }
        }
        self.push(
            Inst::Ext {
                op,
                k,
                n,
                d,
                args,
                k2,
                bcast,
            },
            c,
        );
        Ok(())
    }
}
