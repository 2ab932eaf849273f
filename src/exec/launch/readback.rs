//! Step 6 of a balanced launch: the merge (DESIGN.md §7, "Merge"). The bytes each device
//! wrote are read back (a footprint merge reads only the written ranges, some of them early,
//! while other chunks still ran; a diff merge compares whole replicas with the pre-launch
//! contents) and only then, with every buffer merged without conflict, written into the
//! app's buffers.

use super::chunks::ChunkRun;
use super::plan::Plan;
use super::{BufArg, Ctx, PendingReads, ReadBack, WorkerState};
use crate::exec::cl::{self, ClError};
use crate::exec::footprint;
use crate::exec::staging::{HostBytes, Role};
use crate::exec::{Engine, Job};
use crate::log::schema::Verify;
use crate::registry::tables::{buffer_named_by, KernelArg, Key};
use opencl_sys::*;
use rustc_hash::FxHashMap;

/// What the merge read back, to be written into the app's buffers.
#[derive(Default)]
pub(super) struct Merged {
    /// (app buffer, byte ranges to write, host bytes valid inside them).
    pub results: Vec<(Key, Vec<[u64; 2]>, HostBytes)>,
    /// (app buffer, replica of the app's device, ranges it wrote): device-side copies.
    pub device_copies: Vec<(Key, cl_mem, Vec<[u64; 2]>)>,
    /// Bytes merged (`schedule.merged_bytes`).
    pub bytes: u64,
}

impl WorkerState {
    /// Reads back what every completed chunk wrote, for every written buffer.
    ///
    /// Errors: overlapping footprints, two devices writing different values to one byte, a
    /// failed read; nothing of the app's data has changed then.
    pub(super) fn merge(
        &mut self,
        cx: Ctx,
        run: &mut ChunkRun,
        snapshots: &[Option<HostBytes>],
        home: cl_command_queue,
    ) -> Result<Merged, String> {
        let plan = cx.plan;
        let mut merged = Merged {
            results: Vec::new(),
            device_copies: Vec::new(),
            bytes: 0,
        };
        for (b, snap) in plan.bufs.iter().zip(snapshots) {
            if !b.written {
                continue;
            }
            let footprint = plan
                .model
                .as_ref()
                .and_then(|m| m.written.iter().find(|w| w.arg == b.index as u32));
            let (ranges, bytes, n) = match footprint {
                Some(w) => {
                    let (ranges, bytes, n, on_device) =
                        self.footprint_merge(cx, run, b, w, home)?;
                    if let Some(h) = plan.home_d {
                        let rep = self.replicas[&(b.mem, plan.slot(h))].mem;
                        merged.device_copies.push((b.mem, rep, on_device));
                    }
                    (ranges, bytes, n)
                }
                None => {
                    let base = snap.as_ref().ok_or_else(|| {
                        format!("argument {}: no pre-launch copy to diff against", b.index)
                    })?;
                    let bytes = self.diff_merge(cx, run, b, base, home)?;
                    let len = bytes.len() as u64;
                    (vec![[0, len]], bytes, len)
                }
            };
            merged.bytes += n;
            merged.results.push((b.mem, ranges, bytes));
        }
        Ok(merged)
    }

    /// The written ranges of buffer `b` by footprint `w`: read early or now, from each
    /// device that ran them; the app's own device's ranges stay on it.
    fn footprint_merge(
        &mut self,
        cx: Ctx,
        run: &mut ChunkRun,
        b: &BufArg,
        w: &footprint::WrittenArg,
        home: cl_command_queue,
    ) -> Result<ReadBack, String> {
        let Ctx { engine, job, plan } = cx;
        let early_chunks = &run.early_chunks;
        let pieces = run
            .done
            .iter()
            .flat_map(|c| {
                let read = early_chunks.contains(&c.id);
                w.chunk_ranges(c.first_wg, c.count)
                    .into_iter()
                    .map(move |r| (r, c.device, read))
            })
            .collect::<Vec<_>>();
        // the early reads must have landed before their bytes are used
        let bound = run.response_bound(b.size as u64);
        run.staging.settle(engine, bound)?;
        let home_sched = plan.home_sched();
        let staged = match run.staging.take(b.mem) {
            Some(s) => Some(s),
            // (no area when the app's device wrote everything: nothing is read)
            None if pieces.iter().all(|p| !p.2)
                && pieces.iter().any(|p| Some(p.1) != home_sched) =>
            {
                // SAFETY: clprism's queue in the app's context, alive for the process.
                Some(unsafe {
                    self.host_pool
                        .take(b.mem, Role::ReadBack, b.size, job.app_context, home)
                })
            }
            None => None,
        };
        self.read_pieces(engine, plan, b, pieces, staged, bound)
            .map_err(|e| format!("argument {}: {e}", b.index))
    }

    /// Buffer `b` merged by comparing every contributing device's replica with the
    /// pre-launch contents `base`; the replicas are read concurrently into page-locked areas
    /// kept for the next launch (a fresh heap area reads at a fraction of the bus rate: 64 MiB
    /// took 70-80 ms on 4 H200s, results/gpu-2026-11-22g).
    fn diff_merge(
        &mut self,
        cx: Ctx,
        run: &ChunkRun,
        b: &BufArg,
        base: &HostBytes,
        home: cl_command_queue,
    ) -> Result<HostBytes, String> {
        let Ctx { engine, job, plan } = cx;
        let contributors: Vec<usize> = (0..plan.devs.len())
            .filter(|i| run.per_dev_units[*i] > 0)
            .collect();
        let mut copies: Vec<HostBytes> = contributors
            .iter()
            .map(|&i| {
                // SAFETY: as for the snapshots.
                unsafe {
                    self.host_pool
                        .take(b.mem, Role::DiffCopy(i), b.size, job.app_context, home)
                }
            })
            .collect();
        let mut reads = PendingReads::default();
        let mut failed = None;
        for (&i, copy) in contributors.iter().zip(copies.iter_mut()) {
            let d = plan.devs[i];
            // SAFETY: non-blocking read on clprism's in-order queue (after the device's
            // chunks) into `copy`, which outlives the wait below (leaked if it stalls).
            match unsafe {
                cl::read_async(
                    engine.devices[d].queue,
                    self.replicas[&(b.mem, d)].mem,
                    0,
                    copy,
                )
            } {
                Ok(ev) => reads.push(Some(d), ev),
                Err(e) => {
                    failed = Some(format!("reading back from {}: {e}", engine.devices[d].name));
                    break;
                }
            }
        }
        let bound = run.response_bound(b.size as u64);
        let mut copies = settle_reads(&mut reads, engine, bound, copies, failed)?;
        if copies.len() == 1 {
            return Ok(copies.pop().unwrap_or_else(|| HostBytes::heap(0)));
        }
        // SAFETY: as for the snapshots.
        let mut out = unsafe {
            self.host_pool
                .take(b.mem, Role::ReadBack, b.size, job.app_context, home)
        };
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let refs: Vec<&[u8]> = copies.iter().map(|c| &c[..]).collect();
        let merged = crate::exec::merge::diff_merge_into(&mut out, &base[..], &refs, threads);
        for (&i, c) in contributors.iter().zip(copies) {
            self.host_pool.give(b.mem, Role::DiffCopy(i), c);
        }
        merged.map_err(|j| {
            format!(
                "argument {}: two devices wrote different values to byte {j} (work-groups overlap)",
                b.index
            )
        })?;
        Ok(out)
    }

    /// Writes the merged bytes into the app's buffers on clprism's `home` queue and waits.
    /// Every replica of a written buffer is then stale (the app's buffer changed without an
    /// app command bumping its epoch), on every device, also those that sat this launch out.
    pub(super) fn write_back(
        &mut self,
        merged: &Merged,
        home: cl_command_queue,
    ) -> Result<(), String> {
        for (mem, ranges, bytes) in &merged.results {
            for r in ranges {
                let piece = &bytes[r[0] as usize..r[1] as usize];
                // SAFETY: non-blocking write from `bytes`, which outlives the finish below.
                unsafe { cl::write(home, *mem as cl_mem, r[0] as usize, piece, false) }
                    .map_err(|e| format!("writing the merged result: {e}"))?;
            }
        }
        for (mem, replica, ranges) in &merged.device_copies {
            for r in ranges {
                let (off, len) = (r[0] as usize, (r[1] - r[0]) as usize);
                // SAFETY: device-side copy between buffers of the app's context; the chunks
                // that wrote the replica have completed.
                unsafe { cl::copy(home, *replica, *mem as cl_mem, off, off, len) }
                    .map_err(|e| format!("copying the app device's result: {e}"))?;
            }
        }
        // SAFETY: clprism's own queue in the app's context.
        unsafe { cl::finish(home) }.map_err(|e| format!("writing the merged result: {e}"))?;
        for (mem, _, _) in &merged.results {
            for ((m, _), r) in self.replicas.iter_mut() {
                if m == mem {
                    r.epoch = 0;
                }
            }
        }
        Ok(())
    }

    /// Enqueues non-blocking reads of the bytes that units `[first, first + count)` wrote on
    /// balance device `d` (per the plan's footprint model) into `staging`, on the device's second
    /// queue; their events go to `events`. Returns false (the merge then reads them itself)
    /// when a read could not be enqueued. `staging` must hold the area of every written buffer
    /// the model covers ([`crate::exec::staging::EarlyAreas::all_ready`]): a buffer without
    /// one is skipped, yet the chunk counts as read early for all.
    pub(super) fn read_early(
        &mut self,
        engine: &Engine,
        d: usize,
        plan: &Plan,
        staging: &mut FxHashMap<Key, HostBytes>,
        (first, count): (u64, u64),
        events: &mut PendingReads,
    ) -> bool {
        let Some(m) = plan.model.as_deref() else {
            return false;
        };
        let Ok(q) = self.read_queue(engine, d) else {
            return false;
        };
        let mut ok = true;
        for b in plan.bufs.iter().filter(|b| b.written) {
            let (Some(w), Some(stage), Some(rep)) = (
                m.written.iter().find(|w| w.arg == b.index as u32),
                staging.get_mut(&b.mem),
                self.replicas.get(&(b.mem, d)),
            ) else {
                continue;
            };
            for r in w.chunk_ranges(first, count) {
                let (lo, hi) = (r[0] as usize, r[1] as usize);
                let Some(piece) = stage.get_mut(lo..hi) else {
                    return false;
                };
                // SAFETY: non-blocking read on clprism's queue into `piece`; the chunk that
                // wrote these bytes has completed, and `staging` outlives `events` (waited
                // for before it is used or dropped).
                match unsafe { cl::read_async(q, rep.mem, lo, piece) } {
                    Ok(ev) => events.push(Some(d), ev),
                    Err(_) => ok = false,
                }
            }
        }
        // (also after a failure: the reads enqueued are waited for by polling, which does
        // not flush)
        // SAFETY: clprism's queue.
        let _ = unsafe { cl::flush(q) };
        ok
    }

    /// Collects the bytes that completed chunks wrote to `buf`: `pieces` are (byte range,
    /// scheduler device, already read early into `staged`). Ranges of the app's own device
    /// stay on it (returned for device-side copies); the others are read back now unless
    /// read early. Errors: overlapping footprints, a range past the buffer, a failed read.
    fn read_pieces(
        &self,
        engine: &Engine,
        plan: &Plan,
        buf: &BufArg,
        mut pieces: Vec<([u64; 2], usize, bool)>,
        staged: Option<HostBytes>,
        bound: std::time::Duration,
    ) -> Result<ReadBack, String> {
        let (mem, size) = (buf.mem, buf.size);
        pieces.sort_unstable_by_key(|p| p.0);
        let mut end = 0u64;
        for (r, _, _) in &pieces {
            if r[0] < end {
                return Err(format!(
                    "chunks on different devices write byte {} (footprints overlap)",
                    r[0]
                ));
            }
            end = r[1];
        }
        if end > size as u64 {
            return Err(format!(
                "the footprint reaches byte {end} of a {size}-byte buffer"
            ));
        }
        let (on_device, pieces): (Vec<_>, Vec<_>) = pieces
            .into_iter()
            .partition(|p| Some(p.1) == plan.home_sched());
        let on_device = footprint::normalise(on_device.into_iter().map(|p| p.0).collect());
        // pieces already read back early are in `staged`
        let mut bytes = match staged {
            Some(v) if v.len() == size => v,
            // the app's device wrote every piece in place: nothing to read (a zeroed heap
            // area of the buffer's size cost 1-7 ms per 16 MiB, results/gpu-2026-11-22o)
            _ if pieces.is_empty() => HostBytes::heap(0),
            _ => {
                if pieces.iter().any(|p| p.2) {
                    return Err("early read-back lost its staging buffer".into());
                }
                HostBytes::heap(size)
            }
        };
        let mut reads = PendingReads::default();
        let mut failed = None;
        let mut total: u64 = on_device.iter().map(|r| r[1] - r[0]).sum();
        let mut rest: &mut [u8] = &mut bytes;
        let mut pos = 0u64;
        for (r, d, early) in &pieces {
            if *early {
                total += r[1] - r[0];
                continue;
            }
            let tail = std::mem::take(&mut rest);
            let (_, tail) = tail.split_at_mut((r[0] - pos) as usize);
            let (piece, tail) = tail.split_at_mut((r[1] - r[0]) as usize);
            rest = tail;
            pos = r[1];
            let dev = &engine.devices[plan.devs[*d]];
            // SAFETY: non-blocking read on clprism's in-order queue (after the device's
            // chunks) into `piece`, which outlives the wait below (leaked if it stalls).
            match unsafe {
                cl::read_async(
                    dev.queue,
                    self.replicas[&(mem, plan.devs[*d])].mem,
                    r[0] as usize,
                    piece,
                )
            } {
                Ok(ev) => reads.push(Some(plan.devs[*d]), ev),
                Err(e) => {
                    failed = Some(format!("reading back from {}: {e}", dev.name));
                    break;
                }
            }
            total += r[1] - r[0];
        }
        let bytes = settle_reads(&mut reads, engine, bound, bytes, failed)?;
        let ranges = footprint::normalise(pieces.into_iter().map(|p| p.0).collect());
        Ok((ranges, bytes, total, on_device))
    }

    /// `CLPRISM_VERIFY=1`: runs the launch natively on copies of the written buffers (their
    /// pre-launch contents) and compares every byte with the merged result. With `restore`
    /// (a kernel's agreement check), a buffer that differs gets the native run's bytes, so
    /// the app sees what its own device computes.
    pub(super) fn verify(
        &mut self,
        job: &Job,
        written: &[(usize, Key, Vec<u8>)],
        restore: bool,
        inject_differ: bool,
    ) -> Verify {
        let r = (|| -> Result<Verify, ClError> {
            let q = self.home_queue(job.app_context, job.app_device)?;
            // SAFETY: clprism-owned scratch buffers and kernel in the app's context.
            unsafe {
                let k = cl::create_kernel(job.app_program, &job.kernel)?;
                let mut scratch = Vec::new();
                for (i, a) in job.args.iter().enumerate() {
                    if let Some((_, _, pre)) = written
                        .iter()
                        .find(|w| w.0 == i || buffer_named_by(a) == Some(w.1))
                    {
                        let m = cl::create_buffer(job.app_context, pre.len())?;
                        cl::write(q, m, 0, pre, true)?;
                        cl::set_arg(
                            k,
                            i as u32,
                            std::mem::size_of::<cl_mem>(),
                            (&m as *const cl_mem).cast(),
                        )?;
                        scratch.push((i, m));
                    } else {
                        match a {
                            KernelArg::Value(b) => cl::set_arg(
                                k,
                                i as u32,
                                b.as_slice().len(),
                                b.as_slice().as_ptr().cast(),
                            )?,
                            KernelArg::Local(n) => cl::set_arg(k, i as u32, *n, std::ptr::null())?,
                        }
                    }
                }
                let d = job.work_dim as usize;
                let ev = cl::enqueue_ndrange(
                    q,
                    k,
                    job.work_dim,
                    &job.offset[..d],
                    &job.global[..d],
                    &job.local[..d],
                    &[],
                )?;
                cl::wait(&[ev])?;
                cl::release_event(ev);
                let mut differing = 0u64;
                for (i, m) in &scratch {
                    let mem = buffer_named_by(&job.args[*i]).unwrap_or(0);
                    let len = written
                        .iter()
                        .find(|w| w.1 == mem)
                        .map(|w| w.2.len())
                        .unwrap_or(0);
                    let mut native = vec![0u8; len];
                    let mut merged = vec![0u8; len];
                    cl::read(q, *m, 0, &mut native)?;
                    cl::read(q, mem as cl_mem, 0, &mut merged)?;
                    if inject_differ {
                        // CLPRISM_FAULT=differ:I: as if device I had rounded one value otherwise
                        if let Some(b) = merged.first_mut() {
                            *b ^= 1;
                        }
                    }
                    let here = native.iter().zip(&merged).filter(|(a, b)| a != b).count() as u64;
                    if restore && here > 0 {
                        cl::write(q, mem as cl_mem, 0, &native, true)?;
                    }
                    differing += here;
                    cl::release_mem(*m);
                }
                cl::release_kernel(k);
                if differing > 0 && !restore {
                    crate::config::warn(&format!("CLPRISM_VERIFY: kernel {} launch {}: {differing} bytes differ from the native run", job.kernel, job.rec.seq));
                }
                Ok(Verify::differing(differing))
            }
        })();
        r.unwrap_or_else(|e| Verify::failed(e.to_string()))
    }
}

/// Waits for the read-backs `reads` (at most `bound`), then gives `failed`'s error if a read
/// could not be started: `areas` (the host memory they read into) back when every read
/// completed; leaked when one stalled (the driver may still write into it).
///
/// Errors: a read that failed, stalled or was never started.
fn settle_reads<T>(
    reads: &mut PendingReads,
    engine: &Engine,
    bound: std::time::Duration,
    areas: T,
    failed: Option<String>,
) -> Result<T, String> {
    if let Err(u) = reads.settle(Some(engine), bound) {
        if u.stalled {
            std::mem::forget(areas);
        }
        return Err(format!("reading back: {}", u.why));
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(areas),
    }
}
