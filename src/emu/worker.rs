//! Background emulation for project mode (issue 3 item 5, DESIGN.md §5 "Safety"): launches
//! are never delayed by the emulator. The interposer submits a job (the buffer contents it
//! snapshotted before the launch) and goes on; a worker thread emulates it and hands the
//! outcome to the job's callback. Results are kept per (program, kernel, launch shape), so a
//! repeated launch can reuse them (and say so) without snapshotting anything.
//!
//! The queue is bounded: when it is full, [`EmuWorker::submit`] refuses the job at once
//! instead of blocking the application.

use super::{emulate, ArgValue, EmuConfig, EmuError, LaunchShape, Module, WorkGroupStats};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// What identifies reusable statistics: the program (a hash of its source or IL, chosen by
/// the caller), the kernel name, the NDRange and the emulated work-group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EmuKey {
    /// Caller's identifier of the program (e.g. a SHA-256 of its source and options).
    pub program: String,
    /// Kernel name.
    pub kernel: String,
    /// Launch shape.
    pub shape: LaunchShape,
    /// Emulated work-group.
    pub group: [u64; 3],
}

/// Result of one job.
#[derive(Debug, Clone)]
pub struct EmuOutcome {
    /// Statistics, or why there are none.
    pub result: Result<WorkGroupStats, EmuError>,
    /// True when the result was taken from an earlier launch of the same key.
    pub reused: bool,
}

/// One emulation request.
pub struct EmuJob {
    /// Reuse key.
    pub key: EmuKey,
    /// The loaded module (shared with other jobs of the program).
    pub module: Arc<Module>,
    /// Argument values as they were before the launch.
    pub args: Vec<ArgValue>,
    /// Budgets and warp width.
    pub cfg: EmuConfig,
    /// Called on the worker thread with the outcome.
    pub done: Box<dyn FnOnce(EmuOutcome) + Send>,
}

/// A worker thread with a bounded job queue and a result cache.
pub struct EmuWorker {
    tx: Option<crossbeam_channel::Sender<EmuJob>>,
    cache: Arc<Mutex<HashMap<EmuKey, Result<WorkGroupStats, EmuError>>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EmuWorker {
    /// Starts the worker thread with a queue of `capacity` jobs.
    /// Errors: the thread cannot be spawned (reported as [`EmuError::Internal`]).
    pub fn start(capacity: usize) -> Result<EmuWorker, EmuError> {
        let (tx, rx) = crossbeam_channel::bounded::<EmuJob>(capacity.max(1));
        let cache: Arc<Mutex<HashMap<EmuKey, Result<WorkGroupStats, EmuError>>>> = Arc::default();
        let c2 = cache.clone();
        let thread = std::thread::Builder::new()
            .name("clprism-emu".into())
            .spawn(move || {
                for mut job in rx {
                    let hit = c2.lock().ok().and_then(|c| c.get(&job.key).cloned());
                    let outcome = match hit {
                        Some(r) => EmuOutcome {
                            result: r,
                            reused: true,
                        },
                        None => {
                            let r = emulate(
                                &job.module,
                                &job.key.kernel,
                                &job.key.shape,
                                job.key.group,
                                &mut job.args,
                                &job.cfg,
                            );
                            if let Ok(mut c) = c2.lock() {
                                c.insert(job.key.clone(), r.clone());
                            }
                            EmuOutcome {
                                result: r,
                                reused: false,
                            }
                        }
                    };
                    let done = job.done;
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
                        done(outcome)
                    }));
                }
            })
            .map_err(|e| EmuError::Internal(format!("cannot start the emulation thread: {e}")))?;
        Ok(EmuWorker {
            tx: Some(tx),
            cache,
            thread: Some(thread),
        })
    }

    /// An earlier result for `key`, if any (check this before snapshotting buffers).
    pub fn lookup(&self, key: &EmuKey) -> Option<Result<WorkGroupStats, EmuError>> {
        self.cache.lock().ok().and_then(|c| c.get(key).cloned())
    }

    /// Queues a job without blocking. Returns the job back when the queue is full or the
    /// worker has stopped.
    pub fn submit(&self, job: EmuJob) -> Result<(), Box<EmuJob>> {
        match &self.tx {
            Some(tx) => tx.try_send(job).map_err(|e| Box::new(e.into_inner())),
            None => Err(Box::new(job)),
        }
    }

    /// Stops accepting jobs, finishes the queued ones and joins the thread.
    pub fn shutdown(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for EmuWorker {
    fn drop(&mut self) {
        self.shutdown();
    }
}
