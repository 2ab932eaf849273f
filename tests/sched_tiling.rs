//! Property test: over many random device configurations (rates, rate changes, stalls,
//! blocked devices, enqueue failures, tiny and large launches), the chunks the simulated
//! caller merges (completed and not abandoned) tile `0..W` exactly — no overlap, no gap —
//! and the scheduler's own record agrees. Completion is required whenever the setup allows
//! it (see `must_complete`).

use OpenCL::sched::sim::{simulate, SimConfig, SimDevice, SimReport};
use OpenCL::sched::{BoyerParams, ChunkState, SchedulerKind};

/// SplitMix64: small deterministic generator (no external crate needed).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

fn assert_tiles(r: &SimReport, w: u64, what: &str) {
    assert!(r.violations.is_empty(), "{what}: {:?}", r.violations);
    let mut m: Vec<(u64, u64)> = r.merged.iter().map(|&(_, f, c)| (f, c)).collect();
    m.sort();
    let mut next = 0;
    for &(f, c) in &m {
        assert!(c > 0, "{what}: empty chunk");
        assert_eq!(
            f, next,
            "{what}: gap or overlap at {f} (expected {next}); merged {m:?}"
        );
        next = f + c;
    }
    assert_eq!(next, w, "{what}: merged chunks end at {next}, W = {w}");
    // the scheduler's own Done set is the same
    let mut d: Vec<(u64, u64)> = r
        .chunks
        .iter()
        .filter(|c| c.state == ChunkState::Done)
        .map(|c| (c.first_wg, c.count))
        .collect();
    d.sort();
    assert_eq!(
        d, m,
        "{what}: scheduler's Done set differs from the merged set"
    );
}

#[derive(Debug)]
struct Setup {
    cfg: SimConfig,
    /// devices that never block, never stall and never fail
    good: Vec<bool>,
    /// devices that never block or stall (may fail)
    no_stall: Vec<bool>,
}

fn random_setup(rng: &mut Rng) -> Setup {
    let n = if rng.chance(0.05) {
        10 + rng.below(55) as usize
    } else {
        1 + rng.below(9) as usize
    };
    let w = match rng.below(4) {
        0 => 1 + rng.below(12),
        1 => 1 + rng.below(200),
        2 => 1 + rng.below(5_000),
        _ => 1 + rng.below(200_000),
    };
    let overhead = if rng.chance(0.2) {
        0
    } else {
        rng.below(100_000)
    };
    let mut devices = Vec::new();
    let mut good = Vec::new();
    let mut no_stall = Vec::new();
    let mut fails = Vec::new();
    for d in 0..n {
        let rate = 0.01 + rng.unit() * 5.0; // wg/µs, up to 500x apart
        let mut dev = SimDevice::constant(rate);
        let mut ok = true;
        if rng.chance(0.3) {
            let at = rng.below(50_000_000);
            let stall = rng.chance(0.2);
            let r = if stall { 0.0 } else { 0.01 + rng.unit() * 5.0 };
            dev = dev.with_change(at, r);
            ok &= !stall;
        }
        if rng.chance(0.12) {
            dev.blocked = true;
            ok = false;
        }
        no_stall.push(ok);
        if rng.chance(0.15) {
            fails.push((d, rng.below(4) as u32));
            good.push(false);
        } else {
            good.push(ok);
        }
        devices.push(dev);
    }
    // an earlier launch's Ω (Boyer's warm start), off by up to 2x either way, sometimes
    // missing for a device (then the start is cold)
    let history = rng.chance(0.4).then(|| {
        devices
            .iter()
            .map(|d| {
                let rate = d.work_between(0.0, 1000.0).max(0.01);
                (!rng.chance(0.05)).then(|| 1000.0 / rate * (0.5 + rng.unit() * 1.5))
            })
            .collect::<Vec<_>>()
    });
    let mut cfg = SimConfig::new(devices, w, overhead);
    cfg.fail_enqueue = fails;
    cfg.history_ns = history;
    Setup {
        cfg,
        good,
        no_stall,
    }
}

fn random_kind(rng: &mut Rng, n: usize) -> SchedulerKind {
    match rng.below(7) {
        0 | 1 => SchedulerKind::Boyer,
        2 => SchedulerKind::Static((0..n).map(|_| rng.unit() + 0.01).collect()),
        3 => SchedulerKind::Css(0.005 + rng.unit() * 0.5),
        4 => SchedulerKind::Gss {
            min_frac: if rng.chance(0.5) {
                0.0
            } else {
                rng.unit() * 0.3
            },
        },
        5 => SchedulerKind::Tss {
            last_frac: if rng.chance(0.5) {
                0.0
            } else {
                rng.unit() * 0.1
            },
        },
        _ => SchedulerKind::Single(rng.below(n as u64) as usize),
    }
}

fn random_params(rng: &mut Rng) -> BoyerParams {
    if rng.chance(0.5) {
        return BoyerParams::default();
    }
    BoyerParams {
        beta: 0.01 + rng.unit() * 0.3,
        delta: 1.0 + rng.unit() * 2.0,
        gamma: 1 + rng.below(3) as u32,
        overdue_factor: Some(1.5 + rng.unit() * 6.0),
        early_split: rng.chance(0.7),
        warm: if rng.chance(0.5) {
            Some(0.05 + rng.unit() * 0.95)
        } else {
            None
        },
    }
}

/// When must the launch complete?
/// * Boyer: device 0 is good (device 0 always receives work at start, so a measured Ω
///   exists for the straggler/overdue rules; if the straggler rule drops it while it is
///   merely slow, its late completion re-admits it). With every device
///   holding work that never completes and no Ω measured anywhere, nothing can tell a slow
///   device from a stuck one (documented limitation).
/// * Baselines (no straggler handling, by design): no device blocks or stalls, and some
///   device never fails.
fn must_complete(kind: &SchedulerKind, s: &Setup) -> bool {
    match kind {
        SchedulerKind::Boyer => s.good[0],
        _ => s.no_stall.iter().all(|&x| x) && s.good.iter().any(|&x| x),
    }
}

#[test]
fn completed_chunks_tile_the_ndrange() {
    // SCHED_PROP_CASES / SCHED_PROP_SEED widen the search when run by hand
    let cases: usize = std::env::var("SCHED_PROP_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1500);
    let seed: u64 = std::env::var("SCHED_PROP_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0xC1_9815);
    let mut rng = Rng(seed);
    let mut completed = 0;
    let mut with_abandon = 0;
    let mut with_fail = 0;
    for case in 0..cases {
        let setup = random_setup(&mut rng);
        let n = setup.cfg.devices.len();
        let kind = random_kind(&mut rng, n);
        let params = random_params(&mut rng);
        let what = format!("case {case}: {kind} {params:?} {setup:?}");
        let r = simulate(&kind, &params, &setup.cfg).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(r.violations.is_empty(), "{what}: {:?}", r.violations);
        if must_complete(&kind, &setup) {
            assert!(r.complete, "{what}: did not complete");
        }
        if r.complete {
            assert_tiles(&r, setup.cfg.total_wgs, &what);
            assert!(r.idle_tail_ns.is_some(), "{what}");
            // no schedule beats the capacity lower bound (allow 1 ns of rounding per chunk)
            if let (Some(m), Some(b)) = (r.makespan_ns, r.bound_ns) {
                assert!(
                    m as f64 + r.chunks_assigned as f64 + 1.0 >= b,
                    "{what}: makespan {m} < bound {b}"
                );
            }
            completed += 1;
            with_abandon += (r.chunks_abandoned > 0) as u32;
            with_fail += (r.chunks_failed > 0) as u32;
        } else {
            // never a merged overlap even when incomplete
            let mut m: Vec<(u64, u64)> = r.merged.iter().map(|&(_, f, c)| (f, c)).collect();
            m.sort();
            for p in m.windows(2) {
                assert!(p[0].0 + p[0].1 <= p[1].0, "{what}: overlap");
            }
        }
    }
    // the generator really exercises abandonment and failures
    assert!(completed > cases * 2 / 3, "{completed}");
    assert!(with_abandon as usize > cases / 50, "{with_abandon}");
    assert!(with_fail as usize > cases / 50, "{with_fail}");
}

/// Enqueue failures: the failed chunk's work is reassigned, the device is excluded, the
/// launch still tiles; every scheduler.
#[test]
fn failure_reassignment_all_schedulers() {
    let kinds = [
        SchedulerKind::Boyer,
        SchedulerKind::Static(vec![1.0, 2.0, 1.0]),
        SchedulerKind::Css(0.05),
        SchedulerKind::Gss { min_frac: 0.0 },
        SchedulerKind::Tss { last_frac: 0.0 },
        SchedulerKind::Single(1),
    ];
    for kind in &kinds {
        for fail_nth in 0..3u32 {
            let devs = vec![
                SimDevice::constant(1.0),
                SimDevice::constant(2.0),
                SimDevice::constant(0.5),
            ];
            let mut cfg = SimConfig::new(devs, 10_000, 10_000);
            cfg.fail_enqueue = vec![(1, fail_nth)];
            let r = simulate(kind, &BoyerParams::default(), &cfg).unwrap();
            let what = format!("{kind} fail #{fail_nth}");
            let dev1_chunks = r.chunks.iter().filter(|c| c.device == 1).count() as u32;
            if dev1_chunks > fail_nth {
                assert_eq!(r.chunks_failed, 1, "{what}");
                assert_eq!(
                    r.per_device[1].excluded,
                    Some(OpenCL::sched::Exclusion::EnqueueFailed),
                    "{what}"
                );
                // nothing assigned to device 1 after the failure
                let failed = r
                    .chunks
                    .iter()
                    .find(|c| c.state == ChunkState::Failed)
                    .unwrap();
                assert!(
                    r.chunks
                        .iter()
                        .filter(|c| c.id > failed.id)
                        .all(|c| c.device != 1),
                    "{what}"
                );
            }
            assert!(r.complete, "{what}");
            assert_tiles(&r, 10_000, &what);
        }
    }
}

/// All devices fail: the scheduler reports Stuck (the caller falls back to native).
#[test]
fn all_devices_fail_is_stuck() {
    use OpenCL::sched::{Action, ChunkScheduler, SchedState};
    let mut s =
        ChunkScheduler::new(&SchedulerKind::Boyer, &BoyerParams::default(), 2, 100).unwrap();
    let a = s.start(0);
    let mut ids: Vec<(usize, u64)> = a
        .iter()
        .filter_map(|x| match *x {
            Action::Assign {
                device, chunk_id, ..
            } => Some((device, chunk_id)),
            _ => None,
        })
        .collect();
    let (d, c) = ids.remove(0);
    let more = s.on_chunk_failed(d, c, 1).unwrap();
    assert_eq!(s.state(), SchedState::Running);
    // device 1 still runs its chunk; the returned work waits for it in the pool or was given
    assert!(more
        .iter()
        .all(|x| matches!(x, Action::Assign { device: 1, .. })));
    let (d, c) = ids.remove(0);
    s.on_chunk_failed(d, c, 2).unwrap();
    // device 1 may hold more chunks; fail them all
    let running: Vec<(usize, u64)> = s
        .chunks()
        .iter()
        .filter(|c| c.state == ChunkState::Running)
        .map(|c| (c.device, c.id))
        .collect();
    assert!(running.is_empty(), "excluded device keeps no running chunk");
    assert_eq!(s.state(), SchedState::Stuck);
    assert!(!s.is_complete());
    // wrong reports are errors, not panics
    assert!(s.on_chunk_done(0, 999, 3, 1).is_err());
    assert_eq!(s.chunks()[0].device, 0);
    assert!(s.on_chunk_done(1, 0, 3, 1).is_err());
}

/// Fewer work-groups than devices, and W = 0.
#[test]
fn tiny_launches() {
    for w in [0u64, 1, 2, 3, 7] {
        for kind in [
            SchedulerKind::Boyer,
            SchedulerKind::Css(0.3),
            SchedulerKind::Gss { min_frac: 0.0 },
            SchedulerKind::Tss { last_frac: 0.0 },
            SchedulerKind::Static(vec![1.0; 8]),
        ] {
            let devs = (0..8)
                .map(|i| SimDevice::constant(1.0 + i as f64))
                .collect();
            let r = simulate(
                &kind,
                &BoyerParams::default(),
                &SimConfig::new(devs, w, 1000),
            )
            .unwrap();
            assert!(r.complete, "{kind} W={w}");
            if w == 0 {
                assert_eq!(r.chunks_assigned, 0);
            } else {
                assert_tiles(&r, w, &format!("{kind} W={w}"));
                assert!(r.chunks.iter().all(|c| c.count >= 1));
            }
        }
    }
}
