//! Decoder of `OpExtInst` of the OpenCL.std extended instruction set (math, integer,
//! vector load/store, printf...).

use super::*;

impl<'a> Decoder<'a> {
    /// Decodes `OpExtInst` `op` of OpenCL.std (result `rid` of type `rty`): printf and
    /// prefetch, vector loads and stores ([`Self::decode_ext_memory`]), shuffles, and the
    /// element-wise functions ([`Inst::Ext`], class from [`ext_class`]).
    pub(super) fn decode_ext(
        &mut self,
        op: spirv::CLOp,
        i: &dr::Instruction,
        rid: u32,
        rty: u32,
    ) -> Result<(), EmuError> {
        use spirv::CLOp as C;
        let o = &i.operands;
        let arg = |j: usize| -> Result<u32, EmuError> { op_id(o.get(2 + j)) };
        if self.decode_ext_memory(op, i, rid, rty)? {
            return Ok(());
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
        let c = ext_class(op, k);
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
                nargs: nargs as u8,
            },
            c,
        );
        Ok(())
    }

    /// printf, prefetch, and the vector loads and stores (`vload[a]_half`, `vstore[a]_half`
    /// and `vloadn`/`vstoren`): `Ok(false)` for any other `op`.
    fn decode_ext_memory(
        &mut self,
        op: spirv::CLOp,
        i: &dr::Instruction,
        rid: u32,
        rty: u32,
    ) -> Result<bool, EmuError> {
        use spirv::CLOp as C;
        let o = &i.operands;
        let arg = |j: usize| -> Result<u32, EmuError> { op_id(o.get(2 + j)) };
        match op {
            C::printf => {
                self.unsup("printf");
                Ok(true)
            }
            C::prefetch => {
                self.push(Inst::Nop, cls::MEMORY);
                Ok(true)
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
                Ok(true)
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
                Ok(true)
            }
            _ => Ok(false),
        }
    }
}

/// Instruction class of the OpenCL.std function `op` on elements of kind `k`.
fn ext_class(op: spirv::CLOp, k: Sc) -> u8 {
    use spirv::CLOp as C;
    match op {
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
                Decoder::fclass(k)
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
        | C::smoothstep => Decoder::fclass(k),
        _ => cls::SPECIAL,
    }
}
