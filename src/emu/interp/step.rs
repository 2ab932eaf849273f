//! One warp's instructions (Panwar et al. §IV-C): the interpreter loop, by class.

use super::*;

/// What an instruction does to the warp's program counter.
enum Flow {
    /// Go on with the next instruction.
    Next,
    /// The instruction set the pc itself (a branch, call or return).
    Jump,
    /// Stop running this warp for now.
    Yield(Yield),
}

impl<'m> Machine<'m> {
    /// Runs warp `wp` until it ends, reaches a barrier or the budget runs out; each
    /// instruction is counted (warp and lane issues of its class, a vector operation once per
    /// component: [`Inst::issues`]), then executed by the
    /// function of its class.
    pub(super) fn run_warp(&mut self, wp: &mut Warp) -> Result<Yield, EmuError> {
        let m = self.m;
        loop {
            let pc = wp.pc as usize;
            let mask = wp.mask;
            let inst = match m.code.get(pc) {
                Some(i) => i,
                None => return Err(EmuError::Malformed("fell off the end of the code".into())),
            };
            let (c, w) = (m.class[pc] as usize, m.issues[pc] as u64);
            self.acc.cnt[c][0] += w;
            self.acc.cnt[c][1] += w * mask.count_ones() as u64;
            self.global_load = false;
            self.global_store = false;
            let flow = match inst {
                Inst::Bin { .. }
                | Inst::VecTimesScalar { .. }
                | Inst::Un { .. }
                | Inst::Conv { .. }
                | Inst::Select { .. }
                | Inst::Copy { .. }
                | Inst::Construct { .. }
                | Inst::Shuffle { .. }
                | Inst::ExtractDyn { .. }
                | Inst::InsertDyn { .. }
                | Inst::Repack { .. }
                | Inst::Dot { .. }
                | Inst::AnyAll { .. } => {
                    self.exec_alu(wp, inst, mask)?;
                    Flow::Next
                }
                Inst::PtrChain { .. }
                | Inst::Load { .. }
                | Inst::Store { .. }
                | Inst::CopyMem { .. }
                | Inst::VLoad { .. }
                | Inst::VStore { .. } => {
                    self.exec_memory(wp, inst, mask)?;
                    Flow::Next
                }
                Inst::Atomic { .. } => {
                    self.exec_atomic(wp, inst, mask)?;
                    Flow::Next
                }
                Inst::Ext { .. } | Inst::DynShuffle { .. } | Inst::Builtin { .. } => {
                    self.exec_builtin(wp, inst, mask)?;
                    Flow::Next
                }
                Inst::AsyncCopy { .. } => {
                    self.exec_async_copy(wp, inst, mask)?;
                    Flow::Next
                }
                Inst::Br { .. } | Inst::BrCond { .. } | Inst::Switch { .. } => {
                    self.exec_branch(wp, inst, pc, mask)?
                }
                Inst::Return { .. } | Inst::Call { .. } | Inst::Barrier | Inst::Unreachable => {
                    self.exec_call(wp, inst, mask)?
                }
                Inst::Nop => Flow::Next,
            };
            let global_load =
                self.global_load && matches!(inst, Inst::Load { .. } | Inst::VLoad { .. });
            // Later loads stay behind a branch, a barrier, a call or return, and a global
            // store or atomic (which they may alias).
            let fence = !matches!(flow, Flow::Next) || self.global_store;
            self.acc.load_waits += wp.issue(&self.deps[pc], global_load, fence);
            match flow {
                Flow::Next => wp.pc += 1,
                Flow::Jump => {}
                Flow::Yield(y) => return Ok(y),
            }
        }
    }

    /// Arithmetic, conversions, selects, copies and vector/composite operations (no memory).
    fn exec_alu(&mut self, wp: &mut Warp, inst: &Inst, mask: u64) -> Result<(), EmuError> {
        let w = self.w;
        let regs = &mut wp.regs;
        match inst {
            Inst::Bin { op, k, n, d, a, b } => exec_bin(
                regs,
                w,
                mask,
                *op,
                *k,
                *n as usize,
                *d as usize,
                *a as usize,
                *b as usize,
            ),
            Inst::VecTimesScalar { k, n, d, a, b } => {
                for j in 0..*n as usize {
                    lanes!(mask, l, {
                        let x = regs[(*a as usize + j) * w + l];
                        let y = regs[*b as usize * w + l];
                        regs[(*d as usize + j) * w + l] = fromf(tof(x, *k) * tof(y, *k), *k);
                    });
                }
            }
            Inst::Un { op, k, n, d, a } => exec_un(
                regs,
                w,
                mask,
                *op,
                *k,
                *n as usize,
                *d as usize,
                *a as usize,
            ),
            Inst::Conv {
                op,
                from,
                to,
                n,
                d,
                a,
                sat,
                round,
            } => {
                for j in 0..*n as usize {
                    lanes!(mask, l, {
                        let x = regs[(*a as usize + j) * w + l];
                        regs[(*d as usize + j) * w + l] = convert(*op, *from, *to, x, *sat, *round);
                    });
                }
            }
            Inst::Select {
                n,
                d,
                c,
                cvec,
                a,
                b,
            } => {
                for j in 0..*n as usize {
                    let cs = if *cvec { *c as usize + j } else { *c as usize };
                    lanes!(mask, l, {
                        let v = if regs[cs * w + l] & 1 != 0 {
                            regs[(*a as usize + j) * w + l]
                        } else {
                            regs[(*b as usize + j) * w + l]
                        };
                        regs[(*d as usize + j) * w + l] = v;
                    });
                }
            }
            Inst::Copy { d, s, n } => {
                for j in 0..*n as usize {
                    lanes!(mask, l, {
                        regs[(*d as usize + j) * w + l] = regs[(*s as usize + j) * w + l];
                    });
                }
            }
            Inst::Construct { d, parts } => {
                let mut o = *d as usize;
                for &(s, n) in parts.iter() {
                    for j in 0..n as usize {
                        lanes!(mask, l, {
                            regs[(o + j) * w + l] = regs[(s as usize + j) * w + l];
                        });
                    }
                    o += n as usize;
                }
            }
            Inst::Shuffle { d, srcs } => {
                // sources may overlap the destination only if SSA is violated; copy via tmp
                self.tmp.clear();
                for &s in srcs.iter() {
                    for l in 0..w {
                        self.tmp.push(regs[s as usize * w + l]);
                    }
                }
                for j in 0..srcs.len() {
                    lanes!(mask, l, {
                        regs[(*d as usize + j) * w + l] = self.tmp[j * w + l];
                    });
                }
            }
            Inst::ExtractDyn { d, v, n, idx, ik } => {
                lanes!(mask, l, {
                    let i = regs[*idx as usize * w + l] & mask_bits(ik.bits());
                    let i = if i < *n as u64 { i as usize } else { 0 };
                    regs[*d as usize * w + l] = regs[(*v as usize + i) * w + l];
                });
            }
            Inst::InsertDyn {
                d,
                v,
                n,
                x,
                idx,
                ik,
            } => {
                lanes!(mask, l, {
                    let i = regs[*idx as usize * w + l] & mask_bits(ik.bits());
                    for j in 0..*n as usize {
                        regs[(*d as usize + j) * w + l] = if j as u64 == i {
                            regs[*x as usize * w + l]
                        } else {
                            regs[(*v as usize + j) * w + l]
                        };
                    }
                });
            }
            Inst::Repack { d, s, from, to } => {
                lanes!(mask, l, {
                    let mut bytes: Vec<u8> = Vec::with_capacity(32);
                    for (j, k) in from.iter().enumerate() {
                        let v = regs[(*s as usize + j) * w + l];
                        bytes.extend_from_slice(&v.to_le_bytes()[..k.bytes() as usize]);
                    }
                    let mut o = 0usize;
                    for (j, k) in to.iter().enumerate() {
                        let n = k.bytes() as usize;
                        let v = if o + n <= bytes.len() {
                            rd(&bytes[o..o + n], *k)
                        } else {
                            0
                        };
                        regs[(*d as usize + j) * w + l] = v;
                        o += n;
                    }
                });
            }
            Inst::Dot { k, n, d, a, b } => {
                lanes!(mask, l, {
                    let mut s = 0f64;
                    for j in 0..*n as usize {
                        s += tof(regs[(*a as usize + j) * w + l], *k)
                            * tof(regs[(*b as usize + j) * w + l], *k);
                    }
                    regs[*d as usize * w + l] = fromf(s, *k);
                });
            }
            Inst::AnyAll { all, n, d, a } => {
                lanes!(mask, l, {
                    let mut r = *all;
                    for j in 0..*n as usize {
                        let v = regs[(*a as usize + j) * w + l] & 1 != 0;
                        if *all {
                            r &= v
                        } else {
                            r |= v
                        }
                    }
                    regs[*d as usize * w + l] = r as u64;
                });
            }
            _ => return Err(EmuError::Internal(format!("exec_alu given {inst:?}"))),
        }
        Ok(())
    }

    /// Address arithmetic, loads, stores, memory copies and `vload`/`vstore` (memory statistics and footprints through `mem_stats`).
    fn exec_memory(&mut self, wp: &mut Warp, inst: &Inst, mask: u64) -> Result<(), EmuError> {
        let w = self.w;
        let regs = &mut wp.regs;
        match inst {
            Inst::PtrChain {
                d,
                base,
                off,
                terms,
            } => {
                lanes!(mask, l, {
                    let mut p = regs[*base as usize * w + l].wrapping_add(*off as u64);
                    for &(s, stride, k) in terms.iter() {
                        let i = sext(regs[s as usize * w + l], k.bits());
                        p = p.wrapping_add(i.wrapping_mul(stride) as u64);
                    }
                    regs[*d as usize * w + l] = p;
                });
            }
            Inst::Load {
                d,
                p,
                leaves,
                size,
                traffic,
            } => {
                lanes!(mask, l, {
                    let ptr = regs[*p as usize * w + l];
                    self.lane_ptr[l] = ptr;
                    let sl = self.mem.slice(&mut wp.prv, l, ptr, *size as u64)?;
                    for (j, (off, k)) in leaves.iter().enumerate() {
                        let o = *off as usize;
                        regs[(*d as usize + j) * w + l] = rd(&sl[o..], *k);
                    }
                });
                self.mem_traffic(mask, *size as u64, false, *traffic);
            }
            Inst::Store {
                p,
                v,
                leaves,
                size,
                traffic,
            } => {
                lanes!(mask, l, {
                    let ptr = regs[*p as usize * w + l];
                    self.lane_ptr[l] = ptr;
                    let sl = self.mem.slice(&mut wp.prv, l, ptr, *size as u64)?;
                    for (j, (off, k)) in leaves.iter().enumerate() {
                        let o = *off as usize;
                        wr(&mut sl[o..], *k, regs[(*v as usize + j) * w + l]);
                    }
                });
                self.mem_traffic(mask, *size as u64, true, *traffic);
            }
            Inst::CopyMem {
                dst,
                src,
                size,
                size_slot,
            } => {
                let mut sz_all = 0;
                lanes!(mask, l, {
                    let sz = match size_slot {
                        Some((s, k)) => regs[*s as usize * w + l] & mask_bits(k.bits()),
                        None => *size,
                    };
                    sz_all = sz;
                    if sz > 0 {
                        let sp = regs[*src as usize * w + l];
                        let dp = regs[*dst as usize * w + l];
                        let data = self.mem.slice(&mut wp.prv, l, sp, sz)?.to_vec();
                        self.mem
                            .slice(&mut wp.prv, l, dp, sz)?
                            .copy_from_slice(&data);
                    }
                });
                if sz_all > 0 {
                    lanes!(mask, l, {
                        self.lane_ptr[l] = regs[*src as usize * w + l];
                    });
                    self.mem_stats(mask, sz_all, false);
                    lanes!(mask, l, {
                        self.lane_ptr[l] = regs[*dst as usize * w + l];
                    });
                    self.mem_stats(mask, sz_all, true);
                }
            }
            Inst::VLoad {
                d,
                off,
                p,
                n,
                stride,
                k,
                half,
            } => {
                let esz = if *half { 2u64 } else { k.bytes() as u64 };
                let n = *n as usize;
                lanes!(mask, l, {
                    let o = wp.regs[*off as usize * w + l];
                    let ptr = wp.regs[*p as usize * w + l]
                        .wrapping_add(o.wrapping_mul(*stride as u64 * esz));
                    self.lane_ptr[l] = ptr;
                    let sl = self.mem.slice(&mut wp.prv, l, ptr, n as u64 * esz)?;
                    for j in 0..n {
                        let v = if *half {
                            let h = u16::from_le_bytes([sl[2 * j], sl[2 * j + 1]]);
                            fromf(h2f(h) as f64, *k)
                        } else {
                            rd(&sl[j * esz as usize..], *k)
                        };
                        wp.regs[(*d as usize + j) * w + l] = v;
                    }
                });
                self.mem_stats(mask, n as u64 * esz, false);
            }
            Inst::VStore {
                v,
                off,
                p,
                n,
                stride,
                k,
                half,
            } => {
                let esz = if half.is_some() {
                    2u64
                } else {
                    k.bytes() as u64
                };
                let n = *n as usize;
                lanes!(mask, l, {
                    let o = wp.regs[*off as usize * w + l];
                    let ptr = wp.regs[*p as usize * w + l]
                        .wrapping_add(o.wrapping_mul(*stride as u64 * esz));
                    self.lane_ptr[l] = ptr;
                    let sl = self.mem.slice(&mut wp.prv, l, ptr, n as u64 * esz)?;
                    for j in 0..n {
                        let x = wp.regs[(*v as usize + j) * w + l];
                        match half {
                            Some(r) => {
                                let h = if *k == Sc::F64 {
                                    f2h(f64_to_f32(f64::from_bits(x), *r), *r)
                                } else {
                                    f2h(f32::from_bits(x as u32), *r)
                                };
                                sl[2 * j..2 * j + 2].copy_from_slice(&h.to_le_bytes());
                            }
                            None => wr(&mut sl[j * esz as usize..], *k, x),
                        }
                    }
                });
                self.mem_stats(mask, n as u64 * esz, true);
                if *stride as usize > n {
                    self.padding_footprint(mask, n as u64 * esz, (*stride as u64 - n as u64) * esz);
                }
            }
            _ => return Err(EmuError::Internal(format!("exec_memory given {inst:?}"))),
        }
        Ok(())
    }

    /// Atomic read-modify-write operations.
    fn exec_atomic(&mut self, wp: &mut Warp, inst: &Inst, mask: u64) -> Result<(), EmuError> {
        let w = self.w;
        let regs = &mut wp.regs;
        match inst {
            Inst::Atomic {
                op,
                k,
                d,
                p,
                v,
                cmp,
            } => {
                let bits = k.bits();
                let mk = mask_bits(bits);
                let nb = k.bytes() as u64;
                lanes!(mask, l, {
                    let ptr = regs[*p as usize * w + l];
                    let val = regs[*v as usize * w + l] & mk;
                    let cv = regs[*cmp as usize * w + l] & mk;
                    let sl = self.mem.slice(&mut wp.prv, l, ptr, nb)?;
                    let old = rd(sl, *k);
                    let new = match op {
                        AtomOp::Load => old,
                        AtomOp::Store | AtomOp::Xchg => val,
                        AtomOp::CmpXchg => {
                            if old == cv {
                                val
                            } else {
                                old
                            }
                        }
                        AtomOp::Inc => old.wrapping_add(1) & mk,
                        AtomOp::Dec => old.wrapping_sub(1) & mk,
                        AtomOp::Add => old.wrapping_add(val) & mk,
                        AtomOp::Sub => old.wrapping_sub(val) & mk,
                        AtomOp::SMin => {
                            if sext(val, bits) < sext(old, bits) {
                                val
                            } else {
                                old
                            }
                        }
                        AtomOp::SMax => {
                            if sext(val, bits) > sext(old, bits) {
                                val
                            } else {
                                old
                            }
                        }
                        AtomOp::UMin => old.min(val),
                        AtomOp::UMax => old.max(val),
                        AtomOp::And => old & val,
                        AtomOp::Or => old | val,
                        AtomOp::Xor => old ^ val,
                        AtomOp::FlagTestSet => 1,
                        AtomOp::FlagClear => 0,
                    };
                    wr(sl, *k, new);
                    if let Some(d) = d {
                        regs[*d as usize * w + l] = if *op == AtomOp::FlagTestSet {
                            (old != 0) as u64
                        } else {
                            old
                        };
                    }
                    if ptr >> TAG_SHIFT == TAG_GLOBAL {
                        self.global_store = true;
                        let b = ((ptr >> BUF_SHIFT) & 0xfffff) as usize;
                        let off = ptr & OFF_MASK;
                        if let Some(fp) = self.acc.fp.get_mut(b) {
                            add_range(&mut fp.0, off, off + nb);
                            add_range(&mut fp.1, off, off + nb);
                        }
                    }
                });
                self.acc.atomics += mask.count_ones() as u64;
            }
            _ => return Err(EmuError::Internal(format!("exec_atomic given {inst:?}"))),
        }
        Ok(())
    }

    /// OpenCL.std built-ins, dynamic shuffles and work-item built-ins.
    fn exec_builtin(&mut self, wp: &mut Warp, inst: &Inst, mask: u64) -> Result<(), EmuError> {
        let w = self.w;
        let regs = &mut wp.regs;
        match inst {
            Inst::Ext {
                op,
                k,
                n,
                d,
                args,
                k2,
                bcast,
                ..
            } => {
                if *bcast == 0 && *k == Sc::F32 && matches!(op, spirv::CLOp::mad | spirv::CLOp::fma)
                {
                    // fast path: fused multiply-add in single precision
                    let [a0, a1, a2] = args.map(|x| x as usize);
                    for j in 0..*n as usize {
                        lanes!(mask, l, {
                            let x = f32::from_bits(regs[(a0 + j) * w + l] as u32);
                            let y = f32::from_bits(regs[(a1 + j) * w + l] as u32);
                            let z = f32::from_bits(regs[(a2 + j) * w + l] as u32);
                            regs[(*d as usize + j) * w + l] = x.mul_add(y, z).to_bits() as u64;
                        });
                    }
                } else {
                    self.exec_ext(
                        wp,
                        mask,
                        *op,
                        *k,
                        *n as usize,
                        *d as usize,
                        *args,
                        *k2,
                        *bcast,
                    )?;
                }
            }
            Inst::DynShuffle {
                d,
                nout,
                a,
                b,
                nin,
                m,
                mk,
            } => {
                let (nin, nout) = (*nin as u64, *nout as usize);
                let tot = if b.is_some() { 2 * nin } else { nin };
                lanes!(mask, l, {
                    let mut out = [0u64; 16];
                    for (j, o) in out.iter_mut().enumerate().take(nout.min(16)) {
                        let sel = (regs[(*m as usize + j) * w + l] & mask_bits(mk.bits())) % tot;
                        let src = if sel < nin {
                            *a as u64 + sel
                        } else {
                            b.unwrap_or(*a) as u64 + sel - nin
                        };
                        *o = regs[src as usize * w + l];
                    }
                    for (j, o) in out.iter().enumerate().take(nout.min(16)) {
                        regs[(*d as usize + j) * w + l] = *o;
                    }
                });
            }
            Inst::Builtin { d, b, n, comp, k } => {
                let mk = mask_bits(k.bits());
                lanes!(mask, l, {
                    let li = wp.first + l as u64;
                    match comp {
                        Some(c) => {
                            regs[*d as usize * w + l] = self.builtin(*b, *c as usize, li) & mk;
                        }
                        None => {
                            for j in 0..*n as usize {
                                regs[(*d as usize + j) * w + l] = self.builtin(*b, j, li) & mk;
                            }
                        }
                    }
                });
            }
            _ => return Err(EmuError::Internal(format!("exec_builtin given {inst:?}"))),
        }
        Ok(())
    }

    /// `async_work_group_copy` / `async_work_group_strided_copy`.
    fn exec_async_copy(&mut self, wp: &mut Warp, inst: &Inst, mask: u64) -> Result<(), EmuError> {
        let w = self.w;
        let regs = &mut wp.regs;
        match inst {
            Inst::AsyncCopy {
                d,
                dst,
                src,
                n,
                nk,
                stride,
                sk,
                esize,
                dst_local,
            } => {
                // Every work-item passes the same arguments: each dynamic copy is done
                // once for the work-group, by the first warp that reaches it (warps run
                // in order, so the others have reached the preceding barrier), and its
                // traffic is counted once.
                let seq = wp.async_seq;
                wp.async_seq += 1;
                let first = seq >= self.async_done;
                if first {
                    self.async_done = seq + 1;
                }
                if mask != 0 && first {
                    let l = mask.trailing_zeros() as usize;
                    let cnt = regs[*n as usize * w + l] & mask_bits(nk.bits());
                    let st = (regs[*stride as usize * w + l] & mask_bits(sk.bits())).max(1);
                    let dp = regs[*dst as usize * w + l];
                    let sp = regs[*src as usize * w + l];
                    let es = *esize as u64;
                    let offs = |i: u64| {
                        if *dst_local {
                            (i * st * es, i * es)
                        } else {
                            (i * es, i * st * es)
                        }
                    };
                    for i in 0..cnt {
                        let (so, dof) = offs(i);
                        let data = self
                            .mem
                            .slice(&mut wp.prv, l, sp.wrapping_add(so), es)?
                            .to_vec();
                        self.mem
                            .slice(&mut wp.prv, l, dp.wrapping_add(dof), es)?
                            .copy_from_slice(&data);
                    }
                    // Traffic as if the work-items copied one element per lane, a warp
                    // of W consecutive elements per request.
                    let mut i = 0;
                    while i < cnt {
                        let nl = (cnt - i).min(w as u64) as usize;
                        let m = if nl >= 64 { !0 } else { (1u64 << nl) - 1 };
                        for j in 0..nl {
                            self.lane_ptr[j] = sp.wrapping_add(offs(i + j as u64).0);
                        }
                        self.mem_stats(m, es, false);
                        for j in 0..nl {
                            self.lane_ptr[j] = dp.wrapping_add(offs(i + j as u64).1);
                        }
                        self.mem_stats(m, es, true);
                        i += nl as u64;
                    }
                    lanes!(mask, ll, {
                        wp.regs[*d as usize * w + ll] = 0;
                    });
                }
            }
            _ => {
                return Err(EmuError::Internal(format!(
                    "exec_async_copy given {inst:?}"
                )))
            }
        }
        Ok(())
    }

    /// Branches and switches (divergence, reconvergence, loop skips).
    fn exec_branch(
        &mut self,
        wp: &mut Warp,
        inst: &Inst,
        pc: usize,
        mask: u64,
    ) -> Result<Flow, EmuError> {
        let w = self.w;
        let regs = &mut wp.regs;
        match inst {
            Inst::Br { t, phis } => {
                let (t, phis) = self.redirect(pc, *t, *phis);
                self.do_phis(wp, phis, mask);
                if let Some(f) = wp.frames.last_mut() {
                    if let Some(e) = f.stack.last_mut() {
                        e.block = t;
                    }
                }
                if self.settle(wp) {
                    return Ok(Flow::Yield(Yield::Done));
                }
                if self.check_budget() {
                    return Ok(Flow::Yield(Yield::Budget));
                }
                Ok(Flow::Jump)
            }
            Inst::BrCond {
                c,
                t,
                f,
                tp,
                fp,
                reconv,
            } => {
                let (t, tp) = &self.redirect(pc, *t, *tp);
                let (f, fp) = &self.redirect(pc, *f, *fp);
                let mut mt = 0u64;
                lanes!(mask, l, {
                    if regs[*c as usize * w + l] & 1 != 0 {
                        mt |= 1 << l;
                    }
                });
                let mf = mask & !mt;
                let fr = wp
                    .frames
                    .last_mut()
                    .ok_or_else(|| EmuError::Malformed("no frame".into()))?;
                if mf == 0 || mt == 0 || t == f {
                    let (tgt, pr) = if mf == 0 {
                        (*t, *tp)
                    } else if mt == 0 {
                        (*f, *fp)
                    } else {
                        (*t, *tp)
                    };
                    if let Some(e) = fr.stack.last_mut() {
                        e.block = tgt;
                    }
                    if t == f && mf != 0 && mt != 0 {
                        self.do_phis(wp, *tp, mask);
                    } else {
                        self.do_phis(wp, pr, mask);
                    }
                } else {
                    self.acc.divergent += 1;
                    if let Some(e) = fr.stack.last_mut() {
                        e.block = *reconv;
                    }
                    fr.stack.push(Entry {
                        block: *f,
                        mask: mf,
                        rpc: *reconv,
                    });
                    fr.stack.push(Entry {
                        block: *t,
                        mask: mt,
                        rpc: *reconv,
                    });
                    self.do_phis(wp, *tp, mt);
                    self.do_phis(wp, *fp, mf);
                }
                if self.settle(wp) {
                    return Ok(Flow::Yield(Yield::Done));
                }
                if self.check_budget() {
                    return Ok(Flow::Yield(Yield::Budget));
                }
                Ok(Flow::Jump)
            }
            Inst::Switch {
                sel,
                k,
                default,
                dp,
                cases,
                reconv,
            } => {
                let mk = mask_bits(k.bits());
                let mut groups: Vec<(u32, PhiRange, u64)> = Vec::new();
                lanes!(mask, l, {
                    let v = regs[*sel as usize * w + l] & mk;
                    let (tb, pr) = cases
                        .iter()
                        .find(|c| c.0 == v)
                        .map(|c| (c.1, c.2))
                        .unwrap_or((*default, *dp));
                    match groups
                        .iter_mut()
                        .find(|g| g.0 == tb && g.1.start == pr.start)
                    {
                        Some(g) => g.2 |= 1 << l,
                        None => groups.push((tb, pr, 1 << l)),
                    }
                });
                let fr = wp
                    .frames
                    .last_mut()
                    .ok_or_else(|| EmuError::Malformed("no frame".into()))?;
                if groups.len() <= 1 {
                    if let (Some(g), Some(e)) = (groups.first(), fr.stack.last_mut()) {
                        e.block = g.0;
                    }
                } else {
                    self.acc.divergent += 1;
                    if let Some(e) = fr.stack.last_mut() {
                        e.block = *reconv;
                    }
                    for g in groups.iter().rev() {
                        fr.stack.push(Entry {
                            block: g.0,
                            mask: g.2,
                            rpc: *reconv,
                        });
                    }
                }
                for g in &groups {
                    self.do_phis(wp, g.1, g.2);
                }
                if self.settle(wp) {
                    return Ok(Flow::Yield(Yield::Done));
                }
                if self.check_budget() {
                    return Ok(Flow::Yield(Yield::Budget));
                }
                Ok(Flow::Jump)
            }
            _ => Err(EmuError::Internal(format!("exec_branch given {inst:?}"))),
        }
    }

    /// Returns, calls, barriers and `OpUnreachable`.
    fn exec_call(&mut self, wp: &mut Warp, inst: &Inst, mask: u64) -> Result<Flow, EmuError> {
        let m = self.m;
        let w = self.w;
        let regs = &mut wp.regs;
        match inst {
            Inst::Return { v } => {
                if let Some((s, r, n)) = v {
                    for j in 0..*n as usize {
                        lanes!(mask, l, {
                            regs[(*r as usize + j) * w + l] = regs[(*s as usize + j) * w + l];
                        });
                    }
                }
                if let Some(f) = wp.frames.last_mut() {
                    if let Some(e) = f.stack.last_mut() {
                        e.block = EXIT;
                    }
                }
                if self.settle(wp) {
                    return Ok(Flow::Yield(Yield::Done));
                }
                Ok(Flow::Jump)
            }
            Inst::Call { func, d, args } => {
                let fi = &m.funcs[*func as usize];
                for (j, &(s, _, n)) in args.iter().enumerate() {
                    let Some(&(ps, pn)) = fi.params.get(j) else {
                        break;
                    };
                    for c in 0..n.min(pn) as usize {
                        lanes!(mask, l, {
                            regs[(ps as usize + c) * w + l] = regs[(s as usize + c) * w + l];
                        });
                    }
                }
                if wp.frames.len() > 256 {
                    return Err(EmuError::Unsupported("recursion".into()));
                }
                wp.frames.push(Frame {
                    stack: vec![Entry {
                        block: fi.entry,
                        mask,
                        rpc: EXIT,
                    }],
                    ret_pc: wp.pc + 1,
                    call_dst: *d,
                    callee_ret: fi.ret,
                    call_mask: mask,
                });
                if self.settle(wp) {
                    return Ok(Flow::Yield(Yield::Done));
                }
                Ok(Flow::Jump)
            }
            Inst::Barrier => {
                wp.pc += 1;
                Ok(Flow::Yield(Yield::Barrier))
            }
            Inst::Unreachable => Err(EmuError::Fault(
                "reached OpUnreachable (undefined behaviour)".into(),
            )),
            _ => Err(EmuError::Internal(format!("exec_call given {inst:?}"))),
        }
    }
}
