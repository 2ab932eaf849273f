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
    let module = std::panic::catch_unwind(|| dr::load_words(words))
        .map_err(|_| EmuError::Internal("SPIR-V parse panicked".into()))?
        .map_err(|e| EmuError::Internal(format!("SPIR-V parse: {e}")))?;
    let entry = module
        .entry_points
        .iter()
        .find(|ep| matches!(ep.operands.get(2), Some(Operand::LiteralString(n)) if n == kernel))
        .and_then(|ep| match ep.operands.get(1) {
            Some(Operand::IdRef(f)) => Some(*f),
            _ => None,
        })
        .ok_or_else(|| EmuError::BadLaunch(format!("no kernel named {kernel}")))?;
    let cx = Ctx::new(&module);
    let func = module
        .functions
        .iter()
        .find(|f| f.def.as_ref().and_then(|d| d.result_id) == Some(entry))
        .ok_or_else(|| EmuError::BadLaunch(format!("no body for kernel {kernel}")))?;
    Ok(analyse(&cx, &module, func, &[], false, 0))
}

struct Ctx {
    /// pointer type id → storage class
    ptr_class: HashMap<Word, StorageClass>,
    /// module-scope variable id → storage class
    globals: HashMap<Word, StorageClass>,
    /// module-scope variables with an initializer (program-scope constants)
    initialised: HashSet<Word>,
    /// result id → result type id (every instruction with both)
    type_of: HashMap<Word, Word>,
}

impl Ctx {
    fn new(m: &dr::Module) -> Ctx {
        let mut cx = Ctx {
            ptr_class: HashMap::new(),
            globals: HashMap::new(),
            initialised: HashSet::new(),
            type_of: HashMap::new(),
        };
        for i in &m.types_global_values {
            match i.class.opcode {
                Op::TypePointer => {
                    if let (Some(id), Some(Operand::StorageClass(sc))) =
                        (i.result_id, i.operands.first())
                    {
                        cx.ptr_class.insert(id, *sc);
                    }
                }
                Op::Variable => {
                    if let (Some(id), Some(Operand::StorageClass(sc))) =
                        (i.result_id, i.operands.first())
                    {
                        cx.globals.insert(id, *sc);
                        if i.operands.len() > 1 {
                            cx.initialised.insert(id);
                        }
                    }
                }
                _ => {}
            }
            if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
                cx.type_of.insert(id, t);
            }
        }
        for f in &m.functions {
            for p in &f.parameters {
                if let (Some(id), Some(t)) = (p.result_id, p.result_type) {
                    cx.type_of.insert(id, t);
                }
            }
            for b in &f.blocks {
                for i in &b.instructions {
                    if let (Some(id), Some(t)) = (i.result_id, i.result_type) {
                        cx.type_of.insert(id, t);
                    }
                }
            }
        }
        cx
    }
    fn class_of_ptr(&self, id: Word) -> Option<StorageClass> {
        self.type_of
            .get(&id)
            .and_then(|t| self.ptr_class.get(t))
            .copied()
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
) -> Option<String> {
    if depth > MAX_CALL_DEPTH {
        return Some("calls nested too deeply to analyse".into());
    }
    // Pointer provenance: pointer id → base pointer it was derived from.
    let mut base: HashMap<Word, Word> = HashMap::new();
    let mut local_vars: HashSet<Word> = HashSet::new();
    let mut defs: HashMap<Word, (usize, &Instruction)> = HashMap::new();
    let label = |b: &dr::Block| b.label.as_ref().and_then(|l| l.result_id);
    let index: HashMap<Word, usize> = f
        .blocks
        .iter()
        .enumerate()
        .filter_map(|(n, b)| label(b).map(|l| (l, n)))
        .collect();
    let params: HashSet<Word> = f.parameters.iter().filter_map(|p| p.result_id).collect();
    for (n, b) in f.blocks.iter().enumerate() {
        for i in &b.instructions {
            if let Some(r) = i.result_id {
                defs.insert(r, (n, i));
            }
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
                if let Some(r) = analyse(cx, m, cf, &args, conditional[n], depth + 1) {
                    return Some(r);
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
    let _ = defs;
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(src: &str, kernel: &str) -> Option<String> {
        let words = match super::super::compile_source(src, "") {
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
