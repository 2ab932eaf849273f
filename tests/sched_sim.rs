//! Simulator: equal devices give Boyer an efficiency near 1; a blocked device is abandoned
//! and the launch completes on the others; rate changes; the CLI.

use OpenCL::sched::sim::{ideal_finish_ns, predict, simulate, simulate_main, SimConfig, SimDevice};
use OpenCL::sched::{BoyerParams, Exclusion, SchedulerKind};

fn boyer(cfg: &SimConfig) -> OpenCL::sched::sim::SimReport {
    simulate(&SchedulerKind::Boyer, &BoyerParams::default(), cfg).unwrap()
}

/// Lower bound on Boyer's efficiency with `n` equal devices: every chunk costs the fixed
/// overhead `o` on its device, so the busiest device loses (chunks on it)·o against the
/// ideal, which counts one overhead per device; the final split rounds to whole
/// work-groups (≤ 1 work-group time) and growth chunks can end up to one growth chunk
/// apart only when the final split is skipped (it is not, here: checked).
#[test]
fn equal_devices_efficiency_near_one() {
    for n in [2usize, 4, 8, 64] {
        let w = 100_000u64;
        let o = 20_000u64;
        let devs = vec![SimDevice::constant(1.0); n]; // 1 wg/µs = 1000 ns per work-group
        let cfg = SimConfig::new(devs, w, o);
        let r = boyer(&cfg);
        assert!(r.complete);
        let ideal = ideal_finish_ns(&cfg).unwrap();
        assert!((ideal - (o as f64 + w as f64 * 1000.0) / n as f64).abs() < 1.0);
        let max_chunks = (0..n)
            .map(|d| r.chunks.iter().filter(|c| c.device == d).count())
            .max()
            .unwrap() as f64;
        let bound = 1.0 - (max_chunks * o as f64 + 1000.0) / ideal;
        let eff = r.efficiency.unwrap();
        assert!(eff >= bound, "n={n}: efficiency {eff} < {bound}");
        assert!(eff > 0.9, "n={n}: efficiency {eff}");
        assert!(eff <= 1.0 + 1e-9);
        // idle tail: devices finish together within one work-group time plus one overhead
        assert!(
            r.idle_tail_ns.unwrap() <= 1000 + o,
            "n={n}: {:?}",
            r.idle_tail_ns
        );
    }
}

/// §4.5.6: one device blocked (never completes). Boyer abandons it (straggler rule) and
/// finishes on the others; its cost against an oracle that gives everything to the
/// unblocked devices is the extra chunks' overheads plus re-running the abandoned chunk.
#[test]
fn blocked_device_completes_on_others() {
    for (n, blocked) in [(2usize, 1usize), (2, 0), (4, 2), (8, 3), (64, 10)] {
        let w = 100_000u64;
        let o = 20_000u64;
        let mut devs = vec![SimDevice::constant(1.0); n];
        devs[blocked] = SimDevice::blocked();
        let cfg = SimConfig::new(devs, w, o);
        let r = boyer(&cfg);
        assert!(r.complete, "n={n}");
        assert_eq!(
            r.per_device[blocked].excluded,
            Some(Exclusion::Straggler),
            "n={n}"
        );
        assert_eq!(r.per_device[blocked].wgs_done, 0);
        assert!(r.chunks_abandoned >= 1);
        // efficiency is relative to the unblocked devices only (the blocked one has no
        // throughput alone), so it is comparable to Boyer's Fig. 4.18 oracle
        let eff = r.efficiency.unwrap();
        assert!(eff > 0.85, "n={n}: {eff}");
        // a static partition waits forever
        let st = simulate(
            &SchedulerKind::Static(vec![1.0; n]),
            &BoyerParams::default(),
            &cfg,
        )
        .unwrap();
        assert!(!st.complete);
    }
}

/// A device that stalls after making progress (rate 0 from 30 ms on): the paper's rule does
/// not apply (it has completed chunks); the overdue extension abandons it.
#[test]
fn stalled_device_overdue_extension() {
    let devs = vec![
        SimDevice::constant(1.0),
        SimDevice::constant(1.0).with_change(30_000_000, 0.0),
    ];
    let cfg = SimConfig::new(devs, 100_000, 20_000);
    let r = boyer(&cfg);
    assert!(r.complete);
    assert_eq!(r.per_device[1].excluded, Some(Exclusion::Overdue));
    assert!(r.per_device[1].wgs_done > 0);
    let off = BoyerParams {
        overdue_factor: None,
        ..Default::default()
    };
    let r2 = simulate(&SchedulerKind::Boyer, &off, &cfg).unwrap();
    assert!(
        !r2.complete,
        "without the extension the launch waits forever"
    );
}

/// §4.5.2: performance changes during the run. Device 1 drops to a quarter of its speed
/// after 10 ms; a static partition tuned for the initial rates must wait for it, Boyer's
/// final split uses the measured Ω of the most recent chunk.
#[test]
fn rate_change_boyer_beats_stale_static() {
    let devs = vec![
        SimDevice::constant(1.0),
        SimDevice::constant(2.0).with_change(10_000_000, 0.5),
    ];
    let cfg = SimConfig::new(devs, 100_000, 20_000);
    let b = boyer(&cfg);
    let s = simulate(
        &SchedulerKind::Static(vec![1.0, 2.0]),
        &BoyerParams::default(),
        &cfg,
    )
    .unwrap();
    assert!(b.complete && s.complete);
    assert!(
        b.makespan_ns.unwrap() < s.makespan_ns.unwrap(),
        "boyer {:?} static {:?}",
        b.makespan_ns,
        s.makespan_ns
    );
}

/// Heterogeneous constant rates: the static partition by rates is the optimum with one
/// chunk per device; Boyer is within a few percent of it (paper §4.5.1: 2.2% on average).
#[test]
fn heterogeneous_boyer_close_to_optimal_static() {
    let rates = [1.0, 0.7, 2.5, 0.3];
    let devs: Vec<SimDevice> = rates.iter().map(|&r| SimDevice::constant(r)).collect();
    let cfg = SimConfig::new(devs, 200_000, 20_000);
    let b = boyer(&cfg);
    let s = simulate(
        &SchedulerKind::Static(rates.to_vec()),
        &BoyerParams::default(),
        &cfg,
    )
    .unwrap();
    let ratio = b.makespan_ns.unwrap() as f64 / s.makespan_ns.unwrap() as f64;
    assert!(ratio < 1.05, "{ratio}");
    assert!(b.efficiency.unwrap() > 0.95);
}

#[test]
fn predict_from_measured_rates() {
    // Ω = 51 µs and 35 µs per work-group (the §4.3.4 devices), 6,168 work-groups
    let r = predict(
        &SchedulerKind::Boyer,
        &BoyerParams::default(),
        &[51_000.0, 35_000.0],
        0,
        6_168,
    )
    .unwrap();
    assert!(r.complete);
    // without overhead the ideal is W/(1/51+1/35) µs ≈ 128 ms; Boyer is close to it
    let ideal = 6_168.0 / (1.0 / 51_000.0 + 1.0 / 35_000.0);
    assert!((r.ideal_ns.unwrap() - ideal).abs() / ideal < 1e-6);
    assert!(r.efficiency.unwrap() > 0.98, "{:?}", r.efficiency);
}

#[test]
fn cli_runs_and_rejects_bad_input() {
    let a = |s: &str| s.split_whitespace().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        simulate_main(&a(
            "--devices 4 --rates 1,2,1,0.5 --wgs 5000 --overhead-ns 1000"
        )),
        0
    );
    assert_eq!(
        simulate_main(&a("--devices 2 --wgs 5000 --scheduler gss --block 1")),
        0
    );
    assert_eq!(
        simulate_main(&a(
            "--devices 3 --wgs 5000 --change 1:1000000:0.1 --fail 2:1 --scheduler boyer --chunks"
        )),
        0
    );
    assert_eq!(simulate_main(&a("--devices 2 --rates 1,2,3")), 2);
    assert_eq!(simulate_main(&a("--scheduler nope")), 2);
    assert_eq!(simulate_main(&a("--block 9")), 2);
    assert_eq!(simulate_main(&a("--bogus")), 2);
}

/// Warm start (extension after Boyer §4.6): seeded with the Ω of an earlier launch, each of
/// 4 equal devices gets 3/4 of its share as its first chunk and one final-split chunk, so
/// the launch uses 8 chunks instead of the cold start's growth sequence, and with a fixed
/// cost per chunk it finishes sooner; `warm=1` is one chunk per device. A device that
/// blocks in this launch (its history said it was fine) is abandoned by the overdue rule
/// and the launch completes on the others.
#[test]
fn warm_start_uses_few_chunks_and_survives_a_device_that_blocks() {
    let (n, w, o) = (4usize, 8192u64, 1_000_000u64);
    let mut cfg = SimConfig::new(vec![SimDevice::constant(1.0); n], w, o);
    let cold = boyer(&cfg);
    assert!(cold.complete);
    // Ω as the earlier launch measured it: its final chunk, fixed cost included
    let omega = 1000.0 + o as f64 / (w as f64 / n as f64 / 4.0);
    cfg.history_ns = Some(vec![Some(omega); n]);
    let warm = boyer(&cfg);
    assert!(warm.complete);
    assert_eq!(warm.chunks_assigned, 2 * n, "{:?}", warm.chunks);
    for d in 0..n {
        let first = warm.chunks.iter().find(|c| c.device == d).unwrap();
        assert_eq!(first.count, (w / n as u64) * 3 / 4, "device {d}");
    }
    assert!(
        cold.chunks_assigned > warm.chunks_assigned,
        "cold {} chunks",
        cold.chunks_assigned
    );
    let (mc, mw) = (cold.makespan_ns.unwrap(), warm.makespan_ns.unwrap());
    assert!(mw < mc, "warm {mw} ns, cold {mc} ns");
    eprintln!(
        "4 equal devices, 1 ms per chunk: cold {} chunks {:.2} ms, warm {} chunks {:.2} ms",
        cold.chunks_assigned,
        mc as f64 / 1e6,
        warm.chunks_assigned,
        mw as f64 / 1e6
    );

    let one = BoyerParams {
        warm: Some(1.0),
        ..Default::default()
    };
    let r = simulate(&SchedulerKind::Boyer, &one, &cfg).unwrap();
    assert!(r.complete);
    assert_eq!(r.chunks_assigned, n);

    // the history is ignored with warm=off or when a device has no Ω
    let off = BoyerParams {
        warm: None,
        ..Default::default()
    };
    let r = simulate(&SchedulerKind::Boyer, &off, &cfg).unwrap();
    assert_eq!(r.chunks_assigned, cold.chunks_assigned);
    let mut partial = cfg.clone();
    partial.history_ns = Some(vec![Some(omega), None, Some(omega), Some(omega)]);
    assert_eq!(boyer(&partial).chunks_assigned, cold.chunks_assigned);

    let mut blocked = cfg.clone();
    blocked.devices[2] = SimDevice::blocked();
    let r = boyer(&blocked);
    assert!(r.complete, "{:?}", r.chunks);
    assert_eq!(r.per_device[2].excluded, Some(Exclusion::Overdue));
    assert_eq!(r.per_device[2].wgs_done, 0);
}

/// Whole waves: devices that run 2,112 work-groups at once (an H200 with N-body's 64-work-item
/// groups) and a launch of 8,192 over 4 of them. Each device's share (2,048) is less than a
/// wave, so a warm start that keeps 25 % for the final phase pays a second wave; told the
/// wave size it gives each device its whole share at once, and finishes in one wave.
#[test]
fn warm_start_gives_a_device_its_whole_share_when_the_final_phase_would_not_fill_a_wave() {
    let (n, w, wave) = (4usize, 8192u64, 2112u64);
    // 2,112 work-groups (one wave) per 52.6 ms
    let rate = wave as f64 / 52_600.0;
    let mut cfg = SimConfig::new(
        vec![SimDevice::constant(rate).with_wave(wave); n],
        w,
        50_000,
    );
    cfg.history_ns = Some(vec![Some(52.6e6 / 2048.0); n]);
    let plain = boyer(&cfg);
    assert!(plain.complete);
    assert_eq!(plain.chunks_assigned, 2 * n, "{:?}", plain.chunks);
    cfg.wave_units = Some(vec![wave; n]);
    let waves = boyer(&cfg);
    assert!(waves.complete);
    assert_eq!(waves.chunks_assigned, n, "{:?}", waves.chunks);
    let (mp, mw) = (plain.makespan_ns.unwrap(), waves.makespan_ns.unwrap());
    // one wave (52.6 ms + 50 µs) against two
    assert!(mw < 53_000_000, "{mw} ns");
    assert!(mp > 100_000_000, "{mp} ns");
    eprintln!(
        "4 devices, share < 1 wave: final phase kept {:.1} ms, whole shares {:.1} ms",
        mp as f64 / 1e6,
        mw as f64 / 1e6
    );
    // a launch of many waves keeps its final phase
    let mut big = cfg.clone();
    big.total_wgs = 64 * wave;
    let r = boyer(&big);
    assert!(r.complete);
    assert!(r.chunks_assigned > n, "{:?}", r.chunks);
}

/// After a warm start, a device the earlier Ω left without work keeps that Ω for the next
/// launch (it was not excluded); one that completed a chunk reports its fresh Ω.
#[test]
fn warm_start_history_carries_over_for_an_idle_device() {
    use OpenCL::sched::{Action, ChunkScheduler};
    let mut s =
        ChunkScheduler::new(&SchedulerKind::Boyer, &BoyerParams::default(), 2, 100).unwrap();
    assert!(s.seed_history(&[Some(1000.0), Some(1e9)]));
    let mut pending: Vec<(usize, u64, u64)> = Vec::new();
    let mut t = 0u64;
    let mut acts = s.start(t);
    loop {
        for a in acts.drain(..) {
            if let Action::Assign {
                device,
                chunk_id,
                count,
                ..
            } = a
            {
                pending.push((device, chunk_id, count));
            }
        }
        let Some((d, id, count)) = pending.pop() else {
            break;
        };
        assert_eq!(d, 0, "the slow device gets no work");
        t += count * 900;
        acts = s.on_chunk_done(d, id, t, count * 900).unwrap();
    }
    assert!(s.is_complete());
    let om = s.measured_omegas();
    assert_eq!(om[0], Some(900.0));
    assert_eq!(om[1], Some(1e9));
}

/// Nobody to balance against, so no chunking: one device alone runs the launch as one chunk,
/// and so does a warm-started device whose partners' eq. 4.3 shares round to zero (an H200
/// beside a CPU 700× slower). Two devices of comparable speed keep the growth phase (cold)
/// and the final split (warm).
#[test]
fn a_device_with_nobody_to_balance_against_runs_one_chunk() {
    let alone = SimConfig::new(vec![SimDevice::constant(1.0)], 1000, 10_000);
    let r = boyer(&alone);
    assert!(r.complete);
    assert_eq!(r.chunks_assigned, 1, "{:?}", r.chunks);
    assert_eq!(r.chunks[0].count, 1000);

    // 1,000 ns against 10,000,000 ns per work-group: the slow device's share is 0.1
    let mut lopsided = SimConfig::new(
        vec![SimDevice::constant(1.0), SimDevice::constant(1e-4)],
        1000,
        10_000,
    );
    lopsided.history_ns = Some(vec![Some(1000.0), Some(1e7)]);
    let r = boyer(&lopsided);
    assert!(r.complete);
    assert_eq!(r.chunks_assigned, 1, "{:?}", r.chunks);
    assert_eq!((r.chunks[0].device, r.chunks[0].count), (0, 1000));

    // comparable devices: several chunks, cold and warm
    let mut even = SimConfig::new(vec![SimDevice::constant(1.0); 2], 1000, 10_000);
    assert!(boyer(&even).chunks_assigned > 2);
    even.history_ns = Some(vec![Some(1000.0); 2]);
    let r = boyer(&even);
    assert!(r.complete);
    assert!(r.chunks_assigned > 2, "{:?}", r.chunks);
}

/// `clprism simulate --wave W --warm`: the warm start from the rates' Ω, with chunks costing
/// whole waves. N-body 524288 on 4 H200s (8,192 work-groups, 2,112 per wave, 2,048 per
/// 52.6 ms): one chunk per device and one wave of time, against two chunks per device
/// without the wave (the final 25 % phase) and Boyer's 7 % growth chunks without `--warm`.
#[test]
fn cli_wave_and_warm_start() {
    let run = |extra: &str| -> (f64, u32) {
        let mut args = vec!["simulate"];
        let base = "--devices 4 --rates 0.038935 --wgs 8192 --overhead-ns 50000 --scheduler boyer";
        args.extend(base.split(' '));
        args.extend(extra.split_whitespace());
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_clprism"))
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        let row: Vec<&str> = text
            .lines()
            .find(|l| l.starts_with("boyer"))
            .unwrap()
            .split_whitespace()
            .collect();
        // scheduler makespan_ms bound_ms eff eff_boyer idle_tail_ms (pct) chunks ...
        (row[1].parse().unwrap(), row[7].parse().unwrap())
    };
    let (wave_ms, wave_chunks) = run("--warm --wave 2112");
    let (flat_ms, flat_chunks) = run("--warm");
    let (cold_ms, cold_chunks) = run("--wave 2112");
    assert_eq!(wave_chunks, 4);
    assert_eq!(flat_chunks, 8);
    assert!(cold_chunks > 8, "{cold_chunks}");
    // one wave: 2,112 work-groups at 0.038935 per µs, plus one 50 µs overhead
    assert!(
        (wave_ms - (2112.0 / 0.038935 + 50.0) / 1000.0).abs() < 0.1,
        "{wave_ms}"
    );
    assert!(
        flat_ms < wave_ms,
        "without waves a chunk costs only its work-groups"
    );
    assert!(cold_ms > wave_ms * 1.5, "{cold_ms} against {wave_ms}");
    assert_eq!(
        simulate_main(&["--wave".to_string(), "0".to_string()]),
        2,
        "a zero wave is refused"
    );
}

/// `--chunk-cost`: chunk times come from a measured curve (N-body 1310720 on an H200: 45.9 ms
/// for 160 work-groups, 579.7 ms for 10,240). With a warm start and a wave the final 25 % cannot
/// fill, two equal devices each take half of 20,480 work-groups in one chunk: the curve at
/// 10,240 plus one overhead, where a constant rate says 571.4 ms. Without the wave the
/// scheduler splits each half 75/25, and the second chunk pays the curve's latency again.
#[test]
fn cli_chunk_cost_curve() {
    let run = |extra: &str| -> Option<f64> {
        let mut args = vec!["simulate"];
        args.extend(
            "--devices 2 --rates 0.01792 --wgs 20480 --overhead-ns 50000 --scheduler boyer"
                .split(' '),
        );
        args.extend(extra.split_whitespace());
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_clprism"))
            .args(&args)
            .output()
            .unwrap();
        if !out.status.success() {
            return None;
        }
        let text = String::from_utf8(out.stdout).unwrap();
        text.lines()
            .find(|l| l.starts_with("boyer"))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|x| x.parse().ok())
    };
    let curve = "--chunk-cost 160:45900,2560:160800,10240:579700,20480:1142800";
    let one_chunk = run(&format!("--warm --wave 4224 {curve}")).expect("runs");
    assert!((one_chunk - 579.75).abs() < 0.01, "{one_chunk}");
    // 7,680 then 2,560 work-groups: 440.067 + 160.8 ms, two overheads
    let split = run(&format!("--warm {curve}")).expect("runs");
    assert!((split - 600.967).abs() < 0.01, "{split}");
    let flat = run("--warm --wave 4224").expect("runs");
    assert!(
        flat > one_chunk + 100.0,
        "the wave model rounds 10,240 up to 12,672: {flat}"
    );
    assert_eq!(
        run(&format!("--change 0:0:1 {curve}")),
        None,
        "not with --change"
    );
    assert_eq!(
        run("--chunk-cost 10:1,10:2"),
        None,
        "duplicate sizes refused"
    );
    assert_eq!(run("--chunk-cost 10"), None, "WGS:US required");
}
