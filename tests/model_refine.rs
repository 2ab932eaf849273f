//! The refinements of session 23 (`bytes_in_flight`, `conversion_as_int`,
//! `additive_floor`), the options of session 24 (`streaming_latency`, `request_in_flight`;
//! off by default, results/session24-model) and the `--model` spec of `clprism accuracy`
//! (`ModelOptions::parse_spec`).

#[path = "common/model.rs"]
mod model_common;
use model_common::{close, launch, profile, root};

use OpenCL::emu::stats::{GlobalTraffic, WarpLaneCount, WorkGroupStats};
use OpenCL::model::memory;
use OpenCL::model::profile::Profile;
use OpenCL::model::project::{project, Bound, ModelOptions};

/// A streaming work-group (`b[i] = a[i] + 1`, STREAM-like): 256 work-items, one coalesced
/// load and one store per work-item of `word` bytes, so a warp's request moves `32 × word`
/// bytes; no footprints (every byte is a DRAM byte).
fn stream(word: u64) -> WorkGroupStats {
    let warps = 8;
    let sectors = 32 * word / 32;
    let mut s = WorkGroupStats {
        warp_width: 32,
        work_items: 256,
        ..Default::default()
    };
    s.instructions.fp32 = WarpLaneCount {
        warp: warps,
        lane: 256,
    };
    s.instructions.int = WarpLaneCount {
        warp: 4 * warps,
        lane: 4 * 256,
    };
    s.global_loads = GlobalTraffic {
        requests: warps,
        sectors: sectors * warps,
        lines: sectors.div_ceil(4) * warps,
        bytes: word * 256,
    };
    s.global_stores = s.global_loads;
    s
}

#[test]
fn model_spec_sets_and_clears_flags() {
    let r = ModelOptions::recommended();
    assert_eq!(ModelOptions::parse_spec("").unwrap(), r);
    assert_eq!(ModelOptions::parse_spec("recommended").unwrap(), r);
    let o = ModelOptions::parse_spec("recommended,-bytes_in_flight").unwrap();
    assert!(!o.bytes_in_flight);
    assert_eq!(
        o,
        ModelOptions {
            bytes_in_flight: false,
            ..r
        }
    );
    let o = ModelOptions::parse_spec("panwar, +waves, additive_floor").unwrap();
    assert!(
        !ModelOptions::parse_spec("-additive_floor")
            .unwrap()
            .additive_floor
    );
    assert_eq!(
        o,
        ModelOptions {
            waves: true,
            additive_floor: true,
            ..ModelOptions::panwar()
        }
    );
    assert_eq!(
        ModelOptions::parse_spec("all").unwrap(),
        ModelOptions::all()
    );
    assert!(ModelOptions::parse_spec("recommended,+nope")
        .unwrap_err()
        .contains("nope"));
    assert!(ModelOptions::parse_spec("waves,all").is_err());
    // Every listed flag is one field: switching each on alone from the baseline gives
    // distinct options, and all of them together give `all()`.
    let mut every = ModelOptions::panwar();
    let mut seen = Vec::new();
    for f in ModelOptions::FLAGS {
        let one = ModelOptions::parse_spec(&format!("panwar,+{f}")).unwrap();
        assert_ne!(one, ModelOptions::panwar(), "{f}");
        assert!(!seen.contains(&one), "{f}");
        seen.push(one);
        *every.flag_mut(f).unwrap() = true;
    }
    assert_eq!(every, ModelOptions::all());
    // The recommended set of session 23.
    assert!(r.bytes_in_flight && r.conversion_as_int && r.additive_floor);
    assert!(r.latency_bound && r.cache_reuse && r.kernel_floor);
    // Session 26 (results/session26-model).
    assert!(r.l2_store_cost && r.in_flight_dram);
    // Session 27 (results/session27-model).
    assert!(r.departure_delay && r.l1_stores);
    assert!(!r.request_in_flight);
    // Session 30 (results/session30-model): the chain's first touches at the streaming
    // latency.
    assert!(r.streaming_latency);
}

#[test]
fn request_size_scale_is_bytes_per_request_over_the_benchmarks() {
    let h100 = profile("h100-sxm.json");
    // 4-byte words: 4 sectors per request, a quarter of a float4 request's 512 bytes.
    assert!(close(memory::request_size_scale(&stream(4), &h100), 0.25));
    assert!(close(memory::request_size_scale(&stream(8), &h100), 0.5));
    assert!(close(memory::request_size_scale(&stream(16), &h100), 1.0));
    // Wider or uncoalesced requests move at least the benchmark's bytes: no scaling.
    assert!(close(memory::request_size_scale(&stream(32), &h100), 1.0));
    // No loads, or a CPU profile (curves against the work-group size): 1.
    let mut none = stream(4);
    none.global_loads = GlobalTraffic::default();
    assert_eq!(memory::request_size_scale(&none, &h100), 1.0);
    let cpu = profile("pocl-pthread.json");
    assert_eq!(memory::request_size_scale(&stream(4), &cpu), 1.0);
}

#[test]
fn narrow_streaming_reads_the_curve_at_its_bytes_in_flight() {
    let h100 = profile("h100-sxm.json");
    let h200 = profile("h200.json");
    let off = ModelOptions {
        bytes_in_flight: false,
        conversion_as_int: false,
        ..ModelOptions::recommended()
    };
    let on = ModelOptions {
        bytes_in_flight: true,
        ..off
    };
    // 2^24 floats in 65,536 work-groups: every warp slot busy (occupancy 1), a short
    // chain per warp, so throughput-bound.
    let wgs = 65_536;
    let l = launch(wgs, 256);
    let s = stream(4);
    let bytes = (wgs * 256 * 4) as f64;
    let want =
        |p: &Profile, occ: f64| bytes / p.global_read.at(occ) + bytes / p.global_write.at(1.0);
    let (a0, a1) = (
        project(&s, &l, &h100, &off).unwrap(),
        project(&s, &l, &h100, &on).unwrap(),
    );
    let (b0, b1) = (
        project(&s, &l, &h200, &off).unwrap(),
        project(&s, &l, &h200, &on).unwrap(),
    );
    assert_eq!(a0.occupancy, 1.0);
    assert!(close(a0.t_global_ns, want(&h100, 1.0)), "{a0:?}");
    assert!(close(a1.t_global_ns, want(&h100, 0.25)), "{a1:?}");
    assert!(close(b1.t_global_ns, want(&h200, 0.25)), "{b1:?}");
    assert_eq!(a1.bound, Bound::Global);
    // The H200/H100 ratio: near the bandwidth ratio without, above 0.8 with (the
    // HBM3e device needs more bytes in flight to saturate).
    let (r0, r1) = (
        b0.projected_ns / a0.projected_ns,
        b1.projected_ns / a1.projected_ns,
    );
    assert!(r0 < 0.75, "{r0}");
    assert!(r1 > 0.8 && r1 < 0.95, "{r1}");
    // float4 streaming is what the curve measured: unchanged.
    let s16 = stream(16);
    let l16 = launch(wgs / 4, 256);
    assert_eq!(
        project(&s16, &l16, &h100, &off).unwrap(),
        project(&s16, &l16, &h100, &on).unwrap()
    );
}

#[test]
fn latency_bound_launches_keep_their_chain() {
    // 16 work-groups of 8 warps, each warp loading 2,000 rows one after the other: the
    // serialised-latency bound exceeds the curve's time, so the request size changes
    // nothing (the chain is Little's law for the kernel's own requests).
    let mut s = stream(4);
    let rows = 2000;
    s.global_loads.requests *= rows;
    s.global_loads.sectors *= rows;
    s.global_loads.lines *= rows;
    s.global_loads.bytes *= rows;
    let h100 = profile("h100-sxm.json");
    let off = ModelOptions {
        bytes_in_flight: false,
        ..ModelOptions::recommended()
    };
    let on = ModelOptions {
        bytes_in_flight: true,
        ..off
    };
    let l = launch(16, 256);
    let a = project(&s, &l, &h100, &off).unwrap();
    let b = project(&s, &l, &h100, &on).unwrap();
    // the first touches' latency: the streaming loads' with `streaming_latency` (on since
    // session 30), else the random chase's
    let lat = if off.streaming_latency {
        memory::streaming_latency(&h100).unwrap()
    } else {
        h100.global_latency_ns.unwrap()
    };
    assert!(
        a.t_global_ns >= rows as f64 * lat,
        "{} {lat}",
        a.t_global_ns
    );
    assert_eq!(a, b);
}

#[test]
fn conversions_cost_what_integer_ops_cost() {
    let p = profile("h100-sxm.json");
    let mut s = stream(4);
    s.global_loads = GlobalTraffic::default();
    s.global_stores = GlobalTraffic::default();
    s.instructions = Default::default();
    s.instructions.conversion = WarpLaneCount {
        warp: 8 * 1000,
        lane: 256 * 1000,
    };
    let l = launch(1000, 256);
    let base = ModelOptions::panwar();
    let ci = ModelOptions {
        conversion_as_int: true,
        ..base
    };
    let a = project(&s, &l, &p, &base).unwrap();
    let b = project(&s, &l, &p, &ci).unwrap();
    let lanes = 256.0 * 1000.0 * 1000.0;
    assert!(close(
        a.t_compute_ns,
        lanes / p.instruction_throughput.conversion
    ));
    assert!(close(b.t_compute_ns, lanes / p.instruction_throughput.int));
    // On the H100 profile the measured int↔float conversion is 3.5x slower than int.
    assert!(a.t_compute_ns > 3.0 * b.t_compute_ns);
    // Other classes are untouched.
    s.instructions.conversion = WarpLaneCount::default();
    s.instructions.fp32 = WarpLaneCount {
        warp: 8000,
        lane: 256_000,
    };
    assert_eq!(
        project(&s, &l, &p, &base).unwrap().t_compute_ns,
        project(&s, &l, &p, &ci).unwrap().t_compute_ns
    );
}

#[test]
fn additive_floor_adds_the_body_to_the_floor() {
    let p = profile("h100-sxm.json");
    let floor = memory::kernel_floor(&p);
    let kf = ModelOptions {
        kernel_floor: true,
        ..ModelOptions::panwar()
    };
    let add = ModelOptions {
        additive_floor: true,
        ..kf
    };
    // A 10-100 µs launch: the body alone is above the floor.
    let s = stream(4);
    let l = launch(20_000, 256);
    let body = project(&s, &l, &p, &ModelOptions::panwar()).unwrap();
    assert!(body.projected_ns > floor);
    let a = project(&s, &l, &p, &kf).unwrap();
    let b = project(&s, &l, &p, &add).unwrap();
    assert_eq!(a.projected_ns, body.projected_ns);
    assert!(close(b.projected_ns, floor + body.projected_ns));
    assert_eq!(b.bound, body.bound);
    // A tiny launch: the floor plus a body of ns, bound by the launch.
    let t = project(&s, &launch(1, 256), &p, &add).unwrap();
    assert!(t.projected_ns > floor && t.projected_ns < floor * 1.1);
    assert_eq!(t.bound, Bound::Launch);
    // Without kernel_floor the flag does nothing.
    let only = ModelOptions {
        additive_floor: true,
        ..ModelOptions::panwar()
    };
    assert_eq!(project(&s, &l, &p, &only).unwrap(), body);
}

#[test]
fn request_in_flight_doubles_the_request_size_scale() {
    let h100 = profile("h100-sxm.json");
    let two = 1.0 / memory::CHARACTERIZE_LOADS_IN_FLIGHT;
    assert!(close(
        memory::request_size_scale_in_flight(&stream(4), &h100, two),
        0.5
    ));
    assert_eq!(
        memory::request_size_scale_in_flight(&stream(8), &h100, two),
        1.0
    );
    assert!(close(
        memory::request_size_scale_in_flight(&stream(4), &h100, 1.0),
        memory::request_size_scale(&stream(4), &h100)
    ));
}

/// PolyBench-ACC's column kernels (atax/bicg/mvt/gemver kernel 2, correlation's means)
/// measure the same time on the H100 and the H200 (ratio 0.99-1.03,
/// results/session24-model/model-ablation.txt), while the random pointer chase of the
/// profiles puts the H200 14 % below (184 against 214.8 ns). The same walk, emulated from
/// tests/kernels/column_accumulate.cl: a few work-groups, each warp loading a row after the
/// other, so the serialised-latency chain bounds the launch on both GPUs; with
/// `streaming_latency` the chain's H200/H100 ratio is the streaming curves' (0.967), without
/// it the chase's (0.857).
#[test]
fn column_walk_chain_takes_the_streaming_latency() {
    let v = |k: &str| std::env::var_os(k).map(std::path::PathBuf::from);
    let fe =
        OpenCL::emu::FrontendOptions::resolve(v("CLPRISM_TOOLCHAIN"), v("CLPRISM_CACHE"), |k| {
            std::env::var_os(k)
        });
    if OpenCL::emu::find_toolchain(&fe).is_none() {
        eprintln!("SKIP: no toolchain");
        return;
    }
    let k = root().join("tests/kernels/column_accumulate.cl");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_clprism"))
        .args([
            "emulate",
            k.to_str().unwrap(),
            "--kernel",
            "column_accumulate",
        ])
        .args(["--global", "512", "--local", "128"])
        .args([
            "--arg",
            "buf:1048576:fill=random",
            "--arg",
            "buf:2048:fill=random",
        ])
        .args(["--arg", "buf:2048", "--arg", "uint:512"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let st: WorkGroupStats = serde_json::from_slice(&out.stdout).unwrap();
    // two loads (a row of A, x[i]) and one store per iteration and warp
    assert_eq!(st.global_loads.requests, 4 * (2 * 512 + 1));
    assert_eq!(st.global_stores.requests, 4 * 512);
    // the L1 and L2 latencies as estimates from the first touches' latency, so that the
    // whole chain scales with it (the shipped profiles measure them since session 28)
    let estimated = |name: &str| {
        let mut p = profile(name);
        p.l1_latency_ns = None;
        p.l2_latency_ns = None;
        p.sources.remove("l1_latency_ns");
        p.sources.remove("l2_latency_ns");
        p
    };
    let (h100, h200) = (estimated("h100-sxm.json"), estimated("h200.json"));
    let l = OpenCL::model::project::LaunchShape::from_ndrange(&[512], &[128], 0).unwrap();
    // Without `departure_delay`: a clock per further line of a waiting period (two lines a
    // period with `load_waits`) does not scale with the latency.
    let off = ModelOptions {
        departure_delay: false,
        streaming_latency: false,
        ..ModelOptions::recommended()
    };
    assert!(
        ModelOptions::recommended().streaming_latency,
        "on since session 30"
    );
    let on = ModelOptions {
        streaming_latency: true,
        ..off
    };
    let ratio = |o: &ModelOptions| {
        let a = project(&st, &l, &h100, o).unwrap();
        let b = project(&st, &l, &h200, o).unwrap();
        for p in [&a, &b] {
            assert_eq!(p.bound, Bound::Global, "{p:?}");
            assert!(
                p.t_latency_ns > 0.0 && p.t_latency_ns == p.t_global_ns,
                "{p:?}"
            );
        }
        b.t_latency_ns / a.t_latency_ns
    };
    let chase = h200.global_latency_ns.unwrap() / h100.global_latency_ns.unwrap();
    assert!(close(ratio(&off), chase), "{} {chase}", ratio(&off));
    let stream =
        memory::streaming_latency(&h200).unwrap() / memory::streaming_latency(&h100).unwrap();
    assert!(close(ratio(&on), stream), "{} {stream}", ratio(&on));
    assert!(stream > 0.95 && chase < 0.87, "{stream} {chase}");
}
