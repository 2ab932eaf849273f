//! Steps 2-5 of a balanced launch in two halves (DESIGN.md §7, "Pipelining"): [`Front`]
//! (replicas, uploads, the chunks issued, `sched::driver::issue`) and the back half (the
//! chunks waited for, `sched::driver::resume`, the directory's bookkeeping or the merge, what
//! the launch teaches the next ones, its record). [`WorkerState::balanced`] runs them in
//! order; between them the launch thread may take up the app's next launch ([`super::ahead`]).

use super::{chunks, plan, readback, record, replicas, Ctx, InFlight, Outcome, WorkerState};
use crate::exec::staging::{HostBytes, Role};
use crate::exec::{ChunkDone, Engine, Job};
use crossbeam_channel::Receiver;
use opencl_sys::*;
use std::time::Instant;

/// A launch through [`WorkerState::front`]: planned, its chunks issued and not waited for.
pub(super) struct Front {
    pub(super) plan: plan::Plan,
    /// The snapshots, with the uploads from them.
    pub(super) uploads: InFlight<Vec<Option<HostBytes>>>,
    pub(super) targets: replicas::Targets,
    pub(super) home: cl_command_queue,
    pub(super) started: chunks::Started,
    pub(super) t0: Instant,
    /// The directory took this launch's slabs as written before its chunks ended (the
    /// launch behind it was planned then, [`ahead`]): the bytes only devices hold.
    pub(super) kept_early: Option<u64>,
    /// The launch was taken up while the one before it ran.
    pub(super) issued_ahead: bool,
    /// Halo bytes pushed behind its chunks for the launch expected next ([`super::forecast`]).
    pub(super) pushed: u64,
}

impl WorkerState {
    /// The steps of a planned launch up to its chunks, issued and not waited for: the
    /// directory settled, the pre-launch contents and replicas, the upload ring, the early
    /// read-back areas, the scheduler and the chunks it assigns first.
    pub(super) fn front(
        &mut self,
        engine: &Engine,
        done_rx: &Receiver<ChunkDone>,
        job: &Job,
        mut plan: plan::Plan,
        t0: Instant,
    ) -> Result<Front, crate::exec::Forward> {
        let at = |what: &str| {
            crate::config::debug(|| {
                format!(
                    "launch {}: {what} at {:.1} us",
                    job.rec.seq,
                    t0.elapsed().as_nanos() as f64 / 1e3
                )
            })
        };
        self.issue.wide = plan.devs.len() >= 3 && Self::gpus_of(engine, &plan);
        self.settle_directory(engine, &plan)?;
        at("directory settled");
        let home = self
            .home_queue(job.app_context, job.app_device)
            .map_err(|e| e.to_string())?;
        let mut streamed: Vec<bool> = plan.bufs.iter().map(|b| self.streams(&plan, b)).collect();
        // the snapshots, with the uploads from them (leaked when a device does not answer)
        let mut uploads = InFlight::new(self.snapshots(job, &plan, home, &mut streamed)?);
        crate::config::debug(|| {
            format!(
                "launch {}: buffers through the upload ring: {streamed:?}",
                job.rec.seq
            )
        });
        plan.mark("snapshot", t0);
        let mut up = replicas::HostUploads {
            snapshots: uploads.area.as_deref().unwrap_or_default(),
            streamed: &streamed,
            streams: vec![Vec::new(); plan.bufs.len()],
            markers: &mut uploads.pending,
        };
        let targets = self.prepare_devices(engine, job, &mut plan, &mut up)?;
        at("devices prepared");
        let streams = up.streams;
        self.stream_uploads(job, &plan, home, &streams)?;
        if streams.iter().any(|t| !t.is_empty()) {
            plan.mark("upload_ring", t0);
        }
        let staging = self.early_staging(job, &plan, home);
        at("staging ready");
        let cx = Ctx {
            engine,
            job,
            plan: &plan,
        };
        let started = self.start_chunks(cx, done_rx, &targets, staging, t0)?;
        Ok(Front {
            plan,
            uploads,
            targets,
            home,
            started,
            t0,
            kept_early: None,
            issued_ahead: false,
            pushed: 0,
        })
    }

    /// The steps of a launch after [`Self::front`]: its chunks to their end, then either
    /// the directory's bookkeeping (results stay on the devices) or the merge and write-back,
    /// what the launch teaches the next ones, and its record.
    pub(super) fn back(
        &mut self,
        engine: &Engine,
        done_rx: &Receiver<ChunkDone>,
        job: &Job,
        front: Front,
    ) -> Result<Outcome, crate::exec::Forward> {
        let Front {
            mut plan,
            mut uploads,
            targets,
            home,
            started,
            t0,
            kept_early,
            issued_ahead,
            pushed,
        } = front;
        let cx = Ctx {
            engine,
            job,
            plan: &plan,
        };
        let run = self.finish_chunks(cx, done_rx, &targets, started);
        if kept_early.is_some() {
            // the launch taken up behind this one read what the directory said these chunks
            // wrote: a chunk that failed (its work redone elsewhere, or the launch given up)
            // fails that launch too
            let failed = run.as_ref().map_or(Some(CL_OUT_OF_RESOURCES), |r| {
                r.chunks.iter().find_map(|c| c.failed)
            });
            if let Some(code) = failed {
                self.fail_ahead(code);
            }
        }
        let mut run = run?;
        let bound = run.response_bound(0);
        let mut resident_bytes = None;
        let merged = if plan.resident {
            plan.marks.push(("chunks", run.makespan_ns));
            uploads.settle(engine, bound)?;
            self.probe_stragglers(engine, &plan, &run);
            Self::no_dead_device(engine, &plan)?;
            let remote = self.read_remote_results(engine, &plan, &run)?;
            Self::no_dead_device(engine, &plan)?;
            let failed = run.chunks.iter().any(|c| c.failed.is_some());
            let kept = match kept_early {
                Some(kept) if !failed => kept,
                _ => self.keep_resident(job, &plan, &run),
            };
            plan.mark("keep_resident", t0);
            let secured = self.secure_remote_results(job, remote);
            if secured > 0 {
                engine.traffic.secured(secured);
                plan.mark("secure_remote", t0);
            }
            resident_bytes = Some(kept.saturating_sub(secured));
            readback::Merged::default()
        } else {
            let cx = Ctx {
                engine,
                job,
                plan: &plan,
            };
            let merged = self.merge(cx, &mut run, &uploads, home)?;
            plan.marks.push(("chunks", run.makespan_ns));
            uploads.settle(engine, bound)?;
            Self::no_dead_device(engine, &plan)?;
            plan.mark("read_back", t0);
            // only now, with every buffer merged without conflict, the app's data changes
            self.write_back(&merged, home)?;
            plan.mark("write_back", t0);
            merged
        };
        engine.note_tracked(self.directory.len());
        self.learn(engine, job, &plan, &run);
        let verify = plan.verify.then(|| {
            let written: Vec<_> = plan
                .bufs
                .iter()
                .zip(uploads.iter())
                .filter(|(b, _)| b.written)
                .filter_map(|(b, s)| Some((b.index, b.mem, s.as_ref()?.to_vec())))
                .collect();
            let injected = plan
                .devs
                .iter()
                .zip(&run.per_dev_units)
                .any(|(&d, &u)| u > 0 && engine.devices[d].inject_differ);
            self.verify(job, &written, plan.check_agreement, injected)
        });
        if plan.check_agreement {
            let off_app = plan
                .devs
                .iter()
                .zip(&run.per_dev_units)
                .any(|(&d, &u)| u > 0 && engine.devices[d].id != job.app_device);
            match verify.as_ref().and_then(|v| v.differing_bytes) {
                Some(n) if n > 0 || off_app => {
                    self.agreement.insert(plan.key.clone(), n);
                }
                _ => {}
            }
        }
        // keep the staging areas for the next launch (their transfers have all completed)
        for (b, snap) in plan
            .bufs
            .iter()
            .zip(uploads.into_area().unwrap_or_default())
        {
            if let Some(h) = snap {
                self.host_pool.give(b.mem, Role::Snapshot, h);
            }
        }
        let makespan_ns = run.makespan_ns;
        let fetched = run.fetched;
        engine.traffic.launch(resident_bytes.is_some(), fetched);
        let mut schedule = record::schedule(engine, job, plan, run, &merged);
        schedule.verify = verify;
        schedule.fetched_bytes = Some(fetched);
        if let Some(b) = resident_bytes {
            schedule.resident_bytes = Some(b);
            schedule.merge = Some(crate::log::schema::Merge::Resident);
        }
        for (mem, _, h) in merged.results {
            self.host_pool.give(mem, Role::ReadBack, h);
        }
        schedule.issued_ahead = issued_ahead.then_some(true);
        schedule.pushed_bytes = (pushed > 0).then_some(pushed);
        Ok(Outcome {
            makespan_ns,
            schedule,
            t0,
        })
    }
}
