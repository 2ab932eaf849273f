//! Pipelined launches (`CLPRISM_BALANCE_PIPELINE`; issue 31, DESIGN.md §7 "Pipelining"): a
//! launch whose results stay on the devices, one slab per device (owner computes), has its
//! chunks issued; before they are waited for, the launch thread takes up the app's next
//! launch if it already waits behind on a quiet queue, plans it and issues its halo copies
//! and chunks behind the running ones on each device's in-order queue. The devices then go
//! from one launch to the next without waiting for the host: on 2 H200s a steady fdtd-2d
//! launch spent 0.19 ms between its predecessor's end and its own chunks' start (planning
//! 30 µs, its halo batch 50-130 µs, two enqueues 80 µs) against 0.54 ms of chunks
//! (results/session22-2026-11-28, `e-logs`), and `clprism simulate --replay --pipeline`
//! projected 1.44x → 1.63x native for fdtd-2d on 2 GPUs (results/session25-2026-11-28/sim).
//!
//! Order and coherence:
//! - the buffer directory takes the running launch's slabs as written where they run before
//!   the next launch is planned (their ranges are known at issue), so the next launch fetches
//!   its halos from them;
//! - every transfer the next launch plans reads a device's copy on the queue that device's
//!   chunks run on (`WorkerState::reads_follow_chunks`), so it sees the running chunk's
//!   output; writes and chunks go on the destination's in-order queue, behind its running
//!   chunk;
//! - the next launch's halo reads are waited for on the host (the writes need their bytes):
//!   the launch thread blocks until the running chunks on the halos' source devices end,
//!   then enqueues the writes and the chunks;
//! - the running launch is then waited for and recorded, and the app's queue let go on,
//!   before the next launch is.
//!
//! A chunk of the running launch that fails (its work redone elsewhere, or the launch given
//! up) leaves the directory's early bookkeeping wrong for the launch behind it: that launch
//! is then waited for and fails with the driver's code instead of running on stale halos.

use super::plan::Plan;
use super::steps::Front;
use super::WorkerState;
use crate::exec::{ChunkDone, Engine, Forward, Job};
use crate::sched::SchedulerKind;
use crossbeam_channel::Receiver;
use opencl_sys::*;
use std::time::Instant;

/// The app's next launch as the launch thread took it up while the one before ran.
pub(in crate::exec) enum Ahead {
    /// Planned, its chunks issued behind the running ones.
    Issued {
        /// The launch (`LaunchRecord::seq`).
        seq: u64,
        front: Box<Front>,
        /// A chunk of the launch before failed after this one was issued: the driver's code.
        failed: Option<cl_int>,
    },
    /// Planned, but not one to issue behind running chunks; it goes on from its plan.
    Planned {
        seq: u64,
        plan: Box<Plan>,
        t0: Instant,
    },
    /// Not split (the early decision or the plan said so).
    Forwarded { seq: u64, forward: Forward },
}

impl Ahead {
    fn seq(&self) -> u64 {
        match self {
            Ahead::Issued { seq, .. }
            | Ahead::Planned { seq, .. }
            | Ahead::Forwarded { seq, .. } => *seq,
        }
    }
}

impl WorkerState {
    /// Whether launch `seq` was taken up ahead.
    pub(super) fn has_ahead(&self, seq: u64) -> bool {
        self.ahead.as_ref().is_some_and(|a| a.seq() == seq)
    }

    /// What was taken up ahead for launch `seq`, if anything. Something taken up for
    /// another launch (the launch thread runs launches in order, so never) is dropped.
    pub(super) fn take_ahead(&mut self, seq: u64) -> Option<Ahead> {
        let a = self.ahead.take()?;
        if a.seq() == seq {
            return Some(a);
        }
        crate::config::debug(|| {
            format!(
                "balance: launch {} was taken up ahead, launch {seq} came instead; dropped",
                a.seq()
            )
        });
        None
    }

    /// A chunk of the running launch failed (`code`): the launch issued behind it fails too.
    pub(super) fn fail_ahead(&mut self, code: cl_int) {
        if let Some(Ahead::Issued { failed, .. }) = &mut self.ahead {
            failed.get_or_insert(code.min(-1));
        }
    }

    /// For a launch issued ahead whose predecessor failed ([`Self::fail_ahead`]): its chunks
    /// waited for (nothing of them is kept), and the outcome that reports the failure.
    pub(super) fn failed_ahead(
        &mut self,
        engine: &Engine,
        job: &Job,
    ) -> Option<super::AsyncOutcome> {
        let code = match &self.ahead {
            Some(Ahead::Issued {
                seq,
                failed: Some(code),
                ..
            }) if *seq == job.rec.seq => *code,
            _ => return None,
        };
        let Some(Ahead::Issued { front, .. }) = self.ahead.take() else {
            return None;
        };
        let front = *front;
        let cx = super::Ctx {
            engine,
            job,
            plan: &front.plan,
        };
        let _ = self.finish_chunks(cx, &engine.done_rx, &front.targets, front.started);
        Some(super::AsyncOutcome::Whole {
            reason: "issued behind a launch whose chunk failed on a device: it read that \
                     launch's output, so it fails too (CLPRISM_BALANCE_PIPELINE)"
                .into(),
            device_ns: 0,
            status: code,
        })
    }

    /// After `running`'s chunks were issued, before they are waited for: takes up the app's
    /// next launch when pipelining is on, `running` has one slab per device issued and the
    /// next launch already waits on a quiet queue of the same context and device (nothing
    /// the app enqueued between them, no probe chunk). It is planned and, when its results
    /// stay on the devices too, issued behind `running`'s chunks; what was done is kept
    /// for its turn ([`Self::take_ahead`]).
    pub(super) fn look_ahead(
        &mut self,
        engine: &Engine,
        done_rx: &Receiver<ChunkDone>,
        job: &Job,
        running: &mut Front,
    ) {
        if !crate::config::get().balance_pipeline || self.ahead.is_some() {
            return;
        }
        let Some(slabs) = running.started.issued_slabs() else {
            return;
        };
        // not over PoCL-Remote servers: a server that dies with the next launch's halo reads
        // queued behind its chunks leaves the client waiting for ever (tests/remote.rs, a
        // server killed between resident launches, hung the app)
        let remote = running.plan.devs.iter().any(|&d| engine.devices[d].remote);
        if !running.plan.resident || remote {
            return;
        }
        let next = match engine.pipeline.take_next() {
            Some(next) => next,
            None => {
                // nothing queued behind: the halos of the launch expected next, and then
                // whatever the app enqueued meanwhile
                running.pushed = self.push_halos(engine, job, running, &slabs);
                let Some(next) = engine.pipeline.take_next() else {
                    return;
                };
                next
            }
        };
        let follows = !next.wait_start
            && next.probe.is_none()
            && next.job.app_context == job.app_context
            && next.job.app_device == job.app_device;
        if follows {
            // the next launch fetches its halos from these slabs
            if running.kept_early.is_none() {
                running.kept_early = Some(self.keep_resident_slabs(job, &running.plan, &slabs));
            }
            let t0 = Instant::now();
            let taken = self.take_up(engine, done_rx, &next.job, next.decided, t0);
            crate::config::debug(|| {
                format!(
                    "launch {}: taken up behind launch {} ({}) in {:.1} us",
                    next.job.rec.seq,
                    job.rec.seq,
                    match &taken {
                        Ahead::Issued { .. } => "chunks issued",
                        Ahead::Planned { .. } => "planned",
                        Ahead::Forwarded { .. } => "not split",
                    },
                    t0.elapsed().as_nanos() as f64 / 1e3
                )
            });
            self.ahead = Some(taken);
        }
        engine.pipeline.put_back(next);
    }

    /// The next launch `job` taken up: its early decision (unless the app's thread took it,
    /// `decided`), its plan and, for a launch whose results stay on the devices in a static
    /// partition, its [`Self::front`] with transfers ordered after the running chunks.
    fn take_up(
        &mut self,
        engine: &Engine,
        done_rx: &Receiver<ChunkDone>,
        job: &Job,
        decided: bool,
        t0: Instant,
    ) -> Ahead {
        let seq = job.rec.seq;
        if !decided {
            if let Err(forward) = self.pre_decide(engine, &job.early()) {
                return Ahead::Forwarded { seq, forward };
            }
        }
        let plan = match self.plan(engine, job, t0) {
            Ok(p) => p,
            Err(forward) => return Ahead::Forwarded { seq, forward },
        };
        let static_partition = matches!(plan.kind, SchedulerKind::Static(_))
            || (plan.kind == SchedulerKind::Boyer
                && self
                    .resident_partitions
                    .contains_key(&(plan.shape.units, plan.devs.clone())));
        if !plan.resident || plan.verify || plan.check_agreement || !static_partition {
            return Ahead::Planned {
                seq,
                plan: Box::new(plan),
                t0,
            };
        }
        self.reads_follow_chunks = true;
        let front = self.front(engine, done_rx, job, plan, t0);
        self.reads_follow_chunks = false;
        match front {
            Ok(mut front) => {
                front.issued_ahead = true;
                Ahead::Issued {
                    seq,
                    front: Box::new(front),
                    failed: None,
                }
            }
            Err(forward) => Ahead::Forwarded { seq, forward },
        }
    }
}
