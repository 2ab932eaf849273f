//! Step 4 of a balanced launch: the pre-launch contents of the app's buffers and each
//! device's replicas of them, brought up to date, with the kernel's arguments bound to them
//! (DESIGN.md §7, "Replicas").

use super::plan::Plan;
use super::{PendingReads, Replica, WorkerState};
use crate::exec::cl::{self, ClError};
use crate::exec::staging::{EarlyAreas, HostBytes, Role, UploadRing, RING_MIN_BYTES};
use crate::exec::{Engine, Job};
use crate::registry::tables::{buffer_named_by, KernelArg, Key};
use opencl_sys::*;
use rustc_hash::FxHashMap;
use std::time::Instant;

/// Where each participating device's chunks run: (context, queue, kernel).
pub(super) type Targets = FxHashMap<usize, (cl_context, cl_command_queue, cl_kernel)>;

/// Per buffer argument (in `plan.bufs` order), the replicas (device queue, replica) that
/// [`WorkerState::stream_uploads`] fills through the upload ring.
pub(super) type StreamTargets = Vec<Vec<(cl_command_queue, cl_mem)>>;

/// How the launch's buffers reach the other devices, per buffer argument (in `plan.bufs`
/// order): its pre-launch copy, or whether it goes through the upload ring (then
/// [`WorkerState::prepare_devices`] lists the replicas to fill in `streams`); `markers` gets
/// one marker per device given a copy, waited for before the copies are freed.
pub(super) struct HostUploads<'a> {
    pub snapshots: &'a [Option<HostBytes>],
    pub streamed: &'a [bool],
    pub streams: StreamTargets,
    pub markers: &'a mut PendingReads,
}

impl WorkerState {
    /// The pre-launch contents of each buffer argument (in `plan.bufs` order) that some
    /// device needs from the host; `None` where no device does. Measures the host transfer
    /// rate on the way.
    pub(super) fn snapshots(
        &mut self,
        job: &Job,
        plan: &Plan,
        home: cl_command_queue,
        streamed: &mut [bool],
    ) -> Result<Vec<Option<HostBytes>>, String> {
        let others = plan.devs.iter().any(|d| Some(*d) != plan.home_d);
        let mut snapshots = Vec::new();
        for (b, streamed) in plan.bufs.iter().zip(streamed.iter_mut()) {
            // a buffer the directory tracks is fetched by each chunk ([`super::resident`])
            if self.tracked(b.mem) {
                *streamed = false;
                snapshots.push(None);
                continue;
            }
            let epoch = job.epochs.get(&b.mem).copied().unwrap_or(1);
            let stale = (plan.verify && b.written)
                || (others && (b.always_stale || (b.written && !plan.skip_baseline(b))))
                // a buffer the kernel only writes needs no valid replica at all
                || (!plan.skip_baseline(b)
                    && plan.devs.iter().filter(|d| Some(**d) != plan.home_d).any(|d| {
                        self.replicas
                            .get(&(b.mem, plan.slot(*d)))
                            .map(|r| r.epoch != epoch)
                            .unwrap_or(true)
                    }));
            // a buffer no device needs is not streamed either
            *streamed &= stale;
            if *streamed || !stale {
                snapshots.push(None);
                continue;
            }
            let t_read = Instant::now();
            // SAFETY: `home` is clprism's queue in the app's context, alive for the process.
            let mut v = unsafe {
                self.host_pool
                    .take(b.mem, Role::Snapshot, b.size, job.app_context, home)
            };
            // SAFETY: reading the app's (retained) buffer on clprism's queue.
            unsafe { cl::read(home, b.mem as cl_mem, 0, &mut v) }
                .map_err(|e| format!("reading the app's buffer: {e}"))?;
            // (a fresh pinned area's first use also pays the driver's page-locking)
            if self.host_pool.last_reused() {
                self.note_host_transfer(b.size, t_read.elapsed().as_nanos() as f64);
            }
            snapshots.push(Some(v));
        }
        Ok(snapshots)
    }

    /// `bytes` went between the app's device and host memory (or on through the upload
    /// ring, whose reads and writes overlap) in `ns`: the measured host rate, a running
    /// mean, for `sched::split` and the early decision. Transfers under 1 MiB are left out
    /// (their latency, not the rate). On 2 H200s the ring moved 1 GiB in 21-22 ms
    /// (results/session20 `f-logs`), five times the 10 GB/s assumed before a measurement.
    fn note_host_transfer(&mut self, bytes: usize, ns: f64) {
        if bytes < 1 << 20 || ns <= 0.0 {
            return;
        }
        let r = bytes as f64 / ns;
        self.host_rate = Some(self.host_rate.map_or(r, |old| 0.5 * old + 0.5 * r));
    }

    /// Whether buffer `b`, if some device needs it, goes to the other devices through the
    /// upload ring rather than a pre-launch copy of its own ([`UploadRing`]): a large buffer
    /// with no pooled area yet (its first split launch), whose pre-launch bytes nothing else
    /// needs (no diff-merge, no verification). [`Self::snapshots`] clears the flag of a buffer
    /// no device needs.
    pub(super) fn streams(&self, plan: &Plan, b: &super::BufArg) -> bool {
        b.size >= RING_MIN_BYTES
            && !plan.verify
            && (!b.written
                || plan
                    .model
                    .as_ref()
                    .is_some_and(|m| m.written.iter().any(|w| w.arg == b.index as u32)))
            && !self.host_pool.has_idle(b.mem, Role::Snapshot, b.size)
    }

    /// The upload ring of the app's context `ctx`, made on first use with `home` (clprism's
    /// queue of `ctx`, alive for the process) and kept for the process.
    ///
    /// Errors: the driver's, from the ring's allocation.
    pub(super) fn upload_ring(
        &mut self,
        ctx: cl_context,
        home: cl_command_queue,
    ) -> Result<&mut UploadRing, ClError> {
        Ok(match self.rings.entry(ctx as Key) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            // SAFETY: `home` is clprism's queue of `ctx`, alive for the process.
            std::collections::hash_map::Entry::Vacant(e) => {
                e.insert(unsafe { UploadRing::new(ctx, home)? })
            }
        })
    }

    /// Fills the replicas of `targets` from the app's buffers through the app context's
    /// upload ring (made on first use) and waits for it. On an error every replica of the
    /// buffers concerned is marked as holding nothing valid.
    pub(super) fn stream_uploads(
        &mut self,
        job: &Job,
        plan: &Plan,
        home: cl_command_queue,
        targets: &StreamTargets,
    ) -> Result<(), String> {
        let mut result = Ok(());
        for (b, t) in plan.bufs.iter().zip(targets) {
            if t.is_empty() || result.is_err() {
                continue;
            }
            let ring = match self.upload_ring(job.app_context, home) {
                Ok(r) => r,
                Err(err) => {
                    result = Err(format!("the upload ring: {err}"));
                    continue;
                }
            };
            let t_up = Instant::now();
            // SAFETY: the app's buffer (its commands have completed) and clprism's replicas
            // of its size on clprism's queues.
            result = unsafe { ring.upload(home, b.mem as cl_mem, b.size, t) }
                .map_err(|e| format!("uploading argument {}: {e}", b.index));
            if result.is_ok() {
                self.note_host_transfer(b.size, t_up.elapsed().as_nanos() as f64);
            }
        }
        if result.is_err() {
            for (b, t) in plan.bufs.iter().zip(targets) {
                if t.is_empty() {
                    continue;
                }
                for ((m, _), r) in self.replicas.iter_mut() {
                    if *m == b.mem {
                        r.epoch = 0;
                    }
                }
            }
        }
        result
    }

    /// Brings every participating device's replicas up to date and binds the kernel's
    /// arguments there. A device that fails is dropped from `plan.devs` (with a warning);
    /// `up.markers` gets one marker per device given an upload, waited for before the
    /// snapshots are freed.
    ///
    /// Errors: every device failed.
    pub(super) fn prepare_devices(
        &mut self,
        engine: &Engine,
        job: &Job,
        plan: &mut Plan,
        up: &mut HostUploads,
    ) -> Result<Targets, String> {
        let mut targets = Targets::default();
        let mut dropped = Vec::new();
        for &d in &plan.devs {
            match self.prepare_device(engine, job, plan, up, d) {
                Ok(t) => {
                    targets.insert(d, t);
                }
                // the driver says the device is gone (PoCL-Remote, a server that died):
                // out of every later launch, not dropped launch after launch
                Err(e) if e.code == CL_DEVICE_NOT_AVAILABLE && Some(d) != plan.home_d => {
                    engine.devices[d].mark_dead(&e.to_string());
                    dropped.push(d);
                }
                Err(e) => {
                    crate::config::warn(&format!(
                        "balance: device {} dropped from this launch: {e}",
                        engine.devices[d].name
                    ));
                    dropped.push(d);
                }
            }
        }
        plan.devs.retain(|d| !dropped.contains(d));
        if plan.devs.is_empty() {
            return Err("every device failed while preparing the launch".into());
        }
        Ok(targets)
    }

    /// [`Self::prepare_devices`] for device `d`.
    fn prepare_device(
        &mut self,
        engine: &Engine,
        job: &Job,
        plan: &Plan,
        up: &mut HostUploads,
        d: usize,
    ) -> Result<(cl_context, cl_command_queue, cl_kernel), ClError> {
        let dev = &engine.devices[d];
        let is_home = Some(d) == plan.home_d;
        let (ctx, queue, kernel) = if is_home {
            (
                job.app_context,
                self.home_exec_queue(job.app_context, job.app_device)?,
                self.home_kernel(job)?,
            )
        } else {
            let built = self.kernels[&plan.key][d]
                .as_ref()
                .expect("participating devices have a build");
            (dev.context, dev.queue, built.kernel)
        };
        let mut uploaded = false;
        for (i, (b, snap)) in plan.bufs.iter().zip(up.snapshots).enumerate() {
            let epoch = job.epochs.get(&b.mem).copied().unwrap_or(1);
            let tracked = self.tracked(b.mem);
            let rep = self.replica(ctx, (b.mem, plan.slot(d)), b.size)?;
            if tracked || (rep.epoch == epoch && !b.written && !b.always_stale) {
                continue;
            }
            if is_home {
                if rep.epoch != epoch || b.always_stale || (b.written && !plan.skip_baseline(b)) {
                    // SAFETY: device-side copy from the app's buffer (its commands have
                    // completed) into clprism's replica, same context.
                    unsafe { cl::copy(queue, b.mem as cl_mem, rep.mem, 0, 0, b.size)? };
                    uploaded = true;
                }
            } else if let Some(s) = snap {
                // SAFETY: the snapshot outlives the transfer (upload markers are waited for
                // before it is dropped).
                unsafe { cl::write(queue, rep.mem, 0, &s[..], false)? };
                uploaded = true;
            } else if up.streamed[i] {
                up.streams[i].push((queue, rep.mem));
            }
            rep.epoch = if b.written { 0 } else { epoch };
        }
        // SAFETY: clprism's queue and kernel.
        unsafe {
            // A device given no upload needs no marker and no flush (the chunk's enqueue
            // flushes): on NVIDIA they cost 20-40 µs per device and launch, which resident
            // launches (only halos move, in their own batch) paid on every device.
            if uploaded {
                up.markers
                    .push((!is_home).then_some(d), cl::marker(queue, &[])?);
            }
            self.bind_args(job, plan, kernel, d)?;
            if uploaded {
                cl::flush(queue)?;
            }
        }
        Ok((ctx, queue, kernel))
    }

    /// The replica at `at` (app buffer, slot) of `size` bytes in `ctx`, created (holding
    /// nothing valid) when missing or of another size.
    fn replica(
        &mut self,
        ctx: cl_context,
        at: (Key, usize),
        size: usize,
    ) -> Result<&mut Replica, ClError> {
        if self.replicas.get(&at).is_none_or(|r| r.size != size) {
            // SAFETY: clprism-owned buffer in the device's context.
            let mem = unsafe { cl::create_buffer(ctx, size)? };
            let fresh = Replica {
                mem,
                epoch: 0,
                size,
            };
            if let Some(old) = self.replicas.insert(at, fresh) {
                // SAFETY: clprism's own replica of another size.
                unsafe { cl::release_mem(old.mem) };
            }
        }
        Ok(self.replicas.get_mut(&at).expect("inserted above"))
    }

    /// Sets every argument of clprism's `kernel` on device `d`: buffers name their replicas.
    ///
    /// # Safety
    /// `kernel` is clprism's kernel of the launch on device `d`.
    unsafe fn bind_args(
        &self,
        job: &Job,
        plan: &Plan,
        kernel: cl_kernel,
        d: usize,
    ) -> Result<(), ClError> {
        for (i, a) in job.args.iter().enumerate() {
            match a {
                KernelArg::Local(n) => cl::set_arg(kernel, i as u32, *n, std::ptr::null())?,
                KernelArg::Value(v) => {
                    let replica = buffer_named_by(a)
                        .filter(|m| plan.bufs.iter().any(|b| b.mem == *m))
                        .map(|m| self.replicas[&(m, plan.slot(d))].mem);
                    match replica {
                        Some(rep) => cl::set_arg(
                            kernel,
                            i as u32,
                            std::mem::size_of::<cl_mem>(),
                            (&rep as *const cl_mem).cast(),
                        )?,
                        None => cl::set_arg(
                            kernel,
                            i as u32,
                            v.as_slice().len(),
                            v.as_slice().as_ptr().cast(),
                        )?,
                    }
                }
            }
        }
        Ok(())
    }

    /// Host areas for the early read-back (footprint merge) of every written buffer with a
    /// footprint: as soon as a chunk of another device than the app's completes, the bytes
    /// it wrote are read into them on that device's second queue, overlapping the transfer
    /// with the chunks still running. One buffer-sized area per written argument (zeroed,
    /// so only what is read costs memory); completed chunks write disjoint ranges of it.
    pub(super) fn early_staging(
        &mut self,
        job: &Job,
        plan: &Plan,
        home: cl_command_queue,
    ) -> EarlyAreas {
        let mut staging = EarlyAreas::default();
        let Some(m) = &plan.model else {
            return staging;
        };
        if plan.devs.len() < 2 || plan.verify || plan.resident {
            return staging;
        }
        // Only a GPU's driver is asked to allocate from another thread: PoCL's `basic` device
        // runs queued commands in whichever thread maps, and a map from a second thread
        // deadlocked against the app's thread in PoCL 3.1 (tests/balance.rs, nbody with the
        // app on `basic`). A CPU device's pinned areas are cheap anyway.
        let in_background = crate::registry::device::is_gpu_like(job.app_device);
        for b in plan.bufs.iter().filter(|b| b.written) {
            if m.written.iter().any(|w| w.arg == b.index as u32) {
                if let Some(h) = self.host_pool.take_idle(b.mem, Role::ReadBack, b.size) {
                    staging.insert_ready(b.mem, h);
                } else if in_background && self.host_pool.may_pin(b.size) {
                    // SAFETY: as for the snapshots.
                    unsafe { staging.allocate(b.mem, b.size, job.app_context, home) };
                } else {
                    // SAFETY: as for the snapshots.
                    let area = unsafe {
                        self.host_pool
                            .take(b.mem, Role::ReadBack, b.size, job.app_context, home)
                    };
                    staging.insert_ready(b.mem, area);
                }
            }
        }
        staging
    }
}
