//! Parallel issue of one launch's driver calls over its devices (DESIGN.md §7, "Issue"):
//! the halo reads grouped by the device they read from, the halo writes and the chunk
//! enqueues grouped by the device they go to, each group on a thread of a small pool owned
//! by the balance worker, one thread per device at most.
//!
//! Why: on NVIDIA every `clEnqueue*` costs the calling thread 25-45 µs
//! (results/session22-2026-11-28, `CLPRISM_DEBUG` enqueue lines), and a split launch of a
//! stencil issues a read and a write per halo and one kernel per device. On 4 H200s the first
//! chunk of a steady fdtd-2d or jacobi-2d launch was enqueued 414-444 µs into the launch and
//! the last 130 µs after it, while a chunk ran 246-271 µs: the devices were busy a quarter
//! of each launch's wall time (results/session23-2026-11-28/timeline.md). Each device has
//! its own context and queues, and OpenCL 1.1+ calls are thread-safe (a kernel object's
//! arguments aside: each device enqueues its own kernel object).
//!
//! `CLPRISM_BALANCE_ISSUE=parallel` turns it on, `serial` issues every call from the launch
//! thread in order, `auto` (the default) issues in parallel for a launch over three GPUs or
//! more ([`IssuePool::wide`]). Before launches were issued ahead, parallel issue was within
//! 6 % of serial on 4 H200s: the driver serialises calls on different contexts
//! (results/session24-2026-11-28, `bench/nv_issue.c`: four enqueues, 19 µs from one thread,
//! 45 µs from four at once). With launches issued ahead the launch thread became the
//! bottleneck on 4 H200s, and parallel issue took fdtd-2d 8.27-8.31 s → 7.37-7.51 s; on 2
//! H200s no difference (results/session27-2026-11-28, `gpu-g.sh`, `gpu-h.sh`).

use rayon::prelude::*;

/// The worker's issue threads: made at the first parallel issue, one per device of the
/// widest launch so far (at most [`MAX_THREADS`]).
#[derive(Default)]
pub(super) struct IssuePool {
    pool: Option<rayon::ThreadPool>,
    threads: usize,
    /// The launch being issued spans three GPUs or more (set per launch by
    /// [`WorkerState::front`](super::WorkerState)): `CLPRISM_BALANCE_ISSUE=auto` issues its
    /// calls in parallel.
    pub wide: bool,
}

/// Whether `tasks` groups of driver calls are issued in parallel (`CLPRISM_BALANCE_ISSUE`),
/// for a launch over three GPUs or more when `wide`.
pub(super) fn parallel(tasks: usize, wide: bool) -> bool {
    tasks >= 2 && crate::config::get().balance_issue_parallel.unwrap_or(wide)
}

/// The most issue threads the worker keeps.
const MAX_THREADS: usize = 16;

impl IssuePool {
    /// Runs `f` on every task, the tasks in parallel when parallel issue is on
    /// (`CLPRISM_BALANCE_ISSUE`) and there are at least two, else in order on this thread.
    /// Results come back in the tasks' order. A pool that cannot be made issues in order.
    pub fn run<T: Send, R: Send>(
        &mut self,
        tasks: Vec<T>,
        f: impl Fn(T) -> R + Sync + Send,
    ) -> Vec<R> {
        if !parallel(tasks.len(), self.wide) {
            return tasks.into_iter().map(f).collect();
        }
        match self.pool(tasks.len()) {
            Some(pool) => pool.install(|| tasks.into_par_iter().with_max_len(1).map(&f).collect()),
            None => tasks.into_iter().map(f).collect(),
        }
    }

    /// [`Self::run`] over groups of items: `f` on each item of a group in order, the groups
    /// in parallel; every item with its result, in order. `f`'s results may hold OpenCL
    /// handles (they travel back as [`Sendable`]).
    pub fn run_grouped<T: Send, R>(
        &mut self,
        groups: Vec<Vec<T>>,
        f: impl Fn(&mut T) -> R + Sync + Send,
    ) -> Vec<(T, R)> {
        self.run(groups, |group| {
            group
                .into_iter()
                .map(|mut t| {
                    let r = f(&mut t);
                    (t, Sendable(r))
                })
                .collect::<Vec<_>>()
        })
        .into_iter()
        .flatten()
        .map(|(t, Sendable(r))| (t, r))
        .collect()
    }

    /// The pool, with at least `n` threads (up to [`MAX_THREADS`]).
    fn pool(&mut self, n: usize) -> Option<&rayon::ThreadPool> {
        let n = n.min(MAX_THREADS);
        if self.pool.is_none() || self.threads < n {
            let built = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .thread_name(|i| format!("clprism-issue-{i}"))
                .build();
            match built {
                Ok(p) => {
                    crate::config::debug(|| format!("balance: {n} issue threads"));
                    self.pool = Some(p);
                    self.threads = n;
                }
                Err(e) => {
                    crate::config::debug(|| format!("balance: no issue threads ({e})"));
                    return None;
                }
            }
        }
        self.pool.as_ref()
    }
}

/// OpenCL handles (queues, buffers, kernels, events) carried to an issue thread.
///
/// # Safety
/// OpenCL 1.1+ makes every API call thread-safe except `clSetKernelArg` and the enqueue of a
/// kernel object whose arguments another thread sets at once; clprism sets a kernel's
/// arguments before its launch's chunks are issued, and each device's chunks use that
/// device's own kernel object.
pub(super) struct Sendable<T>(pub T);

// SAFETY: see the type's doc.
unsafe impl<T> Send for Sendable<T> {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_tasks_order_in_either_mode() {
        let mut pool = IssuePool::default();
        let tasks: Vec<u64> = (0..8).collect();
        let serial: Vec<u64> = pool.run(tasks.clone(), |x| x * x);
        assert_eq!(serial, (0..8).map(|x| x * x).collect::<Vec<_>>());
        // the pool itself, as parallel issue runs it
        let p = pool.pool(4).expect("a pool of 4 threads");
        let names: Vec<String> = p.install(|| {
            (0..4)
                .into_par_iter()
                .with_max_len(1)
                .map(|_| std::thread::current().name().unwrap_or("").to_string())
                .collect()
        });
        assert!(
            names.iter().all(|n| n.starts_with("clprism-issue-")),
            "{names:?}"
        );
    }
}
