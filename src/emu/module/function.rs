//! Per-instruction decoder of function bodies ([`Decoder`]): SPIR-V instructions to
//! [`Inst`] with resolved register slots and an instruction class (naga's `function`).

use super::*;

pub(super) struct Decoder<'a> {
    pub(super) cx: &'a mut Ctx,
    pub(super) code: &'a mut Vec<Inst>,
    pub(super) class: &'a mut Vec<u8>,
    pub(super) phis: &'a mut Vec<(u32, u32)>,
    pub(super) phi_tab: &'a HashMap<u32, Vec<(u32, Vec<(u32, u32)>)>>,
    pub(super) bidx: &'a HashMap<u32, u32>,
    pub(super) fidx: &'a HashMap<u32, u32>,
    pub(super) funcs_ret: Option<(u32, u32)>,
    pub(super) unsupported: Option<String>,
    pub(super) callees: Vec<u32>,
    pub(super) global_atomics: bool,
    /// True once an instruction doing floating-point arithmetic was decoded
    /// ([`Inst::rounds_float`]).
    pub(super) float_arithmetic: bool,
    /// The NDRange built-ins of extent or origin read so far ([`super::NdRangeReads`]).
    pub(super) ndrange_reads: super::NdRangeReads,
    /// How the instruction being decoded counts in the global memory traffic, when it is a
    /// load or store (from [`super::vector::vector_groups`]).
    pub(super) traffic: Traffic,
}

impl<'a> Decoder<'a> {
    pub(super) fn push(&mut self, i: Inst, c: u8) {
        self.float_arithmetic |= i.rounds_float();
        if let Inst::Builtin { b, .. } = &i {
            self.ndrange_reads = self.ndrange_reads.union(super::NdRangeReads::of(*b));
        }
        self.code.push(i);
        self.class.push(c);
    }
    pub(super) fn unsup(&mut self, what: impl Into<String>) {
        if self.unsupported.is_none() {
            self.unsupported = Some(what.into());
        }
        self.push(Inst::Unreachable, cls::NONE);
    }
    pub(super) fn phi_range(&mut self, from: u32, to: u32) -> Result<PhiRange, EmuError> {
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
    pub(super) fn block(&self, id: u32) -> Result<u32, EmuError> {
        self.bidx
            .get(&id)
            .copied()
            .ok_or_else(|| e(format!("branch to unknown block %{id}")))
    }
    pub(super) fn fclass(k: Sc) -> u8 {
        match k {
            Sc::F64 => cls::FP64,
            Sc::F32 | Sc::F16 => cls::FP32,
            _ => cls::INT,
        }
    }
    pub(super) fn rounding(&self, id: u32) -> Round {
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

    /// Register slot of the id operand `n` of `o`.
    fn sl(&self, o: &[Operand], n: usize) -> Result<u32, EmuError> {
        self.cx.s(op_id(o.get(n))?)
    }

    /// Decodes one instruction of block `cur`, by opcode group (each group answers
    /// `Ok(false)` for an opcode it does not handle; the last one takes the rest).
    pub(super) fn decode(&mut self, i: &dr::Instruction, cur: u32) -> Result<(), EmuError> {
        if self.decode_arith(i)?
            || self.decode_value(i)?
            || self.decode_composite(i)?
            || self.decode_access_chain(i)?
            || self.decode_load_store(i)?
            || self.decode_atomic(i)?
            || self.decode_control(i, cur)?
        {
            return Ok(());
        }
        self.decode_other(i)
    }

    /// Binary, unary and conversion operations.
    fn decode_arith(&mut self, i: &dr::Instruction) -> Result<bool, EmuError> {
        let o = &i.operands;
        let rid = i.result_id.unwrap_or(0);
        let rty = i.result_type.unwrap_or(0);
        let opc = i.class.opcode;
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
            let a = self.sl(o, 0)?;
            let bb = self.sl(o, 1)?;
            let aty = self.cx.vty.get(&op_id(o.first())?).copied().unwrap_or(rty);
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
            return Ok(true);
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
            let a = self.sl(o, 0)?;
            let aty = self.cx.vty.get(&op_id(o.first())?).copied().unwrap_or(rty);
            let k = self.cx.scalar(aty)?;
            let n = self.cx.ncomp(rty)?;
            let d = self.cx.s(rid)?;
            self.push(Inst::Un { op: u, k, n, d, a }, Self::fclass(k));
            return Ok(true);
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
            let a = self.sl(o, 0)?;
            let aty = self.cx.vty.get(&op_id(o.first())?).copied().unwrap_or(rty);
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
            return Ok(true);
        }
        Ok(false)
    }

    /// Phi, labels and other no-ops, function variables, `OpUndef`, select and copies.
    fn decode_value(&mut self, i: &dr::Instruction) -> Result<bool, EmuError> {
        let o = &i.operands;
        let rid = i.result_id.unwrap_or(0);
        let rty = i.result_type.unwrap_or(0);
        let opc = i.class.opcode;
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
                            traffic: Traffic::Own,
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
                let c = self.sl(o, 0)?;
                let cvec = self
                    .cx
                    .ncomp(self.cx.vty.get(&op_id(o.first())?).copied().unwrap_or(0))
                    .unwrap_or(1)
                    > 1;
                let n = self.cx.n(rid)?;
                let d = self.cx.s(rid)?;
                let (a, b) = (self.sl(o, 1)?, self.sl(o, 2)?);
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
                let sid = op_id(o.first())?;
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
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Composite and vector construction, extraction, insertion, shuffles, dot, any/all.
    fn decode_composite(&mut self, i: &dr::Instruction) -> Result<bool, EmuError> {
        let o = &i.operands;
        let rid = i.result_id.unwrap_or(0);
        let rty = i.result_type.unwrap_or(0);
        let opc = i.class.opcode;
        match opc {
            Op::CompositeExtract => {
                let sid = op_id(o.first())?;
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
                let obj = op_id(o.first())?;
                let comp = op_id(o.get(1))?;
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
                let v = self.sl(o, 0)?;
                let vid = op_id(o.first())?;
                let n = self.cx.n(vid)?;
                let idx_id = op_id(o.get(1))?;
                let idx = self.cx.s(idx_id)?;
                let ik = self.cx.scalar(self.cx.vt(idx_id)?)?;
                let d = self.cx.s(rid)?;
                self.push(Inst::ExtractDyn { d, v, n, idx, ik }, cls::OTHER);
            }
            Op::VectorInsertDynamic => {
                let v = self.sl(o, 0)?;
                let x = self.sl(o, 1)?;
                let n = self.cx.n(rid)?;
                let idx_id = op_id(o.get(2))?;
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
                let a = op_id(o.first())?;
                let b = op_id(o.get(1))?;
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
                let (a, b) = (self.sl(o, 0)?, self.sl(o, 1)?);
                self.push(Inst::VecTimesScalar { k, n, d, a, b }, Self::fclass(k));
            }
            Op::Dot => {
                let aid = op_id(o.first())?;
                let k = self.cx.scalar(rty)?;
                let n = self.cx.n(aid)?;
                let d = self.cx.s(rid)?;
                let (a, b) = (self.sl(o, 0)?, self.sl(o, 1)?);
                self.push(Inst::Dot { k, n, d, a, b }, Self::fclass(k));
            }
            Op::Any | Op::All => {
                let aid = op_id(o.first())?;
                let n = self.cx.n(aid)?;
                let d = self.cx.s(rid)?;
                let a = self.sl(o, 0)?;
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
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Access chains (pointer arithmetic, built-in vector components).
    fn decode_access_chain(&mut self, i: &dr::Instruction) -> Result<bool, EmuError> {
        let o = &i.operands;
        let rid = i.result_id.unwrap_or(0);
        let opc = i.class.opcode;
        match opc {
            Op::AccessChain
            | Op::InBoundsAccessChain
            | Op::PtrAccessChain
            | Op::InBoundsPtrAccessChain => {
                let base = op_id(o.first())?;
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
                    return Ok(true);
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
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Loads, stores and memory copies.
    fn decode_load_store(&mut self, i: &dr::Instruction) -> Result<bool, EmuError> {
        let o = &i.operands;
        let rid = i.result_id.unwrap_or(0);
        let rty = i.result_type.unwrap_or(0);
        let opc = i.class.opcode;
        match opc {
            Op::Load => {
                let p = op_id(o.first())?;
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
                    return Ok(true);
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
                    return Ok(true);
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
                        traffic: self.traffic,
                    },
                    cls::MEMORY,
                );
            }
            Op::Store => {
                let p = op_id(o.first())?;
                let v = op_id(o.get(1))?;
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
                        traffic: self.traffic,
                    },
                    cls::MEMORY,
                );
            }
            Op::CopyMemory | Op::CopyMemorySized => {
                let dst = self.sl(o, 0)?;
                let src = self.sl(o, 1)?;
                let (size, size_slot) = if opc == Op::CopyMemorySized {
                    let sid = op_id(o.get(2))?;
                    match self.cx.const_vals.get(&sid).and_then(|v| v.first()) {
                        Some(v) => (*v, None),
                        None => (
                            0,
                            Some((self.cx.s(sid)?, self.cx.scalar(self.cx.vt(sid)?)?)),
                        ),
                    }
                } else {
                    let pty = self.cx.vt(op_id(o.first())?)?;
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
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Atomic instructions.
    fn decode_atomic(&mut self, i: &dr::Instruction) -> Result<bool, EmuError> {
        let o = &i.operands;
        let rid = i.result_id.unwrap_or(0);
        let rty = i.result_type.unwrap_or(0);
        let opc = i.class.opcode;
        match opc {
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
                let p = self.sl(o, 0)?;
                let local_only = match self.cx.vty.get(&op_id(o.first())?).map(|t| self.cx.ty(*t)) {
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
                        let pty = self.cx.vt(op_id(o.first())?)?;
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
                    AtomOp::Store => (self.sl(o, 3)?, 0),
                    AtomOp::CmpXchg => (self.sl(o, 4)?, self.sl(o, 5)?),
                    AtomOp::Load
                    | AtomOp::Inc
                    | AtomOp::Dec
                    | AtomOp::FlagTestSet
                    | AtomOp::FlagClear => (0, 0),
                    _ => (self.sl(o, 3)?, 0),
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
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Barriers, branches, switches, returns and calls.
    fn decode_control(&mut self, i: &dr::Instruction, cur: u32) -> Result<bool, EmuError> {
        let o = &i.operands;
        let rid = i.result_id.unwrap_or(0);
        let rty = i.result_type.unwrap_or(0);
        let opc = i.class.opcode;
        match opc {
            Op::ControlBarrier => self.push(Inst::Barrier, cls::BARRIER),
            Op::MemoryBarrier => self.push(Inst::Nop, cls::BARRIER),
            Op::Branch => {
                let t = op_id(o.first())?;
                let phis = self.phi_range(cur, t)?;
                let t = self.block(t)?;
                self.push(Inst::Br { t, phis }, cls::BRANCH);
            }
            Op::BranchConditional => {
                let c = self.sl(o, 0)?;
                let (t, f) = (op_id(o.get(1))?, op_id(o.get(2))?);
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
                let selid = op_id(o.first())?;
                let sel = self.cx.s(selid)?;
                let k = self.cx.scalar(self.cx.vt(selid)?)?;
                let def = op_id(o.get(1))?;
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
                let v = op_id(o.first())?;
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
                let f = op_id(o.first())?;
                let fi = match self.fidx.get(&f).copied() {
                    Some(x) => x,
                    None => {
                        self.unsup(format!("call to an external function %{f}"));
                        return Ok(true);
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
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Extended instructions, async copies, and the unsupported rest.
    fn decode_other(&mut self, i: &dr::Instruction) -> Result<(), EmuError> {
        let o = &i.operands;
        let rid = i.result_id.unwrap_or(0);
        let rty = i.result_type.unwrap_or(0);
        let opc = i.class.opcode;
        match opc {
            Op::ExtInst => {
                let set = op_id(o.first())?;
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
                let dst_id = op_id(o.get(1))?;
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
                let (nid, sid) = (op_id(o.get(3))?, op_id(o.get(4))?);
                let nk = self.cx.scalar(self.cx.vt(nid)?)?;
                let sk = self.cx.scalar(self.cx.vt(sid)?)?;
                let inst = Inst::AsyncCopy {
                    d: self.cx.s(rid)?,
                    dst: self.cx.s(dst_id)?,
                    src: self.sl(o, 2)?,
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
}
