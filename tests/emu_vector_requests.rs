//! Vector loads and stores are one request of their full width per warp (issue 19): the
//! hardware issues one 128-bit load for a `float4` per work-item, and a warp of 32 lanes at
//! unit stride covers 32 × 16 B = 512 B = 16 sectors of 32 B (Panwar et al. §IV-C; the
//! CUDA sector model: requests are coalesced per warp into 32-byte sectors). LLVM at -O2
//! scalarises a vector load whose components are only used one by one into one load per
//! component; the emulator counts those as the one vector access the hardware makes.
//! Real kernels through the front end (needs clang-N + llvm-spirv-N), run in the
//! interpreter; no OpenCL device.
mod common;
use common::fe;

use OpenCL::emu::*;

fn module(src: &str) -> Module {
    let spv = compile_source(src, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
    load_module(&spv).expect("load")
}

fn f32s(b: &[u8]) -> Vec<f32> {
    b.chunks(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Emulates the single work-group of 256 work-items (8 warps of 32) of kernel `k` with an
/// input buffer of `n_in` floats `0, 1, 2, ...` and an output buffer of 256 × `out_w` floats.
fn run256(src: &str, n_in: usize, out_w: usize) -> (WorkGroupStats, Vec<f32>) {
    let m = module(src);
    let input: Vec<u8> = (0..n_in).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let mut args = vec![
        ArgValue::Buffer(input),
        ArgValue::Buffer(vec![0; 256 * out_w * 4]),
    ];
    let st = emulate(
        &m,
        "k",
        &LaunchShape::new(&[256], &[256], None),
        [0, 0, 0],
        &mut args,
        &EmuConfig::default(),
    )
    .expect("emulate");
    let ArgValue::Buffer(o) = &args[1] else {
        panic!("output is not a buffer")
    };
    (st, f32s(o))
}

#[test]
fn scalarised_float4_load_is_one_request_of_16_sectors_per_warp() {
    // LLVM turns this load into four scalar loads (one per component).
    let (st, o) = run256(
        "kernel void k(global const float4* x, global float* y) { int i = get_global_id(0); float4 v = x[i]; y[i] = v.x + v.y + v.z + v.w; }",
        4 * 256,
        1,
    );
    assert_eq!(st.global_loads.requests, 8, "one request per warp");
    assert_eq!(st.global_loads.sectors, 128, "16 sectors per warp of 32");
    assert_eq!(st.global_loads.lines, 32);
    assert_eq!(st.global_loads.bytes, 256 * 16);
    assert_eq!(st.footprints[0].read, vec![[0, 256 * 16]]);
    // x[5] = (20, 21, 22, 23)
    assert_eq!(o[5], 86.0);
    // the scalar store: one request of 4 sectors per warp
    assert_eq!(st.global_stores.requests, 8);
    assert_eq!(st.global_stores.sectors, 32);
}

#[test]
fn whole_float4_load_and_store_are_one_request_each_per_warp() {
    let (st, o) = run256(
        "kernel void k(global const float4* x, global float4* y) { int i = get_global_id(0); float4 v = x[i]; y[i] = v * 2.0f; }",
        4 * 256,
        4,
    );
    assert_eq!(st.global_loads.requests, 8);
    assert_eq!(st.global_loads.sectors, 128);
    assert_eq!(st.global_stores.requests, 8);
    assert_eq!(st.global_stores.sectors, 128);
    assert_eq!(o[4 * 5 + 3], 46.0);
}

#[test]
fn scalarised_float4_store_is_one_request_of_16_sectors_per_warp() {
    let (st, o) = run256(
        "kernel void k(global const float* x, global float4* y) { int i = get_global_id(0); float a = x[i]; y[i] = (float4)(a, a + 1.0f, a + 2.0f, a * 3.0f); }",
        256,
        4,
    );
    assert_eq!(st.global_loads.requests, 8);
    assert_eq!(st.global_loads.sectors, 32);
    assert_eq!(st.global_stores.requests, 8);
    assert_eq!(st.global_stores.sectors, 128);
    assert_eq!(st.global_stores.bytes, 256 * 16);
    assert_eq!(&o[4 * 7..4 * 8], &[7.0, 8.0, 9.0, 21.0]);
}

#[test]
fn float2_load_is_one_request_of_8_sectors_per_warp() {
    let (st, o) = run256(
        "kernel void k(global const float2* x, global float* y) { int i = get_global_id(0); float2 v = x[i]; y[i] = v.x * v.y; }",
        2 * 256,
        1,
    );
    assert_eq!(st.global_loads.requests, 8);
    assert_eq!(
        st.global_loads.sectors, 64,
        "32 × 8 B = 256 B = 8 sectors per warp"
    );
    assert_eq!(st.global_loads.bytes, 256 * 8);
    assert_eq!(o[3], 42.0);
}

#[test]
fn scalar_load_is_one_request_of_4_sectors_per_warp() {
    let (st, o) = run256(
        "kernel void k(global const float* x, global float* y) { int i = get_global_id(0); y[i] = x[i] * 2.0f; }",
        256,
        1,
    );
    assert_eq!(st.global_loads.requests, 8);
    assert_eq!(st.global_loads.sectors, 32);
    assert_eq!(st.global_loads.bytes, 256 * 4);
    assert_eq!(o[9], 18.0);
}

#[test]
fn some_components_of_a_float4_are_separate_scalar_requests() {
    // Only x and z are read: two scalar loads at a 16-byte stride, each 16 sectors per
    // warp (not grouped: the vector is not read whole).
    let (st, o) = run256(
        "kernel void k(global const float4* x, global float* y) { int i = get_global_id(0); float4 v = x[i]; y[i] = v.x + v.z; }",
        4 * 256,
        1,
    );
    assert_eq!(st.global_loads.requests, 16);
    assert_eq!(st.global_loads.sectors, 256);
    assert_eq!(o[1], 4.0 + 6.0);
}
