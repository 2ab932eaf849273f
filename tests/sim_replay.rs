//! `sched::replay`: the projection of a logged balance-mode run on N GPUs
//! (docs/multi-gpu-projection.md). A synthetic log written through the schema types, whose
//! projections are derived by hand from the model's definition, and a real 4 x H200 excerpt.

use OpenCL::log::schema::{
    Chunk, Device, FallbackReason, Launch, LaunchStatus, Merge, Phase, Schedule, ScheduleDevice,
};
use OpenCL::sched::replay::Replay;

const UNITS: u64 = 1000;

fn launch(kernel: &str, seq: u64, device_ns: Option<u64>, schedule: Schedule) -> Launch {
    Launch {
        schema: "clprism.launch/2".into(),
        seq,
        kernel: kernel.into(),
        program: "0123456789abcdef".into(),
        work_dim: 1,
        global: vec![UNITS * 64],
        local: Some(vec![64]),
        device: Device {
            index: "0:0".into(),
            name: "gpu".into(),
            kind: "gpu".into(),
            identity: None,
        },
        status: LaunchStatus::Complete,
        device_ns,
        schedule: Some(schedule),
        ..Default::default()
    }
}

/// A launch kept whole on the app's device, `device_ns` long.
fn whole(kernel: &str, seq: u64, device_ns: u64) -> Launch {
    launch(
        kernel,
        seq,
        Some(device_ns),
        Schedule {
            merge: Some(Merge::None),
            fallback: Some(FallbackReason::parse(
                "kept whole on the app's device: synthetic",
            )),
            ..Default::default()
        },
    )
}

/// A resident split on 2 devices: the `chunks` phase starts at 10 µs; each device's chunk is
/// enqueued `spacing` after the previous enqueue (the first after the phase start), starts
/// 3 µs later and runs 500 work-groups in 500 µs; `wall_ns` is 40 µs after the last end.
fn split(kernel: &str, seq: u64, spacing: u64, fetched: u64) -> Launch {
    let pre = 10_000;
    let mut chunks = Vec::new();
    let mut t = pre;
    let mut end = 0;
    for d in 0..2usize {
        t += spacing;
        let mut c = Chunk::enqueued(d, d as u64 * 500, 500, 1, t);
        end = t + 3_000 + 500_000;
        c.completed(end, Some(500_000));
        chunks.push(c);
    }
    launch(
        kernel,
        seq,
        Some(end),
        Schedule {
            devices: (0..2)
                .map(|d| ScheduleDevice {
                    index: format!("0:{d}"),
                    name: "gpu".into(),
                })
                .collect(),
            split_dim: Some(0),
            work_groups: Some(UNITS),
            wgs_per_unit: Some(1),
            wave_work_groups: Some(vec![1, 1]),
            chunks,
            makespan_ns: Some(end),
            merge: Some(Merge::Resident),
            fetched_bytes: Some(fetched),
            phases: Some(vec![
                Phase {
                    name: "build".into(),
                    start_ns: 0,
                    end_ns: pre,
                },
                Phase {
                    name: "chunks".into(),
                    start_ns: pre,
                    end_ns: end,
                },
                Phase {
                    name: "keep_resident".into(),
                    start_ns: end,
                    end_ns: end + 40_000,
                },
            ]),
            fallback: None,
            wall_ns: Some(end + 40_000),
            ..Default::default()
        },
    )
}

/// `stencil`: 3 launches kept whole (1 ms for 1000 work-groups), 2 splits on 2 GPUs that
/// fetched 2,000 bytes (two halos of 1,000 B) with 25 µs between enqueues; `copy`: one split
/// that fetched nothing, 5 µs between enqueues (the per-device enqueue cost).
fn synthetic() -> Replay {
    let mut v = vec![
        whole("stencil", 0, 1_000_000),
        whole("stencil", 1, 1_000_000),
        whole("stencil", 2, 1_000_000),
    ];
    v.push(split("copy", 3, 5_000, 0));
    v.push(split("stencil", 4, 25_000, 2_000));
    v.push(split("stencil", 5, 25_000, 2_000));
    Replay::from_launches(&v).expect("replay")
}

fn shape(r: &Replay, kernel: &str) -> usize {
    r.shapes
        .iter()
        .position(|s| s.key.kernel == kernel)
        .unwrap()
}

#[test]
fn synthetic_costs_are_read_from_the_log() {
    let r = synthetic();
    let s = &r.shapes[shape(&r, "stencil")];
    let c = s.split.as_ref().unwrap();
    assert_eq!(c.devices, 2);
    assert_eq!(s.whole_ns, 1_000_000.0);
    // chunks (500 wg, 500 µs) and the whole launch (1000 wg, 1 ms): 1000 ns per work-group
    assert!((s.b_ns_per_wg - 1000.0).abs() < 1e-6 && s.a_ns.abs() < 1e-3);
    assert_eq!(c.pre_ns, 10_000.0);
    assert_eq!(c.post_ns, 40_000.0);
    assert_eq!(c.issue_ns, 5_000.0); // from the copy split, which fetched nothing
                                     // 2 x 25 µs of enqueue spacing - 2 x 5 µs of enqueues, over 2(M-1) = 2 halo fetches
    assert_eq!(c.fetch_ns, 20_000.0);
    assert_eq!(c.halo_bytes, 1_000.0);
    assert_eq!(c.fetch_frac, 1.0);
    assert_eq!((c.latency_app_ns, c.latency_other_ns), (3_000.0, 3_000.0));
}

#[test]
fn synthetic_projection_matches_the_hand_derivation() {
    let r = synthetic();
    let st = shape(&r, "stencil");
    // N devices, equal slabs of 1000/N wg at 1000 ns each; the host serves device k after
    // pre + Σ_{j≤k} (enqueue 5 µs + 20 µs per boundary of j); + 3 µs latency; + 40 µs post.
    // N=2: 10 + 2·5 + (1+1)·20 + 3 + 500 + 40 = 603 µs: the measured wall of the splits.
    // N=4: 10 + 4·5 + (1+2+2+1)·20 + 3 + 250 + 40 = 443 µs.
    // N=8: 10 + 8·5 + (1+6·2+1)·20 + 3 + 125 + 40 = 498 µs: more than on 4 GPUs.
    for (n, want, halos) in [
        (2, 603_000.0, 40_000.0),
        (4, 443_000.0, 120_000.0),
        (8, 498_000.0, 280_000.0),
    ] {
        let p = r.project_split(st, n).unwrap();
        assert!(
            (p.split_ns - want).abs() < 2.0,
            "N={n}: {} ns, want {want}",
            p.split_ns
        );
        assert!(
            (p.halo_ns - halos).abs() < 1e-6,
            "N={n}: halos {}",
            p.halo_ns
        );
        assert!((p.compute_ns - 1_000_000.0 / n as f64).abs() < 1e-6);
    }
    assert!(r.project_split(st, 1).is_none());
    // the copy shape: no halos; N=4: 10 + 4·5 + 3 + 250 + 40 = 323 µs
    let p = r.project_split(shape(&r, "copy"), 4).unwrap();
    assert!((p.split_ns - 323_000.0).abs() < 2.0, "{}", p.split_ns);
    // totals on 4 GPUs: 5 stencil launches and 1 copy, each split (faster than 1 ms whole,
    // no one-time cost: no upload phase)
    let t = r.totals(4);
    assert_eq!(t.whole_ns, 6_000_000.0);
    assert_eq!(t.auto_split, 6);
    assert!(
        (t.auto_ns - (5.0 * 443_000.0 + 323_000.0)).abs() < 10.0,
        "{}",
        t.auto_ns
    );
    // as run on 2 GPUs: the three splits reproduce their measured wall (603 µs each)
    let a = r.as_run().unwrap();
    assert_eq!(a.steady_launches, 3);
    assert!((a.steady_projected_ns - a.steady_measured_ns).abs() < 10.0);
}

/// `--issue parallel` (`CLPRISM_BALANCE_ISSUE=parallel`): every GPU's halo reads at once,
/// then each GPU's writes and chunk from a thread of its own. The stencil's costs: pre 10 µs,
/// enqueue 5 µs, a fetch 20 µs (10 per side), latency 3 µs, post 40 µs. Device k starts after
/// pre + the read phase (the most reads one GPU serves: 10 µs per neighbour) + its own writes
/// (10 µs per neighbour) + its enqueue + latency:
/// N=2: 10 + 10 + 10 + 5 + 3 = 38, + 500 + 40 = 578 µs (603 issued one after the other);
/// N=4 and 8: inner devices 10 + 20 + 20 + 5 + 3 = 58, + 250 (125) + 40 = 348 (223) µs
/// (443 and 498 serial), the halos 20 + 20 µs on the critical path.
#[test]
fn parallel_issue_overlaps_the_devices_calls() {
    let mut r = synthetic();
    r.parallel_issue = true;
    let st = shape(&r, "stencil");
    for (n, want, halos) in [
        (2, 578_000.0, 20_000.0),
        (4, 348_000.0, 40_000.0),
        (8, 223_000.0, 40_000.0),
    ] {
        let p = r.project_split(st, n).unwrap();
        assert!(
            (p.split_ns - want).abs() < 2.0,
            "N={n}: {} ns, want {want}",
            p.split_ns
        );
        assert!(
            (p.halo_ns - halos).abs() < 1e-6,
            "N={n}: halos {}",
            p.halo_ns
        );
    }
}

/// Behind a network link (`--link`, issue 33 item 5) each server side of a halo fetch costs a
/// crossing (latency + bytes / bandwidth) on top of its half of the measured fetch, and a
/// server's chunk starts two latencies later (command out, completion back).
#[test]
fn a_link_adds_its_crossings_to_the_projection() {
    use OpenCL::sched::replay::Link;
    let mut r = synthetic();
    let st = shape(&r, "stencil");
    // 8 Gb/s: 1 byte per ns; 10 µs one way. A 1,000-byte halo crossing: 11 µs; each side
    // of a fetch: half the measured 20 µs, plus the crossing on the server's side. Device 0
    // fetches from device 1: 10 + 11 + 10 = 31 µs; device 1 from device 0: the same. Device
    // 1's chunk starts after pre 10 + (5 + 31) + (5 + 31) µs on the host and 3 + 2·10 µs of
    // latency, ends 500 µs later; + 40 µs post: 645 µs (603 µs on the logged host).
    r.link = Some(Link::parse("8:10").unwrap());
    let p = r.project_split(st, 2).unwrap();
    assert!((p.split_ns - 645_000.0).abs() < 2.0, "{}", p.split_ns);
    assert!((p.halo_ns - 62_000.0).abs() < 1e-6, "{}", p.halo_ns);
    let l = Link::parse("25:50").unwrap();
    assert_eq!((l.bytes_per_ns, l.latency_ns), (3.125, 50_000.0));
    for bad in ["25", "x:5", "0:5", "25:-1", "inf:1"] {
        assert!(Link::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_launch_faster_whole_is_kept_whole() {
    // the same splits, but the stencil runs whole in 0.3 ms: no split count of GPUs pays
    let mut v = vec![whole("stencil", 0, 300_000), whole("stencil", 1, 300_000)];
    v.push(split("copy", 2, 5_000, 0));
    v.push(split("stencil", 3, 25_000, 2_000));
    let r = Replay::from_launches(&v).unwrap();
    for n in [2, 4, 8] {
        let t = r.totals(n);
        // only the copy shape (1 ms whole from its chunks) may split
        assert!(t.auto_split <= 1, "N={n}: {} splits", t.auto_split);
        assert!(t.auto_ns <= t.whole_ns);
    }
}

/// A real excerpt: 40 launches of jacobi-2d 16384² from session 19's c-logs.tgz r6
/// (`jacobi-long.always.gpu4.jsonl`, 4 x H200): 4 kept-whole launches of each kernel and 16
/// steady resident splits of each (halo-only fetches), records verbatim.
#[test]
fn real_excerpt_replays_within_15_percent_on_4_gpus() {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/replay/jacobi-long-4xh200-excerpt.jsonl"
    ))
    .unwrap();
    let r = Replay::from_text(&text).unwrap();
    assert_eq!(r.launches.len(), 40);
    let a = r.as_run().unwrap();
    assert_eq!(a.n, 4);
    assert_eq!(a.steady_launches, 32);
    let err = a.steady_projected_ns / a.steady_measured_ns - 1.0;
    assert!(
        err.abs() < 0.15,
        "projected {} ns against measured {} ns ({:+.1}%)",
        a.steady_projected_ns,
        a.steady_measured_ns,
        100.0 * err
    );
    // the stencil's halos grow with the boundaries: its split is slower on 8 GPUs than on 4
    let k1 = shape(&r, "runJacobi2D_kernel1");
    let (p4, p8) = (
        r.project_split(k1, 4).unwrap(),
        r.project_split(k1, 8).unwrap(),
    );
    assert!(p8.halo_ns > p4.halo_ns && p8.split_ns > p4.split_ns);
}

/// `--slabs stagger` (`sched::stagger`, as balance mode sizes owner-computes slabs on GPUs of
/// one name). The stencil's halo batch comes first (pre 10 µs + every device's fetches, 20 µs
/// per neighbour: 40 µs on 2 GPUs, 120 µs on 4), then the chunks are enqueued one after the
/// other. With the synthetic 5 µs enqueue the devices start within 15 µs of each other and
/// sizing would gain under `sched::stagger::MIN_GAIN`: the slabs stay equal (443 µs on 4
/// GPUs, as above). With NVIDIA's 40 µs enqueue (results/session24-2026-11-28) device k
/// starts at 10 + 120 + 40 (k + 1) + 3 = 173, 213, 253, 293 µs: equal 250 µs slabs end at
/// 543 µs (+ post 40 = 583 µs); sized ones end together at T = (1000 + 173 + 213 + 253 + 293)
/// / 4 = 483 µs: 523 µs with the post.
#[test]
fn stagger_slabs_end_the_devices_together() {
    let mut r = synthetic();
    let st = shape(&r, "stencil");
    r.stagger_slabs = true;
    let close = r.project_split(st, 4).unwrap().split_ns;
    assert!((close - 443_000.0).abs() < 2.0, "5 us enqueues: {close} ns");
    r.shapes[st].split.as_mut().unwrap().issue_ns = 40_000.0;
    r.stagger_slabs = false;
    let equal = r.project_split(st, 4).unwrap().split_ns;
    assert!((equal - 583_000.0).abs() < 2.0, "equal slabs: {equal} ns");
    r.stagger_slabs = true;
    let sized = r.project_split(st, 4).unwrap().split_ns;
    // whole units: within one unit's time (1000 µs over the stencil's units) of the ideal
    let unit_ns = 1_000_000.0 / r.shapes[st].units as f64;
    assert!(
        (sized - 523_000.0).abs() <= unit_ns,
        "sized slabs: {sized} ns (a unit {unit_ns} ns)"
    );
}

/// `--pipeline` (not built; docs/balance.md): a split launch the app enqueued before the one
/// before it ended, after a split launch, takes the longer of the launch thread's work and
/// its devices'. The stencil's costs: pre 10 µs, enqueue 5 µs, a fetch 20 µs (10 per side),
/// latency 3 µs, post 40 µs, every steady split fetching. Host: pre + Σ fetches + N·enqueue +
/// post; devices: compute 1000/N µs + the halo wait (latency 3 + the write's side 10 + the
/// enqueue 5 = 18 µs):
/// N=2: max(10 + 40 + 10 + 40, 500 + 18) = 518 µs (603 one at a time);
/// N=4: max(10 + 120 + 20 + 40, 250 + 18) = 268 µs (443);
/// N=8: max(10 + 280 + 40 + 40, 125 + 18) = 370 µs (498): the host's work bounds it.
/// The copy shape fetches nothing: N=4: max(10 + 20 + 40, 250) = 250 µs (323).
/// In the synthetic log every launch has `time_ns` 0, so each one after a split was enqueued
/// before it ended: on 4 GPUs the three stencil launches kept whole, then the copy, are
/// projected one at a time (none follows a split), the last two stencil splits pipelined:
/// 3·443 + 323 + 2·268 = 2188 µs, against 5·443 + 323 = 2538 µs without.
#[test]
fn pipelined_launches_take_the_longer_of_host_and_devices() {
    let mut r = synthetic();
    let st = shape(&r, "stencil");
    for (n, want) in [(2, 518_000.0), (4, 268_000.0), (8, 370_000.0)] {
        let p = r.project_split(st, n).unwrap();
        assert!(
            (p.pipelined_ns - want).abs() < 2.0,
            "N={n}: {} ns, want {want}",
            p.pipelined_ns
        );
    }
    let p = r.project_split(shape(&r, "copy"), 4).unwrap();
    assert!(
        (p.pipelined_ns - 250_000.0).abs() < 2.0,
        "{}",
        p.pipelined_ns
    );
    let ahead: Vec<bool> = r.launches.iter().map(|l| l.queued_ahead).collect();
    assert_eq!(ahead, [false, false, false, false, true, true]);
    let one_at_a_time = r.totals(4).always_ns;
    assert!(
        (one_at_a_time - 2_538_000.0).abs() < 10.0,
        "{one_at_a_time}"
    );
    r.pipeline = true;
    let pipelined = r.totals(4).always_ns;
    assert!((pipelined - 2_188_000.0).abs() < 10.0, "{pipelined}");
}
