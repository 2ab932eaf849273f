//! `store_waits` and `in_flight_measured` (session 29) on statistics the mini-emulator
//! takes from PolyBench-ACC-style walks over an N × N matrix: a column walk that stores its
//! accumulator every row (`atax_kernel2`), a row walk that does the same with its loads in
//! the L1 (`atax_kernel1`), the column walk with the sum in a register (`col_sum`) and one
//! that loads eight rows a step (`eight_rows`), projected on the repository's H100 and H200
//! profiles. Needs clang + llvm-spirv.
mod common;
use common::fe;

use OpenCL::emu::*;
use OpenCL::model::memory::{self, WorkGroupBytes};
use OpenCL::model::profile::{load_file, Profile};
use OpenCL::model::project::{project, LaunchShape as ModelLaunch, ModelOptions};

const WALKS: &str = r#"
__kernel void atax_kernel1(__global float *A, __global float *x, __global float *tmp, int nx, int ny) {
    int i = get_global_id(0);
    if (i < nx) {
        int j;
        for (j = 0; j < ny; j++)
            tmp[i] += A[i * ny + j] * x[j];
    }
}
__kernel void atax_kernel2(__global float *A, __global float *y, __global float *tmp, int nx, int ny) {
    int j = get_global_id(0);
    if (j < ny) {
        int i;
        for (i = 0; i < nx; i++)
            y[j] += A[i * ny + j] * tmp[i];
    }
}
__kernel void col_sum(__global float *A, __global float *y, __global float *tmp, int nx, int ny) {
    int j = get_global_id(0);
    if (j < ny) {
        float s = 0.0f;
        for (int i = 0; i < nx; i++)
            s += A[i * ny + j] * tmp[i];
        y[j] = s;
    }
}
__kernel void eight_rows(__global float *A, __global float *y, __global float *tmp, int nx, int ny) {
    int j = get_global_id(0);
    if (j < ny) {
        float s = 0.0f;
        for (int i = 0; i + 8 <= nx; i += 8)
            s += A[i * ny + j] + A[(i + 1) * ny + j] + A[(i + 2) * ny + j] + A[(i + 3) * ny + j]
               + A[(i + 4) * ny + j] + A[(i + 5) * ny + j] + A[(i + 6) * ny + j] + A[(i + 7) * ny + j];
        y[j] = s;
    }
}
"#;

const N: u64 = 256;

fn profile(name: &str) -> Profile {
    load_file(&common::root().join("profiles").join(name)).unwrap()
}

/// Statistics of work-group 0 of `kernel` over an N × N matrix, work-groups of 32.
fn stats(kernel: &str) -> WorkGroupStats {
    let spv = compile_source(WALKS, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
    let m = load_module(&spv).expect("load");
    let buf = |n: u64| ArgValue::Buffer(vec![0u8; (n * 4) as usize]);
    let mut args = vec![
        buf(N * N),
        buf(N),
        buf(N),
        ArgValue::Scalar((N as i32).to_le_bytes().to_vec()),
        ArgValue::Scalar((N as i32).to_le_bytes().to_vec()),
    ];
    emulate(
        &m,
        kernel,
        &LaunchShape::new(&[N], &[32], None),
        [0, 0, 0],
        &mut args,
        &EmuConfig::default(),
    )
    .expect("emulate")
}

fn bytes(st: &WorkGroupStats, p: &Profile) -> WorkGroupBytes {
    let sector = p.sector_bytes as u64;
    WorkGroupBytes {
        load: st.global_loads.sectors as f64 * p.sector_bytes as f64,
        load_lines: st.global_loads.lines as f64 * p.line_bytes as f64,
        store: st.global_stores.sectors as f64 * p.sector_bytes as f64,
        store_lines: st.global_stores.lines as f64 * p.line_bytes as f64,
        unique_read: memory::unique_read_bytes(st, sector) as f64,
        unique_written: memory::unique_written_bytes(st, sector) as f64,
    }
}

/// The chain of `recommended`'s waiting periods (`departure_delay`, `load_waits`), with and
/// without the stores.
fn chains(st: &WorkGroupStats, p: &Profile) -> (f64, f64) {
    let wg = bytes(st, p);
    let off = memory::latency_chain_ns(st, &wg, p, 1, false, true, true, false).unwrap();
    let on = memory::latency_chain_ns(st, &wg, p, 1, false, true, true, true).unwrap();
    (off, on)
}

/// A store is a waiting period at the L2's latency where the warp's next period leaves the
/// L1: the column walk, whose every row is a first touch, gains about one L2 latency per
/// stored row; the row walk, whose loads mostly hit the L1, a share of one; a walk that
/// keeps its sum in a register and stores once gains one store's worth.
#[test]
fn a_store_waits_at_the_l2_where_the_next_load_leaves_the_l1() {
    let col = stats("atax_kernel2");
    let row = stats("atax_kernel1");
    let sum = stats("col_sum");
    // One store request per row of the two accumulating walks; one in all for col_sum.
    assert_eq!(col.global_stores.requests, N);
    assert_eq!(row.global_stores.requests, N);
    assert_eq!(sum.global_stores.requests, 1);
    assert!(col.load_waits > 0 && row.load_waits > 0 && sum.load_waits > 0);
    for name in ["h100-sxm.json", "h200.json"] {
        let p = profile(name);
        let (lat, _) = memory::global_latency(&p).unwrap();
        let l2 = memory::l2_latency(&p, lat);
        let stores = N as f64; // one warp per work-group
        let (off, on) = chains(&col, &p);
        let added = on - off;
        assert!(
            added > 0.8 * stores * l2 && added <= stores * l2 * (1.0 + 1e-12),
            "{name}: column walk adds {added} ns for {stores} stores at {l2} ns"
        );
        let (off_r, on_r) = chains(&row, &p);
        let added_r = on_r - off_r;
        // (its first touches are counted in 32-byte sectors: one period in 8 reaches DRAM
        // per request, about one in four per period of two requests)
        assert!(
            added_r > 0.0 && added_r < 0.3 * stores * l2 && added_r * 3.0 < added,
            "{name}: row walk adds {added_r} ns, column walk {added} ns"
        );
        let (off_s, on_s) = chains(&sum, &p);
        assert!(on_s - off_s <= l2 * (1.0 + 1e-12), "{name}: {off_s} {on_s}");
        // Without store_waits nothing changes (the earlier chain, bit for bit).
        let wg = bytes(&col, &p);
        let plain = memory::latency_chain_ns(&col, &wg, &p, 1, false, true, true, false).unwrap();
        assert_eq!(plain, off);
    }
}

/// The stored part of the chain is the L2's latency, which both GPUs measure alike (one
/// GH100 die and clock), so it moves the column walk's H200/H100 chain ratio from the
/// ratio of the DRAM pointer chases (184 / 214.8 ns) towards 1.
#[test]
fn the_stores_bring_the_column_walks_gpu_ratio_towards_the_l2s() {
    let col = stats("atax_kernel2");
    let (h100, h200) = (profile("h100-sxm.json"), profile("h200.json"));
    let (a_off, a_on) = chains(&col, &h100);
    let (b_off, b_on) = chains(&col, &h200);
    let (r_off, r_on) = (b_off / a_off, b_on / a_on);
    let l2_ratio = memory::l2_latency(&h200, 184.0) / memory::l2_latency(&h100, 214.8);
    assert!(
        r_off < r_on && r_on < l2_ratio.max(1.0),
        "{r_off} -> {r_on}"
    );
}

/// Through the projection: `store_waits` lengthens only latency-bound launches, never
/// shortens one, and leaves a kernel without stores alone.
#[test]
fn store_waits_never_shortens_a_launch() {
    let launch = ModelLaunch::from_ndrange(&[N], &[32], 0).unwrap();
    let on = ModelOptions::parse_spec("recommended,+store_waits").unwrap();
    let off = ModelOptions::parse_spec("recommended,-store_waits").unwrap();
    for name in ["h100-sxm.json", "h200.json"] {
        let p = profile(name);
        for k in ["atax_kernel1", "atax_kernel2", "col_sum"] {
            let st = stats(k);
            let (a, b) = (
                project(&st, &launch, &p, &off).unwrap(),
                project(&st, &launch, &p, &on).unwrap(),
            );
            assert!(b.projected_ns >= a.projected_ns, "{name} {k}");
            assert!(b.t_latency_ns >= a.t_latency_ns, "{name} {k}");
        }
        let col = stats("atax_kernel2");
        let (a, b) = (
            project(&col, &launch, &p, &off).unwrap(),
            project(&col, &launch, &p, &on).unwrap(),
        );
        // 8 warps on 132 SMs: latency-bound, and the stores show in the time.
        assert_eq!(b.t_global_ns, b.t_latency_ns, "{name}");
        assert!(b.projected_ns > a.projected_ns * 1.2, "{name}: {a:?} {b:?}");
    }
}

/// `in_flight_measured`: with fewer warps in flight than the read curve's first measured
/// point (one warp per compute unit), `bytes_in_flight` does not re-read the curve below
/// it, so a launch is never longer than its chain and its unscaled curve time (`eight_rows`:
/// eight independent loads a waiting period, as `kmeans_update`'s four); a launch that
/// fills the device reads the curve as before.
#[test]
fn the_request_size_scale_stays_within_the_measured_curve() {
    let on = ModelOptions::parse_spec("recommended,+in_flight_measured").unwrap();
    let off = ModelOptions::parse_spec("recommended,-in_flight_measured").unwrap();
    let plain = ModelOptions::parse_spec("recommended,-bytes_in_flight").unwrap();
    for name in ["h100-sxm.json", "h200.json"] {
        let p = profile(name);
        let first = p.global_read.0[0][0];
        for k in ["atax_kernel2", "col_sum"] {
            let st = stats(k);
            // A few warps: below the curve's first point.
            let few = ModelLaunch::from_ndrange(&[N], &[32], 0).unwrap();
            let (a, b, c) = (
                project(&st, &few, &p, &off).unwrap(),
                project(&st, &few, &p, &on).unwrap(),
                project(&st, &few, &p, &plain).unwrap(),
            );
            assert!(b.occupancy < first, "{name} {k}: {}", b.occupancy);
            assert!(b.t_global_ns <= a.t_global_ns, "{name} {k}");
            assert_eq!(b.t_global_ns, c.t_global_ns, "{name} {k}");
            if k == "eight_rows" {
                // Eight loads a period: its chain is under the curve's time, and without the
                // option the curve was read again at a quarter of an extrapolated fraction.
                assert!(b.t_latency_ns < b.t_global_ns, "{name}: {b:?}");
                assert!(a.t_global_ns > 2.0 * b.t_global_ns, "{name}: {a:?} {b:?}");
            }
            // Enough work-groups to fill every warp slot: unchanged.
            let full = ModelLaunch::from_ndrange(&[N * 1024], &[32], 0).unwrap();
            let (a, b) = (
                project(&st, &full, &p, &off).unwrap(),
                project(&st, &full, &p, &on).unwrap(),
            );
            assert!(b.occupancy >= first, "{name} {k}");
            assert_eq!(a.projected_ns, b.projected_ns, "{name} {k}");
        }
    }
}
