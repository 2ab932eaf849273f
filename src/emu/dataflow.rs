//! Static check that a kernel's writes to global memory do not depend on memory contents
//! (DESIGN.md §7, "What a chunk writes"). Balance mode builds the write footprint of a
//! chunk from a few emulated work-groups (`exec::footprint`); that is only sound when the
//! bytes a work-group writes are a function of the NDRange ids and the by-value arguments,
//! not of data. Floyd-Warshall's `if (via < old) dist[i] = via;` is the counter-example: its
//! footprint changes with the matrix.
//!
//! The analysis is a taint propagation over the kernel's SSA form:
//! * tainted (data-dependent) values: loads from buffers (`__global`/`__constant`
//!   arguments, local memory, pointers of unknown origin), atomics, calls, and everything
//!   computed from them; loads of built-in ids, of program-scope constants, and of private
//!   variables that only ever received untainted values under untainted control are clean;
//! * a conditional branch or switch on a tainted value makes every block it controls (those
//!   reachable from its successors before its post-dominators) data-conditional, and a
//!   φ at the join of such a region tainted.
//!
//! A store (or copy) to global or generic memory whose address is tainted or that sits in a
//! data-conditional block makes the kernel's footprint data-dependent. Calls to functions of
//! the module that write global memory are refused without analysis (LLVM at -O2 inlines
//! nearly everything).

use super::pointer_classes::PointerClasses;
use super::EmuError;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// Why kernel `kernel` of the SPIR-V module `words` writes global memory at places that may
/// depend on memory contents, or `None` when its write addresses and write conditions
/// depend only on ids and by-value arguments.
///
/// Errors: [`EmuError::Internal`] when the module does not parse, [`EmuError::BadLaunch`]
/// when it has no kernel of that name.
pub fn data_dependent_writes(words: &[u32], kernel: &str) -> Result<Option<String>, EmuError> {
    analyse_kernel(words, kernel, Access::Stores)
}

/// [`analyse`] of kernel `kernel` of the SPIR-V module `words` for `access`.
fn analyse_kernel(words: &[u32], kernel: &str, access: Access) -> Result<Option<String>, EmuError> {
    let module = parse(words)?;
    let func = kernel_function(&module, kernel)?;
    let cx = Ctx::new(&module);
    Ok(analyse(&cx, &module, func, &[], false, 0, access))
}

/// The SPIR-V module `words`, parsed. Errors: [`EmuError::Internal`].
fn parse(words: &[u32]) -> Result<dr::Module, EmuError> {
    std::panic::catch_unwind(|| dr::load_words(words))
        .map_err(|_| EmuError::Internal("SPIR-V parse panicked".into()))?
        .map_err(|e| EmuError::Internal(format!("SPIR-V parse: {e}")))
}

/// The entry-point function of kernel `kernel` of `module` (llvm-spirv's wrapper, see
/// [`unwrap_kernel`]). Errors: [`EmuError::BadLaunch`] when there is none.
fn kernel_function<'a>(module: &'a dr::Module, kernel: &str) -> Result<&'a dr::Function, EmuError> {
    let entry = module
        .entry_points
        .iter()
        .find(|ep| matches!(ep.operands.get(2), Some(Operand::LiteralString(n)) if n == kernel))
        .and_then(|ep| match ep.operands.get(1) {
            Some(Operand::IdRef(f)) => Some(*f),
            _ => None,
        })
        .ok_or_else(|| EmuError::BadLaunch(format!("no kernel named {kernel}")))?;
    module
        .functions
        .iter()
        .find(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(entry))
        .ok_or_else(|| EmuError::BadLaunch(format!("no body for kernel {kernel}")))
}

/// Which accesses to global memory [`analyse`] judges.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Access {
    /// Stores, copies and atomics.
    Stores,
    /// Loads (and the source of copies, and the pointers the OpenCL built-ins take).
    Loads,
}

/// Why kernel `kernel` of `words` reads global memory at places that may depend on memory
/// contents (a load whose address, or whose execution, depends on loaded data), or `None`
/// when the bytes it reads are a function of the NDRange ids and by-value arguments: only
/// then do the footprint samples, run on zero-filled buffers, read what the real data
/// makes the kernel read (`exec::footprint::FootprintModel::reads_follow_ids`).
///
/// Errors: as [`data_dependent_writes`].
pub fn data_dependent_reads(words: &[u32], kernel: &str) -> Result<Option<String>, EmuError> {
    analyse_kernel(words, kernel, Access::Loads)
}

/// For each by-value parameter `k` of kernel `kernel` (positions in `value_params`) whose
/// value cannot change which bytes the kernel writes, the buffer parameters whose loads it may
/// move: `(k, loaded)`. A parameter qualifies when, with it treated as data, no global
/// store's address or execution depends on it ([`data_dependent_writes`]'s test), every
/// global load whose address or execution then depends on it (or on memory contents) goes
/// through a kernel parameter, and the kernel stores through none of those parameters. A
/// launch's write footprint is then the same for every value of `k`, and so are its read
/// hulls except those of `loaded` (PolyBench fdtd-2d's kernel 1 reads `_fict_[t]`: its time
/// step `t` moves one load of a buffer it never writes). Kernels that call functions are
/// left out (nothing qualifies).
///
/// Errors: as [`data_dependent_writes`].
pub fn value_params_free_of_writes(
    words: &[u32],
    kernel: &str,
    value_params: &[u32],
) -> Result<Vec<(u32, Vec<u32>)>, EmuError> {
    let module = parse(words)?;
    let func = kernel_function(&module, kernel)?;
    // llvm-spirv's wrapper passes the parameters through in order
    let func = unwrap_kernel(&module, func);
    let calls = func
        .blocks
        .iter()
        .flat_map(|b| &b.instructions)
        .any(|i| i.class.opcode == Op::FunctionCall);
    if calls {
        return Ok(Vec::new());
    }
    let cx = Ctx::new(&module);
    let params: Vec<Word> = func.parameters.iter().filter_map(|p| p.result_id).collect();
    let position = |w: Word| params.iter().position(|p| *p == w).map(|i| i as u32);
    // the parameters the kernel stores through (any other store root: nothing qualifies)
    let clean = propagate(&cx, func, &[], false);
    let mut stored = Vec::new();
    for i in func.blocks.iter().flat_map(|b| &b.instructions) {
        if !writes_memory(i.class.opcode) {
            continue;
        }
        let Some(Operand::IdRef(p)) = i.operands.first() else {
            continue;
        };
        let r = clean.root(*p);
        if clean.local_vars.contains(&r) || !is_global_class(cx.class_of_ptr(*p)) {
            continue;
        }
        match position(r) {
            Some(k) => stored.push(k),
            None => return Ok(Vec::new()),
        }
    }
    let mut out = Vec::new();
    for &k in value_params {
        let mut taint = vec![false; params.len()];
        match taint.get_mut(k as usize) {
            Some(t) => *t = true,
            None => continue,
        }
        if analyse(&cx, &module, func, &taint, false, 0, Access::Stores).is_some() {
            continue;
        }
        let t = propagate(&cx, func, &taint, false);
        let mut loaded = Vec::new();
        let mut qualifies = true;
        for (n, b) in func.blocks.iter().enumerate() {
            for i in &b.instructions {
                for p in loaded_pointers(&cx, i) {
                    let r = t.root(p);
                    if t.local_vars.contains(&r) || !is_global_class(cx.class_of_ptr(p)) {
                        continue;
                    }
                    let ext_taint = i.class.opcode == Op::ExtInst
                        && id_operands(i).any(|w| t.tainted.contains(&w));
                    if !(t.tainted.contains(&p) || ext_taint || t.conditional[n]) {
                        continue;
                    }
                    match position(r) {
                        Some(q) if !stored.contains(&q) => {
                            if !loaded.contains(&q) {
                                loaded.push(q);
                            }
                        }
                        _ => qualifies = false,
                    }
                }
            }
        }
        if qualifies {
            out.push((k, loaded));
        }
    }
    Ok(out)
}

/// The pointers instruction `i` reads global memory through, for [`Access::Loads`] (an
/// extended instruction's operands of a known pointer class: `vloadn`, `vload_half`, ...).
fn loaded_pointers(cx: &Ctx, i: &Instruction) -> Vec<Word> {
    let id = |k: usize| match i.operands.get(k) {
        Some(Operand::IdRef(p)) => vec![*p],
        _ => Vec::new(),
    };
    match i.class.opcode {
        Op::Load | Op::AtomicLoad => id(0),
        Op::CopyMemory | Op::CopyMemorySized => id(1),
        // vloadn, vload_half, prefetch ...: any pointer operand
        Op::ExtInst => id_operands(i)
            .filter(|p| cx.class_of_ptr(*p).is_some())
            .collect(),
        _ => Vec::new(),
    }
}

struct Ctx {
    /// every value's pointer storage class
    pointers: PointerClasses,
    /// module-scope variable id → storage class
    globals: HashMap<Word, StorageClass>,
    /// module-scope variables with an initializer (program-scope constants)
    initialised: HashSet<Word>,
}

impl Ctx {
    fn new(m: &dr::Module) -> Ctx {
        let mut cx = Ctx {
            pointers: PointerClasses::of(m),
            globals: HashMap::new(),
            initialised: HashSet::new(),
        };
        for i in &m.types_global_values {
            if i.class.opcode == Op::Variable {
                if let (Some(id), Some(Operand::StorageClass(sc))) =
                    (i.result_id, i.operands.first())
                {
                    cx.globals.insert(id, *sc);
                    if i.operands.len() > 1 {
                        cx.initialised.insert(id);
                    }
                }
            }
        }
        cx
    }
    fn class_of_ptr(&self, id: Word) -> Option<StorageClass> {
        self.pointers.class(id)
    }
}

fn id_operands(i: &Instruction) -> impl Iterator<Item = Word> + '_ {
    i.operands.iter().filter_map(|o| match o {
        Operand::IdRef(w) => Some(*w),
        _ => None,
    })
}

fn writes_memory(op: Op) -> bool {
    matches!(
        op,
        Op::Store | Op::CopyMemory | Op::CopyMemorySized | Op::AtomicStore
    ) || is_atomic_rmw(op)
}

fn is_atomic_rmw(op: Op) -> bool {
    matches!(
        op,
        Op::AtomicExchange
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
            | Op::AtomicFlagClear
    )
}

fn is_global_class(sc: Option<StorageClass>) -> bool {
    !matches!(
        sc,
        Some(StorageClass::Function)
            | Some(StorageClass::Workgroup)
            | Some(StorageClass::Private)
            | Some(StorageClass::Input)
    )
}

/// Most nested calls followed.
const MAX_CALL_DEPTH: u32 = 8;

/// The taint state of one function after the fixpoint (see the module docs).
struct Taint {
    /// pointer id → base pointer it was derived from
    base: HashMap<Word, Word>,
    /// function-scope variables
    local_vars: HashSet<Word>,
    /// successors by block position
    succ: Vec<Vec<usize>>,
    /// data-dependent values
    tainted: HashSet<Word>,
    /// blocks under data-dependent control
    conditional: Vec<bool>,
    /// the function's parameters, in order
    params: Vec<Word>,
}

impl Taint {
    fn root(&self, mut p: Word) -> Word {
        for _ in 0..64 {
            match self.base.get(&p) {
                Some(b) => p = *b,
                None => break,
            }
        }
        p
    }
}

/// Taint propagation over function `f` whose parameters are tainted where `param_taint`
/// says (missing entries: clean) and which is called under data-dependent control when
/// `under_condition`.
fn propagate(cx: &Ctx, f: &dr::Function, param_taint: &[bool], under_condition: bool) -> Taint {
    let (base, local_vars) = pointer_bases(f);
    let label = |b: &dr::Block| b.label.as_ref().and_then(|l| l.result_id);
    let index: HashMap<Word, usize> = f
        .blocks
        .iter()
        .enumerate()
        .filter_map(|(n, b)| label(b).map(|l| (l, n)))
        .collect();
    let params: HashSet<Word> = f.parameters.iter().filter_map(|p| p.result_id).collect();
    let root = |mut p: Word| -> Word {
        for _ in 0..64 {
            match base.get(&p) {
                Some(b) => p = *b,
                None => break,
            }
        }
        p
    };
    // CFG and post-dominators (iterative, over a virtual exit).
    let nb = f.blocks.len();
    let succ: Vec<Vec<usize>> = f
        .blocks
        .iter()
        .map(|b| match b.instructions.last() {
            Some(t) => match t.class.opcode {
                Op::Branch | Op::BranchConditional | Op::Switch => id_operands(t)
                    .filter_map(|w| index.get(&w).copied())
                    .collect(),
                _ => Vec::new(),
            },
            None => Vec::new(),
        })
        .collect();
    let pdom = post_dominator_sets(&succ);
    let post_dominates = |p: usize, b: usize| pdom[b][p / 64] >> (p % 64) & 1 == 1;

    // Fixpoint: tainted values, tainted private variables, data-conditional blocks.
    let mut tainted: HashSet<Word> = f
        .parameters
        .iter()
        .zip(param_taint)
        .filter(|(_, t)| **t)
        .filter_map(|(p, _)| p.result_id)
        .collect();
    let mut tainted_vars: HashSet<Word> = HashSet::new();
    let mut conditional = vec![under_condition; nb];
    let mut joins: HashSet<usize> = HashSet::new();
    loop {
        let before = (tainted.len(), tainted_vars.len(), joins.len());
        let before_cond = conditional.iter().filter(|c| **c).count();
        for (n, b) in f.blocks.iter().enumerate() {
            for i in &b.instructions {
                let op = i.class.opcode;
                let any_tainted = id_operands(i).any(|w| tainted.contains(&w));
                let t = match op {
                    Op::Load => {
                        let p = match i.operands.first() {
                            Some(Operand::IdRef(p)) => *p,
                            _ => 0,
                        };
                        let r = root(p);
                        if tainted.contains(&p) {
                            true
                        } else if local_vars.contains(&r) {
                            tainted_vars.contains(&r)
                        } else if let Some(sc) = cx.globals.get(&r) {
                            match sc {
                                StorageClass::Input => false,
                                StorageClass::UniformConstant => !cx.initialised.contains(&r),
                                _ => true,
                            }
                        } else {
                            // buffers passed as arguments, or pointers of unknown origin
                            let _ = params.contains(&r);
                            true
                        }
                    }
                    Op::FunctionCall => true,
                    Op::Phi => {
                        any_tainted
                            || joins.contains(&n)
                            || i.operands.chunks(2).any(|pair| match pair.get(1) {
                                Some(Operand::IdRef(pred)) => {
                                    index.get(pred).is_some_and(|x| conditional[*x])
                                }
                                _ => false,
                            })
                    }
                    _ if is_atomic_rmw(op) || op == Op::AtomicLoad => true,
                    _ => any_tainted,
                };
                if t {
                    if let Some(r) = i.result_id {
                        tainted.insert(r);
                    }
                }
                // private variables receiving data, or written under data-dependent control
                if op == Op::Store || op == Op::CopyMemory || op == Op::CopyMemorySized {
                    if let Some(Operand::IdRef(p)) = i.operands.first() {
                        let r = root(*p);
                        if local_vars.contains(&r) && (any_tainted || conditional[n]) {
                            tainted_vars.insert(r);
                        }
                    }
                }
            }
            // branches on data
            if let Some(term) = b.instructions.last() {
                let cond = match term.class.opcode {
                    Op::BranchConditional | Op::Switch => match term.operands.first() {
                        Some(Operand::IdRef(c)) => tainted.contains(c),
                        _ => false,
                    },
                    _ => false,
                };
                if cond {
                    // blocks reachable from the successors before a post-dominator of n
                    let mut stack: Vec<usize> = succ[n].clone();
                    let mut seen = vec![false; nb];
                    while let Some(x) = stack.pop() {
                        if seen[x] {
                            continue;
                        }
                        seen[x] = true;
                        if post_dominates(x, n) {
                            joins.insert(x);
                            continue;
                        }
                        conditional[x] = true;
                        stack.extend(succ[x].iter().copied());
                    }
                }
            }
        }
        let after_cond = conditional.iter().filter(|c| **c).count();
        if (tainted.len(), tainted_vars.len(), joins.len()) == before && after_cond == before_cond {
            break;
        }
    }
    Taint {
        base,
        local_vars,
        succ,
        tainted,
        conditional,
        params: f.parameters.iter().filter_map(|p| p.result_id).collect(),
    }
}

/// Pointer provenance of function `f`: pointer id → the pointer it was derived from
/// (access chains, casts, copies), and the function's variables.
fn pointer_bases(f: &dr::Function) -> (HashMap<Word, Word>, HashSet<Word>) {
    let mut base: HashMap<Word, Word> = HashMap::new();
    let mut local_vars: HashSet<Word> = HashSet::new();
    for b in &f.blocks {
        for i in &b.instructions {
            match i.class.opcode {
                Op::Variable => {
                    if let Some(r) = i.result_id {
                        local_vars.insert(r);
                    }
                }
                Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain
                | Op::Bitcast
                | Op::CopyObject
                | Op::PtrCastToGeneric
                | Op::GenericCastToPtr
                | Op::GenericCastToPtrExplicit => {
                    if let (Some(r), Some(Operand::IdRef(b0))) = (i.result_id, i.operands.first()) {
                        base.insert(r, *b0);
                    }
                }
                _ => {}
            }
        }
    }
    (base, local_vars)
}

/// Post-dominator sets of a CFG given by its successor lists: bit `p` of set `b` (64
/// blocks per word) is set when block `p` post-dominates block `b` (iterative, over a
/// virtual exit joined to every block without successors).
fn post_dominator_sets(succ: &[Vec<usize>]) -> Vec<Vec<u64>> {
    let nb = succ.len();
    let words = nb.div_ceil(64).max(1);
    let full = vec![u64::MAX; words];
    let mut pdom: Vec<Vec<u64>> = (0..nb)
        .map(|b| {
            if succ[b].is_empty() {
                let mut v = vec![0u64; words];
                v[b / 64] |= 1 << (b % 64);
                v
            } else {
                full.clone()
            }
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            if succ[b].is_empty() {
                continue;
            }
            let mut v = full.clone();
            for s in &succ[b] {
                for (x, y) in v.iter_mut().zip(&pdom[*s]) {
                    *x &= *y;
                }
            }
            v[b / 64] |= 1 << (b % 64);
            if v != pdom[b] {
                pdom[b] = v;
                changed = true;
            }
        }
    }
    pdom
}

/// The verdict for function `f` whose parameters are tainted where `param_taint` says
/// (missing entries: clean) and which is called under data-dependent control when
/// `under_condition`.
fn analyse(
    cx: &Ctx,
    m: &dr::Module,
    f: &dr::Function,
    param_taint: &[bool],
    under_condition: bool,
    depth: u32,
    access: Access,
) -> Option<String> {
    if depth > MAX_CALL_DEPTH {
        return Some("calls nested too deeply to analyse".into());
    }
    let t = propagate(cx, f, param_taint, under_condition);
    let (tainted, conditional, local_vars) = (&t.tainted, &t.conditional, &t.local_vars);
    let root = |p: Word| t.root(p);
    // The verdict: global writes with data-dependent addresses or under data-dependent control.
    for (n, b) in f.blocks.iter().enumerate() {
        for i in &b.instructions {
            if i.class.opcode == Op::FunctionCall {
                let Some(Operand::IdRef(callee)) = i.operands.first() else {
                    continue;
                };
                let Some(cf) = m
                    .functions
                    .iter()
                    .find(|g| g.def.as_ref().and_then(|d| d.result_id) == Some(*callee))
                else {
                    continue;
                };
                let args: Vec<bool> = i.operands[1..]
                    .iter()
                    .map(|o| matches!(o, Operand::IdRef(w) if tainted.contains(w)))
                    .collect();
                if let Some(r) = analyse(cx, m, cf, &args, conditional[n], depth + 1, access) {
                    return Some(r);
                }
                continue;
            }
            if access == Access::Loads {
                for p in loaded_pointers(cx, i) {
                    let r = root(p);
                    if local_vars.contains(&r) || !is_global_class(cx.class_of_ptr(p)) {
                        continue;
                    }
                    // (a built-in's offset operand moves its address too)
                    let ext_taint = i.class.opcode == Op::ExtInst
                        && id_operands(i).any(|w| tainted.contains(&w));
                    if tainted.contains(&p) || ext_taint {
                        return Some("a global load's address depends on memory contents".into());
                    }
                    if conditional[n] {
                        return Some("a global load is conditional on memory contents".into());
                    }
                }
                continue;
            }
            if !writes_memory(i.class.opcode) {
                continue;
            }
            let Some(Operand::IdRef(p)) = i.operands.first() else {
                continue;
            };
            let r = root(*p);
            if local_vars.contains(&r) || !is_global_class(cx.class_of_ptr(*p)) {
                continue;
            }
            if tainted.contains(p) {
                return Some("a global store's address depends on memory contents".into());
            }
            if conditional[n] {
                return Some(
                    "a global store is conditional on memory contents (data-dependent footprint)"
                        .into(),
                );
            }
        }
    }
    None
}

/// A loop of a kernel that footprint emulation may jump over (see [`loop_skips`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LoopSkip {
    /// The loop header's label.
    pub header: Word,
    /// Labels of the blocks outside the loop that branch to its header.
    pub entries: Vec<Word>,
    /// The label of the one block that every exit of the loop leads to.
    pub exit: Word,
    /// Kernel parameters (by position) whose buffers the loop may read; `None` when the
    /// buffer of a read is unknown (any buffer argument may then be read).
    pub reads: Option<Vec<u32>>,
}

/// `OpenCL.std` extended instructions that write memory.
const CL_STD_STORES: [rspirv::spirv::CLOp; 7] = {
    use rspirv::spirv::CLOp::*;
    [
        vstoren,
        vstore_half,
        vstore_half_r,
        vstore_halfn,
        vstore_halfn_r,
        vstorea_halfn,
        vstorea_halfn_r,
    ]
};

/// Loops of kernel function `f` that cannot change which bytes the kernel writes, so that
/// an emulation that only wants the write footprint (`exec::footprint`) may jump from the
/// loop's entry straight to its exit. This is what makes the footprint of a kernel such as
/// N-body (64 work-items × 524,288 bodies per work-group) cheap: its all-pairs loop only
/// reads buffers, stages them through `__local` memory and accumulates.
///
/// A natural loop (header `h` dominating the source of a back edge) qualifies when:
/// * it stores only to `__local` memory, or through a pointer that a block dominating the
///   loop's header already stored to (the accumulation of a naive matrix product into its
///   output element: PolyBench's gemm, 2mm, 3mm, whose footprint derivations took 0.4-0.7 s
///   on an H200 host); no other global, private or generic store, no atomic, no call, no
///   `async_work_group_copy`, no vstore; and it does not return;
/// * all its exit edges lead to one block `X`, and every edge that enters it is a plain or
///   conditional branch;
/// * every value defined in it and used after it is data-dependent (tainted, module docs),
///   and so is every φ of `X`.
///
/// The footprint derivation is only run when [`data_dependent_writes`] found that no store
/// address or store condition depends on tainted values, so the values a skipped loop
/// leaves undefined cannot change the footprint. Outermost qualifying loops are returned;
/// loops nested in them are not listed. Only the kernel function itself is examined.
pub(crate) fn loop_skips(m: &dr::Module, f: &dr::Function) -> Vec<LoopSkip> {
    let f = unwrap_kernel(m, f);
    let cx = Ctx::new(m);
    let t = propagate(&cx, f, &[], false);
    let nb = f.blocks.len();
    if nb == 0 {
        return Vec::new();
    }
    let mut preds: Vec<Vec<usize>> = vec![Vec::new(); nb];
    for (b, ss) in t.succ.iter().enumerate() {
        for &x in ss {
            preds[x].push(b);
        }
    }
    // reachable blocks; immediate dominators = immediate post-dominators of the reverse
    // CFG (its one block without successors is the entry)
    let mut reach = vec![false; nb];
    let mut stack = vec![0usize];
    while let Some(b) = stack.pop() {
        if !std::mem::replace(&mut reach[b], true) {
            stack.extend(t.succ[b].iter().copied());
        }
    }
    let reverse: Vec<Vec<usize>> = preds
        .iter()
        .map(|p| p.iter().copied().filter(|x| reach[*x]).collect())
        .collect();
    let idom = super::cfg::ipdoms(&reverse);
    let dominates = |a: usize, mut b: usize| {
        for _ in 0..=nb {
            if a == b {
                return true;
            }
            match idom[b] {
                Some(p) => b = p,
                None => return false,
            }
        }
        false
    };
    // natural loops by header
    let mut bodies: HashMap<usize, Vec<bool>> = HashMap::new();
    for u in (0..nb).filter(|u| reach[*u]) {
        for &h in &t.succ[u] {
            if !dominates(h, u) {
                continue;
            }
            let body = bodies.entry(h).or_insert_with(|| {
                let mut v = vec![false; nb];
                v[h] = true;
                v
            });
            let mut stack = vec![u];
            while let Some(x) = stack.pop() {
                if !std::mem::replace(&mut body[x], true) {
                    stack.extend(preds[x].iter().copied().filter(|p| reach[*p]));
                }
            }
        }
    }
    let mut headers: Vec<(usize, usize)> = bodies
        .iter()
        .map(|(h, b)| (b.iter().filter(|x| **x).count(), *h))
        .collect();
    headers.sort_unstable_by(|a, b| b.cmp(a));
    let label = |b: usize| f.blocks[b].label.as_ref().and_then(|l| l.result_id);
    let mut covered = vec![false; nb];
    let mut out = Vec::new();
    for (_, h) in headers {
        if covered[h] {
            continue;
        }
        let body = &bodies[&h];
        // global pointers stored to before the loop, in blocks that dominate its header: a
        // loop storing again to one of them adds nothing to the footprint
        let stored_before: HashSet<Word> = (0..nb)
            .filter(|b| reach[*b] && !body[*b] && dominates(*b, h))
            .flat_map(|b| f.blocks[b].instructions.iter())
            .filter(|i| i.class.opcode == Op::Store)
            .filter_map(|i| match i.operands.first() {
                Some(Operand::IdRef(p)) => Some(*p),
                _ => None,
            })
            .collect();
        if let Some(skip) = qualify(&cx, &t, f, (h, body), &preds, &stored_before) {
            if let (Some(header), Some(exit)) = (label(h), label(skip.0)) {
                let entries: Vec<Word> = skip.1.iter().filter_map(|p| label(*p)).collect();
                if entries.len() == skip.1.len() {
                    for (c, b) in covered.iter_mut().zip(body) {
                        *c |= *b;
                    }
                    out.push(LoopSkip {
                        header,
                        entries,
                        exit,
                        reads: skip.2,
                    });
                }
            }
        }
    }
    out
}

/// The function that does kernel `f`'s work: llvm-spirv emits each kernel as a wrapper
/// whose one block calls the kernel's body with the same parameters, in order.
fn unwrap_kernel<'a>(m: &'a dr::Module, mut f: &'a dr::Function) -> &'a dr::Function {
    for _ in 0..MAX_CALL_DEPTH {
        let [b] = f.blocks.as_slice() else {
            return f;
        };
        let calls: Vec<&Instruction> = b
            .instructions
            .iter()
            .filter(|i| i.class.opcode == Op::FunctionCall)
            .collect();
        let [call] = calls.as_slice() else {
            return f;
        };
        let params: Vec<Operand> = f
            .parameters
            .iter()
            .filter_map(|p| p.result_id.map(Operand::IdRef))
            .collect();
        if call.operands.get(1..) != Some(params.as_slice()) {
            return f;
        }
        let Some(Operand::IdRef(callee)) = call.operands.first() else {
            return f;
        };
        match m
            .functions
            .iter()
            .find(|g| g.def.as_ref().and_then(|d| d.result_id) == Some(*callee))
        {
            Some(g) => f = g,
            None => return f,
        }
    }
    f
}

/// The exit block, the entry blocks and the buffer parameters read of loop `body` (header
/// `h`) when it qualifies for [`loop_skips`].
#[allow(clippy::type_complexity)]
fn qualify(
    cx: &Ctx,
    t: &Taint,
    f: &dr::Function,
    (h, body): (usize, &[bool]),
    preds: &[Vec<usize>],
    stored_before: &HashSet<Word>,
) -> Option<(usize, Vec<usize>, Option<Vec<u32>>)> {
    let nb = f.blocks.len();
    let in_body = |b: usize| body[b];
    let mut defined: HashSet<Word> = HashSet::new();
    let mut reads: Option<Vec<u32>> = Some(Vec::new());
    let read_ptr = |p: Word, reads: &mut Option<Vec<u32>>| {
        let class = cx.class_of_ptr(p);
        if matches!(
            class,
            Some(StorageClass::Workgroup)
                | Some(StorageClass::Function)
                | Some(StorageClass::Private)
                | Some(StorageClass::Input)
        ) {
            return;
        }
        let r = t.root(p);
        if t.local_vars.contains(&r) || cx.globals.contains_key(&r) {
            return;
        }
        match t.params.iter().position(|x| *x == r) {
            Some(i) => {
                if let Some(v) = reads.as_mut() {
                    if !v.contains(&(i as u32)) {
                        v.push(i as u32);
                    }
                }
            }
            None => *reads = None,
        }
    };
    let mut exit: Option<usize> = None;
    for b in (0..nb).filter(|b| in_body(*b)) {
        if t.succ[b].is_empty() {
            return None; // returns or ends inside the loop
        }
        for &s in &t.succ[b] {
            if !in_body(s) {
                match exit {
                    None => exit = Some(s),
                    Some(x) if x == s => {}
                    Some(_) => return None,
                }
            }
        }
        for i in &f.blocks[b].instructions {
            if let Some(r) = i.result_id {
                defined.insert(r);
            }
            let op = i.class.opcode;
            match op {
                Op::FunctionCall
                | Op::AtomicLoad
                | Op::GroupAsyncCopy
                | Op::GroupWaitEvents
                | Op::Return
                | Op::ReturnValue
                | Op::Kill
                | Op::Unreachable => return None,
                Op::Store | Op::CopyMemory | Op::CopyMemorySized => {
                    let Some(Operand::IdRef(p)) = i.operands.first() else {
                        return None;
                    };
                    // a store to global memory through a pointer the kernel already stored
                    // to before the loop (`c[i] = 0; for (k..) c[i] += a[k] * b[k];`, the
                    // naive matrix products) writes no byte the footprint lacks
                    let again = op == Op::Store && stored_before.contains(p);
                    if cx.class_of_ptr(*p) != Some(StorageClass::Workgroup) && !again {
                        return None;
                    }
                    if op != Op::Store {
                        if let Some(Operand::IdRef(src)) = i.operands.get(1) {
                            read_ptr(*src, &mut reads);
                        }
                    }
                }
                Op::Load => {
                    if let Some(Operand::IdRef(p)) = i.operands.first() {
                        read_ptr(*p, &mut reads);
                    }
                }
                Op::ExtInst => {
                    if let Some(Operand::LiteralExtInstInteger(n)) = i.operands.get(1) {
                        if CL_STD_STORES.iter().any(|x| *x as u32 == *n) {
                            return None;
                        }
                    }
                    for o in i.operands.iter().skip(2) {
                        if let Operand::IdRef(p) = o {
                            if cx.class_of_ptr(*p).is_some() {
                                read_ptr(*p, &mut reads);
                            }
                        }
                    }
                }
                _ if writes_memory(op) => return None,
                _ => {}
            }
        }
    }
    let exit = exit?;
    // entries: plain or conditional branches from outside
    let entries: Vec<usize> = preds[h].iter().copied().filter(|p| !in_body(*p)).collect();
    if entries.is_empty() {
        return None;
    }
    for &p in &entries {
        let term = f.blocks[p].instructions.last()?;
        if !matches!(term.class.opcode, Op::Branch | Op::BranchConditional) {
            return None;
        }
    }
    // values that escape the loop, and the exit's φs, must be data-dependent
    for (b, blk) in f.blocks.iter().enumerate() {
        if in_body(b) {
            continue;
        }
        for i in &blk.instructions {
            if b == exit && i.class.opcode == Op::Phi {
                if !i.result_id.is_some_and(|r| t.tainted.contains(&r)) {
                    return None;
                }
                continue;
            }
            if id_operands(i).any(|w| defined.contains(&w) && !t.tainted.contains(&w)) {
                return None;
            }
        }
    }
    Some((exit, entries, reads))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(src: &str, kernel: &str) -> Option<String> {
        let words = match super::super::compile_source(
            src,
            "",
            &super::super::FrontendOptions::resolve(None, None, |k| std::env::var_os(k)),
        ) {
            Ok(w) => w,
            Err(e) => panic!("compile: {e}"),
        };
        data_dependent_writes(&words, kernel).unwrap()
    }

    #[test]
    fn id_indexed_writes_are_clean() {
        let src = "__kernel void mm(__global const float *a, __global float *c, uint n) {
            uint x = get_global_id(0), y = get_global_id(1); float acc = 0;
            for (uint k = 0; k < n; k++) acc += a[y * n + k];
            if (x < n) c[y * n + x] = acc; }";
        assert_eq!(verdict(src, "mm"), None);
    }

    #[test]
    fn data_conditional_and_scatter_writes_are_flagged() {
        let fw = "__kernel void fw(__global uint *d, uint n, uint k) {
            uint x = get_global_id(0), y = get_global_id(1);
            uint via = d[y * n + k] + d[k * n + x];
            if (via < d[y * n + x]) d[y * n + x] = via; }";
        assert!(verdict(fw, "fw").unwrap().contains("conditional"));
        let scatter = "__kernel void sc(__global const int *idx, __global float *o) {
            uint i = get_global_id(0); o[idx[i]] = 1.0f; }";
        assert!(verdict(scatter, "sc").unwrap().contains("address"));
        let loop_on_data = "__kernel void ld(__global const int *len, __global float *o) {
            uint i = get_global_id(0);
            for (int j = 0; j < len[0]; j++) o[i * 64 + j] = j; }";
        assert!(verdict(loop_on_data, "ld").is_some());
    }
}
