//! What a chunk of work-groups writes, from the mini-emulator's per-argument footprints
//! (DESIGN.md §7, "What a chunk writes"): a few sampled work-groups are emulated with the
//! full NDRange, the written byte ranges are checked to be affine in the work-group id, and
//! the footprint of any slab of work-groups along the split dimension follows from them.
//! With such a model balance mode reads back from each device only the bytes its chunks
//! wrote, and needs no pre-launch copy of a buffer the kernel only writes.
//!
//! The model (pure, no OpenCL): for a written argument with ranges `W(g)` for work-group
//! `g = (g0, g1, g2)`, require `W(e_d) = W(0) + s_d` (the same ranges shifted by one byte
//! offset `s_d`) for every dimension `d` with more than one work-group, and check the
//! prediction `W(0) + Σ_d g_d·s_d` on the last and the middle work-group. A *unit* is one
//! index of the split dimension (all work-groups with that coordinate); unit 0's footprint
//! `U0` is the union over the other dimensions, unit `u` writes `U0 + u·s_split`. Units must
//! not overlap (`span(U0) ≤ s_split`), so chunks on different devices write disjoint bytes.
//!
//! The check samples work-groups; it cannot see addresses that depend on buffer contents in
//! a way the samples do not show. `CLPRISM_VERIFY=1` compares every merged byte with a
//! native run.

use crate::emu::stats::WorkGroupStats;

/// Most ranges a unit's footprint may have (more would mean thousands of small transfers
/// per chunk; diff-merge is used instead).
pub const MAX_UNIT_RANGES: usize = 256;
/// Most (work-groups per unit × ranges per work-group) enumerated to build `U0`.
const MAX_ENUMERATED: u64 = 1 << 22;

/// The affine write footprint of one kernel argument.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WrittenArg {
    /// Kernel argument index.
    pub arg: u32,
    /// Unit 0's written `[start, end)` byte ranges, sorted and merged.
    pub unit_ranges: Vec<[u64; 2]>,
    /// Byte offset between the footprints of consecutive units.
    pub unit_stride: u64,
    /// True when every device needs this argument's pre-launch contents: the sampled
    /// work-groups also read it, or [`Self::superset`].
    pub read_by_kernel: bool,
    /// The unit ranges are a superset of what the units write (edge work-groups write
    /// less, see [`derive`]): the bytes in them that a unit does not write must hold their
    /// pre-launch value on the device that runs it.
    #[serde(default)]
    pub superset: bool,
    /// The sampled work-groups read this argument (as opposed to [`Self::superset`] alone).
    #[serde(default)]
    pub reads: bool,
}

/// The read footprint of one kernel argument as a moving hull: unit `u` (one index of the
/// split dimension) reads only bytes inside `[hull[0] + u·unit_stride, hull[1] +
/// u·unit_stride)`. Derived like [`WrittenArg`] from the sampled work-groups' read ranges
/// (affine in the work-group id), but units may overlap (a stencil's halo) and the stride
/// may be 0 (every unit reads the same bytes, e.g. a matrix product's second operand).
/// Balance mode's buffer directory (`exec::directory`) fetches a chunk's hull before it runs.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReadArg {
    /// Kernel argument index.
    pub arg: u32,
    /// Unit 0's read hull, bytes `[start, end)`; the start may lie below 0 (a halo before
    /// the first unit), so later units' hulls keep their halo.
    pub hull: [i64; 2],
    /// Byte offset between the hulls of consecutive units.
    pub unit_stride: u64,
}

impl ReadArg {
    /// The bytes units `[first, first + count)` may read (one hull, from byte 0 at the
    /// lowest; `count` ≥ 1).
    pub fn chunk_hull(&self, first: u64, count: u64) -> [u64; 2] {
        let last = first + count.max(1) - 1;
        let at = |base: i64, u: u64| (base as i128 + u as i128 * self.unit_stride as i128).max(0);
        [
            at(self.hull[0], first) as u64,
            at(self.hull[1], last) as u64,
        ]
    }
}

/// Write footprints of every written argument of one launch shape.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub struct FootprintModel {
    /// One per argument that any sampled work-group wrote.
    pub written: Vec<WrittenArg>,
    /// Arguments only read by the sampled work-groups (also those they do not touch).
    pub read_only: Vec<u32>,
    /// Arguments of [`Self::read_only`] that no sampled work-group reads either (not even
    /// in a loop the emulation jumped over).
    #[serde(default)]
    pub untouched: Vec<u32>,
    /// Work-groups emulated to build and check the model.
    pub sampled_groups: usize,
    /// Loop entries the sampled emulations jumped over (`emu::dataflow::loop_skips`).
    #[serde(default)]
    pub skipped_loops: u64,
    /// Set when a sampled work-group reads bytes that another sampled work-group writes
    /// ([`cross_group_read`]): the kernel's result depends on the order in which the
    /// work-groups run, which no split reproduces, so the launch is kept whole. The other
    /// fields are then empty.
    #[serde(default)]
    pub order_dependent: Option<String>,
    /// Read hulls of the arguments whose sampled reads are affine in the work-group id; an
    /// argument read but absent here may be read anywhere. Meaningful only with
    /// [`Self::reads_follow_ids`].
    #[serde(default)]
    pub read: Vec<ReadArg>,
    /// Set when no global load's address or execution depends on memory contents
    /// (`emu::dataflow::data_dependent_reads`): only then do the zero-filled samples read
    /// what the real data makes the kernel read, and [`Self::read`] can be trusted.
    #[serde(default)]
    pub reads_follow_ids: bool,
}

impl FootprintModel {
    /// The bytes of argument `arg` that units `[first, first + count)` may read: a hull,
    /// or `None` when they may read anywhere (no trusted read model for it).
    pub fn read_hull(&self, arg: u32, first: u64, count: u64) -> Option<[u64; 2]> {
        if !self.reads_follow_ids {
            return None;
        }
        self.read
            .iter()
            .find(|r| r.arg == arg)
            .map(|r| r.chunk_hull(first, count))
    }

    /// Argument `arg` may be read anywhere: no read hull, counted as read (a model shared by
    /// every value of a by-value argument that moves `arg`'s loads; `exec::launch::plan`).
    pub fn may_read_anywhere(&mut self, arg: u32) {
        self.read.retain(|r| r.arg != arg);
        self.untouched.retain(|a| *a != arg);
        if !self.read_only.contains(&arg) && !self.written.iter().any(|w| w.arg == arg) {
            self.read_only.push(arg);
        }
    }

    /// Whether the samples read argument `arg` at all.
    pub fn reads_arg(&self, arg: u32) -> bool {
        (self.read_only.contains(&arg) && !self.untouched.contains(&arg))
            || self.written.iter().any(|w| w.arg == arg && w.reads)
    }

    /// What a chunk of units `[first, first + count)` must find valid of argument `arg` (a
    /// buffer of `size` bytes) on its device before it runs: [`Self::needed_hull`] for an
    /// argument the samples touch; for one they do not touch, nothing when reads follow the
    /// ids ([`Self::reads_follow_ids`]), else the whole buffer (the samples may have missed
    /// its reads).
    pub fn fetch_hull(&self, arg: u32, size: u64, first: u64, count: u64) -> Option<[u64; 2]> {
        let touched = (self.read_only.contains(&arg) && !self.untouched.contains(&arg))
            || self.written.iter().any(|w| w.arg == arg);
        if !touched {
            return (!self.reads_follow_ids).then_some([0, size]);
        }
        self.needed_hull(arg, size, first, count)
    }

    /// The bytes of argument `arg` (a buffer of `size` bytes) that a chunk of units
    /// `[first, first + count)` needs valid on its device before it runs, as one hull: its
    /// read hull ([`Self::read_hull`]; the whole buffer when it reads `arg` without one),
    /// joined with the hull of its written ranges where they are a superset
    /// ([`WrittenArg::superset`]). `None`: nothing.
    pub fn needed_hull(&self, arg: u32, size: u64, first: u64, count: u64) -> Option<[u64; 2]> {
        let clip = |h: [u64; 2]| [h[0].min(size), h[1].min(size)];
        let read = self
            .reads_arg(arg)
            .then(|| self.read_hull(arg, first, count).map_or([0, size], clip));
        let superset = self
            .written
            .iter()
            .find(|w| w.arg == arg && w.superset)
            .and_then(|w| {
                let r = w.chunk_ranges(first, count);
                Some(clip([r.first()?[0], r.last()?[1]]))
            });
        match (read, superset) {
            (Some(a), Some(b)) => Some([a[0].min(b[0]), a[1].max(b[1])]),
            (a, b) => a.or(b),
        }
    }
}

impl WrittenArg {
    /// The sorted, merged byte ranges that units `[first, first + count)` write. A unit whose
    /// one range spans its whole stride (a slab) makes one range of any `count` consecutive
    /// units, without a walk over every unit (BabelStream's copy on 2 H200s, 2,097,152 units
    /// per slab, spent 13.4 ms of a 15 ms split launch in this walk when the directory noted
    /// the slabs, results/session26-2026-11-28 `d/`). Units never interleave ([`derive`]
    /// refuses a span above the stride), so the walk merges in order.
    pub fn chunk_ranges(&self, first: u64, count: u64) -> Vec<[u64; 2]> {
        let s = self.unit_stride;
        if let [[lo, hi]] = self.unit_ranges[..] {
            if count > 0 && hi - lo >= s {
                return vec![[lo + first * s, hi + (first + count - 1) * s]];
            }
        }
        self.chunk_ranges_walked(first, count)
    }

    /// [`Self::chunk_ranges`] unit by unit.
    fn chunk_ranges_walked(&self, first: u64, count: u64) -> Vec<[u64; 2]> {
        let mut out: Vec<[u64; 2]> = Vec::new();
        for u in first..first + count {
            let d = u * self.unit_stride;
            for r in &self.unit_ranges {
                push_merged(&mut out, [r[0] + d, r[1] + d]);
            }
        }
        out
    }
}

fn push_merged(out: &mut Vec<[u64; 2]>, r: [u64; 2]) {
    match out.last_mut() {
        Some(last) if r[0] <= last[1] => last[1] = last[1].max(r[1]),
        _ => out.push(r),
    }
}

/// Sorts and merges ranges.
pub fn normalise(mut v: Vec<[u64; 2]>) -> Vec<[u64; 2]> {
    v.sort_unstable();
    let mut out = Vec::with_capacity(v.len());
    for r in v {
        if r[1] > r[0] {
            push_merged(&mut out, r);
        }
    }
    out
}

/// The byte offset `s` with `b = a + s` range by range, if there is one.
fn shift_of(a: &[[u64; 2]], b: &[[u64; 2]]) -> Option<i128> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let s = b[0][0] as i128 - a[0][0] as i128;
    a.iter()
        .zip(b)
        .all(|(x, y)| y[0] as i128 - x[0] as i128 == s && y[1] as i128 - x[1] as i128 == s)
        .then_some(s)
}

fn shifted(a: &[[u64; 2]], s: i128) -> Option<Vec<[u64; 2]>> {
    a.iter()
        .map(|r| {
            let lo = r[0] as i128 + s;
            let hi = r[1] as i128 + s;
            (lo >= 0).then_some([lo as u64, hi as u64])
        })
        .collect()
}

fn written_of(s: &WorkGroupStats, arg: u32) -> &[[u64; 2]] {
    s.footprints
        .iter()
        .find(|f| f.arg == arg)
        .map(|f| f.written.as_slice())
        .unwrap_or(&[])
}

/// True when the sorted, disjoint ranges `a` and `b` share a byte.
fn overlaps(a: &[[u64; 2]], b: &[[u64; 2]]) -> bool {
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i][0] < b[j][1] && b[j][0] < a[i][1] {
            return true;
        }
        if a[i][1] <= b[j][1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    false
}

/// The first sampled work-group that reads bytes of an argument which another sampled
/// work-group writes, as a reason for the log. OpenCL orders nothing between the
/// work-groups of one launch (OpenCL 3.0 §3.2.2: work-groups run in any order and
/// concurrently; a global barrier orders only the work-items of one work-group), so such a
/// kernel's output is whatever order the device happened to run them in. A single device
/// runs them in one order; a split runs each chunk against its own copy of the buffers, so
/// it cannot give the same bytes. Rodinia's particlefilter (`normalize_weights_kernel`:
/// work-item 0 normalises the CDF over every weight and writes `u[0]`, which every
/// work-group then reads) gave other particle positions when split.
pub fn cross_group_read(samples: &[[u64; 3]], stats: &[&WorkGroupStats]) -> Option<String> {
    for (ga, a) in samples.iter().zip(stats) {
        for (gb, b) in samples.iter().zip(stats) {
            if ga == gb {
                continue;
            }
            for fa in &a.footprints {
                let w = written_of(b, fa.arg);
                if overlaps(&fa.read, w) {
                    return Some(format!(
                        "work-group {ga:?} reads bytes of argument {} that work-group {gb:?} writes: the result depends on the order of the work-groups",
                        fa.arg
                    ));
                }
            }
        }
    }
    None
}

/// The work-groups [`derive()`] emulates for a launch of `groups` work-groups per dimension,
/// in its order: the origin, one unit step along each dimension with more than one
/// work-group, then the last and the middle work-group as checks (each at most once).
pub fn sample_groups(groups: [u64; 3]) -> Vec<[u64; 3]> {
    let mut out = vec![[0u64; 3]];
    for d in (0..3).filter(|d| groups[*d] > 1) {
        out.push(unit(d));
    }
    let last = [
        groups[0].saturating_sub(1),
        groups[1].saturating_sub(1),
        groups[2].saturating_sub(1),
    ];
    let mid = middle(groups);
    // the middle work-group's neighbours: interior strides of the read hulls
    let neighbours = (0..3)
        .filter(|d| groups[*d] > 1)
        .map(|d| neighbour(groups, mid, d).0);
    for g in [last, mid].into_iter().chain(neighbours) {
        if !out.contains(&g) {
            out.push(g);
        }
    }
    out
}

/// Builds and checks the model for a launch of `groups` work-groups per dimension, split
/// along `split`, by emulating sampled work-groups with `emulate` (which returns the
/// statistics of one work-group, or why not).
///
/// Errors (a reason for the log; balance mode then uses diff-merge): an emulation failure
/// or budget exhaustion, a footprint that is not affine in the work-group id, overlapping
/// units, or one too fragmented to transfer range by range.
pub fn derive(
    groups: [u64; 3],
    split: usize,
    mut emulate: impl FnMut([u64; 3]) -> Result<WorkGroupStats, String>,
) -> Result<FootprintModel, String> {
    let mut sampled = 0usize;
    let mut run = |g: [u64; 3]| -> Result<WorkGroupStats, String> {
        sampled += 1;
        let s = emulate(g)?;
        if s.budget_exhausted {
            return Err(format!(
                "emulating work-group {g:?} ran out of budget, its footprint is incomplete"
            ));
        }
        Ok(s)
    };
    let dims: Vec<usize> = (0..3).filter(|d| groups[*d] > 1).collect();
    let samples = sample_groups(groups);
    let origin = run(samples[0])?;
    let mut steps: Vec<(usize, WorkGroupStats)> = Vec::new();
    for (&d, &g) in dims.iter().zip(&samples[1..]) {
        steps.push((d, run(g)?));
    }
    let mut checks: Vec<([u64; 3], WorkGroupStats)> = Vec::new();
    for &g in &samples[1 + dims.len()..] {
        checks.push((g, run(g)?));
    }
    let all: Vec<&WorkGroupStats> = std::iter::once(&origin)
        .chain(steps.iter().map(|s| &s.1))
        .chain(checks.iter().map(|c| &c.1))
        .collect();
    if let Some(why) = cross_group_read(&samples, &all) {
        return Ok(FootprintModel {
            order_dependent: Some(why),
            sampled_groups: all.len(),
            ..Default::default()
        });
    }
    // Arguments read only in loops the emulation jumped over (`skipped_loop_reads`) count
    // as read.
    let mut args: Vec<u32> = all
        .iter()
        .flat_map(|s| {
            s.footprints
                .iter()
                .map(|f| f.arg)
                .chain(s.skipped_loop_reads.iter().copied())
        })
        .collect();
    args.sort_unstable();
    args.dedup();
    let mut model = FootprintModel::default();
    for arg in args {
        let writes = all.iter().any(|s| !written_of(s, arg).is_empty());
        if !writes {
            model.read_only.push(arg);
            let read = all
                .iter()
                .any(|s| s.skipped_loop_reads.contains(&arg) || !read_of(s, arg).is_empty());
            if !read {
                model.untouched.push(arg);
            }
            continue;
        }
        // exact (every sample on one lattice), else from the interior work-groups with the
        // edges' writes inside the prediction (a superset: `read_by_kernel` is then set, so
        // every device holds the pre-launch bytes of what its chunks do not write)
        let (w0, stride, superset) = match exact_lattice(arg, &origin, &steps, &checks) {
            Ok((w0, stride)) => (w0, stride, false),
            Err(exact) => match interior_lattice(arg, groups, &samples, &all) {
                Some((w0, stride)) => (w0, stride, true),
                None => return Err(exact),
            },
        };
        let w0 = w0.as_slice();
        // unit 0: union over the non-split dimensions
        let others: Vec<usize> = dims.iter().copied().filter(|d| *d != split).collect();
        let per_unit: u64 = others.iter().map(|d| groups[*d]).product();
        if per_unit.saturating_mul(w0.len() as u64) > MAX_ENUMERATED {
            return Err(format!(
                "argument {arg}: footprint too large to enumerate ({per_unit} work-groups per unit)"
            ));
        }
        let mut u0 = Vec::new();
        let mut idx = [0u64; 3];
        loop {
            let off: i128 = others.iter().map(|d| idx[*d] as i128 * stride[*d]).sum();
            u0.extend(shifted(w0, off).ok_or_else(|| format!("argument {arg}: negative offset"))?);
            // odometer over the other dimensions
            let mut carry = true;
            for d in &others {
                if !carry {
                    break;
                }
                idx[*d] += 1;
                if idx[*d] < groups[*d] {
                    carry = false;
                } else {
                    idx[*d] = 0;
                }
            }
            if carry {
                break;
            }
        }
        let u0 = normalise(u0);
        if u0.len() > MAX_UNIT_RANGES {
            return Err(format!(
                "argument {arg}: a unit writes {} separate ranges (more than {MAX_UNIT_RANGES})",
                u0.len()
            ));
        }
        let span = u0.last().map(|r| r[1]).unwrap_or(0) - u0.first().map(|r| r[0]).unwrap_or(0);
        let unit_stride = if groups[split] > 1 {
            let s = stride[split];
            if s <= 0 {
                return Err(format!(
                    "argument {arg}: units along the split dimension do not move forward in memory"
                ));
            }
            s as u64
        } else {
            span
        };
        if span > unit_stride {
            return Err(format!(
                "argument {arg}: the footprints of neighbouring units overlap or interleave ({span} bytes per unit, stride {unit_stride})"
            ));
        }
        let reads = all.iter().any(|s| {
            s.skipped_loop_reads.contains(&arg)
                || s.footprints
                    .iter()
                    .any(|f| f.arg == arg && !f.read.is_empty())
        });
        model.written.push(WrittenArg {
            arg,
            unit_ranges: u0,
            unit_stride,
            read_by_kernel: reads || superset,
            superset,
            reads,
        });
    }
    model.read = read_hulls(groups, split, &samples, &all);
    model.sampled_groups = sampled;
    model.skipped_loops = all.iter().map(|s| s.skipped_loops).sum();
    Ok(model)
}

/// The written ranges of `arg` at work-group 0 and their shift per work-group along each
/// dimension, when every sample writes exactly `W(0) + Σ g_d·s_d`; else why not.
#[allow(clippy::type_complexity)]
fn exact_lattice(
    arg: u32,
    origin: &WorkGroupStats,
    steps: &[(usize, WorkGroupStats)],
    checks: &[([u64; 3], WorkGroupStats)],
) -> Result<(Vec<[u64; 2]>, [i128; 3]), String> {
    let w0 = written_of(origin, arg);
    if w0.is_empty() {
        return Err(format!(
            "argument {arg}: work-group 0 writes nothing but others do (not affine)"
        ));
    }
    let mut stride = [0i128; 3];
    for (d, s) in steps {
        stride[*d] = shift_of(w0, written_of(s, arg)).ok_or_else(|| {
            format!("argument {arg}: the footprint is not a shift along dimension {d} (not affine in the work-group id)")
        })?;
    }
    for (g, s) in checks {
        let off: i128 = (0..3).map(|d| g[d] as i128 * stride[d]).sum();
        if shifted(w0, off).as_deref() != Some(written_of(s, arg)) {
            return Err(format!(
                "argument {arg}: work-group {g:?} writes other bytes than the affine model predicts"
            ));
        }
    }
    Ok((w0.to_vec(), stride))
}

/// The lattice of the middle work-group's writes: its shift per dimension from its
/// neighbours (interior work-groups), `W(g) = W(mid) + Σ (g_d − mid_d)·s_d`, when every
/// sample writes inside its predicted ranges (edge work-groups that skip some items, like a
/// stencil's `if (j > 0)`) and work-group 0's prediction lies inside the buffer. Returns
/// work-group 0's predicted ranges and the shifts.
fn interior_lattice(
    arg: u32,
    groups: [u64; 3],
    samples: &[[u64; 3]],
    all: &[&WorkGroupStats],
) -> Option<(Vec<[u64; 2]>, [i128; 3])> {
    let at = |g: [u64; 3]| samples.iter().position(|x| *x == g);
    let mid = middle(groups);
    let wm = written_of(all[at(mid)?], arg);
    if wm.is_empty() {
        return None;
    }
    let mut stride = [0i128; 3];
    for d in (0..3).filter(|d| groups[*d] > 1) {
        let (n, sign) = neighbour(groups, mid, d);
        stride[d] = shift_of(wm, written_of(all[at(n)?], arg))? * sign;
    }
    let off = |g: [u64; 3]| -> i128 {
        (0..3)
            .map(|d| (g[d] as i128 - mid[d] as i128) * stride[d])
            .sum()
    };
    for (g, st) in samples.iter().zip(all) {
        let predicted = shifted(wm, off(*g))?;
        let inside = written_of(st, arg)
            .iter()
            .all(|r| predicted.iter().any(|p| p[0] <= r[0] && r[1] <= p[1]));
        if !inside {
            return None;
        }
    }
    Some((shifted(wm, off([0; 3]))?, stride))
}

/// The read ranges of `arg` in one work-group's statistics.
fn read_of(s: &WorkGroupStats, arg: u32) -> &[[u64; 2]] {
    s.footprints
        .iter()
        .find(|f| f.arg == arg)
        .map_or(&[], |f| f.read.as_slice())
}

/// The hull of sorted ranges.
fn hull_of(r: &[[u64; 2]]) -> Option<[u64; 2]> {
    Some([r.first()?[0], r.last()?[1]])
}

/// Read hulls ([`ReadArg`]) of every argument the samples read, where the interior
/// work-groups' hulls move by one offset per dimension and every other sample's reads lie
/// inside the hull predicted for it; arguments read in a loop the emulation jumped over are
/// left out (read anywhere). `samples` and `all` are in [`sample_groups`]' order.
fn read_hulls(
    groups: [u64; 3],
    split: usize,
    samples: &[[u64; 3]],
    all: &[&WorkGroupStats],
) -> Vec<ReadArg> {
    let mut args: Vec<u32> = all
        .iter()
        .flat_map(|s| {
            s.footprints
                .iter()
                .filter(|f| !f.read.is_empty())
                .map(|f| f.arg)
        })
        .collect();
    args.sort_unstable();
    args.dedup();
    args.into_iter()
        .filter(|a| all.iter().all(|s| !s.skipped_loop_reads.contains(a)))
        .filter_map(|arg| read_hull(arg, groups, split, samples, all))
        .collect()
}

/// [`read_hulls`] for one argument. The stride per dimension comes from the middle
/// work-group and its neighbour along that dimension (interior work-groups: a stencil's
/// edge work-groups read less, inside the prediction); `None` when the middle work-group
/// reads nothing, the two hulls are not one shift apart, a sample reads outside its
/// predicted hull, or units move backwards.
fn read_hull(
    arg: u32,
    groups: [u64; 3],
    split: usize,
    samples: &[[u64; 3]],
    all: &[&WorkGroupStats],
) -> Option<ReadArg> {
    let at = |g: [u64; 3]| samples.iter().position(|x| *x == g);
    let mid = middle(groups);
    let hm = hull_of(read_of(all[at(mid)?], arg))?;
    let mut stride = [0i128; 3];
    for d in (0..3).filter(|d| groups[*d] > 1) {
        let (n, sign) = neighbour(groups, mid, d);
        let h = hull_of(read_of(all[at(n)?], arg))?;
        let s = (h[0] as i128 - hm[0] as i128) * sign;
        if (h[1] as i128 - hm[1] as i128) * sign != s {
            return None;
        }
        stride[d] = s;
    }
    let predicted = |g: [u64; 3]| -> [i128; 2] {
        let off: i128 = (0..3)
            .map(|d| (g[d] as i128 - mid[d] as i128) * stride[d])
            .sum();
        [hm[0] as i128 + off, hm[1] as i128 + off]
    };
    for (g, st) in samples.iter().zip(all) {
        if let Some(h) = hull_of(read_of(st, arg)) {
            let p = predicted(*g);
            if (h[0] as i128) < p[0] || (h[1] as i128) > p[1] {
                return None;
            }
        }
    }
    // unit 0: the predicted hulls over the other dimensions' work-groups
    let [mut lo, mut hi] = predicted([0; 3]);
    for d in (0..3).filter(|d| *d != split && groups[*d] > 1) {
        let reach = (groups[d] as i128 - 1) * stride[d];
        if reach < 0 {
            lo += reach;
        } else {
            hi += reach;
        }
    }
    let unit_stride = if groups[split] > 1 { stride[split] } else { 0 };
    (unit_stride >= 0 && i64::try_from(lo).is_ok() && i64::try_from(hi).is_ok()).then_some(
        ReadArg {
            arg,
            hull: [lo as i64, hi as i64],
            unit_stride: unit_stride as u64,
        },
    )
}

/// The middle work-group (sampled by [`sample_groups`]).
fn middle(groups: [u64; 3]) -> [u64; 3] {
    [groups[0] / 2, groups[1] / 2, groups[2] / 2]
}

/// The middle work-group's neighbour along dimension `d` (the next one, or the previous one
/// at the end), and the direction (+1, -1).
fn neighbour(groups: [u64; 3], mid: [u64; 3], d: usize) -> ([u64; 3], i128) {
    let mut n = mid;
    if mid[d] + 1 < groups[d] {
        n[d] += 1;
        (n, 1)
    } else {
        n[d] -= 1;
        (n, -1)
    }
}

fn unit(d: usize) -> [u64; 3] {
    let mut g = [0; 3];
    g[d] = 1;
    g
}

/// Format version of the on-disk footprint cache entries (part of their names). Bumped
/// whenever models saved earlier may be wrong, so they are derived again: 3 since the
/// emulator places `vstorea_half3`/`vloada_half3` at `offset * 4` halves and counts the
/// padding half of `vstorea_half3` (models saved by earlier builds of the same version
/// miss bytes of such stores); 4 since a model records a kernel whose work-groups read what
/// others write ([`FootprintModel::order_dependent`]; earlier models were split); 5 since
/// a model carries read hulls ([`FootprintModel::read`]).
const DISK_FORMAT: u32 = 6;

/// The cache file name of the model for `key` (a launch-shape key built from the program's
/// content hash, build options, kernel, NDRange, by-value arguments and buffer sizes).
fn disk_name(key: &str) -> String {
    let h = crate::registry::tables::content_hash(&[
        env!("CARGO_PKG_VERSION").as_bytes(),
        &DISK_FORMAT.to_le_bytes(),
        key.as_bytes(),
    ]);
    format!("footprint-{h}.json")
}

/// One cache file: the model, or why it cannot be derived for this launch shape (a
/// deterministic verdict of the emulator, e.g. a work-group past the emulation budget or a
/// data-dependent store), so a later run does not pay the failed derivation again.
#[derive(serde::Serialize, serde::Deserialize)]
struct DiskEntry {
    key: String,
    model: Option<FootprintModel>,
    failure: Option<String>,
}

/// What an earlier run saved for `key` in the cache directory (`CLPRISM_CACHE`, see
/// [`crate::emu::frontend::cache_dir`]): `Ok(model)`, or `Err(reason)` when the derivation
/// failed for this shape. `None` when absent, unreadable, a symlink, or saved for another key.
pub fn load_cached(key: &str) -> Option<Result<FootprintModel, String>> {
    let dir = crate::exec::cache_dir()?;
    let bytes = crate::cache::read(&dir, &disk_name(key))?;
    let e: DiskEntry = serde_json::from_slice(&bytes).ok()?;
    if e.key != key {
        return None;
    }
    match (e.model, e.failure) {
        (Some(m), _) => Some(Ok(m)),
        (None, Some(f)) => Some(Err(f)),
        (None, None) => None,
    }
}

/// Saves the derivation's outcome for `key` in the cache directory (0600, written
/// atomically, no symlink followed): a model, or the reason none exists. Errors: the
/// directory cannot be created or written.
pub fn save_cached(key: &str, outcome: Result<&FootprintModel, &str>) -> std::io::Result<()> {
    let dir = crate::exec::cache_dir()
        .ok_or_else(|| std::io::Error::other("no cache directory (CLPRISM_CACHE, HOME)"))?;
    let entry = DiskEntry {
        key: key.to_string(),
        model: outcome.ok().cloned(),
        failure: outcome.err().map(str::to_string),
    };
    let bytes = serde_json::to_vec(&entry).map_err(std::io::Error::other)?;
    crate::cache::write(&dir, &disk_name(key), &bytes)
}

/// The emulator's arguments for a launch, every buffer zero-filled at its size (allocated
/// zeroed, so untouched pages cost nothing); a buffer argument that is not a tracked buffer
/// is NULL.
pub(crate) fn zero_args(
    job: &crate::exec::Job,
    kinds: &[crate::exec::program::ArgKind],
) -> Vec<crate::emu::ArgValue> {
    use crate::emu::ArgValue;
    job.args
        .iter()
        .zip(kinds)
        .map(
            |(a, kind)| match (a, crate::registry::tables::buffer_named_by(a)) {
                (_, Some(m)) => match crate::registry::TABLES.buffers.get(m) {
                    Some(i) => ArgValue::Buffer(vec![0; i.size]),
                    None => ArgValue::Scalar(vec![0; 8]),
                },
                (crate::registry::tables::KernelArg::Local(n), None) => ArgValue::Local(*n),
                (crate::registry::tables::KernelArg::Value(v), None) => {
                    if matches!(
                        kind,
                        crate::exec::program::ArgKind::Global { .. }
                            | crate::exec::program::ArgKind::Constant
                    ) {
                        ArgValue::Scalar(vec![0; 8])
                    } else {
                        ArgValue::Scalar(v.as_slice().to_vec())
                    }
                }
            },
        )
        .collect()
}

#[cfg(test)]
mod tests {
    /// [`WrittenArg::chunk_ranges`] is every byte its units write, merged, for slabs (one
    /// range as long as the stride: not walked), a gapped range and two ranges per unit
    /// (walked).
    #[test]
    fn chunk_ranges_are_the_units_bytes() {
        let cases: [(Vec<[u64; 2]>, u64); 4] = [
            (vec![[0, 256]], 256),
            (vec![[16, 80]], 64),
            (vec![[0, 16]], 64),
            (vec![[0, 4], [8, 12]], 16),
        ];
        for (unit_ranges, unit_stride) in cases {
            let w = WrittenArg {
                arg: 0,
                unit_ranges: unit_ranges.clone(),
                unit_stride,
                read_by_kernel: false,
                superset: false,
                reads: false,
            };
            for (first, count) in [(0, 1), (0, 2), (3, 5), (7, 100)] {
                // every byte some unit writes, one by one
                let mut bytes: Vec<u64> = (first..first + count)
                    .flat_map(|u| {
                        let d = u * unit_stride;
                        unit_ranges.iter().flat_map(move |r| r[0] + d..r[1] + d)
                    })
                    .collect();
                bytes.sort_unstable();
                bytes.dedup();
                let expected = normalise(bytes.iter().map(|&b| [b, b + 1]).collect());
                let what = format!("{unit_ranges:?} stride {unit_stride}, units {first}+{count}");
                assert_eq!(w.chunk_ranges(first, count), expected, "{what}");
                assert_eq!(w.chunk_ranges_walked(first, count), expected, "{what}");
            }
        }
        let slab = WrittenArg {
            arg: 0,
            unit_ranges: vec![[0, 256]],
            unit_stride: 256,
            read_by_kernel: false,
            superset: false,
            reads: false,
        };
        assert_eq!(
            slab.chunk_ranges(2_097_152, 2_097_152),
            vec![[1 << 29, 1 << 30]]
        );
    }

    use super::*;
    use crate::emu::stats::ArgFootprint;

    /// A row-major 2-D output of `n` floats per row, work-groups of `lx`×`ly` work-items
    /// writing their own tile (like matmul's C).
    fn tile_writer(
        n: u64,
        lx: u64,
        ly: u64,
    ) -> impl FnMut([u64; 3]) -> Result<WorkGroupStats, String> {
        move |g| {
            let mut written = Vec::new();
            for r in 0..ly {
                let row = g[1] * ly + r;
                let start = (row * n + g[0] * lx) * 4;
                written.push([start, start + lx * 4]);
            }
            Ok(WorkGroupStats {
                footprints: vec![
                    ArgFootprint {
                        arg: 0,
                        read: vec![[0, n * n * 4]],
                        written: vec![],
                    },
                    ArgFootprint {
                        arg: 2,
                        read: vec![],
                        written: normalise(written),
                    },
                ],
                ..Default::default()
            })
        }
    }

    /// Rodinia particlefilter's `normalize_weights_kernel` on 256-work-item groups: each
    /// group writes its slice of `u` (argument 4), work-item 0 of group 0 also `u[0]`, and
    /// every group reads `u[0]`.
    fn normalize_weights(g: [u64; 3]) -> Result<WorkGroupStats, String> {
        let slice = [g[0] * 1024, g[0] * 1024 + 1024];
        Ok(WorkGroupStats {
            footprints: vec![ArgFootprint {
                arg: 4,
                read: vec![[0, 4]],
                written: vec![slice],
            }],
            ..Default::default()
        })
    }

    #[test]
    fn a_kernel_whose_groups_read_what_others_write_is_order_dependent() {
        let m = derive([16, 1, 1], 0, normalize_weights).unwrap();
        let why = m.order_dependent.expect("order dependence found");
        assert!(why.contains("argument 4"), "{why}");
        assert!(m.written.is_empty() && m.read_only.is_empty());
        // each group reading only its own slice is not
        let own = |g: [u64; 3]| {
            let mut s = normalize_weights(g)?;
            s.footprints[0].read = vec![[g[0] * 1024, g[0] * 1024 + 4]];
            Ok(s)
        };
        let m = derive([16, 1, 1], 0, own).unwrap();
        assert_eq!(m.order_dependent, None);
        assert_eq!(m.written.len(), 1);
        assert!(overlaps(&[[0, 4], [8, 12]], &[[11, 20]]));
        assert!(!overlaps(&[[0, 4], [8, 12]], &[[4, 8], [12, 13]]));
    }

    #[test]
    fn tiles_of_a_row_major_matrix_make_contiguous_slabs() {
        let n = 64;
        let m = derive([4, 4, 1], 1, tile_writer(n, 16, 16)).unwrap();
        assert_eq!(m.read_only, vec![0]);
        assert_eq!(m.written.len(), 1);
        let w = &m.written[0];
        assert!(!w.read_by_kernel);
        // one unit = 16 full rows
        assert_eq!(w.unit_ranges, vec![[0, 16 * n * 4]]);
        assert_eq!(w.unit_stride, 16 * n * 4);
        assert_eq!(w.chunk_ranges(1, 2), vec![[16 * n * 4, 48 * n * 4]]);
        // origin, two unit steps, last and middle work-group, and the middle one's two
        // neighbours
        assert_eq!(m.sampled_groups, 7);
        // every unit reads the whole of argument 0
        assert_eq!(
            m.read,
            vec![ReadArg {
                arg: 0,
                hull: [0, (n * n * 4) as i64],
                unit_stride: 0
            }]
        );
    }

    /// A 1-D three-point stencil on 16-work-item groups over `n` floats: work-item `i` reads
    /// `a[i-1..=i+1]` where those exist (argument 0) and writes `b[i]` (argument 1).
    fn stencil(n: u64) -> impl Fn([u64; 3]) -> Result<WorkGroupStats, String> {
        move |g: [u64; 3]| {
            let (lo, hi) = (g[0] * 16, g[0] * 16 + 16);
            Ok(WorkGroupStats {
                footprints: vec![
                    ArgFootprint {
                        arg: 0,
                        read: vec![[lo.saturating_sub(1) * 4, (hi + 1).min(n) * 4]],
                        written: vec![],
                    },
                    ArgFootprint {
                        arg: 1,
                        read: vec![],
                        written: vec![[lo * 4, hi * 4]],
                    },
                ],
                ..Default::default()
            })
        }
    }

    /// PolyBench fdtd-2d's `fdtd_kernel2` in one dimension: work-item `j` writes `ex[j]`
    /// only for `j > 0`, so work-group 0 writes one element less than its neighbours.
    #[test]
    fn an_edge_work_group_that_writes_less_gets_the_interior_lattice() {
        let skip_first = |g: [u64; 3]| {
            let (lo, hi) = ((g[0] * 16).max(1), g[0] * 16 + 16);
            Ok(WorkGroupStats {
                footprints: vec![ArgFootprint {
                    arg: 0,
                    read: vec![[lo * 4, hi * 4]],
                    written: vec![[lo * 4, hi * 4]],
                }],
                ..Default::default()
            })
        };
        let m = derive([8, 1, 1], 0, skip_first).unwrap();
        let w = &m.written[0];
        assert_eq!((w.unit_ranges.clone(), w.unit_stride), (vec![[0, 64]], 64));
        // a superset: byte 0..4 is not written, so every device needs the pre-launch bytes
        assert!(w.read_by_kernel);
        // a work-group that writes outside the interior lattice still has no model
        let stray = |g: [u64; 3]| {
            let mut s = skip_first(g)?;
            if g[0] == 0 {
                s.footprints[0].written = vec![[0, 64], [1000, 1004]];
            }
            Ok(s)
        };
        assert!(derive([8, 1, 1], 0, stray).is_err());
    }

    #[test]
    fn a_stencil_chunk_reads_its_units_and_one_halo_each_side() {
        let m = derive([8, 1, 1], 0, stencil(128)).unwrap();
        let r = m.read.iter().find(|r| r.arg == 0).expect("a read hull");
        assert_eq!(r.unit_stride, 64);
        assert_eq!(r.hull, [-4, 68]);
        assert_eq!(r.chunk_hull(0, 1), [0, 68]);
        assert_eq!(r.chunk_hull(2, 3), [124, 324]);
        // without the trusted-reads verdict the model says "anywhere"
        assert_eq!(m.read_hull(0, 2, 3), None);
        let trusted = FootprintModel {
            reads_follow_ids: true,
            ..m.clone()
        };
        assert_eq!(trusted.read_hull(0, 2, 3), Some([124, 324]));
        // a hull that jumps (reads depending on the square of the id) has no model
        let square = |g: [u64; 3]| {
            let mut s = stencil(1 << 20)(g)?;
            s.footprints[0].read = vec![[g[0] * g[0] * 64, g[0] * g[0] * 64 + 64]];
            Ok(s)
        };
        assert!(derive([8, 1, 1], 0, square).unwrap().read.is_empty());
    }

    #[test]
    fn data_dependent_or_overlapping_writes_are_refused() {
        // every work-group writes the same bytes (a reduction into one cell)
        let same = |_g: [u64; 3]| {
            Ok(WorkGroupStats {
                footprints: vec![ArgFootprint {
                    arg: 1,
                    read: vec![],
                    written: vec![[0, 4]],
                }],
                ..Default::default()
            })
        };
        let e = derive([8, 1, 1], 0, same).unwrap_err();
        assert!(e.contains("do not move forward"), "{e}");
        // the last work-group deviates from the affine prediction (a guarded tail)
        // work-groups write 4 bytes each, the last one `last_len`
        let last_writes = |last_len: u64| {
            move |g: [u64; 3]| {
                let len = if g[0] == 7 { last_len } else { 4 };
                Ok(WorkGroupStats {
                    footprints: vec![ArgFootprint {
                        arg: 1,
                        read: vec![],
                        written: vec![[g[0] * 4, g[0] * 4 + len]],
                    }],
                    ..Default::default()
                })
            }
        };
        let tail = last_writes(2);
        // ... is inside the interior lattice: a superset model, with the pre-launch bytes
        // on every device (`read_by_kernel`)
        let m = derive([8, 1, 1], 0, tail).unwrap();
        assert!(m.written[0].read_by_kernel);
        assert_eq!(m.written[0].unit_ranges, vec![[0, 4]]);
        // ... unless it writes outside it
        let outside = last_writes(6);
        let e = derive([8, 1, 1], 0, outside).unwrap_err();
        assert!(e.contains("affine model predicts"), "{e}");
        // a transpose: a unit writes a column, interleaved with its neighbours
        let transpose = |g: [u64; 3]| {
            let n = 32u64;
            let written: Vec<[u64; 2]> = (0..4)
                .map(|r| {
                    let s = ((g[0] * 4 + r) * n + g[1] * 4) * 4;
                    [s, s + 16]
                })
                .collect();
            Ok(WorkGroupStats {
                footprints: vec![ArgFootprint {
                    arg: 1,
                    read: vec![],
                    written: normalise(written),
                }],
                ..Default::default()
            })
        };
        let e = derive([8, 8, 1], 1, transpose).unwrap_err();
        assert!(e.contains("overlap or interleave"), "{e}");
    }

    #[test]
    fn budget_exhaustion_and_emulation_errors_are_reasons() {
        let exhausted = |_g: [u64; 3]| {
            Ok(WorkGroupStats {
                budget_exhausted: true,
                ..Default::default()
            })
        };
        assert!(derive([2, 1, 1], 0, exhausted)
            .unwrap_err()
            .contains("budget"));
        let failing = |_g: [u64; 3]| Err("no toolchain".to_string());
        assert_eq!(derive([2, 1, 1], 0, failing).unwrap_err(), "no toolchain");
    }

    #[test]
    fn a_kernel_that_reads_its_output_is_marked() {
        let rmw = |g: [u64; 3]| {
            let r = [g[0] * 64, g[0] * 64 + 64];
            Ok(WorkGroupStats {
                footprints: vec![ArgFootprint {
                    arg: 0,
                    read: vec![r],
                    written: vec![r],
                }],
                ..Default::default()
            })
        };
        let m = derive([16, 1, 1], 0, rmw).unwrap();
        assert!(m.written[0].read_by_kernel);
        assert_eq!(m.written[0].chunk_ranges(3, 2), vec![[192, 320]]);
    }
}
