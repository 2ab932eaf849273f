//! Memory waiting periods (`WorkGroupStats::load_waits`, `emu::interp::deps`): a warp
//! issues in order and waits for a global load only where an instruction reads what it
//! loaded; loads issued before that wait are in flight together (Hong & Kim ISCA'09 §3's
//! memory waiting period). Independent loads of one loop body wait once per iteration, a
//! pointer chase once per load, a load behind a store (which it may alias) or a branch on
//! loaded data after it. Real kernels through the front end (needs clang-N +
//! llvm-spirv-N), run in the interpreter; no OpenCL device.
mod common;
use common::fe;

use OpenCL::emu::*;

/// Statistics of the one work-group of 32 work-items (one warp) of kernel `k(a, b, n)`:
/// `a` holds `0, 1, 2, ...` (as `uint`), `b` 256 `uint`s of zeros, `n` = 64.
fn run(src: &str) -> WorkGroupStats {
    let spv = compile_source(src, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
    let m = load_module(&spv).expect("load");
    let a: Vec<u8> = (0..4096u32).flat_map(|i| i.to_le_bytes()).collect();
    let mut args = vec![
        ArgValue::Buffer(a),
        ArgValue::Buffer(vec![0; 256 * 4]),
        ArgValue::Scalar(64u32.to_le_bytes().to_vec()),
    ];
    emulate(
        &m,
        "k",
        &LaunchShape::new(&[32], &[32], None),
        [0, 0, 0],
        &mut args,
        &EmuConfig::default(),
    )
    .expect("emulate")
}

#[test]
fn four_independent_loads_per_iteration_wait_once() {
    // Rodinia kmeans_update's inner body: four loads whose addresses depend on the loop
    // index only, summed after.
    let st = run("kernel void k(global const uint* a, global uint* b, uint n) {
        uint i = get_global_id(0); uint s = 0;
        for (uint j = 0; j < n; j++)
            s += a[j * 32 + i] + a[1024 + j * 32 + i] + a[2048 + j * 32 + i] + a[3072 + (j & 3) * 32 + i];
        b[i] = s; }");
    assert_eq!(st.global_loads.requests, 4 * 64);
    assert_eq!(st.load_waits, 64, "one wait per iteration: {st:?}");
}

#[test]
fn a_pointer_chase_waits_once_per_load() {
    // Each address is the value loaded before (a[j] = j: the chase stays in range).
    let st = run(
        "kernel void k(global const uint* a, global uint* b, uint n) {
        uint p = get_global_id(0);
        for (uint j = 0; j < n; j++) p = a[p];
        b[get_global_id(0)] = p; }",
    );
    assert_eq!(st.global_loads.requests, 64);
    assert_eq!(st.load_waits, 64);
}

#[test]
fn a_branch_on_loaded_data_and_a_store_order_the_loads_after_them() {
    // kmeans_update's shape: the membership test waits for its load; the loads under it
    // are issued together after it.
    let st = run(
        "kernel void k(global const uint* a, global uint* b, uint n) {
        uint i = get_global_id(0); uint s = 0, t = 0;
        for (uint j = 0; j < n; j++)
            if (a[j * 32 + i] < 100000u) { s += a[1024 + j * 32 + i]; t += a[2048 + j * 32 + i]; }
        b[i] = s + t; }",
    );
    assert_eq!(st.global_loads.requests, 3 * 64);
    assert_eq!(st.load_waits, 2 * 64);
    // A store between two loads of one body: the second may read what the first stored.
    let st = run(
        "kernel void k(global const uint* a, global uint* b, uint n) {
        uint i = get_global_id(0);
        for (uint j = 0; j < n; j++) { b[i] = a[j * 32 + i]; b[32 + i] = a[1024 + j * 32 + i]; }
        }",
    );
    assert_eq!(st.global_loads.requests, 2 * 64);
    assert_eq!(st.load_waits, 2 * 64);
}

#[test]
fn kmeans_update_waits_twice_per_point() {
    // examples/kernels/kmeans.cl: llvm-spirv rejects its -O2 output (a vector reduction in
    // kmeans_assign), so it takes the -O0 + opt path where `opt` is found; that path must
    // unroll kmeans_update's `for (d = 0; d < DIMS; d++) sum[d] += points[...]` as -O2 and
    // the GPU's compiler do, or the four point loads wait one after the other.
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/kernels/kmeans.cl"
    ))
    .unwrap();
    let spv = compile_source(&src, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
    let m = load_module(&spv).expect("load");
    let npoints = 4096u32;
    let points: Vec<u8> = (0..4 * npoints).flat_map(|i| i.to_le_bytes()).collect();
    let mut args = vec![
        ArgValue::Buffer(points),
        ArgValue::Buffer(vec![0; npoints as usize * 4]), // every point in cluster 0
        ArgValue::Buffer(vec![0; 8 * 4 * 4]),
        ArgValue::Scalar(npoints.to_le_bytes().to_vec()),
    ];
    let st = emulate(
        &m,
        "kmeans_update",
        &LaunchShape::new(&[512], &[64], None),
        [0, 0, 0],
        &mut args,
        &EmuConfig::default(),
    )
    .expect("emulate");
    // 64 work-items, 64 points each: 2 warps × 64 iterations of 1 + 4 loads
    assert_eq!(st.global_loads.requests, 2 * 64 * 5);
    assert_eq!(st.load_waits, 2 * 64 * 2, "{st:?}");
}
