//! The chunk-driver loop (Boyer, dissertation ch. 4, §4.3): one loop that performs a
//! [`ChunkScheduler`]'s actions on devices and reports the devices' completions back to it.
//!
//! Balance mode drives real OpenCL devices with it (`exec::launch`), and the discrete-event
//! simulator drives simulated ones (`sched::sim`), so the simulator's predictions come from
//! the loop that runs. Everything device-specific sits behind [`ChunkDevices`]; the loop
//! owns the protocol of the module header (`sched`): actions in order, an abandoned chunk's
//! completion reported but never merged, a failed chunk's work reassigned.

use super::{Action, ChunkId, ChunkScheduler, SchedState};
use std::collections::HashSet;

/// A chunk that finished on its device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// Participating device index.
    pub device: usize,
    /// The chunk.
    pub chunk_id: ChunkId,
    /// When it completed, ns on the driver's clock.
    pub at_ns: u64,
    /// Its processing time, ns (from when the device could start it, not from its enqueue:
    /// Ω of §4.3.1 counts processing, not the wait in the queue).
    pub elapsed_ns: u64,
    /// It completed without error.
    pub ok: bool,
}

/// What [`ChunkDevices::wait`] woke up for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// A chunk of this launch completed.
    Completed(Completion),
    /// The poll time asked for passed (ns now), or the wait ended without a completion.
    Poll(u64),
    /// Nothing can happen any more (the simulator's devices are all blocked or idle).
    Idle,
}

/// How [`drive`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DriveEnd {
    /// Every work-group is in a completed chunk.
    Complete,
    /// Work remains but every device was excluded ([`SchedState::Stuck`]).
    Stuck,
    /// Work remains and no device will ever report again ([`Wake::Idle`]).
    Idle,
}

/// The devices one launch's chunks run on, as the driver loop sees them.
pub trait ChunkDevices {
    /// Now, ns on the launch's clock.
    fn now_ns(&self) -> u64;
    /// Starts work-groups `first_wg .. first_wg + count` on `device` as `chunk_id`.
    /// `Err(reason)`: the enqueue failed; the scheduler reassigns the work.
    fn enqueue(
        &mut self,
        device: usize,
        chunk_id: ChunkId,
        first_wg: u64,
        count: u64,
    ) -> Result<(), String>;
    /// Starts several chunks (`(device, chunk_id, first_wg, count)`, each on a device of its
    /// own) at once; one result per chunk, in order. The default starts them one after the
    /// other ([`Self::enqueue`]); balance mode may issue them from a thread per device.
    fn enqueue_many(&mut self, chunks: &[(usize, ChunkId, u64, u64)]) -> Vec<Result<(), String>> {
        enqueue_each(self, chunks)
    }
    /// The scheduler gave up on `chunk_id` (a straggler): its output must never be merged.
    fn abandon(&mut self, device: usize, chunk_id: ChunkId);
    /// Blocks until a chunk completes or until `poll_at_ns` (when given; otherwise the
    /// device's own longest wait). `Err(reason)`: the launch must be given up (a device hangs,
    /// the simulation ran too long).
    fn wait(&mut self, poll_at_ns: Option<u64>) -> Result<Wake, String>;
    /// A chunk that was not abandoned completed without error; called before the scheduler
    /// hears of it (balance mode starts reading its output back here).
    fn completed(&mut self, _c: &Completion) {}
    /// An abandoned chunk completed (its device is free of it).
    fn abandoned_completed(&mut self, _c: &Completion) {}
    /// Whether a device whose abandoned chunk completed may take work again in this launch
    /// (not when that chunk's output changed data later chunks on the device read).
    fn readmit_after_abandon(&self) -> bool {
        true
    }
}

/// Runs one launch's chunks to the end: performs `scheduler`'s actions on `devices` and
/// reports every completion, failure and poll back to it.
///
/// Errors: a scheduler call refuses a report (a protocol violation), or
/// [`ChunkDevices::wait`] gives up.
pub fn drive(
    scheduler: &mut ChunkScheduler,
    devices: &mut impl ChunkDevices,
) -> Result<DriveEnd, String> {
    let actions = scheduler.start(devices.now_ns());
    // `run_loop` stops before a wait (`None`) only when asked to
    Ok(run_loop(scheduler, devices, actions, false)?.unwrap_or(DriveEnd::Idle))
}

/// [`drive`] up to its first wait: performs the scheduler's first actions (every chunk a
/// static partition gives) and returns `None` when the launch must now wait for
/// completions ([`resume`] goes on from there), or how it ended when it needs no wait.
///
/// Errors: as [`drive`].
pub fn issue(
    scheduler: &mut ChunkScheduler,
    devices: &mut impl ChunkDevices,
) -> Result<Option<DriveEnd>, String> {
    let actions = scheduler.start(devices.now_ns());
    run_loop(scheduler, devices, actions, true)
}

/// Goes on with a launch that [`issue`] left waiting: [`drive`]'s loop from its first wait.
///
/// Errors: as [`drive`].
pub fn resume(
    scheduler: &mut ChunkScheduler,
    devices: &mut impl ChunkDevices,
) -> Result<DriveEnd, String> {
    // `run_loop` stops before a wait (`None`) only when asked to
    Ok(run_loop(scheduler, devices, Vec::new(), false)?.unwrap_or(DriveEnd::Idle))
}

/// [`drive`]'s loop from `actions`; with `stop_at_wait`, returns `None` where it would first
/// wait for a device.
fn run_loop(
    scheduler: &mut ChunkScheduler,
    devices: &mut impl ChunkDevices,
    mut actions: Vec<Action>,
    stop_at_wait: bool,
) -> Result<Option<DriveEnd>, String> {
    let mut abandoned: HashSet<ChunkId> = HashSet::new();
    loop {
        // in order; an enqueue failure's actions are performed in the same pass
        let mut i = 0;
        while i < actions.len() {
            match actions[i] {
                Action::Assign { .. } => {
                    // the assignments from here on, each to a device not yet among them,
                    // start together
                    let batch = assignment_run(&actions[i..]);
                    let results = devices.enqueue_many(&batch);
                    for (&(device, chunk_id, _, _), r) in batch.iter().zip(results) {
                        if r.is_err() {
                            let now = devices.now_ns();
                            let more = scheduler.on_chunk_failed(device, chunk_id, now)?;
                            actions.extend(more);
                        }
                    }
                    i += batch.len();
                    continue;
                }
                Action::Abandon { device, chunk_id } => {
                    abandoned.insert(chunk_id);
                    devices.abandon(device, chunk_id);
                }
            }
            i += 1;
        }
        actions.clear();
        match scheduler.state() {
            SchedState::Complete => return Ok(Some(DriveEnd::Complete)),
            SchedState::Stuck => return Ok(Some(DriveEnd::Stuck)),
            SchedState::Running if stop_at_wait => return Ok(None),
            SchedState::Running => {}
        }
        actions = match devices.wait(scheduler.next_poll_ns())? {
            Wake::Idle => return Ok(Some(DriveEnd::Idle)),
            Wake::Poll(now) => scheduler.poll(now),
            Wake::Completed(c) => report(scheduler, devices, &abandoned, &c)?,
        };
    }
}

/// [`ChunkDevices::enqueue`] on each of `chunks` (`(device, chunk_id, first_wg, count)`), one
/// after the other; one result per chunk.
pub fn enqueue_each<D: ChunkDevices + ?Sized>(
    devices: &mut D,
    chunks: &[(usize, ChunkId, u64, u64)],
) -> Vec<Result<(), String>> {
    chunks
        .iter()
        .map(|&(device, id, first_wg, count)| devices.enqueue(device, id, first_wg, count))
        .collect()
}

/// The leading run of `actions` that assigns chunks, each to a device not assigned before
/// in the run: `(device, chunk_id, first_wg, count)` (at least one when `actions` starts with
/// an assignment).
fn assignment_run(actions: &[Action]) -> Vec<(usize, ChunkId, u64, u64)> {
    let mut run: Vec<(usize, ChunkId, u64, u64)> = Vec::new();
    for a in actions {
        match *a {
            Action::Assign {
                device,
                chunk_id,
                first_wg,
                count,
            } if !run.iter().any(|r| r.0 == device) => {
                run.push((device, chunk_id, first_wg, count))
            }
            _ => break,
        }
    }
    run
}

/// The scheduler's actions for one completion (one at a time: the actions for it, an
/// abandonment say, are performed before the next completion is looked at).
fn report(
    scheduler: &mut ChunkScheduler,
    devices: &mut impl ChunkDevices,
    abandoned: &HashSet<ChunkId>,
    c: &Completion,
) -> Result<Vec<Action>, String> {
    let was_abandoned = abandoned.contains(&c.chunk_id);
    if was_abandoned {
        devices.abandoned_completed(c);
    }
    if !c.ok {
        if was_abandoned {
            return Ok(Vec::new());
        }
        return scheduler.on_chunk_failed(c.device, c.chunk_id, c.at_ns);
    }
    if was_abandoned && !devices.readmit_after_abandon() {
        return Ok(Vec::new());
    }
    if !was_abandoned {
        devices.completed(c);
    }
    scheduler.on_chunk_done(c.device, c.chunk_id, c.at_ns, c.elapsed_ns)
}
