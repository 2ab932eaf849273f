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

use super::cl::{self, ClError, ClResult};
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

    /// Whether a new pinned area of `len` bytes stays under `CLPRISM_PINNED_MAX` (and pinned
    /// staging was not turned off by a failure).
    pub fn may_pin(&self, len: usize) -> bool {
        self.disabled.is_none()
            && len > 0
            && PINNED_BYTES.load(Ordering::Relaxed) + len as u64 <= crate::config::get().pinned_max
    }

    /// The pooled area of `mem` in `role` when its size is `len`.
    pub fn take_idle(&mut self, mem: Key, role: Role, len: usize) -> Option<HostBytes> {
        match self.idle.remove(&(mem, role)) {
            Some(h) if h.len() == len => Some(h),
            _ => None,
        }
    }

    /// Whether a pooled area of `len` bytes waits for `mem` in `role`.
    pub fn has_idle(&self, mem: Key, role: Role, len: usize) -> bool {
        self.idle.get(&(mem, role)).is_some_and(|h| h.len() == len)
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

/// The read-back areas of a launch (one per written buffer with a footprint, in which the
/// chunks' written ranges land), some still being allocated on threads of their own: a fresh
/// pinned area costs 620 ms per GiB on an H200 host (results/session18-2026-11-27/nv-paths.txt),
/// which the app's thread used to pay before the first chunk was enqueued. The allocations now
/// run while the chunks do; a chunk that completes before its buffer's area is ready is read
/// back at the merge instead of early. Dropping this waits for the allocations in flight.
#[derive(Default)]
pub(super) struct EarlyAreas {
    ready: FxHashMap<Key, HostBytes>,
    pending: Vec<(Key, std::thread::JoinHandle<ClResult<HostBytes>>)>,
}

impl EarlyAreas {
    /// Areas given from the pool, ready at once.
    pub fn insert_ready(&mut self, mem: Key, h: HostBytes) {
        self.ready.insert(mem, h);
    }

    /// Starts allocating a pinned area of `len` bytes of `ctx` for `mem` on a thread of its
    /// own (mapped on `queue`).
    ///
    /// # Safety
    /// As [`HostBytes::pinned`].
    pub unsafe fn allocate(
        &mut self,
        mem: Key,
        len: usize,
        ctx: cl_context,
        queue: cl_command_queue,
    ) {
        let (c, q) = (ctx as usize, queue as usize);
        let h = std::thread::Builder::new()
            .name("clprism-pin".into())
            // SAFETY: the caller's guarantees; the handles are thread-safe.
            .spawn(move || unsafe {
                HostBytes::pinned(c as cl_context, q as cl_command_queue, len)
            });
        if let Ok(h) = h {
            self.pending.push((mem, h));
        }
    }

    /// Every area, once every allocation has finished (those that have join the ready ones);
    /// `None` while one still runs. Early reads go to all of a chunk's written buffers or to
    /// none: a chunk counts as read early for every buffer (`readback::read_early`).
    pub fn all_ready(&mut self) -> Option<&mut FxHashMap<Key, HostBytes>> {
        let mut i = 0;
        while i < self.pending.len() {
            if self.pending[i].1.is_finished() {
                let (mem, h) = self.pending.swap_remove(i);
                if let Ok(Ok(area)) = h.join() {
                    self.ready.insert(mem, area);
                }
            } else {
                i += 1;
            }
        }
        self.pending.is_empty().then_some(&mut self.ready)
    }

    /// Whether no area is ready or coming.
    pub fn is_empty(&self) -> bool {
        self.ready.is_empty() && self.pending.is_empty()
    }

    /// `mem`'s area, waiting for its allocation when it is still running; `None` when it
    /// has none or the allocation failed.
    pub fn take(&mut self, mem: Key) -> Option<HostBytes> {
        if let Some(h) = self.ready.remove(&mem) {
            return Some(h);
        }
        let i = self.pending.iter().position(|p| p.0 == mem)?;
        let (_, h) = self.pending.swap_remove(i);
        h.join().ok()?.ok()
    }
}

impl Drop for EarlyAreas {
    fn drop(&mut self) {
        for (_, h) in self.pending.drain(..) {
            let _ = h.join();
        }
    }
}

/// Bytes of one slot of an [`UploadRing`] (32 MiB: a piece moves in about 0.6 ms over an
/// H200's 55 GB/s link, so the slots turn over far faster than a kernel runs).
pub(super) const RING_SLOT_BYTES: usize = 32 << 20;

/// Slots of an [`UploadRing`].
const RING_SLOTS: usize = 4;

/// Buffers at least this large are uploaded through the ring on their first split launch
/// instead of through a pinned area of their own size.
pub(super) const RING_MIN_BYTES: usize = 64 << 20;

/// A few page-locked slots of the app's context through which an app buffer is streamed to
/// the other devices' replicas, piece by piece: each piece is read from the app's device into
/// a slot and written from there to every device at once, while the next piece is read into
/// the next slot (issue 31 item 3).
///
/// Why (4 × H200, `bench/nv_paths.c`, results/session18-2026-11-27/nv-paths.txt): a pinned
/// area of the app's context moves 55 GB/s to the app's GPU and to the *other* GPUs alike,
/// but allocating and mapping one costs 620 ms per GiB, so a first split launch of PolyBench
/// gemm at 16384³ spent 1.9 s staging its 3 GiB of inputs; pageable memory moves 7.5 GB/s
/// (and 1 GB/s on its first touch), and one context over two GPUs copies or migrates between
/// them at 1.1-1.2 GB/s. The ring costs 128 MiB of pinned memory once per app context.
pub(super) struct UploadRing {
    slots: Vec<HostBytes>,
    /// Per slot, the writes still reading from it.
    busy: Vec<Vec<cl_event>>,
}

impl UploadRing {
    /// A ring of pinned slots of `ctx`, mapped on `queue` (a clprism queue of `ctx` that
    /// outlives the ring).
    ///
    /// Errors: the driver's, from the first slot that cannot be allocated.
    ///
    /// # Safety
    /// As [`HostBytes::pinned`].
    pub unsafe fn new(ctx: cl_context, queue: cl_command_queue) -> ClResult<Self> {
        let mut slots = Vec::with_capacity(RING_SLOTS);
        for _ in 0..RING_SLOTS {
            slots.push(HostBytes::pinned(ctx, queue, RING_SLOT_BYTES)?);
        }
        Ok(UploadRing {
            busy: vec![Vec::new(); RING_SLOTS],
            slots,
        })
    }

    /// Copies `len` bytes of the app's buffer `src` (read on `home`, a queue of the app's
    /// context whose earlier commands have completed) into every `(queue, buffer)` of
    /// `targets` at the same offsets, and waits until every write has completed.
    ///
    /// Errors: the first failed read or write (the targets then hold partial contents; the
    /// caller drops the launch's use of them).
    ///
    /// # Safety
    /// `home`, `src` and the targets are valid; each target buffer holds at least `len` bytes.
    pub unsafe fn upload(
        &mut self,
        home: cl_command_queue,
        src: cl_mem,
        len: usize,
        targets: &[(cl_command_queue, cl_mem)],
    ) -> ClResult<()> {
        self.relay((home, src), [0, len], targets)
    }

    /// Copies bytes `[start, end)` of buffer `src.1` (read on queue `src.0`, of any context,
    /// in order after that queue's earlier commands) into every `(queue, buffer)` of
    /// `targets` at the same offsets, piece by piece through the slots, and waits until every
    /// write has completed. The slots are page-locked memory of the app's context, which
    /// moves 55 GB/s to and from every GPU of an H200 host, against 7.5 GB/s for pageable
    /// memory and 1 GB/s at its first touch (`bench/nv_paths.c`,
    /// results/session18-2026-11-27/nv-paths.txt).
    ///
    /// Every wait is bounded (`devices::response_bound`): a read or write that does not
    /// complete in it leaks its slot (the driver may still use it).
    ///
    /// Errors: the first failed read or write, or one past its bound (the targets then hold
    /// partial contents).
    ///
    /// # Safety
    /// `src` and the targets are valid and hold at least `end` bytes.
    pub unsafe fn relay(
        &mut self,
        (src_q, src): (cl_command_queue, cl_mem),
        [start, end]: [usize; 2],
        targets: &[(cl_command_queue, cl_mem)],
    ) -> ClResult<()> {
        let result = (|| {
            for (i, off) in (start..end).step_by(RING_SLOT_BYTES).enumerate() {
                let n = RING_SLOT_BYTES.min(end - off);
                let k = i % RING_SLOTS;
                self.settle(k)?;
                let ev = cl::read_async(src_q, src, off, &mut self.slots[k][..n])?;
                let bound = super::devices::response_bound(n as u64, Default::default());
                let Ok(read) = cl::wait_bounded(&[ev], bound) else {
                    // the driver may still write into the slot: leaked, with the event
                    let fresh = HostBytes::heap(RING_SLOT_BYTES);
                    std::mem::forget(std::mem::replace(&mut self.slots[k], fresh));
                    return Err(ClError {
                        call: "clEnqueueReadBuffer (a device did not answer)",
                        code: CL_OUT_OF_RESOURCES,
                    });
                };
                cl::release_event(ev);
                read?;
                let slot = &self.slots[k][..n];
                for &(q, m) in targets {
                    self.busy[k].push(cl::write_event(q, m, off, slot)?);
                    cl::flush(q)?;
                }
            }
            Ok(())
        })();
        for k in 0..RING_SLOTS {
            let settled = self.settle(k);
            if result.is_ok() {
                settled?;
            }
        }
        result
    }

    /// Waits for the writes still reading from slot `k` (at most
    /// `devices::response_bound` for a slot) and releases their events.
    ///
    /// Errors: a failed write, or one that did not complete in the bound (a device that
    /// stopped answering): the slot and the events are then leaked (the driver may still
    /// read the slot) and a heap area of the slot's size takes its place.
    unsafe fn settle(&mut self, k: usize) -> ClResult<()> {
        let evs = std::mem::take(&mut self.busy[k]);
        let bound = super::devices::response_bound(RING_SLOT_BYTES as u64, Default::default());
        let waited = match cl::wait_bounded(&evs, bound) {
            Ok(w) => w,
            Err(_) => {
                let fresh = HostBytes::heap(RING_SLOT_BYTES);
                std::mem::forget(std::mem::replace(&mut self.slots[k], fresh));
                return Err(ClError {
                    call: "clWaitForEvents (a device did not answer)",
                    code: CL_OUT_OF_RESOURCES,
                });
            }
        };
        for e in evs {
            cl::release_event(e);
        }
        waited
    }
}

// SAFETY: the slots are plain host memory owned by the ring; OpenCL handles are thread-safe.
unsafe impl Send for UploadRing {}

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
