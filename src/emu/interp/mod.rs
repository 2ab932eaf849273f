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
//!
//! Files: this one (set-up, scheduling of warps, statistics), `step` (one warp's
//! instructions, by class), `memory` (address spaces, memory statistics, footprints),
//! `ext` (OpenCL.std built-ins) and `numeric` (conversions, arithmetic, half floats).

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

mod deps;
mod ext;
mod memory;
mod numeric;
mod step;

use memory::*;
use numeric::*;

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
    /// Per register slot: the memory waiting period at whose end its value is ready
    /// (`deps`).
    ready: Vec<u32>,
    /// Memory waiting periods this warp has had (`deps`).
    epoch: u32,
    /// `epoch` when the current basic block began (or the last fence): loads of the block
    /// can be issued from there on (`deps`).
    block_start: u32,
    /// The latest level of a load this warp issued (`deps`).
    last_load: u32,
}

enum Yield {
    Barrier,
    Done,
    Budget,
}

struct Mem {
    bufs: Vec<Vec<u8>>,
    /// Page filling of the paged buffer arguments, by argument (empty when none is paged).
    fills: Vec<Option<crate::emu::paged::PageFill>>,
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
    /// Memory waiting periods of the warps (`deps`).
    load_waits: u64,
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
    /// Per pc: the slots the instruction reads and writes (`deps`).
    deps: Vec<deps::Dep>,
    /// The current instruction loads global (or constant) memory.
    global_load: bool,
    /// The current instruction stores to global memory.
    global_store: bool,
    /// Scratch for the readiness of φ copies.
    ready_tmp: Vec<u32>,
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
    let (sh, lsz) = group_local_size(shape, group)?;
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
    let ArgLayout {
        bufs,
        fills,
        arg_is_buf,
        local_size,
        local_offs,
        psize,
        byval_offs,
    } = lay_out_args(m, k, args)?;
    if local_size > 256 << 20 {
        restore(args, bufs, fills, &arg_is_buf);
        return Err(EmuError::BadLaunch("local memory over 256 MiB".into()));
    }
    let psize = psize.div_ceil(8) * 8;
    let nwarps = items.div_ceil(w as u64);
    if psize.saturating_mul(items) > 512 << 20
        || (m.nslots as u64).saturating_mul(8 * w as u64 * nwarps) > 1 << 30
    {
        restore(args, bufs, fills, &arg_is_buf);
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
            fills,
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
        deps: deps::deps(m),
        global_load: false,
        global_store: false,
        ready_tmp: Vec::new(),
    };
    // Warps.
    let (template, arg_err) =
        register_template(m, k, args, &arg_is_buf, &local_offs, &byval_offs, w);
    if let Some(i) = arg_err {
        let bufs = std::mem::take(&mut mach.mem.bufs);
        let fills = std::mem::take(&mut mach.mem.fills);
        restore(args, bufs, fills, &arg_is_buf);
        return Err(EmuError::BadLaunch(format!("argument {i} has no value")));
    }
    let warps = make_warps(m, k, args, &template, &byval_offs, psize, items, w);
    drop(template);
    let mut warps = warps;
    let res = mach.schedule(&mut warps);
    let bufs = std::mem::take(&mut mach.mem.bufs);
    let fills = std::mem::take(&mut mach.mem.fills);
    restore(args, bufs, fills, &arg_is_buf);
    let exhausted = res?;
    let mut st = statistics(&mut mach, k, &warps, &arg_is_buf, items, group, exhausted);
    st.emulation_ns = t0.elapsed().as_nanos() as u64;
    Ok(st)
}

/// The launch shape with the unused dimensions set to 1 (offset 0), and the actual local
/// size of work-group `group` per dimension (smaller at the NDRange's edge).
fn group_local_size(
    shape: &LaunchShape,
    group: [u64; 3],
) -> Result<(LaunchShape, [u64; 3]), EmuError> {
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
    Ok((sh, lsz))
}

/// Where the arguments live: the buffers taken out of `args` (empty for non-buffers),
/// which arguments are buffers, the local arena's size (bytes) and each `__local`
/// argument's offset in it, and the private bytes per work-item with each by-value
/// struct's offset.
struct ArgLayout {
    bufs: Vec<Vec<u8>>,
    fills: Vec<Option<crate::emu::paged::PageFill>>,
    arg_is_buf: Vec<bool>,
    local_size: u64,
    local_offs: Vec<u64>,
    psize: u64,
    byval_offs: Vec<u64>,
}

/// Memory set-up: takes the buffers out of `args` (given back by [`restore`]) and lays out
/// the local and private arenas. On an argument of the wrong kind, the buffers taken so
/// far are given back.
fn lay_out_args(m: &Module, k: &KernelInfo, args: &mut [ArgValue]) -> Result<ArgLayout, EmuError> {
    let mut bufs: Vec<Vec<u8>> = Vec::with_capacity(args.len());
    let mut fills = Vec::new();
    let mut arg_is_buf = vec![false; args.len()];
    let mut local_size = m.local_static;
    let mut local_offs = vec![0u64; args.len()];
    let mut psize = m.private_size;
    let mut byval_offs = vec![0u64; args.len()];
    let args_len = args.len();
    for (i, (a, info)) in args.iter_mut().zip(&k.args).enumerate() {
        match (info.kind, a) {
            (ArgKind::Global | ArgKind::Constant, ArgValue::Buffer(b)) => {
                bufs.push(std::mem::take(b));
                arg_is_buf[i] = true;
            }
            (ArgKind::Global | ArgKind::Constant, ArgValue::Paged(p)) => {
                bufs.push(std::mem::take(&mut p.data));
                fills.resize_with(args_len, || None);
                fills[i] = p.fill.take();
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
                    ArgValue::Buffer(_) | ArgValue::Paged(_) => "a buffer",
                    ArgValue::Scalar(_) => "a scalar",
                    ArgValue::Local(_) => "a local size",
                };
                // restore taken buffers
                restore(args, bufs, fills, &arg_is_buf);
                return Err(EmuError::BadLaunch(format!(
                    "argument {i} is {kind:?} but {what} was given"
                )));
            }
        }
    }
    Ok(ArgLayout {
        bufs,
        fills,
        arg_is_buf,
        local_size,
        local_offs,
        psize,
        byval_offs,
    })
}

/// The registers every warp starts with (`w` lanes per slot): the module's constants and
/// the kernel arguments in their parameter slots; the index of an argument without a value,
/// if any.
fn register_template(
    m: &Module,
    k: &KernelInfo,
    args: &[ArgValue],
    arg_is_buf: &[bool],
    local_offs: &[u64],
    byval_offs: &[u64],
    w: usize,
) -> (Vec<u64>, Option<usize>) {
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
    (template, arg_err)
}

/// The work-group's warps of `w` lanes (`items` work-items in linear local id order) at
/// the kernel's entry, each with `template`'s registers and its by-value arguments in
/// private memory (`psize` bytes per work-item).
#[allow(clippy::too_many_arguments)]
fn make_warps(
    m: &Module,
    k: &KernelInfo,
    args: &[ArgValue],
    template: &[u64],
    byval_offs: &[u64],
    psize: u64,
    items: u64,
    w: usize,
) -> Vec<Warp> {
    let nw = (items as usize).div_ceil(w);
    let f = &m.funcs[k.func as usize];
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
            regs: template.to_vec(),
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
            ready: vec![0; m.nslots as usize],
            epoch: 0,
            block_start: 0,
            last_load: 0,
        });
    }
    warps
}

/// Statistics of the emulated work-group (all but the emulation time), extrapolated to
/// the whole work-group when the budget ran out.
fn statistics(
    mach: &mut Machine,
    k: &KernelInfo,
    warps: &[Warp],
    arg_is_buf: &[bool],
    items: u64,
    group: [u64; 3],
    exhausted: bool,
) -> WorkGroupStats {
    let w = mach.w;
    let nw = warps.len();
    // Statistics.
    let mut st = WorkGroupStats {
        warp_width: w as u32,
        work_items: items,
        group,
        budget_exhausted: exhausted,
        ..Default::default()
    };
    st.skipped_loops = mach.skipped;
    st.skipped_loop_reads = (0..arg_is_buf.len())
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
    st.load_waits = sc(a.load_waits);
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
    st
}

/// Gives the buffers (and the page filling of paged ones) back to `args`.
fn restore(
    args: &mut [ArgValue],
    bufs: Vec<Vec<u8>>,
    mut fills: Vec<Option<crate::emu::paged::PageFill>>,
    is_buf: &[bool],
) {
    for (j, b) in bufs.into_iter().enumerate() {
        if is_buf.get(j).copied().unwrap_or(false) {
            match &mut args[j] {
                ArgValue::Paged(p) => {
                    p.data = b;
                    p.fill = fills.get_mut(j).and_then(Option::take);
                }
                a => *a = ArgValue::Buffer(b),
            }
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
                    Yield::Done => {
                        warps[wi].done = true;
                        self.acc.load_waits += warps[wi].retire();
                    }
                    Yield::Budget => {
                        // statistics only: a footprint derivation (loops skipped) that runs
                        // out is refused whatever its progress
                        if self.skips.is_none() && !warps.iter().any(|x| x.done) {
                            self.finish_first_warp(&mut warps[wi])?;
                        }
                        return Ok(true);
                    }
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

    /// The budget ran out before any warp finished: lets `wp` (the warp that was running) go
    /// on for as much again as the whole emulation had used (lane instructions and time), so
    /// that, when it finishes, the extrapolation scales by a finished warp's instructions
    /// rather than taking it for half done. PolyBench-ACC gemm and 3mm (a k-loop of 1024)
    /// ran out at the 1021st iteration of the first warp and were counted 2x (issue 32,
    /// results/session24-model). A warp that reaches a barrier or the extended budget stays
    /// unfinished, counted as before.
    fn finish_first_warp(&mut self, wp: &mut Warp) -> Result<(), EmuError> {
        let lanes: u64 = self.acc.cnt.iter().map(|c| c[1]).sum();
        self.budget = lanes.saturating_mul(2);
        let elapsed = self.start.elapsed().as_nanos() as u64;
        self.time_budget_ns = elapsed.saturating_mul(2).max(self.time_budget_ns);
        let before: u64 = self.acc.cnt.iter().map(|c| c[0]).sum();
        let y = self.run_warp(wp);
        let after: u64 = self.acc.cnt.iter().map(|c| c[0]).sum();
        wp.instrs += after - before;
        if let Yield::Done = y? {
            wp.done = true;
            self.acc.load_waits += wp.retire();
        }
        Ok(())
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
        wp.phi_ready(copies, &mut self.ready_tmp);
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
}
