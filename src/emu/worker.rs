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

/// Work done on the worker thread before emulating a [`DeferredJob`]: compile/load the
/// module and read the arguments (e.g. buffer snapshots whose device copies may still be
/// running). It is not called when the key already has a result.
pub type Prepare = Box<dyn FnOnce() -> Result<(Arc<Module>, Vec<ArgValue>), EmuError> + Send>;

/// An emulation request whose module and arguments are produced on the worker thread
/// (project mode: compilation and snapshot read-back stay off the launch path).
pub struct DeferredJob {
    /// Reuse key.
    pub key: EmuKey,
    /// Produces the module and the argument values; errors that depend only on the program
    /// ([`EmuError::NoToolchain`], [`EmuError::Frontend`], [`EmuError::Malformed`],
    /// [`EmuError::Unsupported`]) are cached for the key, others (a failed snapshot read)
    /// are not.
    pub prepare: Prepare,
    /// Budgets and warp width.
    pub cfg: EmuConfig,
    /// Called on the worker thread with the outcome.
    pub done: Box<dyn FnOnce(EmuOutcome) + Send>,
}

enum Job {
    Ready(EmuJob),
    Deferred(DeferredJob),
}

type Cache = Arc<Mutex<HashMap<EmuKey, Result<WorkGroupStats, EmuError>>>>;

fn cacheable(e: &EmuError) -> bool {
    matches!(
        e,
        EmuError::NoToolchain(_)
            | EmuError::Frontend(_)
            | EmuError::Malformed(_)
            | EmuError::Unsupported(_)
    )
}

fn run_job(c2: &Cache, job: Job) {
    let (key, cfg, done, input) = match job {
        Job::Ready(j) => (j.key, j.cfg, j.done, Ok(Ok((j.module, j.args)))),
        Job::Deferred(j) => (j.key, j.cfg, j.done, Err(j.prepare)),
    };
    let hit = c2.lock().ok().and_then(|c| c.get(&key).cloned());
    let outcome = match hit {
        Some(r) => EmuOutcome {
            result: r,
            reused: true,
        },
        None => {
            let prepared = match input {
                Ok(r) => r,
                Err(prepare) => {
                    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(prepare)) {
                        Ok(r) => r,
                        Err(_) => Err(EmuError::Internal("panic while preparing".into())),
                    }
                }
            };
            let (r, cache) = match prepared {
                Ok((module, mut args)) => (
                    emulate(&module, &key.kernel, &key.shape, key.group, &mut args, &cfg),
                    true,
                ),
                Err(e) => {
                    let c = cacheable(&e);
                    (Err(e), c)
                }
            };
            if cache {
                if let Ok(mut c) = c2.lock() {
                    c.insert(key.clone(), r.clone());
                }
            }
            EmuOutcome {
                result: r,
                reused: false,
            }
        }
    };
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || done(outcome)));
}

/// A worker thread with a bounded job queue and a result cache.
pub struct EmuWorker {
    tx: Option<crossbeam_channel::Sender<Job>>,
    cache: Arc<Mutex<HashMap<EmuKey, Result<WorkGroupStats, EmuError>>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl EmuWorker {
    /// Starts the worker thread with a queue of `capacity` jobs.
    /// Errors: the thread cannot be spawned (reported as [`EmuError::Internal`]).
    pub fn start(capacity: usize) -> Result<EmuWorker, EmuError> {
        let (tx, rx) = crossbeam_channel::bounded::<Job>(capacity.max(1));
        let cache: Cache = Arc::default();
        let c2 = cache.clone();
        let thread = std::thread::Builder::new()
            .name("clprism-emu".into())
            .spawn(move || {
                for job in rx {
                    run_job(&c2, job);
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

    /// True when `key` has a result (cheaper than [`EmuWorker::lookup`]: nothing is cloned).
    pub fn contains(&self, key: &EmuKey) -> bool {
        self.cache
            .lock()
            .map(|c| c.contains_key(key))
            .unwrap_or(false)
    }

    /// Queues a job without blocking. Returns the job back when the queue is full or the
    /// worker has stopped.
    pub fn submit(&self, job: EmuJob) -> Result<(), Box<EmuJob>> {
        match &self.tx {
            Some(tx) => tx
                .try_send(Job::Ready(job))
                .map_err(|e| match e.into_inner() {
                    Job::Ready(j) => Box::new(j),
                    Job::Deferred(_) => unreachable!("sent a ready job"),
                }),
            None => Err(Box::new(job)),
        }
    }

    /// Queues a deferred job (module and arguments produced on the worker) without
    /// blocking. Returns the job back when the queue is full or the worker has stopped.
    pub fn submit_deferred(&self, job: DeferredJob) -> Result<(), Box<DeferredJob>> {
        match &self.tx {
            Some(tx) => tx
                .try_send(Job::Deferred(job))
                .map_err(|e| match e.into_inner() {
                    Job::Deferred(j) => Box::new(j),
                    Job::Ready(_) => unreachable!("sent a deferred job"),
                }),
            None => Err(Box::new(job)),
        }
    }

    /// Jobs waiting in the queue (not counting the one being run).
    pub fn queued(&self) -> usize {
        self.tx.as_ref().map_or(0, |t| t.len())
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
