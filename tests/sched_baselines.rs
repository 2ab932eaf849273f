//! The baselines as emitted by the scheduler (not just their formulas): chunk sequences of
//! CSS, GSS (⌈R/P⌉) and TSS (F − k·D), a static partition, single device.

use OpenCL::sched::baselines::Tss;
use OpenCL::sched::{Action, BoyerParams, ChunkScheduler, SchedulerKind};

/// Drives `kind` on `n` devices with completions in round-robin device order (device i
/// completes its oldest chunk, then the next device...) and returns the chunk sizes in
/// assignment order.
fn sizes(kind: SchedulerKind, n: usize, w: u64) -> Vec<u64> {
    let mut s = ChunkScheduler::new(&kind, &BoyerParams::default(), n, w).unwrap();
    let mut queue: Vec<(usize, u64)> = Vec::new();
    let mut out = Vec::new();
    let push = |acts: Vec<Action>, q: &mut Vec<(usize, u64)>, out: &mut Vec<u64>| {
        for a in acts {
            if let Action::Assign {
                device,
                chunk_id,
                count,
                ..
            } = a
            {
                q.push((device, chunk_id));
                out.push(count);
            }
        }
    };
    push(s.start(0), &mut queue, &mut out);
    let mut t = 0;
    while !queue.is_empty() {
        let (d, c) = queue.remove(0);
        t += 1000;
        let acts = s.on_chunk_done(d, c, t, 1000).unwrap();
        push(acts, &mut queue, &mut out);
    }
    assert!(s.is_complete());
    out
}

#[test]
fn gss_emits_remaining_over_p() {
    let seq = sizes(SchedulerKind::Gss { min_frac: 0.0 }, 2, 100);
    assert_eq!(seq, vec![50, 25, 13, 6, 3, 2, 1]);
    // with a minimum chunk of 10%: ⌈R/2⌉ until it falls below 10, then 10 (last: the rest)
    let seq = sizes(SchedulerKind::Gss { min_frac: 0.1 }, 2, 100);
    assert_eq!(seq, vec![50, 25, 13, 10, 2]);
}

#[test]
fn tss_emits_linear_decrease() {
    let w = 1000;
    let plan = Tss::new(w, 4, 0);
    let seq = sizes(SchedulerKind::Tss { last_frac: 0.0 }, 4, w);
    assert_eq!(seq.iter().sum::<u64>(), w);
    let n = seq.len();
    for (k, &c) in seq.iter().enumerate().take(n - 1) {
        assert_eq!(c, plan.chunk_wgs(k as u64), "chunk {k}");
    }
    assert!(seq[n - 1] <= plan.chunk_wgs(n as u64 - 1));
    // strictly linear: successive differences are ⌊D⌋ or ⌈D⌉ (D = 124/15 ≈ 8.27)
    for p in seq[..n - 1].windows(2) {
        let d = p[0] - p[1];
        assert!(d == 8 || d == 9, "{seq:?}");
    }
}

#[test]
fn css_emits_fixed_chunks() {
    let seq = sizes(SchedulerKind::Css(0.21), 2, 1000);
    assert_eq!(seq, vec![210, 210, 210, 210, 160]);
}

#[test]
fn static_and_single() {
    assert_eq!(
        sizes(SchedulerKind::Static(vec![0.25, 0.75]), 2, 1000),
        vec![250, 750]
    );
    assert_eq!(sizes(SchedulerKind::Single(1), 3, 1000), vec![1000]);
    let mut s =
        ChunkScheduler::new(&SchedulerKind::Single(1), &BoyerParams::default(), 3, 10).unwrap();
    assert!(matches!(
        s.start(0)[..],
        [Action::Assign {
            device: 1,
            first_wg: 0,
            count: 10,
            ..
        }]
    ));
    assert!(
        ChunkScheduler::new(&SchedulerKind::Single(3), &BoyerParams::default(), 3, 10).is_err()
    );
    assert!(ChunkScheduler::new(
        &SchedulerKind::Static(vec![1.0]),
        &BoyerParams::default(),
        3,
        10
    )
    .is_err());
    assert!(ChunkScheduler::new(&SchedulerKind::Best, &BoyerParams::default(), 3, 10).is_err());
}
