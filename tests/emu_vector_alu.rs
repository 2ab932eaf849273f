//! Vector arithmetic counts one scalar instruction per component (issue 19): NVIDIA GPUs
//! have no 4- or 16-wide FP32 instruction per lane, so `a * b + c` on `float4` is four FMAs
//! per work-item. clpeak's `compute_sp_v1` .. `compute_sp_v16` do the same FLOPs in vectors
//! of 1 to 16 and take the same 4.4 ms on an H100 (results/session14-2026-11-27), while the
//! emulator had counted the `float16` kernel as 1/16 of the work. Real kernels through the
//! front end (needs clang-N + llvm-spirv-N), run in the interpreter; no OpenCL device.
mod common;
use common::fe;

use OpenCL::emu::*;

/// fp32 lane instructions of one work-group of 64 work-items of kernel `k(global float* x)`.
fn fp32_lanes(src: &str) -> u64 {
    let spv = compile_source(src, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
    let m = load_module(&spv).expect("load");
    let mut args = vec![ArgValue::Buffer(vec![0; 64 * 16 * 4])];
    let st = emulate(
        &m,
        "k",
        &LaunchShape::new(&[64], &[64], None),
        [0, 0, 0],
        &mut args,
        &EmuConfig::default(),
    )
    .expect("emulate");
    st.instructions.fp32.lane
}

/// 32 dependent multiply-adds on a value of `ty`, stored so that none is dead.
fn chain(ty: &str, w: usize) -> String {
    format!(
        "kernel void k(global float* x) {{ int i = get_global_id(0); {ty} a = ({ty})(x[i]);
           for (int j = 0; j < 32; j++) a = a * a + ({ty})(0.5f);
           vstore{w}(a, i, x); }}",
        w = if w == 1 { String::new() } else { w.to_string() }
    )
    .replace("vstore(a, i, x)", "x[i] = a")
}

#[test]
fn vector_multiply_add_counts_every_component() {
    let one = fp32_lanes(&chain("float", 1));
    assert!(
        one >= 64 * 32,
        "at least one fp32 instruction per multiply-add: {one}"
    );
    for w in [2usize, 4, 8, 16] {
        let v = fp32_lanes(&chain(&format!("float{w}"), w));
        // the loop's own instructions are integer; the fp32 work scales with the width
        let ratio = v as f64 / one as f64;
        assert!(
            (ratio - w as f64).abs() <= 0.05 * w as f64,
            "float{w}: {v} fp32 lane instructions, {ratio:.2}x the scalar kernel's {one}"
        );
    }
}
