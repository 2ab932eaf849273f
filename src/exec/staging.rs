//! Host staging for balance mode's transfers between the app's buffers and the other
//! devices' replicas: the snapshot of an input that other devices need, and the bytes their
//! chunks wrote on the way back into the app's buffer (DESIGN.md §7, "Merging").
//!
//! Ordinary heap memory is pageable: the driver copies it through its own bounce buffer, and
//! a freshly allocated area also page-faults on first touch. On 4×H200 a 512 MiB snapshot
//! into fresh heap memory took 330–351 ms (results/gpu-2026-11-22d), about 1.5 GB/s. Staging
//! therefore lives in driver-allocated host memory (`CL_MEM_ALLOC_HOST_PTR`, mapped once),
//! which NVIDIA's driver page-locks so DMA reaches it directly, and it is kept per app buffer
//! across launches: page-locking is slow, and later launches reuse the same areas.
//!
//! The pinned total is capped by `CLPRISM_PINNED_MAX` (page-locked memory is taken from what
//! the OS can page); past the cap, or when the driver refuses, staging falls back to heap
//! memory and the launch proceeds as before.

use super::cl::{self, ClResult};
use crate::registry::tables::Key;
use opencl_sys::*;
use rustc_hash::FxHashMap;
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of pinned staging alive now (pooled or in use).
static PINNED_BYTES: AtomicU64 = AtomicU64::new(0);

/// A host area of `len` bytes: mapped driver memory (pinned) or heap memory.
pub(super) struct HostBytes(Inner);

enum Inner {
    Pinned {
        mem: cl_mem,
        queue: cl_command_queue,
        ptr: *mut u8,
        len: usize,
    },
    Heap(Vec<u8>),
}

impl HostBytes {
    /// Zero-filled heap memory.
    pub fn heap(len: usize) -> HostBytes {
        HostBytes(Inner::Heap(vec![0u8; len]))
    }

    /// `len` bytes of driver-allocated host memory of `ctx`, mapped on `queue` (a clprism
    /// queue of `ctx` that outlives the area). Its contents are undefined until written.
    ///
    /// Errors: the driver's, from `clCreateBuffer` or `clEnqueueMapBuffer`.
    ///
    /// # Safety
    /// `ctx` and `queue` are valid, `queue` belongs to `ctx` and stays alive while this does.
    pub unsafe fn pinned(ctx: cl_context, queue: cl_command_queue, len: usize) -> ClResult<Self> {
        let mem = cl::create_host_buffer(ctx, len)?;
        match cl::map(queue, mem, len) {
            Ok(ptr) => {
                PINNED_BYTES.fetch_add(len as u64, Ordering::Relaxed);
                Ok(HostBytes(Inner::Pinned {
                    mem,
                    queue,
                    ptr,
                    len,
                }))
            }
            Err(e) => {
                cl::release_mem(mem);
                Err(e)
            }
        }
    }

    /// True for driver-allocated (pinned) memory.
    pub fn is_pinned(&self) -> bool {
        matches!(self.0, Inner::Pinned { .. })
    }
}

impl std::ops::Deref for HostBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.0 {
            // SAFETY: a live mapping of `len` bytes, owned by this value.
            Inner::Pinned { ptr, len, .. } => unsafe { std::slice::from_raw_parts(*ptr, *len) },
            Inner::Heap(v) => v,
        }
    }
}

impl std::ops::DerefMut for HostBytes {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &mut self.0 {
            // SAFETY: as above; `&mut self` makes the borrow unique.
            Inner::Pinned { ptr, len, .. } => unsafe { std::slice::from_raw_parts_mut(*ptr, *len) },
            Inner::Heap(v) => v,
        }
    }
}

impl Drop for HostBytes {
    fn drop(&mut self) {
        if let Inner::Pinned {
            mem,
            queue,
            ptr,
            len,
        } = self.0
        {
            // SAFETY: clprism's own mapped buffer; no transfer uses it any more (callers wait
            // for their transfers before they give an area back or drop it).
            unsafe {
                let _ = cl::unmap(queue, mem, ptr);
                cl::release_mem(mem);
            }
            PINNED_BYTES.fetch_sub(len as u64, Ordering::Relaxed);
        }
    }
}

// SAFETY: the mapping is plain host memory owned by this value; OpenCL handles are
// thread-safe.
unsafe impl Send for HostBytes {}

/// What a staging area holds for its app buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum Role {
    /// The pre-launch contents, uploaded to the other devices.
    Snapshot,
    /// Bytes the other devices' chunks wrote, on their way into the app's buffer.
    ReadBack,
    /// One participating device's whole replica, read back for diff-merge (its index
    /// among the launch's devices).
    DiffCopy(usize),
}

/// Staging areas between launches, per (app buffer, role).
#[derive(Default)]
pub(super) struct StagingPool {
    idle: FxHashMap<(Key, Role), HostBytes>,
    /// Why pinned staging is off for this process (the first allocation failure).
    disabled: Option<String>,
    /// Whether the last [`StagingPool::take`] returned a pooled pinned area.
    reused: bool,
}

impl StagingPool {
    /// A staging area of `len` bytes for `mem`: the pooled one when its size fits, else a new
    /// pinned area of `ctx` (mapped on `queue`) while the pinned total stays under
    /// `CLPRISM_PINNED_MAX`, else heap memory. Contents are undefined.
    ///
    /// # Safety
    /// As [`HostBytes::pinned`].
    pub unsafe fn take(
        &mut self,
        mem: Key,
        role: Role,
        len: usize,
        ctx: cl_context,
        queue: cl_command_queue,
    ) -> HostBytes {
        self.reused = false;
        if let Some(h) = self.idle.remove(&(mem, role)) {
            if h.len() == len {
                self.reused = true;
                return h;
            }
        }
        let cap = crate::config::get().pinned_max;
        if self.disabled.is_none()
            && len > 0
            && PINNED_BYTES.load(Ordering::Relaxed) + len as u64 <= cap
        {
            match HostBytes::pinned(ctx, queue, len) {
                Ok(h) => return h,
                Err(e) => {
                    let why = format!("pinned host staging off, using heap memory: {e}");
                    crate::config::warn_once_per(&format!("balance: {why}"), "pinned-staging");
                    self.disabled = Some(why);
                }
            }
        }
        HostBytes::heap(len)
    }

    /// True when the last [`StagingPool::take`] handed out a pooled pinned area (whose
    /// pages the driver has already locked, so a transfer into it runs at full speed).
    pub fn last_reused(&self) -> bool {
        self.reused
    }

    /// Keeps `h` for `mem`'s next launch (pinned areas only; heap memory is freed).
    pub fn give(&mut self, mem: Key, role: Role, h: HostBytes) {
        if h.is_pinned() {
            self.idle.insert((mem, role), h);
        }
    }

    /// Frees the areas of a released app buffer.
    pub fn forget(&mut self, mem: Key) {
        self.idle.retain(|k, _| k.0 != mem);
    }

    /// Bytes of pinned staging alive in the process (the `schedule` record's
    /// `pinned_staging_bytes`).
    pub fn pinned_bytes() -> u64 {
        PINNED_BYTES.load(Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heap_areas_are_zeroed_and_not_pooled() {
        let mut pool = StagingPool::default();
        let mut h = HostBytes::heap(16);
        assert!(!h.is_pinned());
        assert_eq!(&h[..], &[0u8; 16]);
        h[3] = 7;
        assert_eq!(h[3], 7);
        pool.give(1, Role::Snapshot, h);
        assert!(pool.idle.is_empty());
    }
}
