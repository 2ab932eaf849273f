//! The buffer directory's transfers (DESIGN.md §7, "Coherence"; the bookkeeping is
//! [`crate::exec::directory`]): what a split launch wrote stays on the device that wrote
//! it; a chunk first fetches the ranges it reads that are stale on its device; the app's
//! buffer is gathered when the app needs it ([`WorkerState::gather`]).
//!
//! Where the bytes go: between the app's buffer and the app device's replica (one context)
//! a device-side copy; otherwise through host memory, read on the source device's second
//! queue (so the read does not wait for the chunks running there) and written on the
//! destination's queue ahead of the chunk. On 4 H200s one context over two GPUs moved
//! 1.1-1.2 GB/s against 7.5 GB/s through pageable host memory
//! (results/session18-2026-11-27/nv-paths.txt), so the host path is the one used.

use super::chunks::ChunkRun;
use super::plan::Plan;
use super::WorkerState;
use crate::exec::cl::{self, ClError};
use crate::exec::directory::{holder_of_slot, slot_of_holder, Holders, Residency, APP};
use crate::exec::footprint::FootprintModel;
use crate::exec::staging::{HostBytes, StagingPool};
use crate::exec::{Engine, Job};
use crate::registry::tables::Key;
use opencl_sys::*;

/// Largest piece a gather moves through host memory at once, bytes.
const GATHER_PIECE: usize = 64 << 20;

/// What a launch's halo fetches depend on: its write footprints, its buffer arguments and
/// where each device's replicas live (a [`Plan`], or a launch expected again,
/// `super::forecast`).
#[derive(Clone, Copy)]
pub(super) struct FetchShape<'a> {
    pub model: Option<&'a FootprintModel>,
    pub bufs: &'a [super::BufArg],
    /// The app's own device when its chunks run in the app's context ([`Plan::home_d`]).
    pub home_d: Option<usize>,
}

impl<'a> FetchShape<'a> {
    pub fn of(plan: &'a Plan) -> Self {
        FetchShape {
            model: plan.model.as_deref(),
            bufs: &plan.bufs,
            home_d: plan.home_d,
        }
    }
}

/// One copy of a buffer as a transfer sees it.
#[derive(Clone, Copy)]
struct Endpoint {
    mem: cl_mem,
    /// The queue that reads it without waiting for running chunks.
    read_q: cl_command_queue,
    /// The queue that writes it in order with its chunks.
    write_q: cl_command_queue,
    /// It lives in the app's context (the app's buffer, the app device's replica).
    in_app_context: bool,
    /// The balance device it lives on (`None`: the app's context).
    device: Option<usize>,
}

impl Endpoint {
    /// A replica `mem` on balance device `d`, read and written through queue `q`.
    fn on_device(mem: cl_mem, q: cl_command_queue, d: usize) -> Endpoint {
        Endpoint {
            mem,
            read_q: q,
            write_q: q,
            in_app_context: false,
            device: Some(d),
        }
    }
}

/// Ranges at least this large move between contexts through the app context's upload ring
/// (`staging::UploadRing::relay`); smaller ones (halo rows) through heap memory, whose
/// latency is lower: 1 MiB.
const RELAY_MIN_BYTES: usize = 1 << 20;

/// One copy the directory plans before a chunk: `range` of buffer `mem` (argument `arg`)
/// from holder `from` to holder `to`, with the buffer's entry as planned.
pub(super) struct Fetch {
    mem: Key,
    arg: u32,
    entry: Residency,
    from: Holders,
    to: Holders,
    range: [u64; 2],
}

impl Fetch {
    /// The bytes it copies.
    pub(super) fn bytes(&self) -> u64 {
        self.range[1] - self.range[0]
    }

    /// Whether it goes through the upload ring (a range of [`RELAY_MIN_BYTES`] or more),
    /// which waits on the host for its reads.
    pub(super) fn relayed(&self) -> bool {
        self.bytes() >= RELAY_MIN_BYTES as u64
    }
}

/// Where a halo range's host copy is kept between launches: (app buffer, offset, bytes).
type HaloKey = (Key, u64, usize);

/// A halo range on its way through its page-locked host area: read from `src`, then
/// written to `dst` at byte `off` ([`WorkerState::batched_transfers`]).
struct HaloCopy {
    src: Endpoint,
    dst: Endpoint,
    off: usize,
    area: HostBytes,
    key: HaloKey,
}

// SAFETY: OpenCL handles and a host area owned by the copy; the calls an issue thread makes
// with them are thread-safe (`super::issue::Sendable`'s doc).
unsafe impl Send for HaloCopy {}

/// `items` grouped by the queue `queue` names, groups in the order each queue first comes.
fn group_by_queue<T>(items: Vec<T>, queue: impl Fn(&T) -> cl_command_queue) -> Vec<Vec<T>> {
    let mut groups: Vec<(cl_command_queue, Vec<T>)> = Vec::new();
    for it in items {
        let q = queue(&it);
        match groups.iter_mut().find(|g| g.0 == q) {
            Some(g) => g.1.push(it),
            None => groups.push((q, vec![it])),
        }
    }
    groups.into_iter().map(|g| g.1).collect()
}

/// Non-blocking writes in flight and the host copies they read: [`Self::finish`] (or
/// dropping it) waits for the writes (and releases their events) before the copies are
/// given back (or freed).
#[derive(Default)]
pub(super) struct HeldWrites(Vec<(cl_event, HostBytes, HaloKey)>);

impl HeldWrites {
    /// Waits for the writes (at most `devices::response_bound` for their bytes) and hands
    /// back their host copies, for [`HaloAreas::give`]. When one does not complete, its
    /// device is left to the next bounded wait that names it, and the host copies and
    /// events are leaked (the driver may still read them): nothing comes back.
    pub fn finish(mut self) -> Vec<(HaloKey, HostBytes)> {
        let held = std::mem::take(&mut self.0);
        let evs: Vec<cl_event> = held.iter().map(|w| w.0).collect();
        let bytes: usize = held.iter().map(|w| w.1.len()).sum();
        // SAFETY: the writes' own events, released once here, before their host copies.
        unsafe {
            if cl::wait_bounded(&evs, bound(bytes)).is_err() {
                std::mem::forget(held);
                return Vec::new();
            }
            for ev in evs {
                cl::release_event(ev);
            }
        }
        held.into_iter().map(|(_, h, k)| (k, h)).collect()
    }
}

impl Drop for HeldWrites {
    /// As [`Self::finish`], the host copies freed.
    fn drop(&mut self) {
        if !self.0.is_empty() {
            drop(std::mem::take(self).finish());
        }
    }
}

/// Page-locked host copies of halo ranges, kept between launches by [`HaloKey`]: an
/// iterative kernel whose results stay on the devices moves the same halo rows at every
/// launch. Through fresh heap memory, NVIDIA's driver took 45 µs to enqueue the read of one
/// 64 KiB halo row, 49 µs to finish it and 35 µs to enqueue its write (2 H200s, fdtd-2d,
/// results/session22-2026-11-28 call d): its pageable path bounces through a buffer of its
/// own. Areas come from the app's context (pinned host memory is reachable by every GPU's
/// DMA) under `CLPRISM_PINNED_MAX`; past it, heap memory.
#[derive(Default)]
pub(super) struct HaloAreas(rustc_hash::FxHashMap<HaloKey, Vec<HostBytes>>);

impl HaloAreas {
    /// A host area for `key`: a kept one, else a new page-locked one of `ctx` mapped on
    /// `queue` while `pool` allows pinning, else heap memory. Contents undefined.
    ///
    /// # Safety
    /// As [`HostBytes::pinned`].
    unsafe fn take(
        &mut self,
        key: HaloKey,
        pool: &StagingPool,
        ctx: cl_context,
        queue: cl_command_queue,
    ) -> HostBytes {
        if let Some(h) = self.0.get_mut(&key).and_then(Vec::pop) {
            return h;
        }
        if pool.may_pin(key.2) {
            if let Ok(h) = HostBytes::pinned(ctx, queue, key.2) {
                return h;
            }
        }
        HostBytes::heap(key.2)
    }

    /// Keeps `h` for the next transfer of `key` (page-locked areas only).
    pub fn give(&mut self, key: HaloKey, h: HostBytes) {
        if h.is_pinned() {
            self.0.entry(key).or_default().push(h);
        }
    }

    /// Frees the areas of a released app buffer.
    pub fn forget(&mut self, m: Key) {
        self.0.retain(|k, _| k.0 != m);
    }
}

impl WorkerState {
    /// Whether buffer `m` is tracked by the directory (some device may hold bytes the app's
    /// buffer lacks); such a buffer gets no pre-launch upload, its chunks fetch instead.
    pub(super) fn tracked(&self, m: Key) -> bool {
        self.directory.get(m).is_some()
    }

    /// Before a launch that gathers at once ([`Plan::resident`] unset): every buffer of the
    /// launch is brought up to date in the app's buffer (the snapshots and the merge read
    /// it). Errors: a failed transfer (the launch is then forwarded, after the hook's own
    /// gather tried again).
    pub(super) fn settle_directory(&mut self, engine: &Engine, plan: &Plan) -> Result<(), String> {
        if plan.resident {
            return Ok(());
        }
        for b in &plan.bufs {
            if self.tracked(b.mem) {
                let n = self.gather(engine, b.mem)?;
                engine.traffic.gather(n);
            }
        }
        Ok(())
    }

    /// The copy of buffer `m` that holder `h` names.
    fn endpoint(
        &mut self,
        engine: &Engine,
        m: Key,
        r: &Residency,
        h: Holders,
    ) -> Result<Endpoint, ClError> {
        let (ctx, dev) = (r.app_context as cl_context, r.app_device as cl_device_id);
        let home = self.home_queue(ctx, dev)?;
        if h == APP {
            return Ok(Endpoint {
                mem: m as cl_mem,
                read_q: home,
                write_q: home,
                in_app_context: true,
                device: None,
            });
        }
        let slot = slot_of_holder(h).ok_or(ClError {
            call: "buffer directory (holder)",
            code: CL_INVALID_VALUE,
        })?;
        let mem = self
            .replicas
            .get(&(m, slot))
            .ok_or(ClError {
                call: "buffer directory (replica)",
                code: CL_INVALID_MEM_OBJECT,
            })?
            .mem;
        // a launch taken up behind running chunks reads their output after them, on the
        // queue they run on ([`super::ahead`])
        let in_order = self.reads_follow_chunks;
        if slot > usize::MAX / 2 {
            let exec = self.home_exec_queue(ctx, dev)?;
            return Ok(Endpoint {
                mem,
                read_q: if in_order { exec } else { home },
                write_q: exec,
                in_app_context: true,
                device: None,
            });
        }
        Ok(Endpoint {
            mem,
            read_q: if in_order {
                engine.devices[slot].queue
            } else {
                self.read_queue(engine, slot)?
            },
            write_q: engine.devices[slot].queue,
            in_app_context: false,
            device: Some(slot),
        })
    }

    /// Copies `range` of buffer `m` from holder `from` to `to`; returns when the bytes are
    /// in place or ordered before `to`'s next command (a device-side copy in one context).
    /// `busy`: how long the launch has run, which the write may wait behind on `to`'s queue
    /// ([`write_bounded`]).
    fn transfer(
        &mut self,
        engine: &Engine,
        m: Key,
        r: &Residency,
        (from, to): (Holders, Holders),
        range: [u64; 2],
        busy: std::time::Duration,
    ) -> Result<(), String> {
        let src = self
            .endpoint(engine, m, r, from)
            .map_err(|e| e.to_string())?;
        let dst = self.endpoint(engine, m, r, to).map_err(|e| e.to_string())?;
        let (off, len) = (range[0] as usize, (range[1] - range[0]) as usize);
        if src.in_app_context && dst.in_app_context {
            // SAFETY: clprism's replicas and the app's (retained) buffer, ranges inside the
            // buffer.
            return unsafe { cl::copy(dst.write_q, src.mem, dst.mem, off, off, len) }
                .map_err(|e| e.to_string());
        }
        let (from, to) = ((src.read_q, src.mem), (dst.write_q, dst.mem));
        if self
            .relay(engine, r, from, [off, off + len], to)
            .map_err(|e| e.to_string())?
        {
            return Ok(());
        }
        let mut bytes = vec![0u8; len];
        read_bounded(engine, &src, off, &mut bytes, bound(len))?;
        write_bounded(engine, &dst, off, bytes, busy)
    }

    /// Copies bytes `[start, end)` from `src` (queue, buffer) to `dst` through the upload
    /// ring of the app's context of `r` (made on first use), when the range is at least
    /// [`RELAY_MIN_BYTES`]: `Ok(false)` for a smaller range, which the caller moves through
    /// heap memory. Page-locked slots move a range between GPUs of an H200 host at ~50 GB/s
    /// where heap memory moved 1.2 GB/s: the first split of fdtd-2d's kernel 3 fetched 410 MB
    /// in 336 ms (2 H200s, results/session20-2026-11-27 `f-logs`).
    ///
    /// Errors: the driver's, from the ring's allocation or a transfer.
    fn relay(
        &mut self,
        engine: &Engine,
        r: &Residency,
        src: (cl_command_queue, cl_mem),
        [start, end]: [usize; 2],
        dst: (cl_command_queue, cl_mem),
    ) -> Result<bool, ClError> {
        if end - start < RELAY_MIN_BYTES {
            return Ok(false);
        }
        let (ctx, dev) = (r.app_context as cl_context, r.app_device as cl_device_id);
        let home = self.home_queue(ctx, dev)?;
        let ring = self.upload_ring(ctx, home)?;
        // SAFETY: clprism's replicas and the app's (retained) buffer, ranges inside them.
        unsafe { ring.relay(src, [start, end], &[dst])? };
        engine.traffic.relayed((end - start) as u64);
        Ok(true)
    }

    /// The holder to copy from among `holders` for `to`: one in the same context first,
    /// then a balance device, then the app's buffer.
    fn source_for(holders: Holders, to: Holders) -> Holders {
        let app_side =
            |h: Holders| h == APP || slot_of_holder(h).is_some_and(|s| s > usize::MAX / 2);
        let bits = (0..64).map(|i| 1u64 << i).filter(|b| holders & b != 0);
        let mut best = None;
        for b in bits {
            let rank = match (app_side(b) == app_side(to), b == APP) {
                (true, _) => 0,
                (false, false) => 1,
                (false, true) => 2,
            };
            if best.is_none_or(|(r, _)| rank < r) {
                best = Some((rank, b));
            }
        }
        best.map_or(APP, |b| b.1)
    }

    /// The copies the chunk of units `[first, first + count)` on device `d` (index in
    /// [`Engine::devices`]) needs first: the bytes its read hull covers
    /// (`FootprintModel::fetch_hull`, the whole buffer where there is none) that are stale on
    /// `d`, for every tracked buffer the kernel reads, each with the copy it comes from.
    fn fetches_for_chunk(
        &self,
        plan: &Plan,
        d: usize,
        units: (u64, u64),
    ) -> Result<Vec<Fetch>, String> {
        self.fetches_of(FetchShape::of(plan), d, units)
    }

    /// [`Self::fetches_for_chunk`] for a launch as `shape` describes it.
    fn fetches_of(
        &self,
        shape: FetchShape<'_>,
        d: usize,
        (first, count): (u64, u64),
    ) -> Result<Vec<Fetch>, String> {
        let Some(model) = shape.model else {
            return Ok(Vec::new());
        };
        let to = holder_of_slot(super::plan::slot(shape.home_d, d))
            .ok_or("device past the directory's holders")?;
        let mut out = Vec::new();
        for b in shape.bufs {
            let arg = b.index as u32;
            let Some(entry) = self.directory.get(b.mem) else {
                continue;
            };
            if entry.size != b.size as u64 {
                continue; // another buffer under a released one's handle
            }
            let Some(hull) = model.fetch_hull(arg, b.size as u64, first, count) else {
                continue;
            };
            for (range, holders) in entry.missing(to, hull) {
                out.push(Fetch {
                    mem: b.mem,
                    arg,
                    entry: entry.clone(),
                    from: Self::source_for(holders, to),
                    to,
                    range,
                });
            }
        }
        Ok(out)
    }

    /// The directory now counts `fetches` as held by their destinations.
    fn note_fetched(&mut self, fetches: &[Fetch]) {
        for f in fetches {
            if let Some(e) = self.directory.get_mut(f.mem) {
                e.add(f.range, f.to);
            }
        }
    }

    /// Before the chunk of units `[first, first + count)` runs on device `d` (index in
    /// [`Engine::devices`]): its [`Self::fetches_for_chunk`], copied one after the other,
    /// `busy` into the launch. Returns the bytes moved.
    ///
    /// Errors: a failed transfer (the chunk is then reassigned by the scheduler).
    pub(super) fn fetch_for_chunk(
        &mut self,
        engine: &Engine,
        plan: &Plan,
        d: usize,
        units: (u64, u64),
        busy: std::time::Duration,
    ) -> Result<u64, String> {
        let fetches = self.fetches_for_chunk(plan, d, units)?;
        let mut moved = 0;
        for f in &fetches {
            self.transfer(engine, f.mem, &f.entry, (f.from, f.to), f.range, busy)
                .map_err(|e| format!("fetching argument {}: {e}", f.arg))?;
            moved += f.range[1] - f.range[0];
        }
        self.note_fetched(&fetches);
        Ok(moved)
    }

    /// Before an owner-computes launch whose slabs are known (`(device, first unit, units)`,
    /// device as an index in [`Engine::devices`]): every slab's fetches at once. All reads
    /// are started together on the sources' second queues and waited for once; the writes
    /// are then enqueued, non-blocking, on each destination's queue ahead of its chunk. One
    /// transfer round trip per launch instead of a blocking read and write per halo, one
    /// device after the other: jacobi-2d's kernel 1 on 4 H200s enqueued its last chunk
    /// 0.55 ms after its first (results/session19-2026-11-27, `c-logs.tgz`).
    ///
    /// Returns the bytes moved and the host copies the writes read from (hold them until the
    /// chunks after the writes have completed; dropping them waits for the writes). A failed
    /// transfer ends the batch early: what was not noted in the directory is fetched again
    /// before its chunk ([`Self::fetch_for_chunk`]).
    pub(super) fn prefetch_slabs(
        &mut self,
        engine: &Engine,
        plan: &Plan,
        slabs: &[(usize, u64, u64)],
    ) -> (u64, HeldWrites, Option<String>) {
        self.prefetch_slabs_of(engine, FetchShape::of(plan), slabs)
    }

    /// [`Self::prefetch_slabs`] for a launch as `shape` describes it.
    pub(super) fn prefetch_slabs_of(
        &mut self,
        engine: &Engine,
        shape: FetchShape<'_>,
        slabs: &[(usize, u64, u64)],
    ) -> (u64, HeldWrites, Option<String>) {
        match self.fetches_for_slabs(shape, slabs) {
            Ok(fetches) => self.transfer_fetches(engine, &fetches),
            Err(e) => (0, HeldWrites::default(), Some(e)),
        }
    }

    /// Every fetch the chunks `slabs` (`(device in Engine::devices, first unit, units)`) of
    /// a launch as `shape` describes it need before they run.
    pub(super) fn fetches_for_slabs(
        &self,
        shape: FetchShape<'_>,
        slabs: &[(usize, u64, u64)],
    ) -> Result<Vec<Fetch>, String> {
        let mut fetches = Vec::new();
        for &(d, first, count) in slabs {
            fetches.extend(self.fetches_of(shape, d, (first, count))?);
        }
        Ok(fetches)
    }

    /// [`Self::batched_transfers`] of `fetches`, noted in the directory when they all were
    /// issued: the bytes moved, the writes' host copies, or why it stopped.
    pub(super) fn transfer_fetches(
        &mut self,
        engine: &Engine,
        fetches: &[Fetch],
    ) -> (u64, HeldWrites, Option<String>) {
        let mut held = HeldWrites::default();
        match self.batched_transfers(engine, fetches, &mut held) {
            Ok(()) => {
                self.note_fetched(fetches);
                (fetches.iter().map(Fetch::bytes).sum(), held, None)
            }
            Err(e) => (0, held, Some(e.to_string())),
        }
    }

    /// [`Self::prefetch_slabs`]'s transfers: device-side copies within the app's context at
    /// once, the others as reads started together (grouped by the queue they read on, each
    /// group from its own issue thread with `CLPRISM_BALANCE_ISSUE=parallel`,
    /// [`super::issue`]), one wait, then non-blocking writes (grouped likewise by the queue
    /// they write on) whose host copies `held` keeps.
    fn batched_transfers(
        &mut self,
        engine: &Engine,
        fetches: &[Fetch],
        held: &mut HeldWrites,
    ) -> Result<(), ClError> {
        let started = std::time::Instant::now();
        let mut copies = Vec::new();
        let mut result = Ok(());
        for f in fetches {
            match self.plan_halo_copy(engine, f) {
                Ok(Some(c)) => copies.push(c),
                Ok(None) => {}
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        // the reads, each queue's from one issue thread
        let by_source = group_by_queue(copies, |c| c.src.read_q);
        // SAFETY: clprism's replica or the app's (retained) buffer, the range inside it; the
        // area lives in its copy until the read was waited for.
        let read = self.issue.run_grouped(by_source, |c| unsafe {
            cl::read_async(c.src.read_q, c.src.mem, c.off, &mut c.area)
        });
        let mut reads = Vec::new();
        let mut areas = Vec::new();
        for (c, ev) in read {
            match ev {
                Ok(ev) => {
                    reads.push(ev);
                    areas.push(c);
                }
                Err(e) => {
                    self.halo_areas.give(c.key, c.area);
                    result = result.and(Err(e));
                }
            }
        }
        if self.reads_follow_chunks && result.is_ok() {
            // a launch issued ahead: the writes wait on the devices, not here
            self.gated_writes(reads, areas, held);
            return Ok(());
        }
        let t = std::time::Instant::now();
        let bytes = areas.iter().map(|c| c.area.len()).sum();
        // SAFETY: the events of the reads started above, waited for before the areas are
        // read or dropped (leaked, with the events, when one does not complete).
        unsafe {
            let Ok(waited) = cl::wait_bounded(&reads, bound(bytes)) else {
                std::mem::forget(areas);
                return Err(ClError {
                    call: "clWaitForEvents (a device did not answer)",
                    code: CL_OUT_OF_RESOURCES,
                });
            };
            for ev in reads {
                cl::release_event(ev);
            }
            result?;
            waited?;
        }
        let waited_ns = t.elapsed().as_nanos();
        let n = areas.len();
        // the writes, each queue's from one issue thread
        let by_destination = group_by_queue(areas, |c| c.dst.write_q);
        // SAFETY: each area moves into `held` below, which keeps it until its write completed.
        let written = self.issue.run_grouped(by_destination, |c| unsafe {
            cl::write_event(c.dst.write_q, c.dst.mem, c.off, &c.area)
        });
        let mut failed = None;
        for (c, ev) in written {
            match ev {
                Ok(ev) => held.0.push((ev, c.area, c.key)),
                Err(e) => {
                    self.halo_areas.give(c.key, c.area);
                    failed.get_or_insert(e);
                }
            }
        }
        crate::config::debug(|| {
            format!(
                "halo batch: {n} reads of {bytes} bytes enqueued in {:.1} us, waited for {:.1} us, writes enqueued in {:.1} us",
                (t - started).as_nanos() as f64 / 1e3,
                waited_ns as f64 / 1e3,
                (t.elapsed().as_nanos() - waited_ns) as f64 / 1e3
            )
        });
        failed.map_or(Ok(()), Err)
    }

    /// [`Self::batched_transfers`]'s writes for a launch issued ahead ([`super::ahead`]):
    /// each waits on its device for a user event that the gate relay sets once its read
    /// completed ([`super::gates`]), so nothing here waits for the running chunks. A write
    /// whose gate cannot be made waits for its read here and is enqueued as before; one
    /// that cannot be enqueued is left out (its chunk fetches what is missing before it
    /// runs, `fetch_for_chunk`, reading after the running chunks too).
    fn gated_writes(&mut self, reads: Vec<cl_event>, areas: Vec<HaloCopy>, held: &mut HeldWrites) {
        let (n, bytes) = (
            areas.len(),
            areas.iter().map(|c| c.area.len()).sum::<usize>(),
        );
        for (ev, c) in reads.into_iter().zip(areas) {
            // SAFETY: the read's own event, handed to the relay or waited for and released
            // once; the area moves into `held`, which keeps it until the write completed,
            // or is leaked when its read did not complete in its bound.
            let written = unsafe {
                match self.gated_write(ev, &c) {
                    Ok(w) => Ok(w),
                    Err(_) => match cl::wait_bounded(&[ev], bound(c.area.len())) {
                        Ok(r) => {
                            cl::release_event(ev);
                            r.and_then(|_| {
                                cl::write_event(c.dst.write_q, c.dst.mem, c.off, &c.area)
                            })
                        }
                        Err(_) => {
                            std::mem::forget(c);
                            continue;
                        }
                    },
                }
            };
            match written {
                Ok(w) => held.0.push((w, c.area, c.key)),
                Err(_) => self.halo_areas.give(c.key, c.area),
            }
        }
        crate::config::debug(|| {
            format!("halo batch: {n} reads of {bytes} bytes, writes gated on the devices")
        });
    }

    /// One gated write of [`Self::gated_writes`]: a user event of the destination's
    /// context, the write after it, and the relay set to open it when `read` completes.
    /// `Err`: nothing was enqueued and `read` is still the caller's.
    ///
    /// # Safety
    /// `read` is clprism's reference to the read into `c.area`.
    unsafe fn gated_write(&mut self, read: cl_event, c: &HaloCopy) -> Result<cl_event, ClError> {
        let ctx = cl::queue_context(c.dst.write_q)?;
        let gate = cl::user_event(ctx)?;
        let w = match cl::write_after(c.dst.write_q, c.dst.mem, c.off, &c.area, &[gate]) {
            Ok(w) => w,
            Err(e) => {
                let _ = cl::set_user_event(gate, CL_COMPLETE);
                cl::release_event(gate);
                return Err(e);
            }
        };
        if self.gates.open_after(read, gate).is_err() {
            // no relay: open the gate here once the read is in. A read that does not
            // complete in its bound leaves the gate shut: the write then never completes,
            // so its host area is never handed out again (`HeldWrites::finish` leaks it)
            // and the device counts as stalled
            if let Ok(r) = cl::wait_bounded(&[read], bound(c.area.len())) {
                let status = if r.is_ok() {
                    CL_COMPLETE
                } else {
                    CL_OUT_OF_RESOURCES
                };
                let _ = cl::set_user_event(gate, status);
                cl::release_event(gate);
                cl::release_event(read);
            }
        }
        Ok(w)
    }

    /// One fetch of [`Self::batched_transfers`]: a device-side copy within the app's context
    /// or a relay through the upload ring is done here (`None`); a halo range gets its
    /// page-locked host area, for a read and a write.
    fn plan_halo_copy(&mut self, engine: &Engine, f: &Fetch) -> Result<Option<HaloCopy>, ClError> {
        let (off, len) = (f.range[0] as usize, (f.range[1] - f.range[0]) as usize);
        let src = self.endpoint(engine, f.mem, &f.entry, f.from)?;
        let dst = self.endpoint(engine, f.mem, &f.entry, f.to)?;
        // SAFETY: clprism's replicas and the app's (retained) buffer, ranges inside the
        // buffer.
        unsafe {
            if src.in_app_context && dst.in_app_context {
                cl::copy(dst.write_q, src.mem, dst.mem, off, off, len)?;
                return Ok(None);
            }
            let (from, to) = ((src.read_q, src.mem), (dst.write_q, dst.mem));
            if self.relay(engine, &f.entry, from, [off, off + len], to)? {
                return Ok(None);
            }
        }
        let key = (f.mem, f.range[0], len);
        let (ctx, dev) = (f.entry.app_context, f.entry.app_device);
        let q = self.home_queue(ctx as cl_context, dev as cl_device_id)?;
        // SAFETY: the app's context and clprism's queue there.
        let area = unsafe {
            self.halo_areas
                .take(key, &self.host_pool, ctx as cl_context, q)
        };
        Ok(Some(HaloCopy {
            src,
            dst,
            off,
            area,
            key,
        }))
    }

    /// Before a resident launch keeps what its chunks wrote on the devices: each device
    /// other than the app's that both completed chunks and had one abandoned (a straggler,
    /// maybe a dead server) must answer a one-byte read of a written replica within
    /// `devices::response_bound`, else it is marked dead (and the launch is then forwarded,
    /// so it never counts as the only holder of bytes it may have lost).
    pub(super) fn probe_stragglers(&mut self, engine: &Engine, plan: &Plan, run: &ChunkRun) {
        let Some(b) = plan.bufs.iter().find(|b| b.written && b.size > 0) else {
            return;
        };
        for (i, &d) in plan.devs.iter().enumerate() {
            let straggled = run.chunks.iter().any(|c| c.device == i && c.abandoned);
            if !straggled || run.per_dev_units[i] == 0 || Some(d) == plan.home_d {
                continue;
            }
            let Ok(q) = self.read_queue(engine, d) else {
                continue;
            };
            let Some(mem) = self.replicas.get(&(b.mem, d)).map(|r| r.mem) else {
                continue;
            };
            let src = Endpoint::on_device(mem, q, d);
            let _ = read_bounded(engine, &src, 0, &mut vec![0u8; 1], run.response_bound(1));
        }
    }

    /// After the chunks of a resident launch: each written range stays valid only on the
    /// copy whose chunk wrote it, the app device's replica included (a gather copies those
    /// ranges device-side when the app needs them). A buffer the directory did not track yet
    /// starts with every copy that held its pre-launch bytes. Returns the bytes that only
    /// devices hold.
    ///
    /// The app device's ranges were copied into the app's buffer after every launch until
    /// session 20: 0.24 ms per jacobi-2d launch on 4 H200s (a quarter of a 1 GiB array and a
    /// finish), a fifth of the split launch's wall time (results/session19-2026-11-27,
    /// `c-logs.tgz`, the `keep_resident` phase).
    pub(super) fn keep_resident(&mut self, job: &Job, plan: &Plan, run: &ChunkRun) -> u64 {
        let slabs: Vec<(usize, u64, u64)> = run
            .done
            .iter()
            .map(|c| (c.device, c.first_wg, c.count))
            .collect();
        self.keep_resident_slabs(job, plan, &slabs)
    }

    /// [`Self::keep_resident`] for the chunks `slabs` (`(participating device, first unit,
    /// units)`), before or after they ran.
    pub(super) fn keep_resident_slabs(
        &mut self,
        job: &Job,
        plan: &Plan,
        slabs: &[(usize, u64, u64)],
    ) -> u64 {
        let Some(model) = plan.model.clone() else {
            return 0;
        };
        let mut device_only = 0;
        for b in plan.bufs.iter().filter(|b| b.written) {
            let Some(w) = model.written.iter().find(|w| w.arg == b.index as u32) else {
                continue;
            };
            let pre_launch: Holders = if plan.skip_baseline(b) {
                APP
            } else {
                plan.devs
                    .iter()
                    .filter_map(|d| holder_of_slot(plan.slot(*d)))
                    .fold(APP, |a, h| a | h)
            };
            let entry = self.directory.entry(b.mem, || {
                Residency::new(
                    b.size as u64,
                    pre_launch,
                    job.app_context as usize,
                    job.app_device as usize,
                )
            });
            for &(device, first, count) in slabs {
                let Some(h) = holder_of_slot(plan.slot(plan.devs[device])) else {
                    continue;
                };
                for r in w.chunk_ranges(first, count) {
                    entry.set_only(r, h);
                }
            }
            device_only += entry.device_only_bytes();
        }
        device_only
    }

    /// Before [`Self::keep_resident`]: reads what the launch's chunks on remote devices
    /// (PoCL-Remote servers) wrote into host memory, bounded by `run`'s response bound. A
    /// server may die between launches, and PoCL's client then never answers for it
    /// (docs/remote.md §4): bytes only it held would be lost, so
    /// [`Self::secure_remote_results`] copies them into the app's buffer too, and the
    /// servers keep theirs (the next launch fetches nothing for them).
    ///
    /// Errors: a failed or unanswered read (the device is then marked dead and the launch
    /// forwarded; nothing of the app's data or the directory changed).
    pub(super) fn read_remote_results(
        &mut self,
        engine: &Engine,
        plan: &Plan,
        run: &ChunkRun,
    ) -> Result<Vec<RemoteResult>, String> {
        let Some(model) = plan.model.clone() else {
            return Ok(Vec::new());
        };
        // the app's own device holds the app's buffer too: if it is remote, its server
        // going down takes the app's data with it whatever clprism keeps
        let remote =
            |d: usize| Some(d) != plan.home_d && engine.devices.get(d).is_some_and(|x| x.remote);
        let mut out = Vec::new();
        for b in plan.bufs.iter().filter(|b| b.written) {
            let Some(w) = model.written.iter().find(|w| w.arg == b.index as u32) else {
                continue;
            };
            for c in run.done.iter().filter(|c| remote(plan.devs[c.device])) {
                let d = plan.devs[c.device];
                let Some(mem) = self.replicas.get(&(b.mem, plan.slot(d))).map(|r| r.mem) else {
                    continue;
                };
                let q = self.read_queue(engine, d).map_err(|e| e.to_string())?;
                let src = Endpoint::on_device(mem, q, d);
                for r in w.chunk_ranges(c.first_wg, c.count) {
                    let len = (r[1].min(b.size as u64)).saturating_sub(r[0]) as usize;
                    if len == 0 {
                        continue;
                    }
                    let mut bytes = vec![0u8; len];
                    read_bounded(
                        engine,
                        &src,
                        r[0] as usize,
                        &mut bytes,
                        run.response_bound(len as u64),
                    )?;
                    out.push(RemoteResult {
                        mem: b.mem,
                        range: [r[0], r[0] + len as u64],
                        bytes,
                    });
                }
            }
        }
        Ok(out)
    }

    /// After [`Self::keep_resident`]: writes [`Self::read_remote_results`]' bytes into the
    /// app's buffers, which then hold those ranges beside the servers. Returns the bytes
    /// written. A failed write is warned about and leaves that range on its server alone (as
    /// before this step existed); it does not undo the launch.
    pub(super) fn secure_remote_results(&mut self, job: &Job, results: Vec<RemoteResult>) -> u64 {
        if results.is_empty() {
            return 0;
        }
        let (ctx, dev) = (job.app_context, job.app_device);
        let home = match self.home_queue(ctx, dev) {
            Ok(q) => q,
            Err(e) => {
                crate::config::warn(&format!(
                    "balance: remote results stay on their servers alone: {e}"
                ));
                return 0;
            }
        };
        let mut copied = 0;
        for r in results {
            let len = r.bytes.len();
            // SAFETY: the app's (retained) buffer, the range inside it; the write blocks.
            match unsafe { cl::write(home, r.mem as cl_mem, r.range[0] as usize, &r.bytes, true) } {
                Ok(()) => {
                    if let Some(e) = self.directory.get_mut(r.mem) {
                        e.add(r.range, APP);
                    }
                    copied += len as u64;
                }
                Err(e) => crate::config::warn(&format!(
                    "balance: {len} bytes of buffer {:#x} stay on a server alone: {e}",
                    r.mem
                )),
            }
        }
        copied
    }

    /// Brings the app's buffer `m` up to date from the devices that alone hold some of its
    /// bytes and drops its directory entry; each replica that holds every byte keeps
    /// counting as valid for the buffer's current epoch, the others as stale. Returns the
    /// bytes copied ([`Self::gather_entry`]); clprism's queue in the app's context is finished
    /// before returning.
    ///
    /// Errors: a failed read or write; the entry is kept then (nothing is lost, a later
    /// gather tries again).
    pub(super) fn gather(&mut self, engine: &Engine, m: Key) -> Result<u64, String> {
        // the copies it reads may be pushed halos still on their way (`super::forecast`)
        self.settle_pushes();
        let Some(entry) = self.directory.get(m).cloned() else {
            return Ok(0);
        };
        let copied = self
            .gather_entry(engine, m, &entry)
            .map_err(|e| format!("gathering a buffer into the app's copy: {e}"))?;
        self.directory.remove(m);
        let epoch = crate::exec::epoch(m);
        for ((mem, slot), rep) in self.replicas.iter_mut() {
            if *mem == m {
                let whole = holder_of_slot(*slot).is_some_and(|h| entry.holds_all(h));
                rep.epoch = if whole { epoch } else { 0 };
            }
        }
        Ok(copied)
    }

    /// [`Self::gather`]'s transfers: a device-side copy from the app device's replica, else
    /// through host memory in pieces of at most [`GATHER_PIECE`] bytes (a read on the
    /// source's second queue, then a write on clprism's queue in the app's context): the
    /// upload ring's page-locked slots for a piece of at least [`RELAY_MIN_BYTES`], heap
    /// memory below. Not through a pinned area of the buffer's size: allocating one costs
    /// 620 ms per GiB on NVIDIA (results/session18-2026-11-27/nv-paths.txt), which made the
    /// gather of jacobi-2d's two 1 GiB arrays the largest one-time cost of its first split.
    fn gather_entry(&mut self, engine: &Engine, m: Key, entry: &Residency) -> Result<u64, String> {
        let stale = entry.missing(APP, [0, entry.size]);
        if stale.is_empty() {
            return Ok(0);
        }
        let cl_err = |e: ClError| e.to_string();
        let app = self.endpoint(engine, m, entry, APP).map_err(cl_err)?;
        let mut piece = Vec::new();
        let mut moved = 0;
        for (range, holders) in &stale {
            let src = self
                .endpoint(engine, m, entry, Self::source_for(*holders, APP))
                .map_err(cl_err)?;
            moved += range[1] - range[0];
            let mut off = range[0] as usize;
            while off < range[1] as usize {
                let len = (range[1] as usize - off).min(GATHER_PIECE);
                // SAFETY: clprism's replicas and the app's (retained) buffer, ranges inside
                // the buffer; `piece` outlives the blocking write.
                unsafe {
                    if src.in_app_context {
                        cl::copy(app.write_q, src.mem, app.mem, off, off, len).map_err(cl_err)?;
                    } else if !self
                        .relay(
                            engine,
                            entry,
                            (src.read_q, src.mem),
                            [off, off + len],
                            (app.write_q, app.mem),
                        )
                        .map_err(cl_err)?
                    {
                        piece.resize(len, 0);
                        read_bounded(engine, &src, off, &mut piece, bound(len))?;
                        cl::write(app.write_q, app.mem, off, &piece[..len], true)
                            .map_err(cl_err)?;
                    }
                }
                off += len;
            }
        }
        // SAFETY: clprism's queue in the app's context.
        unsafe { cl::finish(app.write_q) }.map_err(cl_err)?;
        Ok(moved)
    }
}

/// Bytes a remote device's chunks wrote, read back to be kept in the app's buffer too
/// ([`WorkerState::read_remote_results`]).
pub(super) struct RemoteResult {
    /// The app's buffer.
    mem: Key,
    /// Bytes `[start, end)` of it.
    range: [u64; 2],
    /// Their contents.
    bytes: Vec<u8>,
}

/// How long a transfer of `len` bytes that waits for nothing else is waited for
/// (`devices::response_bound`).
fn bound(len: usize) -> std::time::Duration {
    crate::exec::devices::response_bound(len as u64, Default::default())
}

/// Writes `bytes` at `off` of `dst` on its write queue (behind the chunks queued there) and
/// waits for the write: for a PoCL-Remote device at most `devices::response_bound` of its
/// bytes after `busy` (the launch's time so far), since PoCL 6.0's client never completes a
/// dead server's commands (a blocking write there hung a resident launch for good,
/// tests/remote.rs); for a local device at most the chunk loop's stall limit.
///
/// Errors: a failed write, or one that did not complete in its bound: `dst`'s device is then
/// marked dead and `bytes` leaked (the driver may still read them).
fn write_bounded(
    engine: &Engine,
    dst: &Endpoint,
    off: usize,
    bytes: Vec<u8>,
    busy: std::time::Duration,
) -> Result<(), String> {
    let remote = dst
        .device
        .is_some_and(|d| engine.devices.get(d).is_some_and(|x| x.remote));
    let limit = if remote {
        crate::exec::devices::response_bound(bytes.len() as u64, busy)
    } else {
        super::chunks::STALL_LIMIT
    };
    let mut pending = super::PendingReads::default();
    // SAFETY: clprism's replica or the app's (retained) buffer, the range inside it; `bytes`
    // lives until the write completed, or is leaked.
    let ev =
        unsafe { cl::write_event(dst.write_q, dst.mem, off, &bytes) }.map_err(|e| e.to_string())?;
    pending.push(dst.device, ev);
    pending
        .settle(Some(engine), limit.min(super::chunks::STALL_LIMIT))
        .map_err(|u| {
            if u.stalled {
                std::mem::forget(bytes);
            }
            u.why
        })
}

/// Reads `buf.len()` bytes at `off` of `src` on its read queue, waiting at most `bound`.
///
/// Errors: a failed read, or one that did not complete in the bound: `src`'s device is then
/// marked dead and `buf`'s memory leaked (replaced by an empty vector; the driver may still
/// write into it).
fn read_bounded(
    engine: &Engine,
    src: &Endpoint,
    off: usize,
    buf: &mut Vec<u8>,
    bound: std::time::Duration,
) -> Result<(), String> {
    let mut pending = super::PendingReads::default();
    // SAFETY: clprism's replica or the app's (retained) buffer, the range inside it; `buf`
    // lives until the read completed, or is leaked.
    let ev = unsafe { cl::read_async(src.read_q, src.mem, off, buf) }.map_err(|e| e.to_string())?;
    pending.push(src.device, ev);
    pending.settle(Some(engine), bound).map_err(|u| {
        if u.stalled {
            std::mem::forget(std::mem::take(buf));
        }
        u.why
    })
}
