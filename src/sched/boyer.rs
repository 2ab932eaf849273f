//! Boyer's dynamic chunk scheduler (dissertation §4.3): the optimal-partition equations
//! (§4.3.1, eq. 4.1–4.3 extended to N devices), the chunk-size sequence and the scheduling
//! algorithm of §4.3.2 with straggler abandonment.
//!
//! Algorithm as implemented (state lives in [`BoyerState`], bookkeeping in `Core`):
//! 1. `start`: every device claims an initial chunk of β' = β·min(1, 2/N) of all work-groups
//!    (at least one work-group). For N ≤ 2 this is the paper's β. For N > 2 the paper's β
//!    would hand out N·β of the work before anything is measured (with 64 devices more
//!    than all of it), so β is scaled to keep the initial phase's total share at the
//!    two-device value (§4.5.4 asks that ≥ 25% of the work remain for the final split).
//! 2. When device D completes a chunk: if every live device has completed ≥ γ chunks, go
//!    to 3; otherwise, if D is idle, D claims its next chunk, δ times the previous one
//!    (size k = round(β'·W·δ^k), capped by what is left).
//! 3. Final split: the remaining W work-groups are split over the live devices with
//!    eq. 4.3 for N devices ([`optimal_split`]); each device's share is one chunk (more
//!    than one only if returned work left the pool fragmented).
//!
//! Straggler abandonment (§4.3.2, last paragraph): when a claim in step 2 takes the last
//! unassigned work-group while some live device with outstanding work has not completed a
//! single chunk, that device's outstanding chunks are abandoned (`Action::Abandon`), the
//! device is excluded, and its work is split over the devices that have completed ≥ 1 chunk
//! with eq. 4.3. Its abandoned chunks are never merged, even if they complete later.
//!
//! Extensions (not in the paper, both on by default, see [`super::BoyerParams`]):
//! * early final split (`early_split`): in step 2, when a device's δ-grown chunk would reach
//!   its eq. 4.3 share of the remaining work (over the devices with a measured Ω), step 3
//!   happens at once (stragglers handled as in §4.3.2, since the split claims all remaining
//!   work). With two devices of similar speed it never fires before γ is reached (in the
//!   §4.3.4 example the share is ~2,600 work-groups against a 972-work-group chunk); with
//!   many devices, or one much slower device, it stops δ-grown chunks from overshooting so
//!   that a slow device finishes long after the others, and it still reaches a final split
//!   when a blocked device keeps the γ condition from ever holding.
//! * overdue stragglers (`overdue_factor`): a device whose outstanding work runs far past
//!   its expected time while others sit idle is abandoned (`poll`), and so is a device whose
//!   measured slowdown makes it finish much later than the idle devices could redo its work
//!   (`rebalance`); such a device is re-admitted once its abandoned chunks complete.
//! * warm start (`warm`, after the hybrid that §4.6 proposes as future work): given the Ω
//!   every device measured in an earlier launch of the same kernel
//!   ([`super::ChunkScheduler::seed_history`]), step 1 gives each device `warm` × its
//!   eq. 4.3 share of all work instead of β'·W, and step 3 runs as soon as one device has
//!   finished that chunk (its Ω fresh, the others' λ from the earlier Ω). Few, large chunks
//!   matter on GPUs whose per-work-group speed falls when a chunk cannot fill the device
//!   (N-body 524288 on an H200: 64 µs per work-group in a 287-work-group chunk, 23 µs in the
//!   whole launch, results/gpu-2026-11-22g); the final split keeps 1 − `warm` of the work
//!   dynamic, and the overdue rule still covers a device that stalls.

use super::{Action, Core, Exclusion};

/// Per-launch state of Boyer's policy.
#[derive(Debug, Clone)]
pub struct BoyerState {
    /// Parameters (β, δ, γ, overdue factor).
    pub params: super::BoyerParams,
    /// Initial chunk size in work-groups (β' · W, at least 1).
    pub initial_wgs: u64,
    /// True once step 3 (the final split) has happened.
    pub final_phase: bool,
    /// Ω (ns per work-group) per device from an earlier launch (warm start, see
    /// [`super::BoyerParams::warm`]): sizes the first chunks and rescales the Ω of devices
    /// still on their first chunk at the final split.
    pub history_ns: Option<Vec<f64>>,
    /// True after a warm start: the first device to go idle triggers the final split.
    pub warm_started: bool,
    /// Never abandon a device's started chunks (§4.3.2's stragglers, the overdue rule): set
    /// by [`super::ChunkScheduler::keep_started_chunks`].
    pub keep_started: bool,
    /// Per device, the units (work-groups of the pool) one wave of the device runs at once
    /// (compute units × resident work-groups per compute unit), when known
    /// ([`super::ChunkScheduler::set_wave_units`]).
    pub wave_units: Option<Vec<u64>>,
}

/// Effective initial-chunk fraction for `n_devices` devices: β·min(1, 2/N) (see module doc).
pub fn effective_beta(beta: f64, n_devices: usize) -> f64 {
    if n_devices <= 2 {
        beta
    } else {
        beta * 2.0 / n_devices as f64
    }
}

/// Size in work-groups of a device's `k`-th chunk (k = 0 for the initial chunk) in the
/// growth phase of §4.3.2: round(initial·δ^k), at least 1 work-group. Not capped by the
/// remaining work (the caller caps it).
pub fn growth_chunk_wgs(initial_wgs: u64, delta: f64, k: u32) -> u64 {
    let x = initial_wgs as f64 * delta.powi(k as i32);
    if !x.is_finite() || x >= u64::MAX as f64 {
        u64::MAX
    } else {
        (x.round() as u64).max(1)
    }
}

/// Expected finish of a device, relative to now, if it gets `w` more work-groups:
/// λ + Ω·w (ns).
fn finish(omega: f64, lambda: f64, w: u64) -> f64 {
    lambda + omega * w as f64
}

/// Real-valued solution of eq. 4.3 for N devices over the devices in `active`:
/// `T = (W + Σ λ_i/Ω_i) / Σ 1/Ω_i`, `W_i = (T − λ_i)/Ω_i`. Devices with W_i ≤ 0 (their
/// running chunk alone outlasts T) are dropped and the system re-solved. Returns (T, W_i)
/// with W_i = 0 for dropped devices.
pub fn solve_eq_4_3(w: f64, devs: &[(f64, f64)]) -> (f64, Vec<f64>) {
    let mut active: Vec<bool> = devs
        .iter()
        .map(|&(o, l)| o.is_finite() && o > 0.0 && l.is_finite())
        .collect();
    loop {
        let mut s_inv = 0.0;
        let mut s_lo = 0.0;
        for (i, &(o, l)) in devs.iter().enumerate() {
            if active[i] {
                s_inv += 1.0 / o;
                s_lo += l.max(0.0) / o;
            }
        }
        if s_inv == 0.0 {
            return (f64::INFINITY, vec![0.0; devs.len()]);
        }
        let t = (w + s_lo) / s_inv;
        let wi: Vec<f64> = devs
            .iter()
            .enumerate()
            .map(|(i, &(o, l))| if active[i] { (t - l.max(0.0)) / o } else { 0.0 })
            .collect();
        let mut dropped = false;
        for i in 0..devs.len() {
            if active[i] && wi[i] <= 0.0 {
                active[i] = false;
                dropped = true;
            }
        }
        if !dropped {
            return (t, wi);
        }
    }
}

/// Integer split of `w` work-groups over devices given as `(Ω_i ns/work-group, λ_i ns)`
/// (Boyer §4.3.1, eq. 4.1–4.3 for N devices, see [`solve_eq_4_3`]).
///
/// Rounding (§4.3.1 compares ⌊W_1⌋ and ⌈W_1⌉ and keeps the split expected to finish
/// earlier): every share is rounded down, then the left-over work-groups (fewer than the
/// number of devices) are handed out one at a time to the device whose expected finish
/// λ_i + Ω_i·(w_i + 1) is earliest. For two devices this is exactly the paper's choice
/// between ⌊W_1⌋ and ⌈W_1⌉; for N devices it minimises the expected makespan over all
/// roundings of the real solution. The result always sums to `w`. Devices with an unusable
/// Ω (≤ 0, NaN, ∞) get 0; if none is usable, everything goes to index 0.
pub fn optimal_split(w: u64, devs: &[(f64, f64)]) -> Vec<u64> {
    let mut out = vec![0u64; devs.len()];
    if devs.is_empty() || w == 0 {
        return out;
    }
    let usable: Vec<bool> = devs
        .iter()
        .map(|&(o, l)| o.is_finite() && o > 0.0 && l.is_finite())
        .collect();
    if !usable.iter().any(|&u| u) {
        out[0] = w;
        return out;
    }
    let (_, wi) = solve_eq_4_3(w as f64, devs);
    let mut sum = 0u64;
    for i in 0..devs.len() {
        if usable[i] && wi[i] > 0.0 {
            out[i] = (wi[i].floor() as u64).min(w);
            sum = sum.saturating_add(out[i]);
        }
    }
    let lam = |i: usize| devs[i].1.max(0.0);
    // Floating-point excess (should not happen): take back from the latest finisher.
    while sum > w {
        let i = (0..devs.len())
            .filter(|&i| out[i] > 0)
            .max_by(|&a, &b| {
                finish(devs[a].0, lam(a), out[a]).total_cmp(&finish(devs[b].0, lam(b), out[b]))
            })
            .unwrap_or(0);
        out[i] -= 1;
        sum -= 1;
    }
    while sum < w {
        let i = (0..devs.len())
            .filter(|&i| usable[i])
            .min_by(|&a, &b| {
                finish(devs[a].0, lam(a), out[a] + 1).total_cmp(&finish(
                    devs[b].0,
                    lam(b),
                    out[b] + 1,
                ))
            })
            .unwrap_or(0);
        out[i] += 1;
        sum += 1;
    }
    out
}

impl BoyerState {
    /// New state for `n_devices` devices and `total_wgs` work-groups.
    ///
    /// One device alone gets every work-group as one chunk: with nobody to balance against,
    /// the §4.3.2 growth phase would only add a synchronisation between chunks and a partly
    /// filled last wave (a clprism extension; Boyer always schedules several devices).
    pub fn new(params: super::BoyerParams, n_devices: usize, total_wgs: u64) -> Self {
        let b = effective_beta(params.beta, n_devices);
        let initial = if n_devices == 1 {
            total_wgs.max(1)
        } else {
            ((b * total_wgs as f64).round() as u64).max(1)
        };
        BoyerState {
            params,
            initial_wgs: initial,
            final_phase: false,
            history_ns: None,
            warm_started: false,
            keep_started: false,
            wave_units: None,
        }
    }

    /// Warm start (extension after §4.6): every device claims `warm` × its eq. 4.3 share of
    /// all work-groups, with the earlier launch's Ω as its own (λ = 0 for all, nothing runs
    /// yet), so λ and the overdue rule have an Ω from the first moment.
    ///
    /// Whole waves: a device whose remaining 1 − `warm` of its share would be less than one
    /// wave of the device (`wave_units`) claims its whole share at once. A chunk that cannot
    /// fill the device runs at the speed of a full wave, so the final phase would cost about
    /// one more wave than the work needs (N-body 524288 on 2 H200s: 3,200 + 1,066
    /// work-groups took 81.8 + 35.3 ms, one chunk of 4,131 took 99.0 ms,
    /// results/gpu-2026-11-22l).
    ///
    /// A device whose share is all the work (the others' eq. 4.3 shares round to zero, e.g. a
    /// CPU next to a GPU 700× faster) claims it at once: there is nobody to balance against,
    /// and a final phase would only cost a synchronisation (SGEMM 2048² on an H200 beside
    /// PoCL's CPU: 3.8 ms in two chunks against 3.5 ms native, results/gpu-2026-11-22o).
    fn warm_start(&mut self, core: &mut Core, now: u64, out: &mut Vec<Action>) {
        let frac = self.params.warm.unwrap_or(1.0);
        let omega = self.history_ns.as_deref().unwrap_or(&[]);
        for (d, &o) in omega.iter().enumerate() {
            core.devices[d].omega_ns = Some(o);
        }
        let inputs: Vec<(f64, f64)> = omega.iter().map(|&o| (o, 0.0)).collect();
        let shares = optimal_split(core.pool.len(), &inputs);
        let sharing = shares.iter().filter(|&&s| s > 0).count();
        for (d, &share) in shares.iter().enumerate() {
            if share > 0 {
                let mut first = ((share as f64 * frac).ceil() as u64).clamp(1, share);
                if sharing == 1 {
                    first = share;
                }
                let wave = self
                    .wave_units
                    .as_ref()
                    .and_then(|w| w.get(d).copied())
                    .unwrap_or(0);
                if share - first < wave {
                    first = share;
                }
                core.claim(d, first, now, out);
            }
        }
        self.warm_started = true;
        self.final_phase = core.pool.is_empty();
    }

    /// Before the warm start's final split: the earlier launch gives the devices' relative
    /// speeds, the chunks finished in this launch give the scale (Ω per work-group depends
    /// on the chunk size, e.g. through a fixed cost per chunk). A device still running its
    /// first chunk gets its earlier Ω times the mean ratio fresh/earlier Ω of the devices
    /// that finished one, so its λ is not overstated (or understated) by that scale.
    fn calibrate_history(&self, core: &mut Core) {
        let Some(hist) = &self.history_ns else {
            return;
        };
        let ratios: Vec<f64> = core
            .live_devices()
            .filter(|&d| core.devices[d].completed > 0)
            .filter_map(|d| Some(core.devices[d].omega_ns? / hist[d]))
            .filter(|r| r.is_finite() && *r > 0.0)
            .collect();
        if ratios.is_empty() {
            return;
        }
        let scale = ratios.iter().sum::<f64>() / ratios.len() as f64;
        let pending: Vec<usize> = core
            .live_devices()
            .filter(|&d| core.devices[d].completed == 0)
            .collect();
        for d in pending {
            core.devices[d].omega_ns = Some(hist[d] * scale);
        }
    }

    /// Runs the algorithm after any event (start, completion, failure, abandonment).
    pub(crate) fn dispatch(&mut self, core: &mut Core, now: u64, out: &mut Vec<Action>) {
        if !self.warm_started
            && core.chunks.is_empty()
            && self
                .history_ns
                .as_ref()
                .is_some_and(|h| h.len() == core.devices.len())
        {
            self.warm_start(core, now, out);
        }
        self.dispatch_pool(core, now, out);
        self.rebalance(core, now, out);
    }

    /// Steps 2 and 3 for work in the pool.
    fn dispatch_pool(&mut self, core: &mut Core, now: u64, out: &mut Vec<Action>) {
        if core.pool.is_empty() {
            return;
        }
        if self.warm_started && !self.final_phase {
            // warm start: the rest is split (below) once some device has finished its
            // first chunk (or has none), with that device's fresh Ω and the others' λ
            if !core
                .live_devices()
                .any(|d| core.devices[d].outstanding.is_empty())
            {
                return;
            }
            self.final_phase = true;
            self.calibrate_history(core);
        }
        if !self.final_phase {
            let live: Vec<usize> = core.live_devices().collect();
            if !live.is_empty()
                && live
                    .iter()
                    .all(|&d| core.devices[d].completed >= self.params.gamma)
            {
                self.final_phase = true;
            }
        }
        if self.final_phase {
            let devs: Vec<usize> = core
                .live_devices()
                .filter(|&d| core.devices[d].omega_ns.is_some())
                .collect();
            core.split_pool(&devs, now, out);
            return;
        }
        // Step 2: idle live devices claim their next, δ times larger chunk.
        let idle: Vec<usize> = core
            .live_devices()
            .filter(|&d| core.devices[d].outstanding.is_empty())
            .collect();
        for d in idle {
            if core.pool.is_empty() {
                break;
            }
            let k = core.devices[d].claims;
            let size = growth_chunk_wgs(self.initial_wgs, self.params.delta, k);
            if self.params.early_split {
                if let Some(share) = self.balanced_share(core, d, now) {
                    if size >= share {
                        // the δ-grown chunk reaches d's balanced share: step 3 now
                        self.split_all(core, now, out);
                        return;
                    }
                }
            }
            let got = core.claim(d, size, now, out);
            if got > 0 && core.pool.is_empty() {
                self.straggler_check(core, now, out);
            }
        }
    }

    /// Device `d`'s share of the pool under eq. 4.3 over the live devices with a measured Ω
    /// (devices without one are left out). `None` if `d` has no Ω.
    fn balanced_share(&self, core: &Core, d: usize, now: u64) -> Option<u64> {
        core.devices[d].omega_ns?;
        let devs: Vec<usize> = core
            .live_devices()
            .filter(|&x| core.devices[x].omega_ns.is_some())
            .collect();
        let inputs: Vec<(f64, f64)> = devs
            .iter()
            .map(|&x| {
                (
                    core.devices[x].omega_ns.unwrap_or(f64::NAN),
                    core.lambda_ns(x, now).unwrap_or(0.0),
                )
            })
            .collect();
        let shares = optimal_split(core.pool.len(), &inputs);
        devs.iter().position(|&x| x == d).map(|i| shares[i])
    }

    /// Early final split (extension): the progressing devices claim all remaining work with
    /// eq. 4.3; since that is a claim of all remaining work, live devices that hold work but
    /// have not completed a chunk are stragglers (§4.3.2) and their work joins the split.
    fn split_all(&mut self, core: &mut Core, now: u64, out: &mut Vec<Action>) {
        let stragglers: Vec<usize> = core
            .live_devices()
            .filter(|_| !self.keep_started)
            .filter(|&d| core.devices[d].completed == 0 && !core.devices[d].outstanding.is_empty())
            .collect();
        for s in stragglers {
            core.exclude(s, Exclusion::Straggler, out);
        }
        self.final_phase = true;
        let devs: Vec<usize> = core
            .live_devices()
            .filter(|&d| core.devices[d].omega_ns.is_some())
            .collect();
        core.split_pool(&devs, now, out);
    }

    /// §4.3.2: a claim just took the last unassigned work-group; abandon every live device
    /// that holds outstanding work but has not completed a single chunk, provided some
    /// device has made progress, and split its work over the progressing devices.
    fn straggler_check(&mut self, core: &mut Core, now: u64, out: &mut Vec<Action>) {
        if self.keep_started {
            return;
        }
        let progressing: Vec<usize> = core
            .live_devices()
            .filter(|&d| core.devices[d].completed > 0 && core.devices[d].omega_ns.is_some())
            .collect();
        if progressing.is_empty() {
            return;
        }
        let stragglers: Vec<usize> = core
            .live_devices()
            .filter(|&d| core.devices[d].completed == 0 && !core.devices[d].outstanding.is_empty())
            .collect();
        if stragglers.is_empty() {
            return;
        }
        for s in stragglers {
            core.exclude(s, Exclusion::Straggler, out);
        }
        self.final_phase = true;
        core.split_pool(&progressing, now, out);
    }

    /// Ω used to judge a device's outstanding work: its own, else the slowest Ω measured on
    /// any live device.
    fn judge_omega(core: &Core, d: usize) -> Option<f64> {
        core.devices[d].omega_ns.or_else(|| {
            core.live_devices()
                .filter_map(|x| core.devices[x].omega_ns)
                .max_by(f64::total_cmp)
        })
    }

    /// Evidence-based rebalancing (part of the overdue extension, on when
    /// `overdue_factor` is set): with the pool empty and some live device with a measured Ω
    /// idle, a busy device X whose latest Ω is at least twice the Ω its outstanding work was
    /// sized with (it slowed down) and whose expected remaining time λ_X exceeds
    /// twice the time T the other live devices would need to redo all of X's outstanding
    /// work (eq. 4.3 over them, with their own λ) is abandoned like a straggler and its work
    /// split over the others. This reacts to a device that slowed down after the final split
    /// (§4.5.2 variability), which the paper's algorithm cannot; X is re-admitted when its
    /// abandoned chunks complete. Devices without their own Ω are left to `poll`.
    fn rebalance(&mut self, core: &mut Core, now: u64, out: &mut Vec<Action>) {
        if !self.overdue_armed(core) {
            return;
        }
        loop {
            let mut worst: Option<(usize, f64)> = None;
            for x in core.live_devices() {
                let dev = &core.devices[x];
                let (Some(om), Some(om_claim)) = (dev.omega_ns, dev.omega_at_claim) else {
                    continue;
                };
                // evidence of a slowdown since its work was sized
                if dev.outstanding.is_empty() || om < 2.0 * om_claim {
                    continue;
                }
                let lam = core.lambda_ns(x, now).unwrap_or(0.0);
                let others: Vec<(f64, f64)> = core
                    .live_devices()
                    .filter(|&y| y != x)
                    .filter_map(|y| {
                        let o = core.devices[y].omega_ns?;
                        Some((o, core.lambda_ns(y, now).unwrap_or(0.0)))
                    })
                    .collect();
                if others.is_empty() {
                    continue;
                }
                let (t_alt, _) = solve_eq_4_3(core.outstanding_wgs(x) as f64, &others);
                // T from eq. 4.3 is the others' common finish, measured from now; compare
                // with X's own expected finish
                if lam > 2.0 * t_alt {
                    let gain = lam - t_alt;
                    if worst.is_none_or(|(_, g)| gain > g) {
                        worst = Some((x, gain));
                    }
                }
            }
            let Some((x, _)) = worst else {
                return;
            };
            core.exclude(x, Exclusion::Overdue, out);
            self.final_phase = true;
            let devs: Vec<usize> = core
                .live_devices()
                .filter(|&d| core.devices[d].omega_ns.is_some())
                .collect();
            core.split_pool(&devs, now, out);
            if !self.overdue_armed(core) {
                return;
            }
        }
    }

    /// Precondition of the overdue rule: pool empty and some live device with a measured Ω
    /// sits idle.
    fn overdue_armed(&self, core: &Core) -> bool {
        self.params.overdue_factor.is_some()
            && core.pool.is_empty()
            && core.live_devices().any(|d| {
                core.devices[d].outstanding.is_empty() && core.devices[d].omega_ns.is_some()
            })
    }

    /// Deadline (ns) after which device `d`'s outstanding work counts as overdue:
    /// start of its running chunk + factor·Ω·U.
    fn overdue_deadline(&self, core: &Core, d: usize) -> Option<u64> {
        let f = self.params.overdue_factor?;
        let dev = &core.devices[d];
        if dev.outstanding.is_empty() {
            return None;
        }
        let omega = Self::judge_omega(core, d)?;
        let u = core.outstanding_wgs(d) as f64;
        let start = core.head_start_ns(d)?;
        let span = f * omega * u;
        Some(start.saturating_add(if span >= u64::MAX as f64 {
            u64::MAX
        } else {
            span.ceil() as u64
        }))
    }

    /// Overdue extension: when the pool is empty and a device that has made progress sits
    /// idle, every live device whose outstanding chunks have been running longer than
    /// `overdue_factor`·Ω·U (Ω its own, or the slowest measured Ω if it has none; U its
    /// outstanding work-groups) is abandoned and excluded, and its work is split with
    /// eq. 4.3 over the live devices with a measured Ω. This covers a device that stalls
    /// after its first completed chunk, which the paper's rule does not.
    pub(crate) fn poll(&mut self, core: &mut Core, now: u64, out: &mut Vec<Action>) {
        if !self.overdue_armed(core) {
            return;
        }
        let late: Vec<usize> = core
            .live_devices()
            .filter(|&d| self.overdue_deadline(core, d).is_some_and(|t| now > t))
            .collect();
        if late.is_empty() {
            return;
        }
        for d in late {
            core.exclude(d, Exclusion::Overdue, out);
        }
        self.final_phase = true;
        let devs: Vec<usize> = core
            .live_devices()
            .filter(|&d| core.devices[d].omega_ns.is_some())
            .collect();
        core.split_pool(&devs, now, out);
        self.rebalance(core, now, out);
    }

    /// Earliest time at which [`Self::poll`] could act if no other event arrives.
    pub(crate) fn next_poll_ns(&self, core: &Core) -> Option<u64> {
        if !self.overdue_armed(core) {
            return None;
        }
        core.live_devices()
            .filter_map(|d| self.overdue_deadline(core, d))
            .min()
            .map(|t| t.saturating_add(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eq. 4.3 for two devices, written as in the paper.
    fn eq_4_3(w: f64, o1: f64, l1: f64, o2: f64, l2: f64) -> f64 {
        (l2 - l1 + o2 * w) / (o1 + o2)
    }

    #[test]
    fn n_device_form_reduces_to_eq_4_3() {
        for &(w, o1, l1, o2, l2) in &[
            (1000.0, 51.0, 0.0, 35.0, 17_000.0),
            (5000.0, 10.0, 300.0, 20.0, 0.0),
            (777.0, 3.0, 50.0, 3.0, 50.0),
        ] {
            let (t, wi) = solve_eq_4_3(w, &[(o1, l1), (o2, l2)]);
            let w1 = eq_4_3(w, o1, l1, o2, l2);
            assert!((wi[0] - w1).abs() < 1e-9 * w, "{wi:?} vs {w1}");
            assert!((wi[0] + wi[1] - w).abs() < 1e-9 * w); // eq. 4.1
                                                           // eq. 4.2: both finish at T
            assert!((o1 * wi[0] + l1 - t).abs() < 1e-6 * t);
            assert!((o2 * wi[1] + l2 - t).abs() < 1e-6 * t);
        }
    }

    #[test]
    fn drops_devices_whose_running_chunk_outlasts_t() {
        // device 1's running chunk (λ = 1e6 ns) outlasts the whole remaining work on device 0
        let s = optimal_split(100, &[(10.0, 0.0), (10.0, 1e6)]);
        assert_eq!(s, vec![100, 0]);
        // three devices, one dropped, the other two share equally
        let s = optimal_split(100, &[(10.0, 0.0), (10.0, 1e6), (10.0, 0.0)]);
        assert_eq!(s, vec![50, 0, 50]);
    }

    #[test]
    fn rounding_picks_earliest_finish() {
        // W_1 real = 2.5 each; odd total must go to the faster finisher
        let s = optimal_split(5, &[(10.0, 0.0), (10.0, 1.0)]);
        assert_eq!(s, vec![3, 2]);
        let s = optimal_split(5, &[(10.0, 1.0), (10.0, 0.0)]);
        assert_eq!(s, vec![2, 3]);
        // brute force over all 2-device splits: our max finish is optimal among ⌊W1⌋,⌈W1⌉
        for w in 1..60u64 {
            for &(o1, l1, o2, l2) in &[
                (7.0, 13.0, 3.0, 0.0),
                (1.0, 0.0, 9.0, 40.0),
                (5.0, 5.0, 5.0, 6.0),
            ] {
                let s = optimal_split(w, &[(o1, l1), (o2, l2)]);
                assert_eq!(s[0] + s[1], w);
                let mk = |a: u64| (l1 + o1 * a as f64).max(l2 + o2 * (w - a) as f64);
                let best = (0..=w).map(mk).fold(f64::INFINITY, f64::min);
                assert!(mk(s[0]) <= best + 1e-9, "w={w} {s:?}");
            }
        }
    }

    #[test]
    fn growth_sequence() {
        assert_eq!(growth_chunk_wgs(700, 1.5, 0), 700);
        assert_eq!(growth_chunk_wgs(700, 1.5, 1), 1050);
        assert_eq!(growth_chunk_wgs(700, 1.5, 2), 1575);
        assert_eq!(growth_chunk_wgs(0, 1.5, 2), 1);
        assert_eq!(effective_beta(0.07, 2), 0.07);
        assert!((effective_beta(0.07, 8) - 0.0175).abs() < 1e-12);
    }
}
