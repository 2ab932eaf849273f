//! The [`Launch`] value: one kernel launch as the application made it, read once from the raw
//! arguments of `clEnqueueNDRangeKernel` or `clEnqueueTask` and passed down to every mode
//! (in the spirit of Mesa rusticl's `api/` layer, which turns raw pointers into typed values
//! once; rusticl's `enqueue_task` is `enqueue_ndrange_kernel(1, …)`, and so is ours).

use opencl_sys::*;

/// Which entry point the application called; forwarding calls the same one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entry {
    /// `clEnqueueNDRangeKernel`.
    NDRange,
    /// `clEnqueueTask`: a one-dimensional NDRange of one work-item in one work-group.
    Task,
}

/// One kernel launch: queue, kernel, NDRange and wait list, as the application passed them.
///
/// Sizes are in work-items; dimensions past `work_dim` hold 1 (global, local) and 0 (offset).
#[derive(Debug, Clone, Copy)]
pub struct Launch {
    /// The entry point the app called.
    pub entry: Entry,
    /// The application's queue.
    pub queue: cl_command_queue,
    /// The application's kernel.
    pub kernel: cl_kernel,
    /// NDRange dimensions, 1 to 3.
    pub work_dim: u32,
    /// Global size per dimension, work-items.
    pub global: [usize; 3],
    /// Global offset per dimension, work-items; `None` when the app passed no offset.
    pub offset: Option<[usize; 3]>,
    /// Local (work-group) size per dimension, work-items; `None`: the driver chooses.
    pub local: Option<[usize; 3]>,
    /// The app's wait list exactly as passed (forwarded untouched, so the driver judges it).
    n_wait: cl_uint,
    wait: *const cl_event,
}

// SAFETY: OpenCL handles are thread-safe; the wait-list pointer is only read on the app's
// thread during the hook.
unsafe impl Send for Launch {}

/// Reads `n` entries of `p` into a 3-vector padded with `pad`.
///
/// # Safety
/// `p` is null or valid for `n` reads.
unsafe fn three(p: *const usize, n: u32, pad: usize) -> Option<[usize; 3]> {
    if p.is_null() {
        return None;
    }
    let mut v = [pad; 3];
    for (d, x) in v.iter_mut().enumerate().take(n as usize) {
        *x = *p.add(d);
    }
    Some(v)
}

impl Launch {
    /// The launch `clEnqueueNDRangeKernel` received; `None` when `work_dim` is outside 1..=3
    /// or the global size is null (the caller then forwards untouched and the driver answers).
    ///
    /// # Safety
    /// The pointers are those the app passed (valid for `work_dim` entries when not null).
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn ndrange(
        queue: cl_command_queue,
        kernel: cl_kernel,
        work_dim: cl_uint,
        offset: *const usize,
        global: *const usize,
        local: *const usize,
        n_wait: cl_uint,
        wait: *const cl_event,
    ) -> Option<Launch> {
        if !(1..=3).contains(&work_dim) {
            return None;
        }
        Some(Launch {
            entry: Entry::NDRange,
            queue,
            kernel,
            work_dim,
            global: three(global, work_dim, 1)?,
            offset: three(offset, work_dim, 0),
            local: three(local, work_dim, 1),
            n_wait,
            wait,
        })
    }

    /// The launch `clEnqueueTask` received: one work-item in one work-group.
    pub fn task(
        queue: cl_command_queue,
        kernel: cl_kernel,
        n_wait: cl_uint,
        wait: *const cl_event,
    ) -> Launch {
        Launch {
            entry: Entry::Task,
            queue,
            kernel,
            work_dim: 1,
            global: [1; 3],
            offset: None,
            local: Some([1; 3]),
            n_wait,
            wait,
        }
    }

    /// The app's wait list; empty when it passed none (or an invalid pair, which the driver
    /// rejects when the launch is forwarded).
    pub fn wait_list(&self) -> &[cl_event] {
        if self.wait.is_null() || self.n_wait == 0 {
            &[]
        } else {
            // SAFETY: the app's wait list, valid for `n_wait` entries during the hook.
            unsafe { std::slice::from_raw_parts(self.wait, self.n_wait as usize) }
        }
    }

    /// Work-groups in the NDRange; `None` when the driver chooses the local size.
    pub fn work_groups(&self) -> Option<u64> {
        let l = self.local?;
        Some(
            (0..self.work_dim as usize)
                .map(|d| (self.global[d] / l[d].max(1)) as u64)
                .product(),
        )
    }

    /// The work-groups `first .. first + count` along dimension `dim` of this launch run with
    /// local size `local`, as a launch of their own with a global offset (the same queue,
    /// kernel and wait list): a probe chunk or the rest after it (`super::balance`). The
    /// work-items keep their global ids; only kernels without NDRange queries see no
    /// difference.
    pub fn sub_range(&self, dim: usize, first: usize, count: usize, local: [usize; 3]) -> Launch {
        let mut offset = self.offset.unwrap_or([0; 3]);
        let mut global = self.global;
        offset[dim] += first * local[dim];
        global[dim] = count * local[dim];
        Launch {
            offset: Some(offset),
            global,
            local: Some(local),
            ..*self
        }
    }

    /// Global size, offset or local size of the used dimensions, as the log record holds them.
    pub fn dims(v: &[usize; 3], work_dim: u32) -> Vec<u64> {
        v[..work_dim as usize].iter().map(|x| *x as u64).collect()
    }

    /// Enqueues the launch on the real driver through the entry point the app called, with
    /// `wait` instead of the app's wait list when given, filling `event` (may be null).
    /// Returns the driver's code.
    ///
    /// # Safety
    /// `wait` events are valid; `event` is null or writable.
    pub unsafe fn forward(&self, wait: Option<&[cl_event]>, event: *mut cl_event) -> cl_int {
        let Some(t) = crate::loader::table() else {
            return crate::loader::UNAVAILABLE;
        };
        let (n, w) = match wait {
            Some(w) if !w.is_empty() => (w.len() as cl_uint, w.as_ptr()),
            Some(_) => (0, std::ptr::null()),
            None => (self.n_wait, self.wait),
        };
        match self.entry {
            Entry::Task => match t.clEnqueueTask {
                Some(f) => f(self.queue, self.kernel, n, w, event),
                None => {
                    crate::loader::unavailable("clEnqueueTask");
                    crate::loader::UNAVAILABLE
                }
            },
            Entry::NDRange => match t.clEnqueueNDRangeKernel {
                Some(f) => {
                    let ptr = |v: &Option<[usize; 3]>| {
                        v.as_ref().map_or(std::ptr::null(), |a| a.as_ptr())
                    };
                    f(
                        self.queue,
                        self.kernel,
                        self.work_dim,
                        ptr(&self.offset),
                        self.global.as_ptr(),
                        ptr(&self.local),
                        n,
                        w,
                        event,
                    )
                }
                None => {
                    crate::loader::unavailable("clEnqueueNDRangeKernel");
                    crate::loader::UNAVAILABLE
                }
            },
        }
    }
}
