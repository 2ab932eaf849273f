//! Halos pushed for the launch the app is expected to make next (`CLPRISM_BALANCE_PUSH`;
//! issue 31, DESIGN.md §7 "Pipelining"). An iterative application repeats its launches in
//! the same order, often with a `clFinish` between steps (PolyBench-ACC fdtd-2d after its
//! third kernel, jacobi-2d after each). The launch after such a wait cannot be taken up
//! ahead ([`super::ahead`]): the app has not enqueued it yet. Its halo copies then sat on
//! its critical path, 50-130 µs of a 0.25 ms start on 2 H200s (results/session26-2026-11-28,
//! `g/debug-timeline.txt`).
//!
//! Instead, when a resident launch with one slab per device is issued and nothing waits
//! behind it, the launch thread looks up which launch followed the same kernel on the same
//! buffers last time (its footprint model, buffers and slabs), and issues that launch's
//! halo copies now, ordered after the running chunks exactly as a launch taken up ahead
//! orders them (reads on the chunks' queues, writes gated on the devices,
//! `WorkerState::gated_writes`). The directory counts the copies as held, so when the
//! expected launch comes its chunks find their halos in place.
//!
//! Correctness does not depend on the guess: a pushed range is a valid copy of bytes the
//! directory already tracks (read after the chunks that write them), and anything later
//! (the app's writes, a launch that writes the range, a failed chunk's redo through
//! `keep_resident`'s `set_only`) takes the copy away again. A wrong guess costs the bytes
//! moved; a right one takes the halo batch off the next launch's start.

use super::plan::Plan;
use super::resident::{FetchShape, HeldWrites};
use super::steps::Front;
use super::{BufArg, WorkerState};
use crate::exec::footprint::FootprintModel;
use crate::exec::{Engine, Job};
use crate::registry::tables::Key;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// The most a push moves, bytes: halos, not arrays. A launch that reads whole arrays
/// another device wrote (BabelStream's `dot` after `triad`: 332 MB on 2 H200s) fetches them
/// itself when it comes; a wrong guess of that size would cost more than it can save, and a
/// range this large goes through the upload ring, which waits on the host for the running
/// chunks.
const PUSH_MAX_BYTES: u64 = 16 << 20;

/// Launches whose successor is remembered at most (each holds its footprint model and
/// buffer list); past it the memory starts again.
const SUCCESSORS_KEPT: usize = 1024;

/// A launch as the halo push needs it again: what its chunks read, and where.
pub(super) struct Expected {
    model: Arc<FootprintModel>,
    bufs: Vec<BufArg>,
    devs: Vec<usize>,
    home_d: Option<usize>,
    /// `(device in Engine::devices, first unit, units)`.
    slabs: Vec<(usize, u64, u64)>,
}

impl Expected {
    fn shape(&self) -> FetchShape<'_> {
        FetchShape {
            model: Some(&self.model),
            bufs: &self.bufs,
            home_d: self.home_d,
        }
    }
}

/// A launch's identity for the forecast: its kernel build and its buffers in argument
/// order (the same kernel launched on swapped buffers, a ping-pong, is two launches).
type LaunchKey = ((String, String), Vec<Key>);

fn launch_key(plan: &Plan) -> LaunchKey {
    (plan.key.clone(), plan.bufs.iter().map(|b| b.mem).collect())
}

/// Which resident launch followed which, and the pushes in flight (their writes wait on
/// the devices for the chunks they follow).
#[derive(Default)]
pub(super) struct Forecast {
    /// The last resident launch with one slab per device.
    last: Option<LaunchKey>,
    /// A launch → the one that came after it last time.
    next: FxHashMap<LaunchKey, Arc<Expected>>,
    /// Writes of pushes whose host copies must outlive them.
    pushed: Vec<HeldWrites>,
}

impl Forecast {
    /// Notes a launch whose chunks were issued: as the successor of the one before it
    /// when it is resident with slabs `slabs` (`(participating device, first unit, units)`).
    /// Any other launch breaks the chain.
    pub(super) fn observe(&mut self, plan: &Plan, slabs: Option<&[(usize, u64, u64)]>) {
        let push = crate::config::get().balance_push;
        let (Some(model), Some(slabs), true) = (plan.model.as_ref(), slabs, plan.resident && push)
        else {
            self.last = None;
            return;
        };
        let key = launch_key(plan);
        if let Some(prev) = self.last.take() {
            let expected = Expected {
                model: model.clone(),
                bufs: plan.bufs.clone(),
                devs: plan.devs.clone(),
                home_d: plan.home_d,
                slabs: slabs
                    .iter()
                    .map(|&(d, first, n)| (plan.devs[d], first, n))
                    .collect(),
            };
            if self.next.len() >= SUCCESSORS_KEPT && !self.next.contains_key(&prev) {
                // an app that launches on fresh buffers every time never repeats a launch
                self.next.clear();
            }
            self.next.insert(prev, Arc::new(expected));
        }
        self.last = Some(key);
    }

    /// The pushes issued so far.
    fn take_pushed(&mut self) -> Vec<HeldWrites> {
        std::mem::take(&mut self.pushed)
    }
}

impl WorkerState {
    /// For `running` (its chunks issued, one slab per device, `slabs`), with nothing of the
    /// app's waiting behind it: issues the halo copies of the launch that followed it last
    /// time, ordered after its chunks. Returns the bytes pushed.
    pub(super) fn push_halos(
        &mut self,
        engine: &Engine,
        job: &Job,
        running: &mut Front,
        slabs: &[(usize, u64, u64)],
    ) -> u64 {
        if !crate::config::get().balance_push || !self.on_launch_thread {
            return 0;
        }
        let Some(expected) = self.forecast.next.get(&launch_key(&running.plan)).cloned() else {
            return 0;
        };
        let dead = expected
            .devs
            .iter()
            .any(|&d| !engine.devices[d].available());
        if expected.devs != running.plan.devs || dead {
            return 0;
        }
        // the expected launch reads what these slabs write
        if running.kept_early.is_none() {
            running.kept_early = Some(self.keep_resident_slabs(job, &running.plan, slabs));
        }
        let t0 = std::time::Instant::now();
        let Ok(fetches) = self.fetches_for_slabs(expected.shape(), &expected.slabs) else {
            return 0;
        };
        let total: u64 = fetches.iter().map(|f| f.bytes()).sum();
        if total == 0 || total > PUSH_MAX_BYTES || fetches.iter().any(|f| f.relayed()) {
            return 0;
        }
        self.reads_follow_chunks = true;
        let (moved, held, failed) = self.transfer_fetches(engine, &fetches);
        self.reads_follow_chunks = false;
        self.forecast.pushed.push(held);
        crate::config::debug(|| {
            format!(
                "launch {}: {moved} halo bytes pushed for the launch expected next in {:.1} us{}",
                job.rec.seq,
                t0.elapsed().as_nanos() as f64 / 1e3,
                failed
                    .map(|e| format!(" (stopped: {e})"))
                    .unwrap_or_default()
            )
        });
        moved
    }

    /// Waits for the pushed halo writes (bounded, `HeldWrites::finish`) and keeps their
    /// host copies. The directory counts a pushed range as held from the push on, which
    /// only the destination's chunk queue (where the write sits) may rely on: anything
    /// that reads device copies on another queue (a launch's own halo batch, a gather)
    /// settles the pushes first. After the app's `clFinish` the writes are long done.
    pub(super) fn settle_pushes(&mut self) {
        for held in self.forecast.take_pushed() {
            for (key, area) in held.finish() {
                self.halo_areas.give(key, area);
            }
        }
    }
}
