//! The memory physics of the model (`src/model/memory.rs`): the latency bound (Hong & Kim
//! ISCA'09 MWP; Little's law), the kernel floor, the cache hierarchy of `cache_reuse`, and
//! `clprism characterize --only latency,floor,l2` measuring their figures through PoCL.

#[path = "common/model.rs"]
mod model_common;
use model_common::{close, launch, profile, root};

use OpenCL::emu::stats::{ArgFootprint, GlobalTraffic, WarpLaneCount, WorkGroupStats};
use OpenCL::model::memory::{self, WorkGroupBytes};
use OpenCL::model::occupancy::occupancy;
use OpenCL::model::profile::{load_file, ClassThroughput, Curve, Profile};
use OpenCL::model::project::{project, Bound, LaunchShape, ModelOptions};

/// `p` with a measured global latency of `ns` (and its source).
fn with_latency(mut p: Profile, ns: f64) -> Profile {
    p.global_latency_ns = Some(ns);
    p.sources
        .insert("global_latency_ns".into(), "measured: test".into());
    p.validate().unwrap();
    p
}

/// A column-mean work-group (PolyBench's `mean_kernel`): 256 work-items, each looping over
/// `rows` rows and loading one float per row; a warp's 32 loads of a row are one request
/// of 4 sectors, and the rows are far apart (a new line every load).
fn column_mean(rows: u64) -> WorkGroupStats {
    let warps = 8;
    let mut s = WorkGroupStats {
        warp_width: 32,
        work_items: 256,
        ..Default::default()
    };
    s.instructions.fp32 = WarpLaneCount {
        warp: warps * rows,
        lane: 256 * rows,
    };
    s.instructions.int = WarpLaneCount {
        warp: 3 * warps * rows,
        lane: 3 * 256 * rows,
    };
    s.global_loads = GlobalTraffic {
        requests: warps * rows,
        sectors: 4 * warps * rows,
        lines: warps * rows,
        bytes: 4 * 256 * rows,
    };
    s.global_stores = GlobalTraffic {
        requests: warps,
        sectors: 4 * warps,
        lines: warps,
        bytes: 1024,
    };
    s.footprints = vec![
        ArgFootprint {
            arg: 0,
            read: vec![],
            written: vec![[0, 1024]],
        },
        ArgFootprint {
            arg: 1,
            read: (0..rows).map(|i| [i * 16384, i * 16384 + 1024]).collect(),
            written: vec![],
        },
    ];
    s
}

#[test]
fn few_work_groups_with_dependent_loads_are_latency_bound() {
    let rows = 1000;
    let s = column_mean(rows);
    let l = launch(16, 256); // 4,096 work-items: 128 warps on a 132-SM device
    let lb = ModelOptions {
        latency_bound: true,
        ..ModelOptions::panwar()
    };
    let h100 = with_latency(profile("h100-sxm.json"), 500.0);
    let h200 = with_latency(profile("h200.json"), 500.0);
    // One round (16 WGs fit at once), 1000 loads per warp from one buffer, each the first
    // touch of its sectors: 1000 × 500 ns.
    let a = project(&s, &l, &h100, &lb).unwrap();
    assert!(
        close(a.t_global_ns, rows as f64 * 500.0),
        "{}",
        a.t_global_ns
    );
    assert_eq!(a.bound, Bound::Global);
    assert!(close(a.projected_ns, 500_000.0));
    // The baseline streams the same bytes at the per-SM occupancy's throughput: ~40×
    // shorter (the column-mean kernel: 1.54 ms measured, 0.043 ms projected).
    let base = project(&s, &l, &h100, &ModelOptions::panwar()).unwrap();
    assert!(base.projected_ns * 20.0 < a.projected_ns, "{base:?}");
    // Same latency on both devices: the same time, whatever their bandwidths (the baseline
    // projects the H200 faster by its bandwidth ratio).
    let b = project(&s, &l, &h200, &lb).unwrap();
    assert!(close(a.projected_ns, b.projected_ns));
    let b0 = project(&s, &l, &h200, &ModelOptions::panwar()).unwrap();
    assert!(base.projected_ns / b0.projected_ns > 1.3);
    // Twice the work-groups of the device's capacity: two rounds on each warp slot.
    let cap = occupancy(&h100, &l.resources)
        .unwrap()
        .active_work_groups_per_cu
        * 132;
    let two = project(&s, &launch(cap + 1, 256), &h100, &lb).unwrap();
    assert!(two.t_global_ns >= 2.0 * rows as f64 * 500.0);
    // Without a measured latency: Little's law on global_read's lowest point (one warp of
    // float4 loads per SM), and said so.
    let mut plain = profile("h100-sxm.json");
    plain.global_latency_ns = None;
    let (est, how) = memory::global_latency(&plain).unwrap();
    assert!(how.contains("Little"));
    let want = 132.0 * 32.0 * 16.0 * memory::CHARACTERIZE_LOADS_IN_FLIGHT
        / plain.global_read.at(1.0 / 64.0);
    assert!(close(est, want), "{est} {want}");
    let e = project(&s, &l, &plain, &lb).unwrap();
    assert!(close(e.t_global_ns, rows as f64 * want));
    // A CPU profile without a measured latency: no latency bound.
    let cpu = profile("pocl-pthread.json");
    assert!(memory::global_latency(&cpu).is_none());
}

#[test]
fn device_wide_warps_set_the_throughput() {
    // One load per warp: the chain is short and the throughput at 128 warps in flight
    // on 132 × 64 warp slots bounds the time (Little's law: linear below the curve's
    // first point, which is one warp per SM).
    let s = column_mean(1);
    let p = with_latency(profile("h100-sxm.json"), 500.0);
    let lb = ModelOptions {
        latency_bound: true,
        ..ModelOptions::panwar()
    };
    let w = 16u64;
    let a = project(&s, &launch(w, 256), &p, &lb).unwrap();
    let f = (w * 8) as f64 / (132.0 * 64.0);
    assert!(close(a.occupancy, f));
    let first = p.global_read.0[0];
    assert!(f < first[0]);
    let read_tp = first[1] * f / first[0];
    let write_tp = p.global_write.0[0][1] * f / p.global_write.0[0][0];
    let want = (w as f64 * 4096.0 / read_tp + w as f64 * 1024.0 / write_tp).max(500.0);
    assert!(close(a.t_global_ns, want), "{} {want}", a.t_global_ns);
    // The baseline reads the curve at the per-SM occupancy of a full SM (8 resident
    // work-groups of 8 warps), although 16 work-groups fill 16 of 132 SMs with one each.
    let b = project(&s, &launch(w, 256), &p, &ModelOptions::panwar()).unwrap();
    assert_eq!(b.occupancy, 1.0);
    assert!(b.t_global_ns < a.t_global_ns);
    // A full device: both read the same point.
    let many = 132 * 8 * 10;
    let a = project(&s, &launch(many, 256), &p, &lb).unwrap();
    let b = project(&s, &launch(many, 256), &p, &ModelOptions::panwar()).unwrap();
    assert_eq!(a.occupancy, b.occupancy);
}

#[test]
fn no_launch_is_projected_below_the_kernel_floor() {
    let s = column_mean(1);
    let mut p = profile("h100-sxm.json");
    let kf = ModelOptions {
        kernel_floor: true,
        ..ModelOptions::panwar()
    };
    // No kernel_floor_ns: the launch overhead (END − START of an empty kernel) stands in.
    let a = project(&s, &launch(1, 256), &p, &kf).unwrap();
    assert_eq!(a.projected_ns, p.launch_overhead_ns);
    assert_eq!(a.bound, Bound::Launch);
    p.kernel_floor_ns = Some(2500.0);
    p.sources.insert("kernel_floor_ns".into(), "test".into());
    let b = project(&s, &launch(1, 256), &p, &kf).unwrap();
    assert_eq!(b.projected_ns, 2500.0);
    // Above the floor nothing changes.
    let big = project(&column_mean(100_000), &launch(1000, 256), &p, &kf).unwrap();
    let base = project(
        &column_mean(100_000),
        &launch(1000, 256),
        &p,
        &ModelOptions::panwar(),
    )
    .unwrap();
    assert!(base.projected_ns > 2500.0);
    assert_eq!(big.projected_ns, base.projected_ns);
}

/// Round-number profile: flat curves (read 32, write 16, local 64 B/ns), 10 CUs, L2 read
/// 100 B/ns, 256 KiB of L1 per CU, L1 and L2 latencies estimated from the global one.
fn simple() -> Profile {
    let mut p = profile("h100-sxm.json");
    p.compute_units = 10;
    p.instruction_throughput = ClassThroughput {
        int: 1e6,
        fp32: 1e6,
        fp64: 1e6,
        special: 1e6,
        conversion: 1e6,
        branch: 1e6,
        barrier: 1e6,
        atomic: 1e6,
        memory: 1e6,
        other: 1e6,
    };
    p.global_read = Curve::flat(32.0);
    p.global_write = Curve::flat(16.0);
    p.local = Curve::flat(64.0);
    p.l2_read_bytes_per_ns = Some(100.0);
    p.l1_bytes_per_cu = Some(256 << 10);
    for k in ["l2_read_bytes_per_ns", "l1_bytes_per_cu"] {
        p.sources.insert(k.into(), "test".into());
    }
    // the L1 and L2 latencies are the estimates from the global latency (1/16, 1/2)
    p.l1_latency_ns = None;
    p.l2_latency_ns = None;
    for k in ["l1_latency_ns", "l2_latency_ns"] {
        p.sources.remove(k);
    }
    p.validate().unwrap();
    p
}

#[test]
fn shared_loads_are_counted_once_per_cache() {
    let mut p = simple();
    // 320 sector loads (10,240 B) of 1,024 distinct bytes; 1,024 B stored once.
    let mut s = column_mean(1);
    s.global_loads.sectors = 320;
    s.global_loads.lines = 80;
    s.footprints[1].read = vec![[0, 1024]];
    let cr = ModelOptions {
        cache_reuse: true,
        ..ModelOptions::panwar()
    };
    let mut l = launch(100, 256);
    // The 100 work-groups read the same 4 KiB between them (kernel_read_bytes).
    l.kernel_read_bytes = Some(4096);
    let base = project(&s, &l, &p, &ModelOptions::panwar()).unwrap();
    assert!(close(
        base.t_global_ns,
        10240.0 * 100.0 / 32.0 + 1024.0 * 100.0 / 16.0
    ));
    // DRAM: 4 KiB read once + 100 × 1 KiB written = 128 + 6,400 ns; L2: (1,024 distinct +
    // 1,024 stored) × 100 / 100 = 2,048 ns; L1: every line the requests touch, 80 × 128
    // × 100 / 64 = 16,000 ns: the L1 bounds.
    let c = project(&s, &l, &p, &cr).unwrap();
    assert!(close(c.t_global_ns, 16_000.0), "{}", c.t_global_ns);
    // No L1: the re-reads go to the L2 (10,240 + 1,024) × 100 / 100.
    p.l1_bytes_per_cu = None;
    let c = project(&s, &l, &p, &cr).unwrap();
    assert!(close(c.t_global_ns, 11_264.0), "{}", c.t_global_ns);
    // No L2 figures on a CPU profile and no L1: DRAM only, shared reads once.
    let mut q = p.clone();
    q.kind = OpenCL::model::DeviceKind::Cpu;
    q.l2_read_bytes_per_ns = None;
    let c = project(&s, &l, &q, &cr).unwrap();
    assert!(close(c.t_global_ns, 128.0 + 6400.0), "{}", c.t_global_ns);
    // The kernel's read set unknown: each work-group's distinct bytes from DRAM.
    l.kernel_read_bytes = None;
    let c = project(&s, &l, &q, &cr).unwrap();
    assert!(close(c.t_global_ns, 3200.0 + 6400.0), "{}", c.t_global_ns);
}

/// A naive GEMM work-group emulated by `clprism emulate` (tests/data/accuracy/README.md):
/// 16 × 16 work-items, 64 iterations, every A row and B column read by 16 work-items.
#[test]
fn emulated_naive_gemm_reads_its_matrices_once_from_dram() {
    let st: WorkGroupStats = serde_json::from_str(
        &std::fs::read_to_string(root().join("tests/data/accuracy/matmul_global_64.stats.json"))
            .unwrap(),
    )
    .unwrap();
    let p = simple();
    let mut l = LaunchShape::from_ndrange(&[64, 64], &[16, 16], 0).unwrap();
    l.kernel_read_bytes = Some(2 * 16384);
    let occ = occupancy(&p, &l.resources).unwrap();
    let sector = p.sector_bytes as u64;
    let wg = WorkGroupBytes {
        load: st.global_loads.sectors as f64 * 32.0,
        load_lines: st.global_loads.lines as f64 * 128.0,
        store: st.global_stores.sectors as f64 * 32.0,
        store_lines: st.global_stores.lines as f64 * 128.0,
        unique_read: memory::unique_read_bytes(&st, sector) as f64,
        unique_written: memory::unique_written_bytes(&st, sector) as f64,
    };
    // 16 rows of A (4 KiB) and 16 columns of B (64 × 64 B) per work-group: 8 KiB distinct
    // of 64 KiB requested.
    assert_eq!(wg.unique_read, 8192.0);
    assert_eq!(wg.load, 65536.0);
    let n = l.work_groups as f64;
    let t = memory::cache_traffic(&wg, &p, &occ, &l, n, 80, 1.0);
    assert_eq!(t.dram_read, 32768.0, "A and B once");
    assert_eq!(t.dram_write, 16384.0, "C once");
    assert_eq!(t.l2, Some((8192.0 + 1024.0) * n));
    // the L1 handles every line the requests touch: 1536 × 128 B
    assert_eq!(t.l1, Some(1536.0 * 128.0 * n));
    // The per-warp chain (Hong & Kim: every load one latency after the other): 1024
    // requests / 8 warps = 128; one in 8 of the sectors is a first touch (400 ns), the
    // rest hit the L1: its latency (400 / 16) and, for the 1.5 lines per request, 0.5 /
    // 31 of the way to the L2's (200).
    let lat = with_latency(simple(), 400.0);
    let chain = memory::latency_chain_ns(&st, &wg, &lat, 1, false, false, false, false).unwrap();
    let first = 8192.0 / 65536.0;
    let hit = 25.0 + 0.5 / 31.0 * (200.0 - 25.0);
    assert!(
        close(chain, 128.0 * (first * 400.0 + (1.0 - first) * hit)),
        "{chain}"
    );
    let mut no_l1 = lat.clone();
    no_l1.l1_bytes_per_cu = None;
    let chain = memory::latency_chain_ns(&st, &wg, &no_l1, 1, false, false, false, false).unwrap();
    assert!(close(
        chain,
        128.0 * (first * 400.0 + (1.0 - first) * 200.0)
    ));
}

/// `clprism characterize --only latency,floor,l2 --update FILE` on PoCL's CPU device:
/// measures the three figures in seconds, writes them with their sources into the
/// profile, and leaves the rest of it as it was.
#[test]
fn characterize_only_measures_latency_floor_and_l2() {
    let dir = std::env::temp_dir().join(format!("clprism-physics-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("p.json");
    std::fs::copy(root().join("profiles/pocl-pthread.json"), &f).unwrap();
    let before = load_file(&f).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_clprism"))
        .env("POCL_DEVICES", "pthread")
        .args([
            "characterize",
            "--quick",
            "--quiet",
            "--only",
            "latency,floor,l2",
        ])
        .arg("--update")
        .arg(&f)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let p = load_file(&f).unwrap();
    let g = p.global_latency_ns.unwrap();
    let l2 = p.l2_latency_ns.unwrap();
    // A random chase through 64+ MiB misses the caches that a 2 MiB one hits.
    assert!(g > l2 && l2 > 0.0, "{g} {l2}");
    assert!(p.kernel_floor_ns.unwrap() > 0.0);
    assert!(p.l2_read_bytes_per_ns.unwrap() > 0.0);
    for k in [
        "global_latency_ns",
        "l2_latency_ns",
        "kernel_floor_ns",
        "l2_read_bytes_per_ns",
    ] {
        let src = &p.sources[k];
        assert!(src.starts_with("measured "), "{k}: {src}");
        assert!(src.contains("--only latency,floor,l2"), "{k}: {src}");
    }
    assert!(p.sources["global_latency_ns"].contains("pointer chasing"));
    // The rest is untouched.
    assert_eq!(p.global_read, before.global_read);
    assert_eq!(p.launch_overhead_ns, before.launch_overhead_ns);
    assert_eq!(p.sources["global_read"], before.sources["global_read"]);
    // `--only` alone is a usage error.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_clprism"))
        .args(["characterize", "--only", "floor"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A work-group of 8 warps that accumulates into global memory inside its load loop, as
/// PolyBench-ACC's `gemm` does (`c[i][j] += alpha * a[i][k] * b[k][j]`: one 128-byte store
/// per warp and iteration to the same line): 1000 load requests of 4 sectors per warp, 1 %
/// of the bytes read for the first time (10 KiB distinct), and 800 stores of 128 bytes to
/// 1 KiB.
fn accumulate_in_global() -> WorkGroupStats {
    let mut s = column_mean(1000);
    s.global_loads = GlobalTraffic {
        requests: 8000,
        sectors: 32_000,
        lines: 8000,
        bytes: 1_024_000,
    };
    s.global_stores = GlobalTraffic {
        requests: 800,
        sectors: 3200,
        lines: 800,
        bytes: 102_400,
    };
    s.footprints[0].written = vec![[0, 1024]];
    s.footprints[1].read = vec![[0, 10_240]];
    s
}

/// `l2_store_cost`: every stored sector costs the L2 `L2_STORE_SECTOR_COST` sector accesses
/// (the H200's Nsight Compute counts of session 26: 1.5 for `gemm`'s stores), loads one.
#[test]
fn stores_cost_the_l2_more_than_loads() {
    let mut p = simple();
    p.local = Curve::flat(6400.0);
    let s = accumulate_in_global();
    let l = launch(100, 256);
    let base = ModelOptions {
        cache_reuse: true,
        ..ModelOptions::panwar()
    };
    let cost = ModelOptions {
        l2_store_cost: true,
        ..base
    };
    // L2: (10,240 distinct + 102,400 stored) × 100 / 100 B/ns bounds (DRAM: 1,024,000 /
    // 32 + 102,400 / 16 = 38,400 ns; L1: 8000 × 128 × 100 / 6400 = 16,000 ns).
    let off = project(&s, &l, &p, &base).unwrap();
    assert!(close(off.t_global_ns, 112_640.0), "{}", off.t_global_ns);
    let on = project(&s, &l, &p, &cost).unwrap();
    let l2 = 10_240.0 + memory::L2_STORE_SECTOR_COST * 102_400.0;
    assert!(close(on.t_global_ns, l2), "{}", on.t_global_ns);
    assert!(on.t_global_ns > off.t_global_ns);
    // Loads are not charged more: without stores the two agree.
    let mut r = s.clone();
    r.global_stores = GlobalTraffic::default();
    r.footprints[0].written.clear();
    assert_eq!(
        project(&r, &l, &p, &base).unwrap().t_global_ns,
        project(&r, &l, &p, &cost).unwrap().t_global_ns
    );
}

/// `in_flight_dram`: `bytes_in_flight` reads the DRAM curve at the request-size scale only
/// when the DRAM level outlasts the serialised-latency chain; a chain longer than DRAM's
/// time but shorter than the L2's leaves DRAM at the unscaled curve.
#[test]
fn bytes_in_flight_regime_is_the_dram_levels() {
    let mut p = with_latency(simple(), 400.0);
    p.local = Curve::flat(6400.0);
    let s = accumulate_in_global();
    let l = launch(100, 256);
    let o = ModelOptions {
        cache_reuse: true,
        latency_bound: true,
        bytes_in_flight: true,
        ..ModelOptions::panwar()
    };
    // 4-byte loads: 128 of the benchmark's 512 bytes per request.
    assert_eq!(memory::request_size_scale(&s, &p), 0.25);
    // 80 resident work-groups: 2 rounds × 1000 requests × (1 % × 400 + 99 % × 25 ns).
    let chain = 2.0 * 1000.0 * (0.01 * 400.0 + 0.99 * 25.0);
    // DRAM: 100 × 10,240 distinct bytes read at 32 B/ns, 100 × 1,024 written at 16 B/ns.
    let dram = 1_024_000.0 / 32.0 + 1024.0 * 100.0 / 16.0;
    let l2 = 112_640.0;
    assert!(dram < chain && chain < l2, "{dram} {chain} {l2}");
    // Before: the chain is shorter than the slowest level (the L2), so DRAM is read at a
    // quarter of the warps: 1,024,000 / 8 + 6,400 ns.
    let before = project(&s, &l, &p, &o).unwrap();
    assert!(close(before.t_latency_ns, chain), "{}", before.t_latency_ns);
    assert!(
        close(before.t_global_ns, 134_400.0),
        "{}",
        before.t_global_ns
    );
    let after = project(
        &s,
        &l,
        &p,
        &ModelOptions {
            in_flight_dram: true,
            ..o
        },
    )
    .unwrap();
    assert!(close(after.t_global_ns, l2), "{}", after.t_global_ns);
    // A chain shorter than DRAM's time: both rescale alike.
    let mut q = p.clone();
    q.global_latency_ns = Some(100.0);
    let a = project(&s, &l, &q, &o).unwrap();
    let b = project(
        &s,
        &l,
        &q,
        &ModelOptions {
            in_flight_dram: true,
            ..o
        },
    )
    .unwrap();
    assert!(a.t_latency_ns < dram, "{}", a.t_latency_ns);
    assert_eq!(a.t_global_ns, b.t_global_ns);
    assert!(close(b.t_global_ns, 134_400.0), "{}", b.t_global_ns);
}
