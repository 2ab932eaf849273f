//! Type layout of the SPIR-V loader: the module's types, their sizes, alignments and
//! register leaves (one `u64` slot per scalar leaf), constants' bytes, and the slot
//! allocation of SSA values ([`Ctx`]).

use super::*;

#[derive(Debug, Clone)]
pub(super) enum Ty {
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

pub(super) struct Ctx {
    pub(super) types: HashMap<u32, Ty>,
    /// slot of each value id, and its leaf count
    pub(super) slot: HashMap<u32, (u32, u32)>,
    /// value type of each id
    pub(super) vty: HashMap<u32, u32>,
    pub(super) nslots: u32,
    pub(super) consts: Vec<(u32, u64)>,
    pub(super) const_vals: HashMap<u32, Vec<u64>>,
    pub(super) builtin_vars: HashMap<u32, Bi>,
    /// pointers (access chains) into built-in vectors: id -> (builtin, component)
    pub(super) builtin_ptrs: HashMap<u32, (Bi, u32)>,
    pub(super) decorations: HashMap<u32, Vec<(Decoration, Vec<Operand>)>>,
    pub(super) names: HashMap<u32, String>,
    pub(super) local_static: u64,
    pub(super) private_size: u64,
    pub(super) const_data: Vec<u8>,
    pub(super) cl_ext: Option<u32>,
}

/// Elements between consecutive `offset` steps of a vector load or store of `n` elements:
/// `n`, except for the aligned half forms (`vloada_half3`, `vstorea_half3[_r]`), whose
/// 3-element vectors are laid out like 4-element ones (OpenCL C's vector data load and
/// store functions: they address `p + offset * 4`). Using `n` there made the emulator
/// store `vstorea_half3(v, 1, p)` at `p + 3` instead of `p + 4`, so the write footprint
/// that balance mode reads back from each device missed the last half (piglit's
/// `vstorea_half` offset tests on `float3` and `double3`).
pub(super) fn aligned_stride(aligned: bool, n: u32) -> u32 {
    if aligned && n == 3 {
        4
    } else {
        n
    }
}

pub(super) fn align_up(x: u64, a: u64) -> u64 {
    if a <= 1 {
        x
    } else {
        x.div_ceil(a).saturating_mul(a)
    }
}

impl Ctx {
    pub(super) fn ty(&self, id: u32) -> Result<&Ty, EmuError> {
        self.types
            .get(&id)
            .ok_or_else(|| e(format!("unknown type %{id}")))
    }
    pub(super) fn size_align(&self, id: u32) -> Result<(u64, u64), EmuError> {
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
    pub(super) fn member_offsets(&self, id: u32) -> Result<Vec<u64>, EmuError> {
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
    pub(super) fn scalar(&self, id: u32) -> Result<Sc, EmuError> {
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
    pub(super) fn ncomp(&self, id: u32) -> Result<u32, EmuError> {
        Ok(match self.ty(id)? {
            Ty::Vector(_, n) => *n,
            _ => 1,
        })
    }
    /// Leaves (byte offset, scalar kind) of a type, flattened.
    pub(super) fn leaves(
        &self,
        id: u32,
        base: u64,
        out: &mut Vec<(u32, Sc)>,
    ) -> Result<(), EmuError> {
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
    pub(super) fn leaf_vec(&self, id: u32) -> Result<Vec<(u32, Sc)>, EmuError> {
        let mut v = Vec::new();
        self.leaves(id, 0, &mut v)?;
        Ok(v)
    }
    pub(super) fn nleaves(&self, id: u32) -> Result<u32, EmuError> {
        Ok(self.leaf_vec(id)?.len() as u32)
    }
    /// Leaf index range of composite member `idx` of type `id`.
    pub(super) fn member_leaf(&self, id: u32, idx: u64) -> Result<(u32, u32), EmuError> {
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
    pub(super) fn elem_type(&self, id: u32) -> Result<u32, EmuError> {
        match self.ty(id)? {
            Ty::Vector(el, _) | Ty::Array(el, _) => Ok(*el),
            _ => Err(e("element type of a non-vector")),
        }
    }
    pub(super) fn alloc(&mut self, id: u32, ty: u32) -> Result<u32, EmuError> {
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
    pub(super) fn sn(&self, id: u32) -> Result<(u32, u32), EmuError> {
        self.slot
            .get(&id)
            .copied()
            .ok_or_else(|| e(format!("use of unknown value %{id}")))
    }
    /// Component count of a value.
    pub(super) fn n(&self, id: u32) -> Result<u32, EmuError> {
        self.sn(id).map(|x| x.1)
    }
    /// Type id of a value.
    pub(super) fn vt(&self, id: u32) -> Result<u32, EmuError> {
        self.vty
            .get(&id)
            .copied()
            .ok_or_else(|| e(format!("value %{id} has no type")))
    }
    pub(super) fn s(&self, id: u32) -> Result<u32, EmuError> {
        self.slot
            .get(&id)
            .map(|x| x.0)
            .ok_or_else(|| e(format!("use of unknown value %{id}")))
    }
    pub(super) fn deco(&self, id: u32, d: Decoration) -> Option<&Vec<Operand>> {
        self.decorations
            .get(&id)
            .and_then(|v| v.iter().find(|(x, _)| *x == d).map(|(_, o)| o))
    }
    /// Serialises the leaves of constant `id` into bytes.
    pub(super) fn const_bytes(&self, id: u32, ty: u32, out: &mut [u8]) -> Result<(), EmuError> {
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

pub(super) fn int_mask(bits: u32) -> u64 {
    if bits >= 64 {
        !0
    } else {
        (1u64 << bits) - 1
    }
}
