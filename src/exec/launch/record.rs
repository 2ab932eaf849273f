//! Step 7 of a balanced launch: what it teaches the next launches (Ω for Boyer's warm start,
//! measured speeds, the whole-launch time and the merge cost for `sched::split`) and its
//! `schedule` record (`log::schema::Schedule`).

use super::chunks::ChunkRun;
use super::plan::Plan;
use super::readback::Merged;
use super::WorkerState;
use crate::exec::staging::StagingPool;
use crate::exec::{Engine, Job};
use crate::log::schema::{Merge, Phase, Schedule, ScheduleDevice};

impl WorkerState {
    /// Keeps what this completed launch measured for the kernel's later launches.
    pub(super) fn learn(&mut self, engine: &Engine, job: &Job, plan: &Plan, run: &ChunkRun) {
        let kid = job.kernel_id();
        let history_key = (kid.clone(), plan.shape.units, plan.devs.clone());
        self.history.insert(history_key, run.history.clone());
        // measured speed per device (for `best`)
        let m = self
            .measured
            .entry(kid.clone())
            .or_insert_with(|| vec![None; engine.devices.len()]);
        for (i, &d) in plan.devs.iter().enumerate() {
            let ns: u64 = run
                .done
                .iter()
                .filter(|c| c.device == i)
                .filter_map(|c| run.chunks.get(c.id as usize)?.device_ns)
                .sum();
            if run.per_dev_units[i] > 0 && ns > 0 {
                m[d] = Some(ns as f64 / (run.per_dev_units[i] * plan.shape.wgs_per_unit) as f64);
            }
        }
        // for `sched::split`: the whole run on the app's device, or a split's merge cost
        if plan.devs.len() == 1 && Some(plan.devs[0]) == plan.app_d {
            if let Some(t) = m[plan.devs[0]] {
                self.whole.insert(kid.clone(), t);
            }
        } else if plan.devs.len() > 1 {
            let phase = |name: &str| {
                let i = plan.marks.iter().position(|(n, _)| *n == name)?;
                Some(plan.marks[i].1 - if i > 0 { plan.marks[i - 1].1 } else { 0 })
            };
            if let (Some(r), Some(w)) = (phase("read_back"), phase("write_back")) {
                self.merge_cost.insert(kid.clone(), (r + w) as f64);
            }
        }
        for b in &plan.bufs {
            let epoch = job.epochs.get(&b.mem).copied().unwrap_or(1);
            // (the app's writes to it wait for this launch: its host epoch cannot move now)
            let host = crate::exec::host_epoch(b.mem);
            self.last_epochs.insert((kid.clone(), b.mem), (epoch, host));
        }
    }
}

/// The `schedule` record of a completed balanced launch.
pub(super) fn schedule(
    engine: &Engine,
    job: &Job,
    plan: Plan,
    run: ChunkRun,
    merged: &Merged,
) -> Schedule {
    let ends: Vec<u64> = run.finish.iter().flatten().copied().collect();
    let idle_tail = match (ends.iter().min(), ends.iter().max()) {
        (Some(a), Some(b)) => b - a,
        _ => 0,
    };
    let total: u64 = run.per_dev_units.iter().sum();
    let mut start = 0u64;
    let phases = plan
        .marks
        .iter()
        .map(|(name, end)| {
            let p = Phase {
                name: name.to_string(),
                start_ns: start,
                end_ns: *end,
            };
            start = *end;
            p
        })
        .collect();
    Schedule {
        scheduler: Some(match &run.owner_computes {
            // the launch ran the shape's resident slabs (`WorkerState::update_partition`)
            Some(kind) => format!("{} (owner computes: {kind})", plan.kind),
            None => plan
                .configured
                .clone()
                .unwrap_or_else(|| plan.kind.to_string()),
        }),
        warm_start: Some(run.warm),
        split_decision: plan.split_log,
        devices_excluded: Some(plan.excluded),
        devices: plan
            .devs
            .iter()
            .map(|d| ScheduleDevice {
                index: engine.devices[*d].index.clone(),
                name: engine.devices[*d].name.clone(),
            })
            .collect(),
        split_dim: Some(plan.shape.split as u32),
        work_groups: Some(plan.shape.units),
        wgs_per_unit: Some(plan.shape.wgs_per_unit),
        wave_work_groups: Some(run.wave_wgs),
        registers_per_work_item: Some(run.registers),
        chunks: run.chunks,
        share: Some(
            run.per_dev_units
                .iter()
                .map(|w| {
                    if total > 0 {
                        *w as f64 / total as f64
                    } else {
                        0.0
                    }
                })
                .collect(),
        ),
        idle_tail_ns: Some(idle_tail),
        makespan_ns: Some(run.makespan_ns),
        merge: Some(if plan.model.is_some() {
            Merge::Footprint
        } else {
            Merge::Diff
        }),
        merged_bytes: Some(merged.bytes),
        early_read_chunks: Some(run.early_chunks.len() as u64),
        pinned_staging_bytes: Some(StagingPool::pinned_bytes()),
        footprint: plan.footprint_log,
        app_device_direct: Some(plan.home_d.is_some()),
        phases: Some(phases),
        local_chosen: Some(!job.local_given),
        fallback: None,
        best: plan.best_log,
        ..Default::default()
    }
}
