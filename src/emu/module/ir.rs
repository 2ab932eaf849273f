//! Pre-decoded IR of the emulator: scalar kinds, pointer tags, the operation enums and
//! [`Inst`], the compact instruction the interpreter ([`crate::emu`]'s `interp`) executes.

use super::*;

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

/// How a load or store counts in the global memory statistics (requests, sectors, lines,
/// bytes; Panwar et al. §IV-C). A vector access is one request of its full width per
/// work-item, coalesced per warp into 32-byte sectors as in the CUDA sector model (a warp
/// of 32 lanes loading a `float4` each at unit stride: one request, 512 B, 16 sectors).
/// LLVM at -O2 scalarises a vector load or store whose components are used one by one into
/// one access per component; the loader ([`super::vector`]) finds such groups and the
/// interpreter counts them as the one vector access the hardware makes. Footprints and
/// local memory statistics are those of each access as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Traffic {
    /// Its own request of the access's size per lane.
    Own,
    /// The first (in the block) of the per-component accesses of one vector: the whole
    /// vector's request, `bytes` (components × component size) per lane, starting `back`
    /// bytes before this access's pointer (its component index × component size).
    VecFirst { back: u32, bytes: u32 },
    /// Another component of such a vector access: no request of its own.
    VecRest,
}

impl Inst {
    /// Whether this instruction does floating-point arithmetic whose last bits a device's
    /// compiler may choose: add, subtract, multiply, divide, remainder, dot product and the
    /// math built-ins. OpenCL C lets a compiler contract `a*b+c` into an FMA (§6.10,
    /// `FP_CONTRACT`), gives single-precision division and most built-ins an error bound in
    /// ULP rather than one result (OpenCL 3.0 spec §7.4, table "ULP values"), and lets a
    /// device flush denormals; so two compilers may return other bytes. Exact operations
    /// are not counted: comparisons, negation, `fabs`, `copysign`, `fmin`/`fmax`,
    /// `fclamp`, rounding to an integral value, `sign`, `step`, selects, shuffles and
    /// conversions (correctly rounded, §6.2.3).
    pub(crate) fn rounds_float(&self) -> bool {
        use spirv::CLOp as C;
        match self {
            Inst::Bin { op, .. } => matches!(
                op,
                BinOp::FAdd | BinOp::FSub | BinOp::FMul | BinOp::FDiv | BinOp::FRem | BinOp::FMod
            ),
            Inst::VecTimesScalar { k, .. } | Inst::Dot { k, .. } => k.is_float(),
            Inst::Ext { op, k, .. } => {
                k.is_float()
                    && !matches!(
                        op,
                        C::fabs
                            | C::copysign
                            | C::fmax
                            | C::fmin
                            | C::maxmag
                            | C::minmag
                            | C::fclamp
                            | C::ceil
                            | C::floor
                            | C::rint
                            | C::round
                            | C::trunc
                            | C::nan
                            | C::sign
                            | C::step
                            | C::bitselect
                            | C::select
                            | C::shuffle
                            | C::shuffle2
                    )
            }
            _ => false,
        }
    }

    /// Instructions the device issues for this one, per lane: the component count of a
    /// vector arithmetic, comparison, select, conversion or math built-in operation (GPUs
    /// execute a `float16` FMA as 16 scalar FMAs per lane; clpeak's `compute_sp_v1` ..
    /// `_v16` do the same FLOPs in the same time on an H100, results/session14-2026-11-27),
    /// else 1 (a vector load or store is one request of its full width, register moves
    /// are counted once).
    pub(crate) fn issues(&self) -> u32 {
        match self {
            Inst::Bin { n, .. }
            | Inst::VecTimesScalar { n, .. }
            | Inst::Un { n, .. }
            | Inst::Conv { n, .. }
            | Inst::Select { n, .. }
            | Inst::Ext { n, .. }
            | Inst::Dot { n, .. } => (*n).max(1),
            _ => 1,
        }
    }
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
        /// How the load counts in the global memory traffic.
        traffic: Traffic,
    },
    Store {
        p: u32,
        v: u32,
        leaves: Box<[(u32, Sc)]>,
        size: u32,
        /// How the store counts in the global memory traffic.
        traffic: Traffic,
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
        /// Arguments in `args` (the others are 0).
        nargs: u8,
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
