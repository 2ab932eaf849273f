//! Warp-lockstep interpreter of one work-group (Panwar et al. §IV-C, DESIGN.md §5).
//!
//! The work-group's work-items are cut into warps of `W` lanes (linear local id order).
//! Each warp executes the pre-decoded instructions of [`Module`] in lockstep under an
//! active mask. A conditional branch whose active lanes disagree pushes one SIMT-stack
//! entry per target, each with the reconvergence point = the immediate post-dominator of
//! the branching block; an entry is popped when it reaches its reconvergence point (or
//! the function exit). Barriers: every warp runs until it reaches a barrier (or ends),
//! then all warps resume.
//!
//! Registers are a file of `W` lanes × `u64` per SSA slot (see [`super::module`]).

// Unordered float comparisons are written as negations on purpose (NaN semantics).
#![allow(
    clippy::neg_cmp_op_on_partial_ord,
    clippy::type_complexity,
    clippy::needless_range_loop
)]

use super::module::*;
use super::stats::*;
use super::{ArgValue, EmuConfig, EmuError, LaunchShape};
use rspirv::spirv;
use std::collections::HashMap;

#[derive(Debug, Clone, Copy)]
struct Entry {
    block: u32,
    mask: u64,
    rpc: u32,
}

#[derive(Debug, Clone, Default)]
struct Frame {
    stack: Vec<Entry>,
    ret_pc: u32,
    call_dst: Option<(u32, u32)>,
    callee_ret: Option<(u32, u32)>,
    call_mask: u64,
}

#[derive(Debug, Default)]
struct Warp {
    regs: Vec<u64>,
    prv: Vec<u8>,
    frames: Vec<Frame>,
    pc: u32,
    mask: u64,
    /// Linear local id of lane 0.
    first: u64,
    done: bool,
    started: bool,
    /// Dynamic async_work_group_copy instances this warp has reached.
    async_seq: u64,
    /// Warp-level instructions this warp has executed (for extrapolation).
    instrs: u64,
}

enum Yield {
    Barrier,
    Done,
    Budget,
}

struct Mem {
    bufs: Vec<Vec<u8>>,
    local: Vec<u8>,
    cdata: Vec<u8>,
    psize: u64,
}

/// Statistics accumulators.
#[derive(Default)]
struct Acc {
    cnt: [[u64; 2]; 11],
    gl: GlobalTraffic,
    gs: GlobalTraffic,
    ll: LocalTraffic,
    ls: LocalTraffic,
    divergent: u64,
    barriers: u64,
    atomics: u64,
    /// per arg: (read, written) ranges
    fp: Vec<(Vec<[u64; 2]>, Vec<[u64; 2]>)>,
}

#[inline(always)]
fn mask_bits(bits: u32) -> u64 {
    if bits >= 64 {
        !0
    } else {
        (1u64 << bits) - 1
    }
}

#[inline(always)]
fn sext(x: u64, bits: u32) -> i64 {
    if bits >= 64 {
        x as i64
    } else {
        let sh = 64 - bits;
        ((x << sh) as i64) >> sh
    }
}

/// IEEE half → single.
pub(crate) fn h2f(h: u16) -> f32 {
    let s = ((h >> 15) as u32) << 31;
    let e = ((h >> 10) & 0x1f) as u32;
    let m = (h & 0x3ff) as u32;
    let bits = if e == 0 {
        if m == 0 {
            s
        } else {
            // subnormal
            let v = m as f32 * (1.0 / 16_777_216.0);
            return if s != 0 { -v } else { v };
        }
    } else if e == 31 {
        s | 0x7f80_0000 | (m << 13)
    } else {
        s | ((e + 112) << 23) | (m << 13)
    };
    f32::from_bits(bits)
}

/// Single → half with a rounding mode (bit-exact IEEE 754 conversion).
pub(crate) fn f2h(f: f32, r: Round) -> u16 {
    let b = f.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let neg = sign != 0;
    let e = ((b >> 23) & 0xff) as i32;
    let m = (b & 0x7f_ffff) as u64;
    if e == 255 {
        return sign | 0x7c00 | if m != 0 { 0x200 | (m >> 13) as u16 } else { 0 };
    }
    if e == 0 && m == 0 {
        return sign;
    }
    // value = mant * 2^(e - 150) with a 24-bit mant (f32 subnormals: e = 1, no hidden bit)
    let (mant, e) = if e == 0 { (m, 1) } else { (m | 0x80_0000, e) };
    let exp = e - 127 + 15; // biased half exponent for a normal result
    let shift: i32 = if exp > 0 { 13 } else { 13 + (1 - exp) };
    let (kept, rem, half) = if shift >= 40 {
        (0u64, mant, 1u64 << 39)
    } else {
        (
            mant >> shift,
            mant & ((1u64 << shift) - 1),
            1u64 << (shift - 1),
        )
    };
    let up = match r {
        Round::Rtz => false,
        Round::Rtp => rem != 0 && !neg,
        Round::Rtn => rem != 0 && neg,
        _ => rem > half || (rem == half && kept & 1 == 1),
    };
    let kept = kept + up as u64;
    let v = if exp > 0 {
        (((exp - 1) as u64) << 10) + kept
    } else {
        kept
    };
    if v >= 0x7c00 {
        let inf = match r {
            Round::Rtz => false,
            Round::Rtp => !neg,
            Round::Rtn => neg,
            _ => true,
        };
        return sign | if inf { 0x7c00 } else { 0x7bff };
    }
    sign | v as u16
}

#[inline(always)]
fn tof(x: u64, k: Sc) -> f64 {
    match k {
        Sc::F32 => f32::from_bits(x as u32) as f64,
        Sc::F64 => f64::from_bits(x),
        Sc::F16 => h2f(x as u16) as f64,
        _ => x as f64,
    }
}

#[inline(always)]
fn fromf(v: f64, k: Sc) -> u64 {
    match k {
        Sc::F32 => (v as f32).to_bits() as u64,
        Sc::F64 => v.to_bits(),
        Sc::F16 => f2h(v as f32, Round::Rte) as u64,
        _ => v as u64,
    }
}

/// Rounds an f64 to f32 with a rounding mode.
fn f64_to_f32(x: f64, r: Round) -> f32 {
    let y = x as f32;
    if x.is_nan() || y as f64 == x {
        return y;
    }
    match r {
        Round::Rtz => {
            if (y as f64).abs() > x.abs() {
                if y > 0.0 {
                    y.next_down()
                } else {
                    y.next_up()
                }
            } else {
                y
            }
        }
        Round::Rtp => {
            if (y as f64) < x {
                y.next_up()
            } else {
                y
            }
        }
        Round::Rtn => {
            if (y as f64) > x {
                y.next_down()
            } else {
                y
            }
        }
        _ => y,
    }
}

/// Integer → float with rounding (exact via i128 → f64 when possible).
fn int_to_float(v: i128, to: Sc, r: Round) -> u64 {
    match to {
        Sc::F64 => {
            let y = v as f64;
            let back = y as i128;
            let y = if back == v || matches!(r, Round::Default | Round::Rte) {
                y
            } else {
                match r {
                    Round::Rtz => {
                        if back.abs() > v.abs() {
                            if y > 0.0 {
                                y.next_down()
                            } else {
                                y.next_up()
                            }
                        } else {
                            y
                        }
                    }
                    Round::Rtp => {
                        if back < v {
                            y.next_up()
                        } else {
                            y
                        }
                    }
                    _ => {
                        if back > v {
                            y.next_down()
                        } else {
                            y
                        }
                    }
                }
            };
            y.to_bits()
        }
        Sc::F32 | Sc::F16 => {
            // f32 from a 64-bit integer: round once. Use exact arithmetic with i128.
            let y = v as f32; // RTE
            let back = y as i128;
            let y = if back == v || matches!(r, Round::Default | Round::Rte) {
                y
            } else {
                match r {
                    Round::Rtz => {
                        if back.abs() > v.abs() {
                            if y > 0.0 {
                                y.next_down()
                            } else {
                                y.next_up()
                            }
                        } else {
                            y
                        }
                    }
                    Round::Rtp => {
                        if back < v {
                            y.next_up()
                        } else {
                            y
                        }
                    }
                    _ => {
                        if back > v {
                            y.next_down()
                        } else {
                            y
                        }
                    }
                }
            };
            if to == Sc::F16 {
                f2h(y, r) as u64
            } else {
                y.to_bits() as u64
            }
        }
        _ => 0,
    }
}

fn round_f(x: f64, r: Round) -> f64 {
    match r {
        Round::Rte => {
            let t = x.round();
            if (x - x.trunc()).abs() == 0.5 {
                2.0 * (x / 2.0).round_ties_even_compat()
            } else {
                t
            }
        }
        Round::Rtp => x.ceil(),
        Round::Rtn => x.floor(),
        _ => x.trunc(),
    }
}

trait TiesEven {
    fn round_ties_even_compat(self) -> f64;
}
impl TiesEven for f64 {
    fn round_ties_even_compat(self) -> f64 {
        self.round_ties_even()
    }
}

fn merge_ranges(v: &mut Vec<[u64; 2]>) {
    v.sort_unstable();
    let mut out: Vec<[u64; 2]> = Vec::with_capacity(v.len());
    for r in v.iter() {
        if let Some(l) = out.last_mut() {
            if r[0] <= l[1] {
                l[1] = l[1].max(r[1]);
                continue;
            }
        }
        out.push(*r);
    }
    *v = out;
}

#[inline]
fn add_range(v: &mut Vec<[u64; 2]>, s: u64, e: u64) {
    if let Some(l) = v.last_mut() {
        if s >= l[0] && s <= l[1] {
            if e > l[1] {
                l[1] = e;
            }
            return;
        }
        if e >= l[0] && e <= l[1] && s < l[0] {
            l[0] = s;
            return;
        }
    }
    v.push([s, e]);
    if v.len() > 1 << 16 {
        merge_ranges(v);
    }
}

impl Mem {
    /// Resolves `len` bytes at tagged pointer `ptr` for lane `lane`.
    #[inline(always)]
    fn slice<'a>(
        &'a mut self,
        prv: &'a mut [u8],
        lane: usize,
        ptr: u64,
        len: u64,
    ) -> Result<&'a mut [u8], EmuError> {
        let tag = ptr >> TAG_SHIFT;
        let off = ptr & OFF_MASK;
        let (region, base): (&mut [u8], u64) = match tag {
            TAG_GLOBAL => {
                let b = ((ptr >> BUF_SHIFT) & 0xfffff) as usize;
                match self.bufs.get_mut(b) {
                    Some(v) => (v.as_mut_slice(), 0),
                    None => return Err(EmuError::Fault(format!("pointer to unknown buffer {b}"))),
                }
            }
            TAG_LOCAL => (self.local.as_mut_slice(), 0),
            TAG_CONST => (self.cdata.as_mut_slice(), 0),
            TAG_PRIVATE => {
                if off.saturating_add(len) > self.psize {
                    return Err(EmuError::Fault(format!(
                        "private access out of bounds (offset {off}, {len} bytes)"
                    )));
                }
                (prv, lane as u64 * self.psize)
            }
            _ => {
                return Err(EmuError::Fault(format!(
                    "access through an invalid pointer 0x{ptr:x}"
                )))
            }
        };
        let s = base + off;
        let e = s.saturating_add(len);
        if e > region.len() as u64 {
            let what = match tag {
                TAG_GLOBAL => format!("buffer argument {}", (ptr >> BUF_SHIFT) & 0xfffff),
                TAG_LOCAL => "local memory".into(),
                TAG_CONST => "program-scope data".into(),
                _ => "private memory".into(),
            };
            return Err(EmuError::Fault(format!(
                "out-of-bounds access to {what}: bytes [{off}, {}) of {}",
                off + len,
                region.len()
            )));
        }
        Ok(&mut region[s as usize..e as usize])
    }
}

#[inline(always)]
fn rd(b: &[u8], k: Sc) -> u64 {
    match k.bytes() {
        1 => b[0] as u64 & if k == Sc::B1 { 1 } else { 0xff },
        2 => u16::from_le_bytes([b[0], b[1]]) as u64,
        4 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u64,
        _ => u64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]),
    }
}

#[inline(always)]
fn wr(b: &mut [u8], k: Sc, v: u64) {
    let n = k.bytes() as usize;
    b[..n].copy_from_slice(&v.to_le_bytes()[..n]);
}

macro_rules! lanes {
    ($mask:expr, $l:ident, $body:block) => {{
        let mut mm: u64 = $mask;
        while mm != 0 {
            let $l = mm.trailing_zeros() as usize;
            mm &= mm - 1;
            $body
        }
    }};
}

/// Everything one emulation needs.
pub(crate) struct Machine<'m> {
    m: &'m Module,
    w: usize,
    mem: Mem,
    acc: Acc,
    shape: LaunchShape,
    group: [u64; 3],
    /// actual local size of this work-group per dimension
    lsz: [u64; 3],
    budget: u64,
    time_budget_ns: u64,
    start: std::time::Instant,
    branches: u64,
    scratch: Vec<u64>,
    scratch2: Vec<u64>,
    tmp: Vec<u64>,
    /// lane → start pointer for memory stats of the current instruction
    lane_ptr: Vec<u64>,
    /// Dynamic async_work_group_copy instances already performed for the work-group.
    async_done: u64,
    /// Footprint-only emulation: the kernel's loop-entering branches to redirect.
    skips: Option<&'m HashMap<u32, Vec<SkipBranch>>>,
    /// Loop entries skipped (warp level).
    skipped: u64,
    /// Per argument: a skipped loop may have read it.
    skipped_reads: Vec<bool>,
}

/// Result of one emulation before conversion to public statistics.
pub(crate) fn run(
    m: &Module,
    k: &KernelInfo,
    shape: &LaunchShape,
    group: [u64; 3],
    args: &mut [ArgValue],
    cfg: &EmuConfig,
) -> Result<WorkGroupStats, EmuError> {
    let t0 = std::time::Instant::now();
    if let Some(u) = &k.unsupported {
        return Err(EmuError::Unsupported(u.clone()));
    }
    let w = cfg.warp_width as usize;
    if w == 0 || w > 64 {
        return Err(EmuError::BadLaunch("warp width must be 1..=64".into()));
    }
    if shape.work_dim == 0 || shape.work_dim > 3 {
        return Err(EmuError::BadLaunch("work_dim must be 1, 2 or 3".into()));
    }
    let wd = shape.work_dim as usize;
    let mut sh = *shape;
    for d in 0..3 {
        if d >= wd {
            sh.global[d] = 1;
            sh.local[d] = 1;
            sh.offset[d] = 0;
        }
        if sh.local[d] == 0 || sh.global[d] == 0 {
            return Err(EmuError::BadLaunch("zero global or local size".into()));
        }
    }
    let mut lsz = [1u64; 3];
    for d in 0..3 {
        let ng = sh.global[d].div_ceil(sh.local[d]);
        if group[d] >= ng {
            return Err(EmuError::BadLaunch(format!(
                "work-group {:?} outside the NDRange ({} groups in dimension {d})",
                group, ng
            )));
        }
        lsz[d] = sh.local[d].min(sh.global[d] - group[d] * sh.local[d]);
    }
    let items = lsz[0] * lsz[1] * lsz[2];
    if items > 1 << 16 {
        return Err(EmuError::BadLaunch(
            "work-group larger than 65536 work-items".into(),
        ));
    }
    if args.len() != k.args.len() {
        return Err(EmuError::BadLaunch(format!(
            "kernel {} takes {} arguments, {} given",
            k.name,
            k.args.len(),
            args.len()
        )));
    }
    // Memory set-up.
    let mut bufs: Vec<Vec<u8>> = Vec::with_capacity(args.len());
    let mut arg_is_buf = vec![false; args.len()];
    let mut local_size = m.local_static;
    let mut local_offs = vec![0u64; args.len()];
    let mut psize = m.private_size;
    let mut byval_offs = vec![0u64; args.len()];
    for (i, (a, info)) in args.iter_mut().zip(&k.args).enumerate() {
        match (info.kind, a) {
            (ArgKind::Global | ArgKind::Constant, ArgValue::Buffer(b)) => {
                bufs.push(std::mem::take(b));
                arg_is_buf[i] = true;
            }
            (ArgKind::Global | ArgKind::Constant, ArgValue::Scalar(s))
                if s.iter().all(|x| *x == 0) =>
            {
                bufs.push(Vec::new());
            }
            (ArgKind::Local, ArgValue::Local(sz)) => {
                bufs.push(Vec::new());
                local_size = local_size.div_ceil(128) * 128;
                local_offs[i] = local_size;
                local_size += *sz as u64;
            }
            (ArgKind::Scalar, ArgValue::Scalar(s)) => {
                if s.len() < info.size as usize {
                    return Err(EmuError::BadLaunch(format!(
                        "argument {i}: {} bytes given, {} needed",
                        s.len(),
                        info.size
                    )));
                }
                bufs.push(Vec::new());
            }
            (ArgKind::ByVal, ArgValue::Scalar(s)) => {
                if s.len() < info.size as usize {
                    return Err(EmuError::BadLaunch(format!(
                        "argument {i}: {} bytes given, {} needed",
                        s.len(),
                        info.size
                    )));
                }
                bufs.push(Vec::new());
                psize = psize.div_ceil(16) * 16;
                byval_offs[i] = psize;
                psize += info.size as u64;
            }
            (kind, a) => {
                let what = match a {
                    ArgValue::Buffer(_) => "a buffer",
                    ArgValue::Scalar(_) => "a scalar",
                    ArgValue::Local(_) => "a local size",
                };
                // restore taken buffers
                for (j, b) in bufs.into_iter().enumerate() {
                    if arg_is_buf[j] {
                        args[j] = ArgValue::Buffer(b);
                    }
                }
                return Err(EmuError::BadLaunch(format!(
                    "argument {i} is {kind:?} but {what} was given"
                )));
            }
        }
    }
    if local_size > 256 << 20 {
        restore(args, bufs, &arg_is_buf);
        return Err(EmuError::BadLaunch("local memory over 256 MiB".into()));
    }
    let psize = psize.div_ceil(8) * 8;
    let nwarps = items.div_ceil(w as u64);
    if psize.saturating_mul(items) > 512 << 20
        || (m.nslots as u64).saturating_mul(8 * w as u64 * nwarps) > 1 << 30
    {
        restore(args, bufs, &arg_is_buf);
        return Err(EmuError::Unsupported(format!(
            "work-group state too large ({psize} bytes of private memory per work-item, {} registers)",
            m.nslots
        )));
    }
    let mut mach = Machine {
        m,
        w,
        mem: Mem {
            bufs,
            local: vec![0u8; local_size as usize],
            cdata: m.const_data.clone(),
            psize,
        },
        acc: Acc {
            fp: vec![(Vec::new(), Vec::new()); args.len()],
            ..Default::default()
        },
        shape: sh,
        group,
        lsz,
        budget: cfg.instr_budget,
        time_budget_ns: cfg.time_budget_ns,
        start: t0,
        branches: 0,
        scratch: Vec::with_capacity(256),
        scratch2: Vec::with_capacity(256),
        tmp: Vec::new(),
        lane_ptr: vec![0; w],
        async_done: 0,
        skips: cfg.skip_write_free_loops.then_some(&k.loop_skips),
        skipped: 0,
        skipped_reads: vec![false; args.len()],
    };
    // Warps.
    let nw = (items as usize).div_ceil(w);
    let f = &m.funcs[k.func as usize];
    let mut template = vec![0u64; m.nslots as usize * w];
    for &(s, v) in &m.consts {
        let b = s as usize * w;
        template[b..b + w].fill(v);
    }
    // Kernel arguments into the parameter slots.
    let mut arg_err = None;
    for (i, info) in k.args.iter().enumerate() {
        let b = info.slot as usize * w;
        let v = match (&info.kind, &args[i]) {
            (ArgKind::Global | ArgKind::Constant, _) => {
                if arg_is_buf[i] {
                    vec![(TAG_GLOBAL << TAG_SHIFT) | ((i as u64) << BUF_SHIFT)]
                } else {
                    vec![0]
                }
            }
            (ArgKind::Local, _) => vec![(TAG_LOCAL << TAG_SHIFT) | local_offs[i]],
            (ArgKind::ByVal, _) => vec![(TAG_PRIVATE << TAG_SHIFT) | byval_offs[i]],
            (ArgKind::Scalar, ArgValue::Scalar(s)) => info
                .leaves
                .iter()
                .map(|(off, k)| {
                    let o = *off as usize;
                    let n = k.bytes() as usize;
                    if o + n <= s.len() {
                        rd(&s[o..o + n], *k)
                    } else {
                        0
                    }
                })
                .collect(),
            _ => {
                arg_err = Some(i);
                vec![0]
            }
        };
        for (j, x) in v.iter().enumerate() {
            let bb = b + j * w;
            if bb + w <= template.len() {
                template[bb..bb + w].fill(*x);
            }
        }
    }
    if let Some(i) = arg_err {
        let bufs = std::mem::take(&mut mach.mem.bufs);
        restore(args, bufs, &arg_is_buf);
        return Err(EmuError::BadLaunch(format!("argument {i} has no value")));
    }
    let mut warps: Vec<Warp> = Vec::with_capacity(nw);
    for wi in 0..nw {
        let first = (wi * w) as u64;
        let n = (items - first).min(w as u64) as u32;
        let mask = if n >= 64 { !0 } else { (1u64 << n) - 1 };
        let mut prv = vec![0u8; (psize as usize) * w];
        for (i, info) in k.args.iter().enumerate() {
            if info.kind == ArgKind::ByVal {
                if let ArgValue::Scalar(s) = &args[i] {
                    for l in 0..w {
                        let o = l * psize as usize + byval_offs[i] as usize;
                        prv[o..o + info.size as usize].copy_from_slice(&s[..info.size as usize]);
                    }
                }
            }
        }
        warps.push(Warp {
            regs: template.clone(),
            prv,
            frames: vec![Frame {
                stack: vec![Entry {
                    block: f.entry,
                    mask,
                    rpc: EXIT,
                }],
                ret_pc: 0,
                call_dst: None,
                callee_ret: None,
                call_mask: mask,
            }],
            pc: m.blocks[f.entry as usize].start,
            mask,
            first,
            done: false,
            started: false,
            async_seq: 0,
            instrs: 0,
        });
    }
    drop(template);
    let res = mach.schedule(&mut warps);
    let bufs = std::mem::take(&mut mach.mem.bufs);
    restore(args, bufs, &arg_is_buf);
    let exhausted = res?;
    // Statistics.
    let mut st = WorkGroupStats {
        warp_width: w as u32,
        work_items: items,
        group,
        budget_exhausted: exhausted,
        ..Default::default()
    };
    st.skipped_loops = mach.skipped;
    st.skipped_loop_reads = (0..args.len())
        .filter(|i| {
            mach.skipped_reads[*i] && matches!(k.args[*i].kind, ArgKind::Global | ArgKind::Constant)
        })
        .map(|i| i as u32)
        .collect();
    // Extrapolation when the budget ran out: the fraction of the work-group emulated is
    // (finished warps + partial progress of started ones) / warps, a started warp's
    // progress being its instructions over the mean of the finished warps' (half done
    // when no warp has finished, e.g. when every warp waits at barriers).
    let scale = if exhausted {
        let fin: Vec<u64> = warps.iter().filter(|x| x.done).map(|x| x.instrs).collect();
        let mean = if fin.is_empty() {
            None
        } else {
            Some(fin.iter().sum::<u64>() as f64 / fin.len() as f64)
        };
        let part: f64 = warps
            .iter()
            .filter(|x| !x.done && x.started)
            .map(|x| match mean {
                Some(m) if m > 0.0 => (x.instrs as f64 / m).min(1.0),
                _ => 0.5,
            })
            .sum();
        let f = (fin.len() as f64 + part) / nw as f64;
        if f > 0.0 {
            1.0 / f
        } else {
            1.0
        }
    } else {
        1.0
    };
    st.extrapolation_factor = scale;
    let sc = |x: u64| -> u64 { (x as f64 * scale).round() as u64 };
    let a = &mut mach.acc;
    let wl = |i: usize| WarpLaneCount {
        warp: sc(a.cnt[i][0]),
        lane: sc(a.cnt[i][1]),
    };
    st.instructions = InstructionMix {
        int: wl(cls::INT as usize),
        fp32: wl(cls::FP32 as usize),
        fp64: wl(cls::FP64 as usize),
        special: wl(cls::SPECIAL as usize),
        conversion: wl(cls::CONV as usize),
        branch: wl(cls::BRANCH as usize),
        barrier: wl(cls::BARRIER as usize),
        atomic: wl(cls::ATOMIC as usize),
        memory: wl(cls::MEMORY as usize),
        other: wl(cls::OTHER as usize),
    };
    let gt = |g: &GlobalTraffic| GlobalTraffic {
        requests: sc(g.requests),
        sectors: sc(g.sectors),
        lines: sc(g.lines),
        bytes: sc(g.bytes),
    };
    st.global_loads = gt(&a.gl);
    st.global_stores = gt(&a.gs);
    st.local_loads = LocalTraffic {
        requests: sc(a.ll.requests),
        bank_conflict_replays: sc(a.ll.bank_conflict_replays),
    };
    st.local_stores = LocalTraffic {
        requests: sc(a.ls.requests),
        bank_conflict_replays: sc(a.ls.bank_conflict_replays),
    };
    st.divergent_branches = sc(a.divergent);
    st.barriers = sc(a.barriers);
    st.atomics = sc(a.atomics);
    for (i, (r, wr)) in a.fp.iter_mut().enumerate() {
        if !arg_is_buf[i] {
            continue;
        }
        merge_ranges(r);
        merge_ranges(wr);
        st.footprints.push(ArgFootprint {
            arg: i as u32,
            read: std::mem::take(r),
            written: std::mem::take(wr),
        });
    }
    st.emulation_ns = t0.elapsed().as_nanos() as u64;
    Ok(st)
}

fn restore(args: &mut [ArgValue], bufs: Vec<Vec<u8>>, is_buf: &[bool]) {
    for (j, b) in bufs.into_iter().enumerate() {
        if is_buf.get(j).copied().unwrap_or(false) {
            args[j] = ArgValue::Buffer(b);
        }
    }
}

impl<'m> Machine<'m> {
    /// Runs all warps, barrier phase by barrier phase. Returns whether the budget ran out.
    fn schedule(&mut self, warps: &mut [Warp]) -> Result<bool, EmuError> {
        loop {
            let mut any_barrier = false;
            let mut all_done = true;
            for wi in 0..warps.len() {
                if warps[wi].done {
                    continue;
                }
                warps[wi].started = true;
                let before: u64 = self.acc.cnt.iter().map(|c| c[0]).sum();
                let y = self.run_warp(&mut warps[wi]);
                let after: u64 = self.acc.cnt.iter().map(|c| c[0]).sum();
                warps[wi].instrs += after - before;
                match y? {
                    Yield::Barrier => {
                        any_barrier = true;
                        all_done = false;
                    }
                    Yield::Done => warps[wi].done = true,
                    Yield::Budget => return Ok(true),
                }
            }
            if any_barrier {
                self.acc.barriers += 1;
            }
            if all_done {
                return Ok(false);
            }
        }
    }

    /// Pops finished SIMT entries and frames; sets pc/mask for what runs next.
    /// Returns true when the warp has finished the kernel.
    #[inline]
    fn settle(&mut self, wp: &mut Warp) -> bool {
        let w = self.w;
        loop {
            let fr = match wp.frames.last_mut() {
                Some(f) => f,
                None => return true,
            };
            match fr.stack.last() {
                Some(e) if e.block == e.rpc || e.block == EXIT => {
                    fr.stack.pop();
                }
                Some(e) => {
                    wp.pc = self.m.blocks[e.block as usize].start;
                    wp.mask = e.mask;
                    return false;
                }
                None => {
                    let fr = match wp.frames.pop() {
                        Some(f) => f,
                        None => return true,
                    };
                    if wp.frames.is_empty() {
                        return true;
                    }
                    wp.mask = fr.call_mask;
                    wp.pc = fr.ret_pc;
                    if let (Some((d, n)), Some((r, _))) = (fr.call_dst, fr.callee_ret) {
                        for j in 0..n as usize {
                            lanes!(wp.mask, l, {
                                wp.regs[(d as usize + j) * w + l] =
                                    wp.regs[(r as usize + j) * w + l];
                            });
                        }
                    }
                    return false;
                }
            }
        }
    }

    #[inline]
    fn do_phis(&mut self, wp: &mut Warp, r: PhiRange, mask: u64) {
        if r.len == 0 || mask == 0 {
            return;
        }
        let w = self.w;
        let copies = &self.m.phis[r.start as usize..(r.start + r.len) as usize];
        if copies.len() == 1 {
            let (d, s) = copies[0];
            lanes!(mask, l, {
                wp.regs[d as usize * w + l] = wp.regs[s as usize * w + l];
            });
            return;
        }
        self.tmp.clear();
        self.tmp.resize(copies.len() * w, 0);
        for (j, &(_, s)) in copies.iter().enumerate() {
            lanes!(mask, l, {
                self.tmp[j * w + l] = wp.regs[s as usize * w + l];
            });
        }
        for (j, &(d, _)) in copies.iter().enumerate() {
            lanes!(mask, l, {
                wp.regs[d as usize * w + l] = self.tmp[j * w + l];
            });
        }
    }

    fn check_budget(&mut self) -> bool {
        self.branches += 1;
        let lanes: u64 = self.acc.cnt.iter().map(|c| c[1]).sum();
        if lanes > self.budget {
            return true;
        }
        if self.branches & 1023 == 0 && self.start.elapsed().as_nanos() as u64 > self.time_budget_ns
        {
            return true;
        }
        false
    }

    fn builtin(&self, b: Bi, comp: usize, li: u64) -> u64 {
        let lx = self.lsz[0];
        let ly = self.lsz[1];
        let lid = [li % lx, (li / lx) % ly, li / (lx * ly)];
        let s = &self.shape;
        let c = comp.min(2);
        let ng = |d: usize| s.global[d].div_ceil(s.local[d]);
        match b {
            Bi::GlobalId => self.group[c] * s.local[c] + lid[c] + s.offset[c],
            Bi::LocalId => lid[c],
            Bi::GroupId => self.group[c],
            Bi::NumGroups => ng(c),
            Bi::GlobalSize => s.global[c],
            Bi::LocalSize => self.lsz[c],
            Bi::EnqueuedLocalSize => s.local[c],
            Bi::GlobalOffset => s.offset[c],
            Bi::WorkDim => s.work_dim as u64,
            Bi::LocalIndex => li,
            Bi::GlobalLinearId => {
                let g = |d: usize| self.group[d] * s.local[d] + lid[d];
                (g(2) * s.global[1] + g(1)) * s.global[0] + g(0)
            }
            Bi::SubgroupSize | Bi::SubgroupMaxSize => self.w as u64,
            Bi::NumSubgroups => (self.lsz[0] * self.lsz[1] * self.lsz[2]).div_ceil(self.w as u64),
            Bi::SubgroupId => li / self.w as u64,
            Bi::SubgroupLocalId => li % self.w as u64,
        }
    }

    /// Memory statistics of one warp-level access: `lane_ptr` holds each active lane's
    /// start pointer, each touching `size` bytes.
    fn mem_stats(&mut self, mask: u64, size: u64, store: bool) {
        let w = self.w;
        let _ = w;
        // Split by address space (all lanes normally agree).
        let mut any_g = false;
        let mut any_l = false;
        lanes!(mask, l, {
            let t = self.lane_ptr[l] >> TAG_SHIFT;
            if t == TAG_GLOBAL || t == TAG_CONST {
                any_g = true;
            } else if t == TAG_LOCAL {
                any_l = true;
            }
        });
        if any_g {
            self.scratch.clear();
            self.scratch2.clear();
            let mut bytes = 0u64;
            lanes!(mask, l, {
                let p = self.lane_ptr[l];
                let t = p >> TAG_SHIFT;
                if t == TAG_GLOBAL || t == TAG_CONST {
                    let e = p + size - 1;
                    for s in (p >> 5)..=(e >> 5) {
                        self.scratch.push(s);
                    }
                    for s in (p >> 7)..=(e >> 7) {
                        self.scratch2.push(s);
                    }
                    bytes += size;
                    if t == TAG_GLOBAL {
                        let b = ((p >> BUF_SHIFT) & 0xfffff) as usize;
                        let off = p & OFF_MASK;
                        if let Some(fp) = self.acc.fp.get_mut(b) {
                            if store {
                                add_range(&mut fp.1, off, off + size);
                            } else {
                                add_range(&mut fp.0, off, off + size);
                            }
                        }
                    }
                }
            });
            let sectors = count_distinct(&mut self.scratch);
            let lines = count_distinct(&mut self.scratch2);
            let g = if store {
                &mut self.acc.gs
            } else {
                &mut self.acc.gl
            };
            g.requests += 1;
            g.sectors += sectors;
            g.lines += lines;
            g.bytes += bytes;
        }
        if any_l {
            self.scratch.clear();
            lanes!(mask, l, {
                let p = self.lane_ptr[l];
                if p >> TAG_SHIFT == TAG_LOCAL {
                    let off = p & OFF_MASK;
                    for wd in (off >> 2)..=((off + size - 1) >> 2) {
                        self.scratch.push(wd);
                    }
                }
            });
            count_distinct(&mut self.scratch);
            let mut per_bank = [0u32; 32];
            for wd in &self.scratch {
                per_bank[(*wd % 32) as usize] += 1;
            }
            let mx = per_bank.iter().copied().max().unwrap_or(0) as u64;
            let t = if store {
                &mut self.acc.ls
            } else {
                &mut self.acc.ll
            };
            t.requests += 1;
            t.bank_conflict_replays += mx.saturating_sub(1);
        }
    }

    /// The padding half after the 3 halves of a `vstorea_half3` (bytes `[at, at + len)` from
    /// each active lane's `lane_ptr`), recorded in the write footprint as read and written
    /// (its emulated contents stay as they were). The specification has only x, y, z
    /// written, and Oclgrind writes 3 halves, but PoCL 3.1 stores the whole 8-byte slot
    /// (the 4th half as 0): the byte may or may not change, depending on the device. As a
    /// read-modify-write it makes balance mode give every device the buffer's contents
    /// before the launch and merge that half back, which reproduces either behaviour.
    fn padding_footprint(&mut self, mask: u64, at: u64, len: u64) {
        lanes!(mask, l, {
            let p = self.lane_ptr[l];
            if p >> TAG_SHIFT == TAG_GLOBAL {
                let b = ((p >> BUF_SHIFT) & 0xfffff) as usize;
                let off = (p & OFF_MASK) + at;
                if let Some(fp) = self.acc.fp.get_mut(b) {
                    add_range(&mut fp.0, off, off + len);
                    add_range(&mut fp.1, off, off + len);
                }
            }
        });
    }

    /// The target and φ copies of the branch at `pc` to block `t`: the loop's exit, with
    /// no φ copies, when footprint-only emulation skips the loop that `t` heads.
    fn redirect(&mut self, pc: usize, t: u32, phis: PhiRange) -> (u32, PhiRange) {
        let Some(skip) = self
            .skips
            .and_then(|s| s.get(&(pc as u32)))
            .and_then(|v| v.iter().find(|s| s.header == t))
        else {
            return (t, phis);
        };
        self.skipped += 1;
        match &skip.reads {
            Some(r) => {
                for a in r.iter() {
                    if let Some(x) = self.skipped_reads.get_mut(*a as usize) {
                        *x = true;
                    }
                }
            }
            None => self.skipped_reads.iter_mut().for_each(|x| *x = true),
        }
        (skip.exit, PhiRange::default())
    }

    fn run_warp(&mut self, wp: &mut Warp) -> Result<Yield, EmuError> {
        let m = self.m;
        let w = self.w;
        loop {
            let pc = wp.pc as usize;
            let mask = wp.mask;
            let inst = match m.code.get(pc) {
                Some(i) => i,
                None => return Err(EmuError::Malformed("fell off the end of the code".into())),
            };
            let c = m.class[pc] as usize;
            self.acc.cnt[c][0] += 1;
            self.acc.cnt[c][1] += mask.count_ones() as u64;
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
                            regs[(*d as usize + j) * w + l] =
                                convert(*op, *from, *to, x, *sat, *round);
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
                Inst::Load { d, p, leaves, size } => {
                    lanes!(mask, l, {
                        let ptr = regs[*p as usize * w + l];
                        self.lane_ptr[l] = ptr;
                        let sl = self.mem.slice(&mut wp.prv, l, ptr, *size as u64)?;
                        for (j, (off, k)) in leaves.iter().enumerate() {
                            let o = *off as usize;
                            regs[(*d as usize + j) * w + l] = rd(&sl[o..], *k);
                        }
                    });
                    self.mem_stats(mask, *size as u64, false);
                }
                Inst::Store { p, v, leaves, size } => {
                    lanes!(mask, l, {
                        let ptr = regs[*p as usize * w + l];
                        self.lane_ptr[l] = ptr;
                        let sl = self.mem.slice(&mut wp.prv, l, ptr, *size as u64)?;
                        for (j, (off, k)) in leaves.iter().enumerate() {
                            let o = *off as usize;
                            wr(&mut sl[o..], *k, regs[(*v as usize + j) * w + l]);
                        }
                    });
                    self.mem_stats(mask, *size as u64, true);
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
                Inst::Ext {
                    op,
                    k,
                    n,
                    d,
                    args,
                    k2,
                    bcast,
                } => {
                    if *bcast == 0
                        && *k == Sc::F32
                        && matches!(op, spirv::CLOp::mad | spirv::CLOp::fma)
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
                            let sel =
                                (regs[(*m as usize + j) * w + l] & mask_bits(mk.bits())) % tot;
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
                        self.padding_footprint(
                            mask,
                            n as u64 * esz,
                            (*stride as u64 - n as u64) * esz,
                        );
                    }
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
                Inst::Br { t, phis } => {
                    let (t, phis) = self.redirect(pc, *t, *phis);
                    self.do_phis(wp, phis, mask);
                    if let Some(f) = wp.frames.last_mut() {
                        if let Some(e) = f.stack.last_mut() {
                            e.block = t;
                        }
                    }
                    if self.settle(wp) {
                        return Ok(Yield::Done);
                    }
                    if self.check_budget() {
                        return Ok(Yield::Budget);
                    }
                    continue;
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
                        return Ok(Yield::Done);
                    }
                    if self.check_budget() {
                        return Ok(Yield::Budget);
                    }
                    continue;
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
                        return Ok(Yield::Done);
                    }
                    if self.check_budget() {
                        return Ok(Yield::Budget);
                    }
                    continue;
                }
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
                        return Ok(Yield::Done);
                    }
                    continue;
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
                        return Ok(Yield::Done);
                    }
                    continue;
                }
                Inst::Barrier => {
                    wp.pc += 1;
                    return Ok(Yield::Barrier);
                }
                Inst::Nop => {}
                Inst::Unreachable => {
                    return Err(EmuError::Fault(
                        "reached OpUnreachable (undefined behaviour)".into(),
                    ));
                }
            }
            wp.pc += 1;
        }
    }
}

fn count_distinct(v: &mut Vec<u64>) -> u64 {
    if v.is_empty() {
        return 0;
    }
    if !v.windows(2).all(|x| x[0] <= x[1]) {
        v.sort_unstable();
    }
    v.dedup();
    v.len() as u64
}

#[allow(clippy::too_many_arguments)]
#[inline]
fn exec_bin(
    regs: &mut [u64],
    w: usize,
    mask: u64,
    op: BinOp,
    k: Sc,
    n: usize,
    d: usize,
    a: usize,
    b: usize,
) {
    let bits = k.bits();
    let mk = mask_bits(bits);
    macro_rules! go {
        (|$x:ident, $y:ident| $e:expr) => {{
            for j in 0..n {
                let (ab, bb, db) = ((a + j) * w, (b + j) * w, (d + j) * w);
                if mask == (if w == 64 { !0 } else { (1u64 << w) - 1 }) {
                    for l in 0..w {
                        let $x = regs[ab + l];
                        let $y = regs[bb + l];
                        regs[db + l] = $e;
                    }
                } else {
                    lanes!(mask, l, {
                        let $x = regs[ab + l];
                        let $y = regs[bb + l];
                        regs[db + l] = $e;
                    });
                }
            }
        }};
    }
    macro_rules! fgo {
        ($op:tt) => {{
            match k {
                Sc::F32 => go!(|x, y| (f32::from_bits(x as u32) $op f32::from_bits(y as u32)).to_bits() as u64),
                Sc::F64 => go!(|x, y| (f64::from_bits(x) $op f64::from_bits(y)).to_bits()),
                _ => go!(|x, y| fromf(tof(x, k) $op tof(y, k), k)),
            }
        }};
    }
    macro_rules! fcmp {
        (|$x:ident, $y:ident| $e:expr) => {{
            go!(|xx, yy| {
                let $x = tof(xx, k);
                let $y = tof(yy, k);
                ($e) as u64
            })
        }};
    }
    match op {
        BinOp::IAdd => go!(|x, y| x.wrapping_add(y) & mk),
        BinOp::ISub => go!(|x, y| x.wrapping_sub(y) & mk),
        BinOp::IMul => go!(|x, y| x.wrapping_mul(y) & mk),
        BinOp::UDiv => go!(|x, y| x.checked_div(y).unwrap_or(0)),
        BinOp::UMod => go!(|x, y| x.checked_rem(y).unwrap_or(0)),
        BinOp::SDiv => go!(|x, y| {
            let (p, q) = (sext(x, bits), sext(y, bits));
            if q == 0 {
                0
            } else {
                (p.wrapping_div(q) as u64) & mk
            }
        }),
        BinOp::SRem => go!(|x, y| {
            let (p, q) = (sext(x, bits), sext(y, bits));
            if q == 0 {
                0
            } else {
                (p.wrapping_rem(q) as u64) & mk
            }
        }),
        BinOp::SMod => go!(|x, y| {
            let (p, q) = (sext(x, bits), sext(y, bits));
            if q == 0 {
                0
            } else {
                let r = p.wrapping_rem(q);
                let r = if r != 0 && ((r < 0) != (q < 0)) {
                    r + q
                } else {
                    r
                };
                (r as u64) & mk
            }
        }),
        BinOp::Shl => go!(|x, y| (x << (y % bits as u64)) & mk),
        BinOp::LShr => go!(|x, y| x >> (y % bits as u64)),
        BinOp::AShr => go!(|x, y| ((sext(x, bits) >> (y % bits as u64)) as u64) & mk),
        BinOp::Or => go!(|x, y| x | y),
        BinOp::Xor => go!(|x, y| x ^ y),
        BinOp::And => go!(|x, y| x & y),
        BinOp::FAdd => fgo!(+),
        BinOp::FSub => fgo!(-),
        BinOp::FMul => fgo!(*),
        BinOp::FDiv => fgo!(/),
        BinOp::FRem => go!(|x, y| fromf(tof(x, k) % tof(y, k), k)),
        BinOp::FMod => go!(|x, y| {
            let (p, q) = (tof(x, k), tof(y, k));
            let r = p % q;
            let r = if r != 0.0 && ((r < 0.0) != (q < 0.0)) {
                r + q
            } else {
                r
            };
            fromf(r, k)
        }),
        BinOp::IEq | BinOp::LEq => go!(|x, y| (x == y) as u64),
        BinOp::INe | BinOp::LNe => go!(|x, y| (x != y) as u64),
        BinOp::UGt => go!(|x, y| (x > y) as u64),
        BinOp::UGe => go!(|x, y| (x >= y) as u64),
        BinOp::ULt => go!(|x, y| (x < y) as u64),
        BinOp::ULe => go!(|x, y| (x <= y) as u64),
        BinOp::SGt => go!(|x, y| (sext(x, bits) > sext(y, bits)) as u64),
        BinOp::SGe => go!(|x, y| (sext(x, bits) >= sext(y, bits)) as u64),
        BinOp::SLt => go!(|x, y| (sext(x, bits) < sext(y, bits)) as u64),
        BinOp::SLe => go!(|x, y| (sext(x, bits) <= sext(y, bits)) as u64),
        BinOp::FOEq => fcmp!(|x, y| x == y),
        BinOp::FONe => fcmp!(|x, y| x != y && !x.is_nan() && !y.is_nan()),
        BinOp::FOLt => fcmp!(|x, y| x < y),
        BinOp::FOGt => fcmp!(|x, y| x > y),
        BinOp::FOLe => fcmp!(|x, y| x <= y),
        BinOp::FOGe => fcmp!(|x, y| x >= y),
        BinOp::FUEq => fcmp!(|x, y| x == y || x.is_nan() || y.is_nan()),
        BinOp::FUNe => fcmp!(|x, y| x != y),
        BinOp::FULt => fcmp!(|x, y| !(x >= y)),
        BinOp::FUGt => fcmp!(|x, y| !(x <= y)),
        BinOp::FULe => fcmp!(|x, y| !(x > y)),
        BinOp::FUGe => fcmp!(|x, y| !(x < y)),
        BinOp::FOrd => fcmp!(|x, y| !x.is_nan() && !y.is_nan()),
        BinOp::FUnord => fcmp!(|x, y| x.is_nan() || y.is_nan()),
        BinOp::LAnd => go!(|x, y| x & y & 1),
        BinOp::LOr => go!(|x, y| (x | y) & 1),
    }
}

#[allow(clippy::too_many_arguments)]
fn exec_un(regs: &mut [u64], w: usize, mask: u64, op: UnOp, k: Sc, n: usize, d: usize, a: usize) {
    let bits = k.bits();
    let mk = mask_bits(bits);
    for j in 0..n {
        lanes!(mask, l, {
            let x = regs[(a + j) * w + l];
            let f = || tof(x, k);
            regs[(d + j) * w + l] = match op {
                UnOp::Not => !x & mk,
                UnOp::SNeg => (x.wrapping_neg()) & mk,
                UnOp::FNeg => match k {
                    Sc::F32 => x ^ 0x8000_0000,
                    Sc::F64 => x ^ (1 << 63),
                    _ => x ^ 0x8000,
                },
                UnOp::LNot => (x & 1) ^ 1,
                UnOp::IsNan => f().is_nan() as u64,
                UnOp::IsInf => f().is_infinite() as u64,
                UnOp::IsFinite => f().is_finite() as u64,
                UnOp::IsNormal => match k {
                    Sc::F32 => f32::from_bits(x as u32).is_normal() as u64,
                    _ => f().is_normal() as u64,
                },
                UnOp::SignBit => (x >> (bits - 1)) & 1,
                UnOp::BitCount => (x & mk).count_ones() as u64,
                UnOp::BitReverse => (x.reverse_bits() >> (64 - bits)) & mk,
            };
        });
    }
}

fn convert(op: ConvOp, from: Sc, to: Sc, x: u64, sat: bool, r: Round) -> u64 {
    let tb = to.bits();
    let mk = mask_bits(tb);
    let fb = from.bits();
    let smin = if tb >= 64 {
        i64::MIN as i128
    } else {
        -(1i128 << (tb - 1))
    };
    let smax = if tb >= 64 {
        i64::MAX as i128
    } else {
        (1i128 << (tb - 1)) - 1
    };
    let umax = mk as i128;
    match op {
        ConvOp::FToU | ConvOp::FToS => {
            let v = tof(x, from);
            let v = round_f(v, if r == Round::Default { Round::Rtz } else { r });
            let (lo, hi) = if op == ConvOp::FToU {
                (0i128, umax)
            } else {
                (smin, smax)
            };
            if v.is_nan() {
                return 0;
            }
            let i = if v >= hi as f64 {
                hi
            } else if v <= lo as f64 {
                lo
            } else {
                v as i128
            };
            let _ = sat;
            (i as u64) & mk
        }
        ConvOp::SToF => int_to_float(sext(x, fb) as i128, to, r),
        ConvOp::UToF => int_to_float(x as i128, to, r),
        ConvOp::UConv | ConvOp::SatUToS => {
            if sat {
                let hi = if op == ConvOp::SatUToS { smax } else { umax };
                ((x as i128).min(hi) as u64) & mk
            } else {
                x & mk
            }
        }
        ConvOp::SConv | ConvOp::SatSToU => {
            let v = sext(x, fb) as i128;
            if sat {
                let (lo, hi) = if op == ConvOp::SatSToU {
                    (0, umax)
                } else {
                    (smin, smax)
                };
                (v.clamp(lo, hi) as u64) & mk
            } else {
                (v as u64) & mk
            }
        }
        ConvOp::FConv => {
            let v = tof(x, from);
            match to {
                Sc::F32 => f64_to_f32(v, r).to_bits() as u64,
                Sc::F64 => v.to_bits(),
                Sc::F16 => f2h(f64_to_f32(v, r), r) as u64,
                _ => 0,
            }
        }
    }
}

impl<'m> Machine<'m> {
    #[allow(clippy::too_many_arguments)]
    fn exec_ext(
        &mut self,
        wp: &mut Warp,
        mask: u64,
        op: spirv::CLOp,
        k: Sc,
        n: usize,
        d: usize,
        args: [u32; 3],
        k2: Sc,
        bcast: u8,
    ) -> Result<(), EmuError> {
        use spirv::CLOp as C;
        let w = self.w;
        let [a0, a1, a2] = args.map(|x| x as usize);
        // component stride of each argument (0 = scalar broadcast)
        let (s0, s1, s2) = (
            (bcast & 1 == 0) as usize,
            (bcast & 2 == 0) as usize,
            (bcast & 4 == 0) as usize,
        );
        let bits = k.bits();
        let mk = mask_bits(bits);
        let is32 = k == Sc::F32 || k == Sc::F16;
        // Single-precision results are computed in double precision and rounded once, which
        // is within OpenCL's ULP bounds for every function (OpenCL 1.2 §7.4).
        let f1 = |f: &dyn Fn(f64) -> f64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = tof(regs[(a0 + j * s0) * w + l], k);
                    regs[(d + j) * w + l] = fromf(f(x), k);
                });
            }
        };
        let f2 = |f: &dyn Fn(f64, f64) -> f64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = tof(regs[(a0 + j * s0) * w + l], k);
                    let y = tof(regs[(a1 + j * s1) * w + l], k);
                    regs[(d + j) * w + l] = fromf(f(x, y), k);
                });
            }
        };
        // Second argument may be a scalar broadcast (e.g. fmax(float4, float)) — the
        // front end splats these, so vectors are assumed here.
        let f3 = |f: &dyn Fn(f64, f64, f64) -> f64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = tof(regs[(a0 + j * s0) * w + l], k);
                    let y = tof(regs[(a1 + j * s1) * w + l], k);
                    let z = tof(regs[(a2 + j * s2) * w + l], k);
                    regs[(d + j) * w + l] = fromf(f(x, y, z), k);
                });
            }
        };
        let i1 = |f: &dyn Fn(u64) -> u64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = regs[(a0 + j * s0) * w + l];
                    regs[(d + j) * w + l] = f(x) & mk;
                });
            }
        };
        let i2 = |f: &dyn Fn(u64, u64) -> u64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = regs[(a0 + j * s0) * w + l];
                    let y = regs[(a1 + j * s1) * w + l];
                    regs[(d + j) * w + l] = f(x, y) & mk;
                });
            }
        };
        let i3 = |f: &dyn Fn(u64, u64, u64) -> u64, regs: &mut Vec<u64>| {
            for j in 0..n {
                lanes!(mask, l, {
                    let x = regs[(a0 + j * s0) * w + l];
                    let y = regs[(a1 + j * s1) * w + l];
                    let z = regs[(a2 + j * s2) * w + l];
                    regs[(d + j) * w + l] = f(x, y, z) & mk;
                });
            }
        };
        let sx = |x: u64| sext(x, bits) as i128;
        let ux = |x: u64| (x & mk) as i128;
        let smin = -(1i128 << (bits - 1));
        let smax = (1i128 << (bits - 1)) - 1;
        let umax = mk as i128;
        let pi = std::f64::consts::PI;
        let r = &mut wp.regs;
        match op {
            C::acos => f1(&|x| x.acos(), r),
            C::acosh => f1(&|x| x.acosh(), r),
            C::acospi => f1(&|x| x.acos() / pi, r),
            C::asin => f1(&|x| x.asin(), r),
            C::asinh => f1(&|x| x.asinh(), r),
            C::asinpi => f1(&|x| x.asin() / pi, r),
            C::atan => f1(&|x| x.atan(), r),
            C::atan2 => f2(&|y, x| y.atan2(x), r),
            C::atanh => f1(&|x| x.atanh(), r),
            C::atanpi => f1(&|x| x.atan() / pi, r),
            C::atan2pi => f2(&|y, x| y.atan2(x) / pi, r),
            C::cbrt => f1(&|x| x.cbrt(), r),
            C::ceil => f1(&|x| x.ceil(), r),
            C::copysign => f2(&|x, y| x.copysign(y), r),
            C::cos | C::native_cos | C::half_cos => f1(&|x| x.cos(), r),
            C::cosh => f1(&|x| x.cosh(), r),
            C::cospi => f1(&|x| (x * pi).cos(), r),
            C::erfc => f1(&|x| 1.0 - erf(x), r),
            C::erf => f1(&erf, r),
            C::exp | C::native_exp | C::half_exp => f1(&|x| x.exp(), r),
            C::exp2 | C::native_exp2 | C::half_exp2 => f1(&|x| x.exp2(), r),
            C::exp10 | C::native_exp10 | C::half_exp10 => f1(&|x| 10f64.powf(x), r),
            C::expm1 => f1(&|x| x.exp_m1(), r),
            C::fabs => f1(&|x| x.abs(), r),
            C::fdim => f2(
                &|x, y| {
                    if x > y {
                        x - y
                    } else if x.is_nan() || y.is_nan() {
                        f64::NAN
                    } else {
                        0.0
                    }
                },
                r,
            ),
            C::floor => f1(&|x| x.floor(), r),
            // mad: llvm-spirv emits it for llvm.fmuladd (contracted a*b+c); GPUs and PoCL
            // fuse it, so it is computed as a fused multiply-add with a single rounding.
            C::fma | C::mad => {
                if k == Sc::F32 {
                    f3(&|x, y, z| (x as f32).mul_add(y as f32, z as f32) as f64, r)
                } else {
                    f3(&|x, y, z| x.mul_add(y, z), r)
                }
            }
            C::fmax | C::fmax_common => f2(&|x, y| x.max(y), r),
            C::fmin | C::fmin_common => f2(&|x, y| x.min(y), r),
            C::fmod => f2(&|x, y| x % y, r),
            C::hypot => f2(&|x, y| x.hypot(y), r),
            C::ilogb => {
                for j in 0..n {
                    lanes!(mask, l, {
                        let x = tof(r[(a0 + j * s0) * w + l], k2);
                        let v: i32 = if x == 0.0 {
                            i32::MIN
                        } else if x.is_nan() || x.is_infinite() {
                            i32::MAX
                        } else {
                            x.abs().log2().floor() as i32
                        };
                        r[(d + j) * w + l] = v as u32 as u64;
                    });
                }
            }
            C::ldexp | C::pown | C::rootn => {
                for j in 0..n {
                    lanes!(mask, l, {
                        let x = tof(r[(a0 + j * s0) * w + l], k);
                        let e = sext(r[(a1 + j * s1) * w + l], k2.bits());
                        let v = match op {
                            C::ldexp => x * 2f64.powi(e.clamp(-2000, 2000) as i32),
                            C::pown => x.powi(e.clamp(i32::MIN as i64, i32::MAX as i64) as i32),
                            _ => {
                                if e == 0 {
                                    f64::NAN
                                } else if x < 0.0 && e % 2 != 0 {
                                    -(-x).powf(1.0 / e as f64)
                                } else {
                                    x.powf(1.0 / e as f64)
                                }
                            }
                        };
                        r[(d + j) * w + l] = fromf(v, k);
                    });
                }
            }
            C::log | C::native_log | C::half_log => f1(&|x| x.ln(), r),
            C::log2 | C::native_log2 | C::half_log2 => f1(&|x| x.log2(), r),
            C::log10 | C::native_log10 | C::half_log10 => f1(&|x| x.log10(), r),
            C::log1p => f1(&|x| x.ln_1p(), r),
            C::logb => f1(
                &|x| {
                    if x == 0.0 {
                        f64::NEG_INFINITY
                    } else if x.is_infinite() {
                        f64::INFINITY
                    } else {
                        x.abs().log2().floor()
                    }
                },
                r,
            ),
            C::maxmag => f2(
                &|x, y| {
                    if x.abs() > y.abs() {
                        x
                    } else if y.abs() > x.abs() {
                        y
                    } else {
                        x.max(y)
                    }
                },
                r,
            ),
            C::minmag => f2(
                &|x, y| {
                    if x.abs() < y.abs() {
                        x
                    } else if y.abs() < x.abs() {
                        y
                    } else {
                        x.min(y)
                    }
                },
                r,
            ),
            C::nan => {
                for j in 0..n {
                    lanes!(mask, l, {
                        r[(d + j) * w + l] = match k {
                            Sc::F64 => 0x7ff8_0000_0000_0000,
                            Sc::F16 => 0x7e00,
                            _ => 0x7fc0_0000,
                        };
                    });
                }
            }
            C::nextafter => {
                for j in 0..n {
                    lanes!(mask, l, {
                        let xv = r[(a0 + j * s0) * w + l];
                        let yv = r[(a1 + j * s1) * w + l];
                        r[(d + j) * w + l] = if k == Sc::F64 {
                            let (x, y) = (f64::from_bits(xv), f64::from_bits(yv));
                            (if x.is_nan() || y.is_nan() {
                                f64::NAN
                            } else if x < y {
                                x.next_up()
                            } else if x > y {
                                x.next_down()
                            } else {
                                y
                            })
                            .to_bits()
                        } else {
                            let (x, y) = (f32::from_bits(xv as u32), f32::from_bits(yv as u32));
                            (if x.is_nan() || y.is_nan() {
                                f32::NAN
                            } else if x < y {
                                x.next_up()
                            } else if x > y {
                                x.next_down()
                            } else {
                                y
                            })
                            .to_bits() as u64
                        };
                    });
                }
            }
            C::pow | C::powr | C::native_powr | C::half_powr => f2(&|x, y| x.powf(y), r),
            C::remainder => f2(
                &|x, y| {
                    let q = (x / y).round_ties_even();
                    x - q * y
                },
                r,
            ),
            C::rint => f1(&|x| x.round_ties_even(), r),
            C::round => f1(&|x| x.round(), r),
            C::rsqrt | C::native_rsqrt | C::half_rsqrt => f1(&|x| 1.0 / x.sqrt(), r),
            C::sin | C::native_sin | C::half_sin => f1(&|x| x.sin(), r),
            C::sinh => f1(&|x| x.sinh(), r),
            C::sinpi => f1(&|x| (x * pi).sin(), r),
            C::sqrt | C::native_sqrt | C::half_sqrt => f1(&|x| x.sqrt(), r),
            C::tan | C::native_tan | C::half_tan => f1(&|x| x.tan(), r),
            C::tanh => f1(&|x| x.tanh(), r),
            C::tanpi => f1(&|x| (x * pi).tan(), r),
            C::tgamma => f1(&gamma, r),
            C::lgamma => f1(&|x| gamma(x).abs().ln(), r),
            C::trunc => f1(&|x| x.trunc(), r),
            C::half_divide | C::native_divide => f2(&|x, y| x / y, r),
            C::half_recip | C::native_recip => f1(&|x| 1.0 / x, r),
            C::fclamp => f3(&|x, lo, hi| x.max(lo).min(hi), r),
            C::degrees => f1(&|x| x * (180.0 / pi), r),
            C::radians => f1(&|x| x * (pi / 180.0), r),
            C::mix => f3(&|x, y, a| x + (y - x) * a, r),
            C::step => f2(&|e, x| if x < e { 0.0 } else { 1.0 }, r),
            C::smoothstep => f3(
                &|e0, e1, x| {
                    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
                    t * t * (3.0 - 2.0 * t)
                },
                r,
            ),
            C::sign => f1(
                &|x| {
                    if x.is_nan() {
                        0.0
                    } else if x > 0.0 {
                        1.0
                    } else if x < 0.0 {
                        -1.0
                    } else {
                        x
                    }
                },
                r,
            ),
            C::fract | C::modf | C::sincos | C::frexp | C::lgamma_r | C::remquo => {
                // (x[, y], ptr): result + a value stored through the pointer
                let pa = if op == C::remquo { a2 } else { a1 };
                let esz = if op == C::frexp || op == C::lgamma_r || op == C::remquo {
                    4u64
                } else {
                    k.bytes() as u64
                };
                lanes!(mask, l, {
                    let ptr = r[pa * w + l];
                    let mut outs = Vec::with_capacity(n);
                    for j in 0..n {
                        let x = tof(r[(a0 + j * s0) * w + l], k);
                        let (res, side): (f64, u64) = match op {
                            C::fract => {
                                let fl = x.floor();
                                let fr = if x.is_nan() {
                                    x
                                } else {
                                    (x - fl).min(if is32 {
                                        f32::from_bits(0x3f7f_ffff) as f64
                                    } else {
                                        f64::from_bits(0x3fef_ffff_ffff_ffff)
                                    })
                                };
                                (fr, fromf(fl, k))
                            }
                            C::modf => {
                                let t = x.trunc();
                                (
                                    if x.is_infinite() {
                                        0.0f64.copysign(x)
                                    } else {
                                        x - t
                                    },
                                    fromf(t, k),
                                )
                            }
                            C::sincos => (x.sin(), fromf(x.cos(), k)),
                            C::frexp => {
                                if x == 0.0 || !x.is_finite() {
                                    (x, 0)
                                } else {
                                    let e = x.abs().log2().floor() as i32 + 1;
                                    let mut m = x / 2f64.powi(e);
                                    let mut e = e;
                                    if m.abs() >= 1.0 {
                                        m /= 2.0;
                                        e += 1;
                                    }
                                    if m.abs() < 0.5 {
                                        m *= 2.0;
                                        e -= 1;
                                    }
                                    (m, e as u32 as u64)
                                }
                            }
                            C::remquo => {
                                let y = tof(r[(a1 + j * s1) * w + l], k);
                                let q = (x / y).round_ties_even();
                                let qi =
                                    (q.abs() as i64 % 128) as i32 * if q < 0.0 { -1 } else { 1 };
                                (x - q * y, qi as u32 as u64)
                            }
                            _ => {
                                let g = gamma(x);
                                (
                                    g.abs().ln(),
                                    if g < 0.0 { (-1i32) as u32 as u64 } else { 1 },
                                )
                            }
                        };
                        r[(d + j) * w + l] = fromf(res, k);
                        outs.push(side);
                    }
                    self.lane_ptr[l] = ptr;
                    let sl = self.mem.slice(&mut wp.prv, l, ptr, esz * n as u64)?;
                    for (j, v) in outs.iter().enumerate() {
                        let kk = if esz == 4 { Sc::I32 } else { k };
                        wr(&mut sl[j * esz as usize..], kk, *v);
                    }
                });
                self.mem_stats(mask, esz * n as u64, true);
            }
            C::cross => {
                lanes!(mask, l, {
                    let g = |s: usize, j: usize| tof(r[(s + j) * w + l], k);
                    let (x0, x1, x2) = (g(a0, 0), g(a0, 1), g(a0, 2));
                    let (y0, y1, y2) = (g(a1, 0), g(a1, 1), g(a1, 2));
                    let v = [x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0, 0.0];
                    for (j, vv) in v.iter().enumerate().take(n) {
                        r[(d + j) * w + l] = fromf(*vv, k);
                    }
                });
            }
            C::distance | C::fast_distance | C::length | C::fast_length => {
                lanes!(mask, l, {
                    let mut s = 0f64;
                    for j in 0..n {
                        let mut x = tof(r[(a0 + j * s0) * w + l], k);
                        if matches!(op, C::distance | C::fast_distance) {
                            x -= tof(r[(a1 + j * s1) * w + l], k);
                        }
                        s += x * x;
                    }
                    r[d * w + l] = fromf(s.sqrt(), k);
                });
            }
            C::normalize | C::fast_normalize => {
                lanes!(mask, l, {
                    let mut s = 0f64;
                    for j in 0..n {
                        let x = tof(r[(a0 + j * s0) * w + l], k);
                        s += x * x;
                    }
                    let len = s.sqrt();
                    for j in 0..n {
                        let x = tof(r[(a0 + j * s0) * w + l], k);
                        r[(d + j) * w + l] = fromf(if len == 0.0 { x } else { x / len }, k);
                    }
                });
            }
            // Integer built-ins.
            C::s_abs => i1(&|x| sx(x).unsigned_abs() as u64, r),
            C::u_abs => i1(&|x| x, r),
            C::s_abs_diff => i2(&|x, y| (sx(x) - sx(y)).unsigned_abs() as u64, r),
            C::u_abs_diff => i2(&|x, y| (ux(x) - ux(y)).unsigned_abs() as u64, r),
            C::s_add_sat => i2(&|x, y| (sx(x) + sx(y)).clamp(smin, smax) as u64, r),
            C::u_add_sat => i2(&|x, y| (ux(x) + ux(y)).min(umax) as u64, r),
            C::s_sub_sat => i2(&|x, y| (sx(x) - sx(y)).clamp(smin, smax) as u64, r),
            C::u_sub_sat => i2(&|x, y| (ux(x) - ux(y)).max(0) as u64, r),
            C::s_hadd => i2(&|x, y| ((sx(x) + sx(y)) >> 1) as u64, r),
            C::u_hadd => i2(&|x, y| ((ux(x) + ux(y)) >> 1) as u64, r),
            C::s_rhadd => i2(&|x, y| ((sx(x) + sx(y) + 1) >> 1) as u64, r),
            C::u_rhadd => i2(&|x, y| ((ux(x) + ux(y) + 1) >> 1) as u64, r),
            C::s_clamp => i3(&|x, lo, hi| sx(x).max(sx(lo)).min(sx(hi)) as u64, r),
            C::u_clamp => i3(&|x, lo, hi| ux(x).max(ux(lo)).min(ux(hi)) as u64, r),
            C::clz => i1(&|x| ((x & mk).leading_zeros() - (64 - bits)) as u64, r),
            C::ctz => i1(
                &|x| {
                    if x & mk == 0 {
                        bits as u64
                    } else {
                        (x & mk).trailing_zeros() as u64
                    }
                },
                r,
            ),
            C::s_mad_hi => i3(&|x, y, z| (((sx(x) * sx(y)) >> bits) + sx(z)) as u64, r),
            C::u_mad_hi => i3(
                &|x, y, z| (((ux(x) as u128 * ux(y) as u128) >> bits) as i128 + ux(z)) as u64,
                r,
            ),
            C::s_mul_hi => i2(&|x, y| ((sx(x) * sx(y)) >> bits) as u64, r),
            C::u_mul_hi => i2(&|x, y| ((ux(x) as u128 * ux(y) as u128) >> bits) as u64, r),
            C::u_mad_sat => i3(
                &|x, y, z| (ux(x) as u128 * ux(y) as u128 + ux(z) as u128).min(umax as u128) as u64,
                r,
            ),
            C::s_mad_sat => i3(
                &|x, y, z| {
                    (sx(x).saturating_mul(sx(y)).saturating_add(sx(z))).clamp(smin, smax) as u64
                },
                r,
            ),
            C::s_max => i2(&|x, y| sx(x).max(sx(y)) as u64, r),
            C::u_max => i2(&|x, y| ux(x).max(ux(y)) as u64, r),
            C::s_min => i2(&|x, y| sx(x).min(sx(y)) as u64, r),
            C::u_min => i2(&|x, y| ux(x).min(ux(y)) as u64, r),
            C::rotate => i2(
                &|x, y| {
                    let s = (y % bits as u64) as u32;
                    if s == 0 {
                        x
                    } else {
                        ((x << s) | ((x & mk) >> (bits - s))) & mk
                    }
                },
                r,
            ),
            C::u_upsample | C::s_upsample => {
                // result type is twice as wide: hi << (bits/2) | lo
                let hb = bits / 2;
                i2(&|h, lo| (h << hb) | (lo & mask_bits(hb)), r)
            }
            C::popcount => i1(&|x| (x & mk).count_ones() as u64, r),
            C::s_mad24 => i3(
                &|x, y, z| ((sext(x, 24) as i128) * (sext(y, 24) as i128) + sx(z)) as u64,
                r,
            ),
            C::u_mad24 => i3(
                &|x, y, z| ((x & 0xff_ffff) * (y & 0xff_ffff)).wrapping_add(z),
                r,
            ),
            C::s_mul24 => i2(
                &|x, y| ((sext(x, 24) as i128) * (sext(y, 24) as i128)) as u64,
                r,
            ),
            C::u_mul24 => i2(&|x, y| (x & 0xff_ffff) * (y & 0xff_ffff), r),
            C::bitselect => {
                if k.is_float() {
                    i3(&|a, b, c| (a & !c) | (b & c), r)
                } else {
                    i3(&|a, b, c| (a & !c) | (b & c), r)
                }
            }
            C::select => {
                // select(a, b, c): scalar: c ? b : a; vector: MSB of c
                let cb = k2_bits_for_select(k2);
                let vecsel = n > 1;
                for j in 0..n {
                    lanes!(mask, l, {
                        let a = r[(a0 + j * s0) * w + l];
                        let b = r[(a1 + j * s1) * w + l];
                        let c = r[(a2 + j * s2) * w + l];
                        let t = if vecsel {
                            (c >> (cb - 1)) & 1 != 0
                        } else {
                            c & mask_bits(cb) != 0
                        };
                        r[(d + j) * w + l] = if t { b } else { a };
                    });
                }
            }
            other => return Err(EmuError::Unsupported(format!("OpenCL.std {other:?}"))),
        }
        Ok(())
    }
}

fn k2_bits_for_select(k: Sc) -> u32 {
    k.bits()
}

/// Error function (Abramowitz–Stegun 7.1.26 is too coarse; use a series/continued
/// fraction accurate to ~1e-15).
fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    let ax = x.abs();
    let r = if ax < 2.5 {
        // Taylor series
        let mut sum = ax;
        let mut term = ax;
        let x2 = ax * ax;
        let mut k = 0.0;
        loop {
            k += 1.0;
            term *= -x2 / k;
            let t = term / (2.0 * k + 1.0);
            sum += t;
            if t.abs() < 1e-17 * sum.abs() {
                break;
            }
            if k > 200.0 {
                break;
            }
        }
        sum * 2.0 / std::f64::consts::PI.sqrt()
    } else if ax < 30.0 {
        // continued fraction for erfc
        let mut f = 0.0;
        for k in (1..80).rev() {
            f = (k as f64 / 2.0) / (ax + f);
        }
        let erfc = (-ax * ax).exp() / (std::f64::consts::PI.sqrt() * (ax + f));
        1.0 - erfc
    } else {
        1.0
    };
    if x < 0.0 {
        -r
    } else {
        r
    }
}

/// Gamma function (Lanczos approximation, g = 7, n = 9).
fn gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        std::f64::consts::PI / ((std::f64::consts::PI * x).sin() * gamma(1.0 - x))
    } else {
        let x = x - 1.0;
        let mut a = G[0];
        let t = x + 7.5;
        for (i, g) in G.iter().enumerate().skip(1) {
            a += g / (x + i as f64);
        }
        (2.0 * std::f64::consts::PI).sqrt() * t.powf(x + 0.5) * (-t).exp() * a
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn half_conversions() {
        for &f in &[
            0.0f32,
            1.0,
            -2.5,
            65504.0,
            6.1035156e-05,
            5.9604645e-08,
            0.333_333_34,
        ] {
            let h = f2h(f, Round::Rte);
            let back = h2f(h);
            assert!(
                (back - f).abs() <= f.abs() * 1e-3 + 1e-7,
                "{f} -> {h:x} -> {back}"
            );
        }
        assert_eq!(f2h(1.0, Round::Rte), 0x3c00);
        assert_eq!(f2h(-2.0, Round::Rte), 0xc000);
        assert_eq!(f2h(70000.0, Round::Rte), 0x7c00);
        assert_eq!(f2h(70000.0, Round::Rtz), 0x7bff);
    }
    #[test]
    fn conversions_saturate_and_round() {
        // float 300.7 -> uchar sat rtz = 255
        let x = (300.7f32).to_bits() as u64;
        assert_eq!(
            convert(ConvOp::FToU, Sc::F32, Sc::I8, x, true, Round::Default),
            255
        );
        let x = (-3.5f32).to_bits() as u64;
        assert_eq!(
            convert(ConvOp::FToS, Sc::F32, Sc::I32, x, false, Round::Rte),
            (-4i32) as u32 as u64
        );
        assert_eq!(
            convert(ConvOp::FToS, Sc::F32, Sc::I32, x, false, Round::Default),
            (-3i32) as u32 as u64
        );
        // int -300 -> char sat = -128
        assert_eq!(
            convert(
                ConvOp::SConv,
                Sc::I32,
                Sc::I8,
                (-300i32) as u32 as u64,
                true,
                Round::Default
            ),
            0x80
        );
    }
}
