//! What a launch gets when its snapshot cannot be taken (issue 19 item 1, the backlog).
//!
//! Apps enqueue far ahead of the device: a launch's eager copies are released only once
//! the device has reached them and the emulation has run, so a loop that launches one
//! kernel on ever new NDRange shapes (LU, Gram-Schmidt, ADI: the shape follows the loop
//! index) finds the snapshot budget (`CLPRISM_EMU_SNAPSHOT_MAX`) held by the shapes before
//! it. Blocking the app's thread until they are released would serialize it with the
//! device; dropping the launch loses it. Instead the launch takes the statistics of
//! another shape of the *same kernel and work-group size*, emulated already or being
//! emulated (the nearest global size), and is projected with its own shape. This is the
//! same approximation as reusing a key across launches whose by-value arguments differ
//! (the key holds no argument values): one work-group's statistics stand for the kernel.
//! The key's definition says so (`emulation.reused_from`: the key whose statistics it
//! took) and later launches of the key reuse it. When no such shape exists the launch
//! keeps the reason (`unavailable`).
//!
//! The same holds for a launch whose emulation failed because a buffer it only reads was
//! overwritten before the emulation ended and no copy of it could be kept (a *lost*
//! deferred snapshot, `snapshot.rs`): a transient loss, not a property of the key, so the
//! key borrows too, and its definition keeps `snapshot_lost_bytes` and `snapshot_wait_ns`.

use super::{
    attachments, emulation_failed, finish_key, projection_record, projector, reused_attachments,
    LaunchInfo, Waiter,
};
use crate::emu::worker::EmuKey;
use crate::log::schema::{Emulation, EmulationStatus};
use std::sync::atomic::Ordering;

/// A launch (and its key) waiting for another shape's statistics.
pub(super) struct Reshape {
    key: EmuKey,
    info: LaunchInfo,
    /// Why its own snapshot was not taken.
    reason: String,
    note: Note,
}

/// What the launch's own snapshot cost before it was given up, kept in the borrowed
/// result (`emulation.snapshot_lost_bytes`, `emulation.snapshot_wait_ns`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Note {
    pub lost: Option<u64>,
    pub waited_ns: Option<u64>,
}

/// The same kernel of the same program with the same work-group size, another key.
fn alike(a: &EmuKey, b: &EmuKey) -> bool {
    a != b
        && a.program == b.program
        && a.kernel == b.kernel
        && a.shape.work_dim == b.shape.work_dim
        && a.shape.local == b.shape.local
}

/// How far apart two global sizes are (sum of |ln| of the per-dimension ratios).
fn distance(a: &EmuKey, b: &EmuKey) -> f64 {
    a.shape
        .global
        .iter()
        .zip(&b.shape.global)
        .map(|(x, y)| ((*x).max(1) as f64 / (*y).max(1) as f64).ln().abs())
        .sum::<f64>()
        + if a.shape.offset == b.shape.offset {
            0.0
        } else {
            1e-3
        }
}

/// The launch `seq` of `key`, whose snapshot could not be taken (or was lost) for
/// `reason`: gives it the statistics of an alike key when one is done (at once) or in
/// flight (when it finishes), with `note`. False when there is none (the caller records the
/// reason).
pub(super) fn borrow(key: &EmuKey, info: &LaunchInfo, seq: u64, reason: &str, note: Note) -> bool {
    let done = {
        let results = projector().results.lock();
        results
            .iter()
            .filter(|(k, (e, _))| alike(k, key) && e.stats.is_some())
            .min_by(|a, b| distance(a.0, key).total_cmp(&distance(b.0, key)))
            .map(|(_, (e, _))| e.clone())
    };
    if let Some(src) = done {
        give(key, info, &src, seq, note);
        return true;
    }
    let mut inflight = projector().inflight.lock();
    let Some(src) = inflight
        .keys()
        .filter(|k| alike(k, key))
        .min_by(|a, b| distance(a, key).total_cmp(&distance(b, key)))
        .cloned()
    else {
        return false;
    };
    if let Some(w) = inflight.get_mut(&src) {
        w.push(Waiter {
            seq,
            device: info.device,
            reshape: Some(Box::new(Reshape {
                key: key.clone(),
                info: info.clone(),
                reason: reason.to_string(),
                note,
            })),
        });
    }
    true
}

/// The emulation waited for (`src`) has finished: the waiting launch's key gets its
/// statistics, or the launch its own reason when it has none.
pub(super) fn reshaped(r: Reshape, seq: u64, src: &Emulation) {
    if src.stats.is_some() && src.key.is_some() {
        give(&r.key, &r.info, src, seq, r.note);
        return;
    }
    let e = emulation_failed(EmulationStatus::Unavailable, r.reason);
    finish_key(&r.key, &e, None);
    crate::log::release(seq, attachments(&e, None, 0));
}

/// Makes `src`'s statistics `key`'s result, projected with `info`'s shape, and releases
/// the launch `seq` and the launches waiting for `key`.
fn give(key: &EmuKey, info: &LaunchInfo, src: &Emulation, seq: u64, note: Note) {
    let Some(st) = src.stats.clone() else {
        return;
    };
    let mut e = Emulation::with_stats(st.clone(), false);
    e.reused_from = src.reused_from.or(src.key);
    e.snapshot_lost_bytes = note.lost;
    e.snapshot_wait_ns = note.waited_ns;
    if info.local_assumed {
        e.local_assumed = Some(info.local.clone());
    }
    let mut p = projection_record(&st, info);
    let id = projector().next_key_id.fetch_add(1, Ordering::Relaxed);
    e.key = Some(id);
    p.key = Some(id);
    projector()
        .results
        .lock()
        .insert(key.clone(), (e.clone(), Some(p.clone())));
    finish_key(key, &e, Some(&p));
    crate::log::release(seq, reused_attachments(e, Some(p), info.device));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emu::LaunchShape;

    fn key(kernel: &str, g: &[u64], l: &[u64]) -> EmuKey {
        EmuKey {
            program: "p".into(),
            kernel: kernel.into(),
            shape: LaunchShape::new(g, l, None),
            group: [0; 3],
        }
    }

    #[test]
    fn alike_shapes_share_kernel_and_work_group_size() {
        let a = key("k", &[4096, 4072], &[32, 8]);
        assert!(alike(&a, &key("k", &[4096, 4064], &[32, 8])));
        assert!(!alike(&a, &a.clone()), "not itself");
        assert!(!alike(&a, &key("k", &[4096, 4064], &[16, 16])));
        assert!(!alike(&a, &key("j", &[4096, 4064], &[32, 8])));
        let near = key("k", &[4096, 4064], &[32, 8]);
        let far = key("k", &[4096, 64], &[32, 8]);
        assert!(distance(&a, &near) < distance(&a, &far));
    }
}
