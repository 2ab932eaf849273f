//! Scalarised vector accesses: LLVM at -O2 turns a vector load or store whose components
//! are used one by one into one scalar access per component, each through an access chain
//! `(base, index, component)`. The hardware issues one request of the vector's full width
//! per work-item (a `float4`: one 128-bit load; Panwar et al. §IV-C, the CUDA sector model:
//! a warp's requests are coalesced into 32-byte sectors), so such a group is counted as one
//! vector access ([`Traffic`]).

use super::*;

/// An access chain whose last index is a constant component of a vector: the chain's
/// other operands (base pointer, element and leading indices: they name the vector), the
/// component, the vector's component count and the component's size in bytes.
struct Component {
    vector: Vec<u32>,
    comp: u64,
    n: u64,
    size: u64,
}

/// The component access of the chain instruction `i` (`OpAccessChain`, `OpPtrAccessChain`
/// and their in-bounds forms) into a vector that its operands but the last point to, if
/// it is one. Only a chain whose base points to the vector itself (`OpPtrAccessChain
/// base element c`, `OpAccessChain base c`) is recognised.
fn component(cx: &Ctx, i: &dr::Instruction) -> Option<Component> {
    let ids: Vec<u32> = i
        .operands
        .iter()
        .map(|o| match o {
            Operand::IdRef(x) => Some(*x),
            _ => None,
        })
        .collect::<Option<_>>()?;
    let ptr_chain = matches!(
        i.class.opcode,
        Op::PtrAccessChain | Op::InBoundsPtrAccessChain
    );
    if ids.len() != if ptr_chain { 3 } else { 2 } {
        return None;
    }
    let c = cx.const_vals.get(ids.last()?)?;
    let comp = *c.first().filter(|_| c.len() == 1)?;
    let pointee = match cx.ty(*cx.vty.get(&ids[0])?).ok()? {
        Ty::Pointer(_, p) => *p,
        _ => return None,
    };
    let Ty::Vector(el, n) = cx.ty(pointee).ok()? else {
        return None;
    };
    let size = cx.size_align(*el).ok()?.0;
    (comp < *n as u64).then(|| Component {
        vector: ids[..ids.len() - 1].to_vec(),
        comp,
        n: *n as u64,
        size,
    })
}

/// The loads and stores of function `f` that are parts of a scalarised vector access, as
/// `(block index, instruction index) → Traffic`: in one block, the loads (or the stores)
/// through component chains of one vector that access each of its components exactly once,
/// each of the component's size. The first of a group carries the vector's request
/// ([`Traffic::VecFirst`]), the others none ([`Traffic::VecRest`]); every other access is
/// [`Traffic::Own`] (absent).
pub(super) fn vector_groups(cx: &Ctx, f: &dr::Function) -> HashMap<(usize, usize), Traffic> {
    let mut chains: HashMap<u32, Component> = HashMap::new();
    for b in &f.blocks {
        for i in &b.instructions {
            if matches!(
                i.class.opcode,
                Op::AccessChain
                    | Op::InBoundsAccessChain
                    | Op::PtrAccessChain
                    | Op::InBoundsPtrAccessChain
            ) {
                if let (Some(r), Some(c)) = (i.result_id, component(cx, i)) {
                    chains.insert(r, c);
                }
            }
        }
    }
    let mut out = HashMap::new();
    if chains.is_empty() {
        return out;
    }
    for (bi, b) in f.blocks.iter().enumerate() {
        // (is a store, vector) → [(instruction index, component)], in block order
        let mut groups: HashMap<(bool, &[u32]), (&Component, Vec<(usize, u64)>)> = HashMap::new();
        for (ii, i) in b.instructions.iter().enumerate() {
            let (store, accessed) = match i.class.opcode {
                Op::Load => (false, i.result_type),
                Op::Store => (
                    true,
                    i.operands.get(1).and_then(|o| match o {
                        Operand::IdRef(v) => cx.vty.get(v).copied(),
                        _ => None,
                    }),
                ),
                _ => continue,
            };
            let Some(Operand::IdRef(p)) = i.operands.first() else {
                continue;
            };
            let Some(c) = chains.get(p) else {
                continue;
            };
            let size = accessed.and_then(|t| cx.size_align(t).ok()).map(|x| x.0);
            if size == Some(c.size) {
                groups
                    .entry((store, &c.vector[..]))
                    .or_insert((c, Vec::new()))
                    .1
                    .push((ii, c.comp));
            }
        }
        for (c, members) in groups.into_values() {
            let mut comps: Vec<u64> = members.iter().map(|m| m.1).collect();
            comps.sort_unstable();
            comps.dedup();
            if c.n < 2 || members.len() as u64 != c.n || comps.len() as u64 != c.n {
                continue;
            }
            let (first, comp) = members[0];
            out.insert(
                (bi, first),
                Traffic::VecFirst {
                    back: (comp * c.size) as u32,
                    bytes: (c.n * c.size) as u32,
                },
            );
            for &(ii, _) in &members[1..] {
                out.insert((bi, ii), Traffic::VecRest);
            }
        }
    }
    out
}
