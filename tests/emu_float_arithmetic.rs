//! The emulator's module tells which kernels do floating-point arithmetic
//! (`KernelInfo::float_arithmetic`): balance mode splits those only over devices like the
//! app's device (`CLPRISM_BALANCE_FLOAT=like`), because another compiler may contract
//! `a*b+c` into an FMA or round a division or a built-in otherwise. Moving floats,
//! comparing them, `fabs`/`fmin` and conversions are exact and do not count. Real kernels
//! through the front end (needs clang-N + llvm-spirv-N); no OpenCL device.
mod common;
use common::fe;

use OpenCL::emu::*;

fn float_arithmetic(src: &str) -> bool {
    let spv = compile_source(src, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
    let m = load_module(&spv).expect("load");
    m.kernel("k").expect("kernel k").float_arithmetic
}

#[test]
fn arithmetic_on_floats_counts() {
    for body in [
        "y[i] = x[i] * 2.0f;",
        "y[i] = x[i] + x[i + 1];",
        "y[i] = x[i] / 3.0f;",
        "y[i] = sqrt(x[i]);",
        "y[i] = exp(x[i]);",
        "y[i] = mad(x[i], x[i], 1.0f);",
        "y[i] = dot((float4)(x[i]), (float4)(1.0f));",
        "y[i] = (float)((double)x[i] * 0.5);",
    ] {
        let src = format!(
            "kernel void k(global const float* x, global float* y) {{ int i = get_global_id(0); {body} }}"
        );
        assert!(float_arithmetic(&src), "not counted: {body}");
    }
}

/// In a callee only: the kernel counts.
#[test]
fn arithmetic_in_a_callee_counts() {
    let src = "float half_of(float v) { return v * 0.5f; }
        kernel void k(global float* y) { int i = get_global_id(0); y[i] = half_of(y[i]); }";
    assert!(float_arithmetic(src));
}

#[test]
fn exact_operations_do_not_count() {
    for body in [
        "y[i] = x[i];",
        "y[i] = x[get_global_size(0) - 1 - i];",
        "y[i] = -x[i];",
        "y[i] = fabs(x[i]);",
        "y[i] = fmin(x[i], x[i + 1]);",
        "y[i] = floor(x[i]);",
        "y[i] = x[i] < 1.0f ? x[i] : 1.0f;",
        "y[i] = (float)(i * 3 + 1);",
        "n[i] = (int)x[i] * 7 / 3;",
    ] {
        let src = format!(
            "kernel void k(global const float* x, global float* y, global int* n) {{ int i = get_global_id(0); {body} }}"
        );
        assert!(!float_arithmetic(&src), "counted: {body}");
    }
}
