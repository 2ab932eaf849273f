//! The split decision taken before anything is paid (`CLPRISM_SPLIT=auto`, issue 18 item 2):
//! before the start barrier on the app's queue, the build on the balance devices and the
//! write-footprint derivation. A launch that this early decision keeps whole is forwarded as
//! the app made it, so it costs what forwarding costs.
//!
//! The full decision (`sched::split::decide` in `launch.rs`, after the footprint) needs to
//! know which buffers the kernel writes and which inputs must be uploaded; those come from
//! the footprint model. The early decision uses what the kernel's last full decision found
//! ([`SplitMemo`], by argument index, so new by-value arguments or a new launch shape do not
//! force a new derivation) with the current buffer sizes and epochs; a kernel never decided
//! in full is judged optimistically (nothing to move), so it reaches the full decision once.
//! A kernel never measured on the app's device is forwarded at once and measured from its
//! event (the `t_whole` of Boyer's "should we split" question, dissertation §4.3).

use super::{reason, EarlyLaunch, Reason};
use crate::log::schema::{Chunk, Schedule};
use crate::registry::tables::{KernelArg, Key};
use crate::registry::TABLES;
use crate::sched::split::SplitDecision;
use crate::sched::split::{decide, SplitInputs};
use once_cell::sync::OnceCell;
use opencl_sys::CL_MEM_USE_HOST_PTR;

/// The split floor the early decision assumes before any split launch was measured, ns: a
/// split needs at least a barrier on the app's queue and an enqueue and a completion per
/// device. The shortest split measured here (3 PoCL CPU devices, CLBlast's axpy over 4,096
/// work-items) took 390 µs; 50 µs is kept as a bound that a GPU's launch latency also
/// exceeds. Replaced by the shortest measured split once there is one (the record's reason
/// then says "the shortest split so far" for either).
pub(super) const ASSUMED_SPLIT_FLOOR_NS: f64 = 50_000.0;

/// What trying a split first is assumed to cost when the app's build of the program was
/// not seen (a program from binaries or IL), ns: 100 ms, about one PoCL build of a small
/// program on three CPU devices here (CLBlast's axpy: 84–190 ms).
pub(super) const ASSUMED_TRIAL_COST_NS: f64 = 100e6;

/// What the kernel's last full split decision found, by argument index.
#[derive(Debug, Clone, Default)]
pub(super) struct SplitMemo {
    /// Buffer arguments the kernel writes (after the footprint's read-only analysis).
    pub written_args: Vec<usize>,
    /// Buffer arguments whose contents the other devices need before the kernel runs
    /// (inputs, and written buffers the kernel also reads).
    pub input_args: Vec<usize>,
    /// Whether the merge went by diff (no footprint model).
    pub merge_by_diff: bool,
    /// Whether the kernel's results stay on the devices (`CLPRISM_BALANCE_GATHER=lazy` with a
    /// footprint model, `exec::directory`): its written buffers are then neither merged nor
    /// uploaded again at each launch.
    pub resident: bool,
}

/// The measured figures the early decision reads (all optional).
pub(super) struct Known<'a> {
    /// ns per work-group of the kernel run whole on the app's device.
    pub home_ns_per_work_group: Option<f64>,
    /// ns per work-group per balance device from the kernel's split launches.
    pub measured: Option<&'a [Option<f64>]>,
    /// Read-back plus write-back time of the kernel's last split launch, ns.
    pub merge_ns: Option<f64>,
    /// Host transfer rate, bytes per ns (the slowest link's when a device is remote).
    pub host_bytes_per_ns: f64,
    /// Round trip of the slowest remote link among the devices, ns (0: all local).
    pub link_latency_ns: f64,
    /// The shortest split launch measured in this process, ns (0: none yet).
    pub split_floor_ns: f64,
    /// Whether `split_floor_ns` is the prior assumed before a split was measured.
    pub split_floor_assumed: bool,
    /// What trying a split first costs, ns: the build on the balance devices and the
    /// footprint derivation, estimated by the app's own build of the program. Read only for
    /// a kernel never split (`memo` none); the caller may leave it 0 otherwise.
    pub trial_cost_ns: f64,
    /// Time splits would have saved over the launches kept whole so far while waiting to
    /// try them, of every kernel of the kernel's program, ns (the caller accumulates
    /// [`Early::Forward::forgone_ns`] per program source).
    pub forgone_ns: f64,
    /// What the split launches of the kernel's program took against the same launches whole
    /// (each kernel's first split left out), when any were measured.
    pub split_effect: Option<SplitEffect>,
    /// The kernel's last full decision.
    pub memo: Option<&'a SplitMemo>,
    /// The epoch and host epoch (`exec::host_epoch`) buffer `m` had at the kernel's last
    /// balanced launch (none: the input counts as unchanged, as in the full decision, which
    /// weighs recurring uploads only).
    pub last_epoch: &'a dyn Fn(Key) -> Option<(u64, u64)>,
}

/// The early verdict.
#[derive(Debug, PartialEq)]
pub(super) enum Early {
    /// Forward the launch as the app made it, with this reason for the record. `measure`:
    /// measure it from its event (the kernel has no figure on the app's device yet).
    /// `unwritten`: buffers the kernel is known not to write (their replicas stay valid).
    Forward {
        reason: Reason,
        measure: bool,
        unwritten: Vec<Key>,
        /// What a split would have saved on this launch by the optimistic estimate, ns (0
        /// when the launch is kept whole on a real estimate).
        forgone_ns: f64,
    },
    /// Splitting may pay: take the full path (barrier, build, footprint, full decision).
    /// `relocated_bytes`: inputs it moves back onto the devices because launches kept whole
    /// rewrote them on the app's device (the rent rule let it, [`RentPool`]; 0: none).
    Consider { relocated_bytes: u64 },
}

/// The kernel's last `sched::split::decide` call of the early decision: its inputs and
/// verdict, and the record's reason when that verdict kept the launch whole. `decide` is a
/// pure function of its inputs, so a launch with equal inputs gets the same verdict and the
/// same reason text without a new call or a new `String` (PolyBench lu: about 3 µs per launch
/// in the split decision before, issue 18 item 2).
#[derive(Debug, Clone)]
pub(super) struct DecisionMemo {
    inputs: SplitInputs,
    decision: SplitDecision,
    /// `decision.reason`, shared with the deferred texts of the trial rule.
    why: std::sync::Arc<str>,
    kept: Reason,
}

/// `decide(inputs)`, from `last` when it holds the same inputs (`last` is updated otherwise),
/// with the reason of a launch it keeps whole.
fn decided(inputs: SplitInputs, last: &mut Option<DecisionMemo>) -> &DecisionMemo {
    if last.as_ref().is_none_or(|m| m.inputs != inputs) {
        let decision = decide(&inputs);
        let kept = format!(
            "kept whole on the app's device (decided before any build or footprint): {}",
            decision.reason
        )
        .into();
        *last = Some(DecisionMemo {
            inputs,
            why: decision.reason.as_str().into(),
            decision,
            kept,
        });
    }
    last.as_ref().expect("set above")
}

/// The early decision for `job` over `devices` balance devices, the app's being `home`;
/// `last` is the kernel's [`DecisionMemo`].
pub(super) fn early(
    job: &EarlyLaunch,
    devices: usize,
    home: usize,
    k: &Known,
    last: &mut Option<DecisionMemo>,
    rent: &mut RentPool,
) -> Early {
    static ONE_GROUP: OnceCell<Reason> = OnceCell::new();
    static FIRST: OnceCell<Reason> = OnceCell::new();
    let work_groups: u64 = (0..job.work_dim as usize)
        .map(|d| (job.global[d] / job.local[d].max(1)) as u64)
        .product();
    if work_groups < 2 {
        return Early::Forward {
            reason: reason(
                &ONE_GROUP,
                "kept whole on the app's device: one work-group cannot be split",
            ),
            measure: false,
            unwritten: Vec::new(),
            forgone_ns: 0.0,
        };
    }
    let Some(t_home) = k.home_ns_per_work_group else {
        return Early::Forward {
            reason: reason(
                &FIRST,
                "kept whole on the app's device: first launch of this kernel, forwarded to measure it",
            ),
            measure: true,
            unwritten: Vec::new(),
            forgone_ns: 0.0,
        };
    };
    let buffer = |i: usize| -> Option<(Key, u64, bool)> {
        let m = arg_buffer(job.args.get(i)?)?;
        let info = TABLES.buffers.get(m)?;
        Some((m, info.size as u64, info.flags & CL_MEM_USE_HOST_PTR != 0))
    };
    if let Some(e) = k.split_effect.filter(SplitEffect::losing) {
        return Early::Forward {
            reason: Reason::deferred(move || e.why_whole()),
            measure: false,
            unwritten: unwritten(k.memo, job.args.len(), &buffer),
            forgone_ns: 0.0,
        };
    }
    let (written_bytes, moved, merge_by_diff) = match k.memo {
        None => (0, Uploads::default(), false),
        Some(memo) => {
            // results left on the devices are neither merged nor uploaded again
            let written: u64 = memo
                .written_args
                .iter()
                .filter(|_| !memo.resident)
                .filter_map(|&i| buffer(i))
                .map(|b| b.1)
                .sum();
            let moved = uploads(memo, &buffer, k.last_epoch);
            (written, moved, memo.merge_by_diff)
        }
    };
    let upload_bytes = moved.every_launch;
    let inputs = SplitInputs {
        work_groups,
        home_whole_ns_per_work_group: Some(t_home),
        ns_per_work_group: (0..devices)
            .map(|d| k.measured.and_then(|m| m.get(d).copied().flatten()))
            .collect(),
        home,
        upload_bytes,
        written_bytes,
        host_bytes_per_ns: k.host_bytes_per_ns,
        link_latency_ns: k.link_latency_ns,
        min_gain: 0.05,
        split_floor_ns: k.split_floor_ns,
        split_floor_assumed: k.split_floor_assumed,
        merge_by_diff,
        measured_merge_ns: k.merge_ns,
    };
    let memo = decided(inputs, last);
    let d = &memo.decision;
    if d.split && k.memo.is_none() {
        // Never tried: trying costs a build on every device and a footprint derivation
        // once. Like renting skis until the rent paid equals the price, launches stay whole
        // until what splitting would have saved on them adds up to that cost, so trying
        // never costs more than the most splitting could have gained by then.
        let gain = d.est_home_ns.unwrap_or(0.0) - d.est_split_ns.unwrap_or(0.0);
        if k.forgone_ns + gain < k.trial_cost_ns {
            // its figures change at every launch: the writer makes the text
            let (saved, cost, why) = (k.forgone_ns + gain, k.trial_cost_ns, memo.why.clone());
            return Early::Forward {
                reason: Reason::deferred(move || {
                    format!(
                        "kept whole on the app's device until splits would have saved what trying one costs ({:.2} of {:.2} ms saved so far over its program's kernels; {})",
                        saved / 1e6,
                        cost / 1e6,
                        why
                    )
                }),
                measure: false,
                unwritten: Vec::new(),
                forgone_ns: gain,
            };
        }
    }
    let rent = (d.split && moved.relocated > 0)
        .then(|| rent.charge(job.id, d, &memo.why, moved.relocated, k.host_bytes_per_ns))
        .flatten();
    if d.split && rent.is_none() {
        return Early::Consider {
            relocated_bytes: moved.relocated,
        };
    }
    Early::Forward {
        reason: rent.unwrap_or_else(|| memo.kept.clone()),
        measure: false,
        unwritten: unwritten(k.memo, job.args.len(), &buffer),
        forgone_ns: 0.0,
    }
}

/// The buffers a kernel does not write through any argument (a buffer bound to a read
/// argument and a written one is written), by its last full decision (`memo`); none known
/// without one.
fn unwritten(
    memo: Option<&SplitMemo>,
    args: usize,
    buffer: &dyn Fn(usize) -> Option<(Key, u64, bool)>,
) -> Vec<Key> {
    let Some(memo) = memo else {
        return Vec::new();
    };
    let written: Vec<Key> = memo
        .written_args
        .iter()
        .filter_map(|&i| buffer(i).map(|b| b.0))
        .collect();
    (0..args)
        .filter_map(|i| buffer(i).map(|b| b.0))
        .filter(|m| !written.contains(m))
        .collect()
}

/// The inputs a split launch of a kernel must first move onto the other devices, bytes.
#[derive(Debug, Default, Clone, Copy)]
struct Uploads {
    /// At every launch: buffers the app rewrites itself (its own write, fill, copy or map
    /// moved the host epoch), `CL_MEM_USE_HOST_PTR` buffers, and written buffers whose
    /// results do not stay on the devices.
    every_launch: u64,
    /// Only because launches kept whole rewrote them on the app's device since the kernel's
    /// last split (its results stay on the devices): splitting those launches too would have
    /// left them there (the rent rule, [`RentPool`]).
    relocated: u64,
}

/// [`Uploads`] of the kernel whose last full decision is `memo`; `buffer(i)` gives argument
/// `i`'s buffer, size and `CL_MEM_USE_HOST_PTR` flag.
fn uploads(
    memo: &SplitMemo,
    buffer: &dyn Fn(usize) -> Option<(Key, u64, bool)>,
    last_epoch: &dyn Fn(Key) -> Option<(u64, u64)>,
) -> Uploads {
    let mut u = Uploads::default();
    for &i in &memo.input_args {
        let Some((m, size, always_stale)) = buffer(i) else {
            continue;
        };
        let (by_launch, by_host) = last_epoch(m).map_or((false, false), |(e, h)| {
            (e != super::epoch(m), h != super::host_epoch(m))
        });
        if always_stale
            || (memo.written_args.contains(&i) && !memo.resident)
            || (by_launch && (by_host || !memo.resident))
        {
            u.every_launch += size;
        } else if by_launch {
            u.relocated += size;
        }
    }
    u
}

/// What the split launches of one program's kernels took against the same launches run
/// whole on the app's device, each kernel's first split left out (it holds the driver's first
/// enqueue on each device), and launches that moved arrays rather than halos (the rent rule's
/// one-time moves), as sums that forget old launches (each sample weighs 31/32 of the
/// one after it, about the last 32 launches). `auto` estimates a split from the devices'
/// measured rates and the shortest split so far, which leaves out what grows with the
/// number of devices (an enqueue, a halo fetch and a completion per device): on 4 H200s,
/// jacobi-2d's split launches took 1.16x their time whole under `always`, where 2 H200s
/// broke even (results/session22-2026-11-28, call a). Measured split launches of the program
/// that are not at least [`SplitEffect::MARGIN`] faster than whole keep its kernels whole
/// from then on. Per program, like the trial rule: its kernels share their arrays, and a
/// kernel kept whole alone makes the others move those arrays back at each launch.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub(super) struct SplitEffect {
    /// Decayed sum of the split launches' walls without one-time work, ns.
    split_ns: f64,
    /// Decayed sum of the same launches' time whole on the app's device, ns.
    whole_ns: f64,
    /// Launches measured.
    launches: u32,
}

impl SplitEffect {
    /// Launches measured before the effect can keep kernels whole.
    pub const MIN_LAUNCHES: u32 = 32;
    /// The fraction of the whole time a program's splits must save to go on splitting: what
    /// the launch thread's gaps between split launches (not in their walls) may take.
    pub const MARGIN: f64 = 0.02;
    /// The weight each sample keeps per later sample.
    const DECAY: f64 = 31.0 / 32.0;

    /// A split launch took `split_ns` (its wall without one-time work) where it takes
    /// `whole_ns` whole. A sample is counted at most twice its whole time, so that one
    /// launch that moved whole arrays back onto the devices (the rent rule) weighs like
    /// two launches lost, not like sixty.
    pub fn note(&mut self, split_ns: f64, whole_ns: f64) {
        if !(whole_ns > 0.0 && split_ns >= 0.0) {
            return;
        }
        self.split_ns = self.split_ns * Self::DECAY + split_ns.min(2.0 * whole_ns);
        self.whole_ns = self.whole_ns * Self::DECAY + whole_ns;
        self.launches = self.launches.saturating_add(1);
    }

    /// The program's split launches, split time over whole time (decayed).
    pub fn ratio(&self) -> f64 {
        if self.whole_ns > 0.0 {
            self.split_ns / self.whole_ns
        } else {
            1.0
        }
    }

    /// Whether enough split launches were measured and they did not save [`Self::MARGIN`].
    pub fn losing(&self) -> bool {
        self.launches >= Self::MIN_LAUNCHES && self.ratio() > 1.0 - Self::MARGIN
    }

    /// The record's reason for a launch kept whole because of it.
    pub fn why_whole(&self) -> String {
        format!(
            "kept whole on the app's device: its program's split launches took {:.2}x their \
             time whole (the last {} measured, recent ones weighing most; splitting goes on \
             only below {:.2}x)",
            self.ratio(),
            self.launches,
            1.0 - Self::MARGIN
        )
    }
}

/// The rent rule (after the trial rule), for kernels whose results stay on the devices: a
/// launch whose inputs were rewritten on the app's device only by launches kept whole since
/// the kernel's last split (of other kernels or its own) stays whole until what splitting
/// would have saved on such launches, over all kernels, adds up to what moving its inputs
/// back costs, doubled for each switch already paid. Then the pool switches: every such
/// kernel splits at its next launch and pays its move once, so that kernels sharing arrays
/// split together and the arrays stay on the devices, which no kernel reaches alone.
/// PolyBench fdtd-2d's three kernels over three arrays, with the rule per kernel (each
/// kernel's own saving against its own moves), split one at a time, each paying 1-3 GiB of
/// moves for one launch before the others' whole launches rewrote its inputs again: 15
/// splits in 15,000 launches, 0.83x native (2 H200s, results/session21-2026-11-27). Before
/// any rule, each kernel saw the others' whole launches rewrite its inputs at every launch:
/// "644 ms split, moving 6144 MiB" (session 20). A kernel that moves inputs a second time
/// while the pool is switched shows that the others did not follow: the pool switches back
/// and saves again, for twice the price; what the moves cost is then at most what the
/// launches kept whole would have saved, and less each time.
#[derive(Debug, Default)]
pub(super) struct RentPool {
    /// What splitting would have saved on the launches kept whole for the rule since the
    /// last switch, ns.
    saved_ns: f64,
    /// Switches so far: the price is doubled for each.
    rounds: u32,
    /// Kernels (`EarlyLaunch::id`) that moved inputs since the pool switched; `None`: not
    /// switched.
    moved_since_switch: Option<rustc_hash::FxHashSet<std::sync::Arc<str>>>,
}

impl RentPool {
    /// A launch of kernel `kid` that decision `d` would split must first move `bytes` of
    /// inputs back onto the devices at `rate` bytes per ns: `None` to split it (the pool is
    /// switched, or switches now), else the reason to keep it whole.
    fn charge(
        &mut self,
        kid: &std::sync::Arc<str>,
        d: &SplitDecision,
        why: &std::sync::Arc<str>,
        bytes: u64,
        rate: f64,
    ) -> Option<Reason> {
        if let Some(moved) = &mut self.moved_since_switch {
            if moved.insert(kid.clone()) {
                return None;
            }
            // it moves inputs again: the other kernels did not follow
            self.moved_since_switch = None;
            self.saved_ns = 0.0;
        }
        let gain = d.est_home_ns.unwrap_or(0.0) - d.est_split_ns.unwrap_or(0.0);
        self.saved_ns += gain;
        let price = bytes as f64 / rate * f64::from(1u32 << self.rounds.min(20));
        if self.saved_ns >= price {
            self.rounds += 1;
            self.saved_ns = 0.0;
            self.moved_since_switch = Some(std::iter::once(kid.clone()).collect());
            return None;
        }
        let (saved, why) = (self.saved_ns, why.clone());
        Some(Reason::deferred(move || {
            format!(
                "kept whole on the app's device until splits would have saved what moving {} MiB of its inputs back onto the devices costs ({:.2} of {:.2} ms saved so far over the kernels waiting so; launches kept whole rewrote them on the app's device since its last split; {})",
                bytes >> 20,
                saved / 1e6,
                price / 1e6,
                why
            )
        }))
    }
}

/// The app buffer a by-value argument names, if it is one clprism knows.
fn arg_buffer(a: &KernelArg) -> Option<Key> {
    crate::registry::tables::buffer_named_by(a)
}

/// A split launch's wall time without its one-time work (the build on the devices, the
/// footprint derivation, and the upload ring that fills a kernel's replicas at its first
/// split, in that order), ns: a sample of the split floor.
pub(super) fn split_wall_without_one_time_work(schedule: &Schedule, wall_ns: u64) -> f64 {
    let one_time = schedule
        .phase_end("upload_ring")
        .or_else(|| schedule.phase_end("footprint"))
        .unwrap_or(0);
    wall_ns.saturating_sub(one_time) as f64
}

/// Why a launch that went through the balanced path ran all its work-groups on one device
/// (the record's `one_device_reason`), from its `schedule` record.
pub(super) fn one_device_reason(schedule: &Schedule) -> String {
    if schedule.devices.len() <= 1 {
        "only one device could take chunks (see devices_excluded)".into()
    } else if schedule.chunks.iter().any(Chunk::lost) {
        "the other devices' chunks were abandoned as stragglers or failed; their work-groups ran on this device".into()
    } else if schedule.split_decision().is_some_and(|d| !d.decision.split) {
        "run whole through clprism to measure it (split_decision)".into()
    } else {
        format!(
            "the scheduler gave every chunk to one device ({} work-groups along the split dimension)",
            schedule.work_groups.unwrap_or(0)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::tables::{ProgramInfo, ProgramOrigin};

    fn program() -> ProgramInfo {
        ProgramInfo {
            context: 0,
            origin: ProgramOrigin::Source("kernel void k() {}".into()),
            options: "".into(),
            hash: "h".into(),
            from_binary: false,
            embedded_headers: false,
        }
    }

    /// What the early decision knows, with the figures these tests leave alone: no split
    /// effect, no measured merge, 10 GB/s, local links, the assumed floor, nothing to pay
    /// or saved for a trial.
    fn known<'a>(
        home_ns_per_work_group: f64,
        measured: Option<&'a [Option<f64>]>,
        memo: Option<&'a SplitMemo>,
        last_epoch: &'a dyn Fn(Key) -> Option<(u64, u64)>,
    ) -> Known<'a> {
        Known {
            split_effect: None,
            home_ns_per_work_group: Some(home_ns_per_work_group),
            measured,
            merge_ns: None,
            host_bytes_per_ns: 10.0,
            link_latency_ns: 0.0,
            split_floor_ns: ASSUMED_SPLIT_FLOOR_NS,
            split_floor_assumed: true,
            trial_cost_ns: 0.0,
            forgone_ns: 0.0,
            memo,
            last_epoch,
        }
    }

    /// A one-dimensional launch of `global` work-items in work-groups of 64.
    fn launch<'a>(
        id: &'a std::sync::Arc<str>,
        program: &'a ProgramInfo,
        args: &'a [KernelArg],
        global: usize,
    ) -> EarlyLaunch<'a> {
        EarlyLaunch {
            id,
            program,
            app_device: std::ptr::null_mut(),
            args,
            work_dim: 1,
            global: [global, 1, 1],
            local: [64, 1, 1],
        }
    }

    /// The early decision with the kernel's memo gives, launch after launch, what a fresh
    /// decision gives (verdict, reason text, forgone time), while the inputs change (launch
    /// shape, figures, the trial rule's accumulated time) and when they repeat.
    #[test]
    fn memoized_decision_equals_a_fresh_one() {
        let no_epoch = |_: Key| None;
        let measured = [Some(200.0), Some(150.0), Some(900.0)];
        let memo = SplitMemo::default();
        let (program, id) = (program(), std::sync::Arc::<str>::from("h||k"));
        let mut last = None;
        let mut kept_whole = 0;
        for step in 0..40u32 {
            let global = 64 * [2usize, 64, 4096, 1 << 16][(step / 2) as usize % 4];
            let k = Known {
                trial_cost_ns: 1e6,
                forgone_ns: (step % 5) as f64 * 1e5,
                ..known(
                    [250.0, 260.0][(step / 8) as usize % 2],
                    (step % 3 == 0).then_some(&measured[..]),
                    (step % 4 == 0).then_some(&memo),
                    &no_epoch,
                )
            };
            let j = launch(&id, &program, &[], global);
            let memoized = early(&j, 3, 0, &k, &mut last, &mut RentPool::default());
            let fresh = early(&j, 3, 0, &k, &mut None, &mut RentPool::default());
            assert_eq!(memoized, fresh, "step {step}");
            if let Early::Forward { reason, .. } = &memoized {
                assert!(!reason.text().is_empty());
                kept_whole += 1;
            }
        }
        assert!(kept_whole > 0);
    }

    /// A program whose measured split launches are not faster than whole keeps its kernels
    /// whole once enough were measured; one whose splits pay goes on splitting, and one
    /// launch that moved whole arrays (60x its time whole) counts at most twice its time.
    #[test]
    fn a_program_whose_splits_do_not_pay_is_kept_whole() {
        let mut losing = SplitEffect::default();
        for _ in 0..SplitEffect::MIN_LAUNCHES - 1 {
            losing.note(1.16e6, 1.0e6);
        }
        assert!(!losing.losing(), "too few launches to judge");
        losing.note(1.16e6, 1.0e6);
        assert!(losing.losing());
        assert!((losing.ratio() - 1.16).abs() < 1e-9);

        let mut paying = SplitEffect::default();
        paying.note(60e6, 1.0e6); // a launch that moved its arrays back (rent rule)
        for _ in 0..63 {
            paying.note(0.85e6, 1.0e6);
        }
        assert!(paying.ratio() < 0.9, "ratio {}", paying.ratio());
        assert!(!paying.losing());

        // the early decision: a losing program's launch is kept whole with the ratio given,
        // whatever its rates say; the same launch splits without the effect
        let no_epoch = |_: Key| None;
        let measured = [Some(100.0), Some(100.0), Some(100.0)];
        let (program, id) = (program(), std::sync::Arc::<str>::from("h||k"));
        let j = launch(&id, &program, &[], 64 << 14);
        let memo = SplitMemo::default();
        let known = |effect| Known {
            split_effect: effect,
            ..known(300.0, Some(&measured[..]), Some(&memo), &no_epoch)
        };
        let split = early(&j, 3, 0, &known(None), &mut None, &mut RentPool::default());
        assert_eq!(split, Early::Consider { relocated_bytes: 0 });
        let kept = early(
            &j,
            3,
            0,
            &known(Some(losing)),
            &mut None,
            &mut RentPool::default(),
        );
        match kept {
            Early::Forward { reason, .. } => {
                assert!(
                    reason.text().contains("took 1.16x their time whole"),
                    "{}",
                    reason.text()
                )
            }
            other => panic!("expected a launch kept whole, got {other:?}"),
        }
        let paid = early(
            &j,
            3,
            0,
            &known(Some(paying)),
            &mut None,
            &mut RentPool::default(),
        );
        assert_eq!(paid, Early::Consider { relocated_bytes: 0 });
    }

    /// The rent rule: kernels whose results stay on the devices, whose inputs only launches
    /// kept whole rewrote since their last split, stay whole until what splitting them would
    /// have saved adds up to moving those inputs back; then each splits once whatever it
    /// moves, and a kernel that moves inputs a second time switches the pool back (twice the
    /// price next). An input the app rewrote itself counts at every launch instead.
    #[test]
    fn inputs_rewritten_by_kept_launches_are_rented_not_charged_per_launch() {
        use crate::registry::tables::{ArgBytes, BufferInfo};
        let m: Key = 0x7e57_4e47;
        let size = 64usize << 20;
        TABLES.buffers.insert(
            m,
            BufferInfo {
                context: 0,
                size,
                flags: 0,
                host_ptr: 0,
                parent: None,
            },
        );
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&m.to_ne_bytes());
        let args = [KernelArg::Value(ArgBytes::Inline(b, 8))];
        let memo = SplitMemo {
            input_args: vec![0],
            resident: true,
            ..SplitMemo::default()
        };
        let (e0, h0) = (crate::exec::epoch(m), crate::exec::host_epoch(m));
        let last = move |k: Key| (k == m).then_some((e0, h0));
        let program = program();
        let (a, b) = (
            std::sync::Arc::<str>::from("h||a"),
            std::sync::Arc::<str>::from("h||b"),
        );
        let rates = [Some(1000.0), Some(1000.0)];
        // 4,096 work-groups of 1 µs: 4.1 ms whole, 2.05 ms split on two like devices; the
        // input's 64 MiB at 10 bytes/ns: 6.7 ms
        let verdict = |id: &std::sync::Arc<str>, pool: &mut RentPool| {
            let j = launch(id, &program, &args, 64 * 4096);
            let k = Known {
                split_floor_ns: 0.0,
                split_floor_assumed: false,
                ..known(1000.0, Some(&rates), Some(&memo), &last)
            };
            early(&j, 2, 0, &k, &mut None, pool)
        };
        let kept = |e: Early| match e {
            Early::Forward { reason, .. } => reason.text().to_string(),
            other => panic!("split: {other:?}"),
        };
        let moved = Early::Consider {
            relocated_bytes: size as u64,
        };
        let mut pool = RentPool::default();
        // nothing rewrote it: split, nothing to move
        assert_eq!(
            verdict(&a, &mut pool),
            Early::Consider { relocated_bytes: 0 }
        );
        crate::exec::invalidate(m);
        // 2.05, 4.1, 6.1 of 6.7 ms saved (a and b add to one pool), then the switch
        let why = kept(verdict(&a, &mut pool));
        assert!(why.contains("moving 64 MiB of its inputs back"), "{why}");
        assert!(why.contains("(2.05 of 6.71 ms saved"), "{why}");
        kept(verdict(&b, &mut pool));
        kept(verdict(&a, &mut pool));
        assert_eq!(verdict(&b, &mut pool), moved);
        // switched: a moves its inputs once too
        assert_eq!(verdict(&a, &mut pool), moved);
        // a second move: the others did not follow; saving again, for twice the price
        let why = kept(verdict(&a, &mut pool));
        assert!(why.contains("(2.05 of 13.42 ms saved"), "{why}");
        // the app's own write: an upload at every launch, which no saving pays for
        crate::exec::invalidate_by_host(m);
        let why = kept(verdict(&a, &mut RentPool::default()));
        assert!(why.contains("decided before any build"), "{why}");
        TABLES.buffers.release(m);
    }
}
