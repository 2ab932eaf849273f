//! Memory waiting periods of a warp: how many times a warp that issues in order waits for
//! its global loads (`WorkGroupStats::load_waits`).
//!
//! A GPU warp issues its instructions in order and does not wait for a load when it issues
//! it, only when an instruction reads the register the load writes (a scoreboard). The
//! loads issued before that first use are in flight together and return about together;
//! the wait ends all of them. Hong & Kim (ISCA'09, §3, Figure 3 and the "memory waiting
//! period" of their model) charge one such period per memory instruction; Sim et al.
//! (PPoPP'12, the GPUPerf extension of the same model, not in /work/shared/papers) divide
//! the memory instructions by the memory-level parallelism of a warp, the requests per
//! waiting period. This module counts the periods themselves, as the emulated warp meets
//! them, so that a loop body whose four loads are independent of each other waits once,
//! and a pointer chase waits once per load. It is the per-warp half of Wang et al.'s warp
//! pipeline (§IV-B, Figure 2: each warp consumes its trace in order and waits on the
//! resource an operation needs), without the timing.
//!
//! Model of the scoreboard, per warp: an epoch counter `E` (the waits so far) and, per
//! register slot, the epoch at which its value is ready. A global (or constant) load
//! issued in epoch `E` makes its destination ready at `E + 1`; an instruction that reads a
//! slot not ready yet makes the warp wait: `E += 1`, and every load issued before is then
//! ready. Moves that a GPU compiler turns into register renaming (φ copies, copies,
//! composite construction, shuffles by constant masks, bit casts, argument and return
//! copies of calls) pass the readiness on instead of waiting. Loads from local or private
//! memory, atomics and asynchronous copies do not create waits here (their latencies are
//! not the global-memory chain the model charges). A warp that ends with loads in flight
//! waits for them once more.

use super::*;

/// What one instruction reads and writes, for the scoreboard: `(first slot, components)`.
#[derive(Debug, Clone, Default)]
pub(super) struct Dep {
    /// Slots the instruction reads.
    pub reads: Box<[(u32, u32)]>,
    /// Slots the instruction writes.
    pub writes: Box<[(u32, u32)]>,
    /// A register move: the written slots take the readiness of the read slots, no wait.
    pub mov: bool,
}

/// The [`Dep`] of every instruction of `m`, by pc.
pub(super) fn deps(m: &Module) -> Vec<Dep> {
    m.code.iter().map(dep).collect()
}

fn dep(inst: &Inst) -> Dep {
    let d = |reads: Vec<(u32, u32)>, writes: Vec<(u32, u32)>, mov: bool| Dep {
        reads: reads.into(),
        writes: writes.into(),
        mov,
    };
    match inst {
        Inst::Bin { n, d: o, a, b, .. } | Inst::Dot { n, d: o, a, b, .. } => {
            let outn = if matches!(inst, Inst::Dot { .. }) {
                1
            } else {
                *n
            };
            d(vec![(*a, *n), (*b, *n)], vec![(*o, outn)], false)
        }
        Inst::VecTimesScalar { n, d: o, a, b, .. } => {
            d(vec![(*a, *n), (*b, 1)], vec![(*o, *n)], false)
        }
        Inst::Un { n, d: o, a, .. } | Inst::Conv { n, d: o, a, .. } => {
            d(vec![(*a, *n)], vec![(*o, *n)], false)
        }
        Inst::AnyAll { n, d: o, a, .. } => d(vec![(*a, *n)], vec![(*o, 1)], false),
        Inst::Select {
            n,
            d: o,
            c,
            cvec,
            a,
            b,
        } => d(
            vec![(*c, if *cvec { *n } else { 1 }), (*a, *n), (*b, *n)],
            vec![(*o, *n)],
            false,
        ),
        Inst::Copy { d: o, s, n } => d(vec![(*s, *n)], vec![(*o, *n)], true),
        Inst::Construct { d: o, parts } => {
            let total = parts.iter().map(|p| p.1).sum();
            d(parts.to_vec(), vec![(*o, total)], true)
        }
        Inst::Shuffle { d: o, srcs } => d(
            srcs.iter().map(|s| (*s, 1)).collect(),
            vec![(*o, srcs.len() as u32)],
            true,
        ),
        Inst::Repack { d: o, s, from, to } => d(
            vec![(*s, from.len() as u32)],
            vec![(*o, to.len() as u32)],
            true,
        ),
        Inst::ExtractDyn {
            d: o, v, n, idx, ..
        } => d(vec![(*v, *n), (*idx, 1)], vec![(*o, 1)], false),
        Inst::InsertDyn {
            d: o, v, n, x, idx, ..
        } => d(vec![(*v, *n), (*x, 1), (*idx, 1)], vec![(*o, *n)], false),
        Inst::PtrChain {
            d: o, base, terms, ..
        } => {
            let mut r = vec![(*base, 1)];
            r.extend(terms.iter().map(|t| (t.0, 1)));
            d(r, vec![(*o, 1)], false)
        }
        Inst::Load {
            d: o, p, leaves, ..
        } => d(vec![(*p, 1)], vec![(*o, leaves.len() as u32)], false),
        Inst::Store { p, v, leaves, .. } => {
            d(vec![(*p, 1), (*v, leaves.len() as u32)], vec![], false)
        }
        Inst::CopyMem {
            dst,
            src,
            size_slot,
            ..
        } => {
            let mut r = vec![(*dst, 1), (*src, 1)];
            if let Some((s, _)) = size_slot {
                r.push((*s, 1));
            }
            d(r, vec![], false)
        }
        Inst::Atomic {
            d: o, p, v, cmp, ..
        } => d(
            vec![(*p, 1), (*v, 1), (*cmp, 1)],
            o.iter().map(|o| (*o, 1)).collect(),
            false,
        ),
        Inst::Ext {
            n,
            d: o,
            args,
            bcast,
            nargs,
            ..
        } => d(
            (0..*nargs as usize)
                .map(|j| (args[j], if bcast & (1 << j) != 0 { 1 } else { *n }))
                .collect(),
            vec![(*o, *n)],
            false,
        ),
        Inst::DynShuffle {
            d: o,
            nout,
            a,
            b,
            nin,
            m,
            ..
        } => {
            let mut r = vec![(*a, *nin), (*m, *nout)];
            if let Some(b) = b {
                r.push((*b, *nin));
            }
            d(r, vec![(*o, *nout)], false)
        }
        Inst::AsyncCopy {
            d: o,
            dst,
            src,
            n,
            stride,
            ..
        } => d(
            vec![(*dst, 1), (*src, 1), (*n, 1), (*stride, 1)],
            vec![(*o, 1)],
            false,
        ),
        Inst::VLoad {
            d: o, off, p, n, ..
        } => d(vec![(*off, 1), (*p, 1)], vec![(*o, *n)], false),
        Inst::VStore { v, off, p, n, .. } => d(vec![(*v, *n), (*off, 1), (*p, 1)], vec![], false),
        Inst::Builtin { d: o, n, .. } => d(vec![], vec![(*o, *n)], false),
        Inst::BrCond { c, .. } => d(vec![(*c, 1)], vec![], false),
        Inst::Switch { sel, .. } => d(vec![(*sel, 1)], vec![], false),
        Inst::Return { v: Some((s, r, n)) } => d(vec![(*s, *n)], vec![(*r, *n)], true),
        // The callee's parameters are written at the call (a copy each).
        Inst::Call { args, .. } => d(args.iter().map(|a| (a.0, a.2)).collect(), vec![], true),
        Inst::Return { v: None }
        | Inst::Br { .. }
        | Inst::Barrier
        | Inst::Nop
        | Inst::Unreachable => Dep::default(),
    }
}

impl Warp {
    /// The level of the operands of `dep` (the latest waiting period at whose end one of
    /// them is ready; 0 without operands).
    #[inline]
    fn operand_level(&self, dep: &Dep) -> u32 {
        let mut lv = 0;
        for &(s, n) in dep.reads.iter() {
            if let Some(r) = self.ready.get(s as usize..(s + n) as usize) {
                for x in r {
                    lv = lv.max(*x);
                }
            }
        }
        lv
    }

    /// The instruction of `dep` at its issue: waits (returns the waiting periods added)
    /// when it reads a value whose load has not returned, unless it is a move; then
    /// records the level of what it writes: one period after its address and the start
    /// of its block for a global load (`global_load`; the compiler may issue it as early
    /// as that), the level of its operands otherwise. `fence`: later loads may not be
    /// issued before this instruction (a branch ends the block; a barrier; a global store,
    /// which a later load may alias).
    #[inline]
    pub(super) fn issue(&mut self, dep: &Dep, global_load: bool, fence: bool) -> u64 {
        let lv = self.operand_level(dep);
        let mut waited = 0;
        if !dep.mov && lv > self.epoch {
            waited = (lv - self.epoch) as u64;
            self.epoch = lv;
        }
        let out = if global_load {
            let l = lv.max(self.block_start) + 1;
            self.last_load = self.last_load.max(l);
            l
        } else {
            lv
        };
        for &(s, n) in dep.writes.iter() {
            if let Some(x) = self.ready.get_mut(s as usize..(s + n) as usize) {
                x.fill(out);
            }
        }
        if fence {
            self.block_start = self.epoch;
        }
        waited
    }

    /// The warp ends: it waits for the loads still in flight. Returns the periods added.
    pub(super) fn retire(&mut self) -> u64 {
        let waited = self.last_load.saturating_sub(self.epoch) as u64;
        self.epoch = self.epoch.max(self.last_load);
        waited
    }

    /// Readiness of φ copies `(dst, src)` (a parallel copy).
    pub(super) fn phi_ready(&mut self, copies: &[(u32, u32)], tmp: &mut Vec<u32>) {
        tmp.clear();
        tmp.extend(
            copies
                .iter()
                .map(|&(_, s)| self.ready.get(s as usize).copied().unwrap_or(0)),
        );
        for (&(d, _), r) in copies.iter().zip(tmp.iter()) {
            if let Some(x) = self.ready.get_mut(d as usize) {
                *x = *r;
            }
        }
    }
}
