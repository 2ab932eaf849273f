//! The serialised-latency chain of `latency_bound` on statistics the mini-emulator takes
//! from PolyBench-ACC's `atax` kernels (a row walk: every request of a warp touches 32
//! lines; a column walk: one line per request), projected on the repository's H100 and
//! H200 profiles. Needs clang + llvm-spirv.
mod common;
use common::fe;

use OpenCL::emu::*;
use OpenCL::model::memory::{self, WorkGroupBytes};
use OpenCL::model::profile::{load_file, Profile};
use OpenCL::model::project::{project, LaunchShape as ModelLaunch, ModelOptions};

/// PolyBench-ACC `atax` (OpenCL/linear-algebra/kernels/atax/atax.cl), kernels 1 and 2.
const ATAX: &str = r#"
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
"#;

const N: u64 = 256;

fn profile(name: &str) -> Profile {
    load_file(&common::root().join("profiles").join(name)).unwrap()
}

/// Statistics of work-group 0 of `kernel` over an N × N matrix, work-groups of 32.
fn stats(kernel: &str) -> WorkGroupStats {
    let spv = compile_source(ATAX, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
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

/// `departure_delay`: the lines of an uncoalesced request pass the L1 one per SM clock
/// (Hong & Kim's departure delay), so the row walk's re-reads cost the L1's latency plus
/// one clock per further line, not a latency between the L1's and the L2's; a coalesced
/// walk (one line per request) is charged as before.
#[test]
fn uncoalesced_hits_cost_a_clock_per_line_not_the_l2() {
    let row = stats("atax_kernel1");
    let col = stats("atax_kernel2");
    // One work-item per row: a warp's request of A spans 32 rows; x[j] is one line.
    let row_lines = row.global_loads.lines as f64 / row.global_loads.requests as f64;
    assert!(row_lines > 16.0, "{:?}", row.global_loads);
    assert_eq!(col.global_loads.lines, col.global_loads.requests);
    for name in ["h100-sxm.json", "h200.json"] {
        let p = profile(name);
        let (lat, _) = memory::global_latency(&p).unwrap();
        let (l1, l2) = (memory::l1_latency(&p, lat), memory::l2_latency(&p, lat));
        let clock_ns = 1e3 / p.clock_mhz;
        // The profiles' L2 is further than 31 clocks past their L1: the interpolation
        // charged the row walk's hits more than the departure delay does.
        assert!(l2 > l1 + 31.0 * clock_ns, "{name}");
        let wg = bytes(&row, &p);
        let old = memory::latency_chain_ns(&row, &wg, &p, 1, false, false, false, false).unwrap();
        let new = memory::latency_chain_ns(&row, &wg, &p, 1, false, true, false, false).unwrap();
        let first = wg.unique_read / wg.load;
        assert!(first > 0.0 && first < 0.5, "{first}");
        let per_request = first * lat + (1.0 - first) * l1 + (row_lines - 1.0) * clock_ns;
        let chain = row.global_loads.requests as f64; // one warp per work-group
        assert!(
            ((new - chain * per_request) / new).abs() < 1e-9,
            "{name}: {new} against {}",
            chain * per_request
        );
        assert!(new < old, "{name}: {new} >= {old}");
        // Coalesced: nothing to depart, the same chain either way.
        let wg = bytes(&col, &p);
        let a = memory::latency_chain_ns(&col, &wg, &p, 1, false, false, false, false).unwrap();
        let b = memory::latency_chain_ns(&col, &wg, &p, 1, false, true, false, false).unwrap();
        assert!(((a - b) / a).abs() < 1e-12, "{name}: {a} {b}");
        // Through the projection: the option lowers the row walk's latency-bound time, and
        // only through the chain.
        let launch = ModelLaunch::from_ndrange(&[N * 64], &[32], 0).unwrap();
        let off = ModelOptions::parse_spec("recommended,-departure_delay").unwrap();
        let on = ModelOptions::parse_spec("recommended,+departure_delay").unwrap();
        let (a, b) = (
            project(&row, &launch, &p, &off).unwrap(),
            project(&row, &launch, &p, &on).unwrap(),
        );
        assert!(b.t_latency_ns < a.t_latency_ns, "{name}");
        assert_eq!(a.t_compute_ns, b.t_compute_ns);
        assert_eq!(a.t_local_ns, b.t_local_ns);
    }
}

/// `l1_stores`: the L1 level carries the store requests' lines as well as the loads'. A
/// row walk that writes what it reads (as PolyBench-ACC's `adi` kernels), 8 work-groups of
/// 8 warps, is bound by its SMs' L1 (32 lines per request at one line per clock); with the
/// option its global time grows by the stores' share of the lines, on both profiles.
#[test]
fn store_lines_pass_the_l1() {
    let src = "kernel void rows(global const float* a, global float* b, int n) { \
               int i = get_global_id(0); \
               for (int j = 0; j < n; j++) b[i * n + j] = 2.0f * a[i * n + j]; }";
    let spv = compile_source(src, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
    let m = load_module(&spv).expect("load");
    let (g, n) = (2048u64, 256u64);
    let mut args = vec![
        ArgValue::Buffer(vec![0u8; (g * n * 4) as usize]),
        ArgValue::Buffer(vec![0u8; (g * n * 4) as usize]),
        ArgValue::Scalar((n as i32).to_le_bytes().to_vec()),
    ];
    let st = emulate(
        &m,
        "rows",
        &LaunchShape::new(&[g], &[256], None),
        [0, 0, 0],
        &mut args,
        &EmuConfig::default(),
    )
    .expect("emulate");
    // One uncoalesced load and one uncoalesced store per iteration and warp.
    assert_eq!(st.global_loads.lines, st.global_loads.requests * 32);
    assert_eq!(st.global_stores.lines, st.global_stores.requests * 32);
    let share =
        (st.global_loads.lines + st.global_stores.lines) as f64 / st.global_loads.lines as f64;
    let launch = ModelLaunch::from_ndrange(&[g], &[256], 0).unwrap();
    for name in ["h100-sxm.json", "h200.json"] {
        let p = profile(name);
        let off = ModelOptions::parse_spec("recommended,-l1_stores").unwrap();
        let on = ModelOptions::parse_spec("recommended,+l1_stores").unwrap();
        let (a, b) = (
            project(&st, &launch, &p, &off).unwrap(),
            project(&st, &launch, &p, &on).unwrap(),
        );
        // The L1 level bounds the launch, above the chain, with the option or without.
        assert!(a.t_global_ns > a.t_latency_ns, "{name}");
        let r = b.t_global_ns / a.t_global_ns;
        assert!(
            ((r - share) / share).abs() < 1e-9,
            "{name}: {r} against {share}"
        );
        assert_eq!(a.t_compute_ns, b.t_compute_ns);
    }
}

/// `load_waits`: the chain counts the warp's memory waiting periods the emulator records
/// instead of its load requests. The column walk (`atax_kernel2`: `A[i * ny + j]` and
/// `tmp[i]`, independent, then the sum) waits once per iteration for its two requests; a
/// period reaches DRAM unless both of its requests hit (`1 − (1 − m)²`) and its two lines
/// leave the L1 a clock apart (`departure_delay`). Without waits in
/// the statistics (older logs) the chain is the per-request one.
#[test]
fn independent_loads_are_one_waiting_period() {
    let col = stats("atax_kernel2");
    let req = col.global_loads.requests as f64;
    assert_eq!(col.load_waits as f64, (req / 2.0).floor(), "{col:?}");
    for name in ["h100-sxm.json", "h200.json"] {
        let p = profile(name);
        let (lat, _) = memory::global_latency(&p).unwrap();
        let l1 = memory::l1_latency(&p, lat);
        let wg = bytes(&col, &p);
        let m = wg.unique_read / wg.load;
        let per = req / col.load_waits as f64;
        let miss = 1.0 - (1.0 - m).powf(per);
        // with departure_delay: the period's lines leave the L1 one per clock
        let lines = col.global_loads.lines as f64 / col.load_waits as f64;
        let depart = (lines - 1.0) * 1e3 / p.clock_mhz;
        let want = col.load_waits as f64 * (miss * lat + (1.0 - miss) * l1 + depart);
        let got = memory::latency_chain_ns(&col, &wg, &p, 1, false, true, true, false).unwrap();
        assert!(
            ((got - want) / want).abs() < 1e-9,
            "{name}: {got} against {want}"
        );
        let old = memory::latency_chain_ns(&col, &wg, &p, 1, false, true, false, false).unwrap();
        assert!(got < 0.75 * old, "{name}: {got} against {old}");
        // Statistics without waits: the per-request chain, option on or off.
        let mut unknown = col.clone();
        unknown.load_waits = 0;
        let a = memory::latency_chain_ns(&unknown, &wg, &p, 1, false, true, true, false).unwrap();
        assert_eq!(a, old, "{name}");
        // Through the projection, only the latency bound moves.
        let launch = ModelLaunch::from_ndrange(&[N], &[32], 0).unwrap();
        let off = ModelOptions::parse_spec("recommended,-load_waits").unwrap();
        let on = ModelOptions::parse_spec("recommended,+load_waits").unwrap();
        let (a, b) = (
            project(&col, &launch, &p, &off).unwrap(),
            project(&col, &launch, &p, &on).unwrap(),
        );
        assert!(b.t_latency_ns < a.t_latency_ns, "{name}");
        assert_eq!(a.t_compute_ns, b.t_compute_ns);
    }
}
