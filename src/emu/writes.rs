//! Static check of which buffer arguments a kernel may store through (issue 19 item 1).
//!
//! Project mode (`intercept::project`) needs, at the launch, the buffers the kernel only
//! reads: their contents stay as they were before the launch until a later command writes
//! them, so the emulation can read them straight from the app's buffer instead of a copy
//! taken before the launch (a deferred, copy-on-write snapshot).
//!
//! The analysis follows every pointer that a memory-writing instruction uses back to where
//! it came from (access chains, casts, copies, φ and select, through calls into the
//! module's functions):
//! * a store, atomic, `OpCopyMemory[Sized]` target, `vstore*`, or any other instruction
//!   not known to only read through a pointer operand (`async_work_group_copy`,
//!   `fract(x, p)`, a pointer converted to an integer or stored to memory, …) *may write*
//!   through it;
//! * pointers in `__private`, `__local` or `__constant` memory are ignored; a root that is
//!   a kernel parameter marks that argument written; program-scope variables are not
//!   arguments and are ignored;
//! * any other root (a pointer loaded from memory, made from an integer, returned by a
//!   call, undefined) makes the answer unknown: every argument may be written.
//!
//! The answer is conservative: an argument reported unwritten is never stored through.

use super::pointer_classes::PointerClasses;
use rspirv::dr::{self, Instruction, Operand};
use rspirv::spirv::{Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// Most nested calls followed before the answer becomes unknown.
const MAX_DEPTH: u32 = 8;

/// For each parameter of kernel `kernel` in the parsed module `m`, whether the kernel may
/// store through it; `None` when a store goes through a pointer of unknown origin (every
/// argument may then be written) or there is no such kernel.
pub fn written_params(m: &dr::Module, kernel: &str) -> Option<Vec<bool>> {
    accessed_params(m, kernel).map(|v| v.iter().map(|a| a.written).collect())
}

/// How a kernel may use a parameter's memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Access {
    /// Some instruction may load (or read-modify-write) through it.
    pub read: bool,
    /// Some instruction may store through it.
    pub written: bool,
}

/// For each parameter of kernel `kernel`, whether the kernel may read and whether it may
/// write through it (the same walk as [`written_params`], loads counted too: `OpLoad`,
/// atomics, copy sources, `vload*`, and any instruction not known to only write); `None` when
/// an access goes through a pointer of unknown origin or there is no such kernel. A buffer
/// the kernel writes but never reads needs no pre-launch contents for an emulation.
pub fn accessed_params(m: &dr::Module, kernel: &str) -> Option<Vec<Access>> {
    let entry = m
        .entry_points
        .iter()
        .find(|ep| matches!(ep.operands.get(2), Some(Operand::LiteralString(n)) if n == kernel))
        .and_then(|ep| match ep.operands.get(1) {
            Some(Operand::IdRef(f)) => Some(*f),
            _ => None,
        })?;
    let cx = Cx::new(m);
    let mut memo = HashMap::new();
    cx.summary(entry, 0, &mut memo)
}

/// Module-wide facts the analysis looks up.
struct Cx<'a> {
    /// every value's pointer storage class
    pointers: PointerClasses,
    /// module-scope variables
    globals: HashSet<Word>,
    /// function id → function
    funcs: HashMap<Word, &'a dr::Function>,
    /// id of the `OpenCL.std` import
    cl_std: Option<Word>,
}

/// Where a pointer comes from.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Root {
    /// The function's parameter at this position.
    Param(usize),
    /// Memory that is not an argument's buffer (a variable).
    NotArg,
    /// Anything else.
    Unknown,
}

impl<'a> Cx<'a> {
    fn new(m: &'a dr::Module) -> Cx<'a> {
        let mut cx = Cx {
            pointers: PointerClasses::of(m),
            globals: HashSet::new(),
            funcs: HashMap::new(),
            cl_std: None,
        };
        for i in &m.ext_inst_imports {
            if matches!(i.operands.first(), Some(Operand::LiteralString(s)) if s == "OpenCL.std") {
                cx.cl_std = i.result_id;
            }
        }
        for i in &m.types_global_values {
            if i.class.opcode == Op::Variable {
                if let Some(id) = i.result_id {
                    cx.globals.insert(id);
                }
            }
        }
        for f in &m.functions {
            if let Some(id) = f.def.as_ref().and_then(|d| d.result_id) {
                cx.funcs.insert(id, f);
            }
        }
        cx
    }

    /// The storage class of value `id` when it is a pointer.
    fn class(&self, id: Word) -> Option<StorageClass> {
        self.pointers.class(id)
    }

    /// True when `id` is a pointer that may point into an argument's buffer.
    fn may_be_buffer(&self, id: Word) -> bool {
        match self.class(id) {
            None => false,
            Some(sc) => !matches!(
                sc,
                StorageClass::Function
                    | StorageClass::Private
                    | StorageClass::Workgroup
                    | StorageClass::Input
                    | StorageClass::UniformConstant
            ),
        }
    }

    /// Per parameter of function `f`: may it be read, written through (`None`: unknown).
    fn summary(
        &self,
        f: Word,
        depth: u32,
        memo: &mut HashMap<Word, Option<Vec<Access>>>,
    ) -> Option<Vec<Access>> {
        if let Some(s) = memo.get(&f) {
            return s.clone();
        }
        if depth > MAX_DEPTH {
            return None;
        }
        let func = *self.funcs.get(&f)?;
        let s = self.analyse(func, depth, memo);
        memo.insert(f, s.clone());
        s
    }

    fn analyse(
        &self,
        f: &dr::Function,
        depth: u32,
        memo: &mut HashMap<Word, Option<Vec<Access>>>,
    ) -> Option<Vec<Access>> {
        let params: Vec<Word> = f.parameters.iter().filter_map(|p| p.result_id).collect();
        let defs: HashMap<Word, &Instruction> = f
            .blocks
            .iter()
            .flat_map(|b| &b.instructions)
            .filter_map(|i| i.result_id.map(|r| (r, i)))
            .collect();
        let mut access = vec![Access::default(); params.len()];
        // marks the roots of pointer `p` read and/or written; false when one is unknown
        let mark = |p: Word, a: Access, access: &mut Vec<Access>| -> bool {
            if !self.may_be_buffer(p) {
                return true;
            }
            for r in self.roots(p, &params, &defs) {
                match r {
                    Root::Param(i) => {
                        access[i].read |= a.read;
                        access[i].written |= a.written;
                    }
                    Root::NotArg => {}
                    Root::Unknown => return false,
                }
            }
            true
        };
        const R: Access = Access {
            read: true,
            written: false,
        };
        const W: Access = Access {
            read: false,
            written: true,
        };
        const RW: Access = Access {
            read: true,
            written: true,
        };
        for i in f.blocks.iter().flat_map(|b| &b.instructions) {
            let ids: Vec<Word> = i
                .operands
                .iter()
                .filter_map(|o| match o {
                    Operand::IdRef(w) => Some(*w),
                    _ => None,
                })
                .collect();
            let op = i.class.opcode;
            let through: Vec<(Word, Access)> = match op {
                // pointer derivations: followed by `roots`
                Op::AccessChain
                | Op::InBoundsAccessChain
                | Op::PtrAccessChain
                | Op::InBoundsPtrAccessChain
                | Op::Bitcast
                | Op::CopyObject
                | Op::PtrCastToGeneric
                | Op::GenericCastToPtr
                | Op::GenericCastToPtrExplicit
                | Op::Phi
                | Op::Select => Vec::new(),
                // loads through the pointer
                Op::Load | Op::AtomicLoad => ids.first().map(|p| (*p, R)).into_iter().collect(),
                // no memory access
                Op::PtrEqual
                | Op::PtrNotEqual
                | Op::PtrDiff
                | Op::GenericPtrMemSemantics
                | Op::LifetimeStart
                | Op::LifetimeStop => Vec::new(),
                // the target, and a pointer value stored away (it escapes: anything may
                // happen through it)
                Op::Store => ids
                    .iter()
                    .enumerate()
                    .map(|(n, p)| (*p, if n == 0 { W } else { RW }))
                    .collect(),
                Op::CopyMemory | Op::CopyMemorySized => ids
                    .iter()
                    .take(2)
                    .enumerate()
                    .map(|(n, p)| (*p, if n == 0 { W } else { R }))
                    .collect(),
                Op::FunctionCall => {
                    let Some((&callee, args)) = ids.split_first() else {
                        continue;
                    };
                    match self.summary(callee, depth + 1, memo) {
                        Some(s) => args.iter().zip(&s).map(|(p, a)| (*p, *a)).collect(),
                        // unknown callee (or too deep): any pointer passed may be accessed
                        None if self.funcs.contains_key(&callee) => return None,
                        None => args.iter().map(|p| (*p, RW)).collect(),
                    }
                }
                Op::ExtInst if self.read_only_ext(i) => ids.iter().map(|p| (*p, R)).collect(),
                // atomics, vstores, async copies, pointer-to-integer conversions, …
                _ => ids.iter().map(|p| (*p, RW)).collect(),
            };
            for (p, a) in through {
                if !mark(p, a, &mut access) {
                    return None;
                }
            }
        }
        Some(access)
    }

    /// `OpenCL.std` instructions that only read through their pointer operands.
    fn read_only_ext(&self, i: &Instruction) -> bool {
        use rspirv::spirv::CLOp as C;
        let set = matches!(i.operands.first(), Some(Operand::IdRef(s)) if Some(*s) == self.cl_std);
        let n = match i.operands.get(1) {
            Some(Operand::LiteralExtInstInteger(n)) => *n,
            _ => return false,
        };
        set && [
            C::vloadn,
            C::vload_half,
            C::vload_halfn,
            C::vloada_halfn,
            C::printf,
            C::prefetch,
        ]
        .iter()
        .any(|c| *c as u32 == n)
    }

    /// The roots of pointer `p` in a function with parameters `params` and definitions
    /// `defs`.
    fn roots(&self, p: Word, params: &[Word], defs: &HashMap<Word, &Instruction>) -> HashSet<Root> {
        let mut out = HashSet::new();
        let mut seen = HashSet::new();
        let mut stack = vec![p];
        while let Some(x) = stack.pop() {
            if !seen.insert(x) {
                continue;
            }
            if let Some(n) = params.iter().position(|q| *q == x) {
                out.insert(Root::Param(n));
                continue;
            }
            if self.globals.contains(&x) {
                out.insert(Root::NotArg);
                continue;
            }
            let Some(i) = defs.get(&x) else {
                out.insert(Root::Unknown);
                continue;
            };
            let ids = i.operands.iter().filter_map(|o| match o {
                Operand::IdRef(w) => Some(*w),
                _ => None,
            });
            match i.class.opcode {
                Op::Variable => {
                    out.insert(Root::NotArg);
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
                    stack.extend(ids.take(1));
                }
                // incoming values (labels are not pointers and end as Unknown: skip them)
                Op::Phi => stack.extend(ids.step_by(2)),
                Op::Select => stack.extend(ids.skip(1)),
                _ => {
                    out.insert(Root::Unknown);
                }
            }
        }
        out
    }
}

/// [`accessed_params`] for every kernel of SPIR-V `words`; empty when they do not parse.
pub fn accessed_by_kernel_words(words: &[u32]) -> HashMap<String, Option<Vec<Access>>> {
    let Ok(Ok(m)) = std::panic::catch_unwind(|| dr::load_words(words)) else {
        return HashMap::new();
    };
    m.entry_points
        .iter()
        .filter_map(|ep| match ep.operands.get(2) {
            Some(Operand::LiteralString(n)) => Some(n.clone()),
            _ => None,
        })
        .map(|n| {
            let a = accessed_params(&m, &n);
            (n, a)
        })
        .collect()
}

/// [`written_params`] for every kernel of the parsed module.
pub fn written_by_kernel(m: &dr::Module) -> HashMap<String, Option<Vec<bool>>> {
    m.entry_points
        .iter()
        .filter_map(|ep| match ep.operands.get(2) {
            Some(Operand::LiteralString(n)) => Some(n.clone()),
            _ => None,
        })
        .map(|n| {
            let w = written_params(m, &n);
            (n, w)
        })
        .collect()
}

/// [`written_by_kernel`] from SPIR-V words; empty when they do not parse.
pub fn written_by_kernel_words(words: &[u32]) -> HashMap<String, Option<Vec<bool>>> {
    match std::panic::catch_unwind(|| dr::load_words(words)) {
        Ok(Ok(m)) => written_by_kernel(&m),
        _ => HashMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::{compile_source, find_toolchain, FrontendOptions};

    fn fe() -> FrontendOptions {
        FrontendOptions::resolve(None, None, |k| std::env::var_os(k))
    }

    #[test]
    fn stores_through_arguments_are_found() {
        if find_toolchain(&fe()).is_none() {
            eprintln!("SKIP: no toolchain");
            return;
        }
        let src = "void put(global float *p, int i, float v) { p[i] = v; }\n\
            kernel void a(global const float *x, global float *y, int n) {\n\
              int i = get_global_id(0); y[i] = x[i] * n; }\n\
            kernel void b(global float *x, global float *y, local float *t) {\n\
              int i = get_global_id(0); t[get_local_id(0)] = y[i];\n\
              barrier(CLK_LOCAL_MEM_FENCE); x[i] += t[0]; }\n\
            kernel void c(global float *x, global float *y, global float *z, int s) {\n\
              global float *p = s ? x : y; p[get_global_id(0)] = z[0]; }\n\
            kernel void d(global float *x, global float *y) { put(y, 1, x[0]); }\n\
            kernel void e(global float *x, global float4 *y) { vstore4(y[0], 0, x); }\n\
            kernel void f(global float *x, global uint *y) { atomic_inc(y); }\n\
            kernel void g(global ulong *x, global float *y) { ((global float *)x[0])[0] = y[0]; }\n\
            kernel void h(global const float *x, global float *y) {\n\
              float4 v = vload4(0, x); y[0] = v.x; }";
        let words = compile_source(src, "", &fe()).unwrap();
        let w = written_by_kernel_words(&words);
        let f = |k: &str| w.get(k).cloned().flatten();
        assert_eq!(f("a"), Some(vec![false, true, false]));
        assert_eq!(f("b"), Some(vec![true, false, false]));
        assert_eq!(f("c"), Some(vec![true, true, false, false]));
        assert_eq!(f("d"), Some(vec![false, true]));
        assert_eq!(f("e"), Some(vec![true, false]));
        assert_eq!(f("f"), Some(vec![false, true]));
        assert_eq!(
            w.get("g"),
            Some(&None),
            "a pointer made from a loaded integer"
        );
        assert_eq!(f("h"), Some(vec![false, true]));
        // reads too: a's x read, y only written; b reads y and reads and writes x (+=);
        // d passes x[0]'s value and y to put (y only written); e: vstore4 of a loaded float4
        let a = accessed_by_kernel_words(&words);
        let acc = |k: &str| -> Vec<(bool, bool)> {
            a[k].clone()
                .unwrap()
                .iter()
                .map(|x| (x.read, x.written))
                .collect()
        };
        assert_eq!(acc("a"), vec![(true, false), (false, true), (false, false)]);
        assert_eq!(acc("b"), vec![(true, true), (true, false), (false, false)]);
        assert_eq!(acc("d"), vec![(true, false), (false, true)]);
        assert_eq!(acc("e")[1], (true, false));
        assert_eq!(acc("h"), vec![(true, false), (false, true)]);
        // atomics read and write
        assert_eq!(acc("f")[1], (true, true));
    }
}
