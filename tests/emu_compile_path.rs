//! The front end's fallbacks when llvm-spirv 15 rejects clang's `-O2` output (issue 32 item
//! 2): with LLVM's `opt` the `-O0` + `opt` path, without it (a toolchain directory holding
//! only clang and llvm-spirv) the lowered `-O2` path, and plain `-O0` where lowering is not
//! enough; every path emulates to the same results. Needs clang-N + llvm-spirv-N.
mod common;
use common::*;
use OpenCL::emu::frontend::{compile_path_with, find_toolchain, CompilePath, Toolchain};
use OpenCL::emu::*;

/// `z = x + y; z < x ? UINT_MAX : z`: InstCombine makes `llvm.uadd.sat.i32`, which
/// llvm-spirv 15 rejects (`InvalidFunctionCall`).
const SATURATE: &str =
    "kernel void k(global const uint *a, global uint *o, int ni, int nj, int c) {\n\
    size_t i = get_global_id(0);\n\
    uint x = a[i], y = a[i + 32];\n\
    uint z = x + y;\n\
    o[i] = z < x ? 0xffffffffu : z;\n}";

/// PolyBench-ACC's 3-D convolution condition: the SLP vectorizer makes a `freeze <4 x i1>`
/// (`InvalidInstruction`).
const CONDITIONS: &str =
    "kernel void k(global const uint *a, global uint *o, int ni, int nj, int c) {\n\
    int k = get_global_id(0), j = a[k];\n\
    if (c < ni - 1 && j < nj - 1 && k < ni - 1 && c > 0 && j > 0 && k > 0)\n\
        o[k] = a[k + 1] + a[k - 1];\n\
    else\n\
        o[k] = 2;\n}";

/// Clang builtins that make the intrinsics llvm-spirv 15 rejects at any optimization level
/// (`llvm.vector.reduce.*`, `llvm.uadd/usub/ssub.with.overflow`): lowered, with or without
/// `opt`; and a clamped 64-bit difference, which InstCombine makes `llvm.ssub.sat.i32`.
const BUILTINS: &str =
    "kernel void k(global const uint *a, global uint *o, int ni, int nj, int c) {\n\
    size_t i = get_global_id(0);\n\
    int4 v = (int4)(a[i], a[i + 1], -(int)a[i + 2], a[i + 3]);\n\
    uint r, s; int t;\n\
    bool ov = __builtin_uadd_overflow(a[i], a[i + 32], &r);\n\
    bool ov2 = __builtin_usub_overflow(a[i], 3u, &s);\n\
    bool ov3 = __builtin_ssub_overflow((int)a[i + 32], 0x7ffffff8, &t);\n\
    long d = (long)(int)a[i + 32] - (long)(int)(a[i] + 0x7ffffff0u);\n\
    d = d > 2147483647L ? 2147483647L : (d < -2147483648L ? -2147483648L : d);\n\
    o[i] = __builtin_reduce_add(v) + __builtin_reduce_max(v) * 3 + __builtin_reduce_min(v)\n\
        + __builtin_reduce_and(v) + __builtin_reduce_or(v) + __builtin_reduce_xor(v)\n\
        + (uint)__builtin_reduce_max(convert_float4(v))\n\
        + (ov ? 1000 : 0) + (ov2 ? 2000 : 0) + (ov3 ? 4000 : 0) + r + s + t + (int)d;\n}";

/// A sum over a loop's induction variable: IndVarSimplify replaces the loop's exit value by
/// its closed form in `i33` arithmetic (`InvalidBitWidth`); the lowered path keeps the loop
/// (`-mllvm -replexitval=never`).
const TRIANGLE: &str =
    "kernel void k(global const uint *a, global uint *o, int ni, int nj, int c) {\n\
    size_t i = get_global_id(0);\n\
    int s = 0;\n\
    for (int k = 0; k < (int)a[i]; k++) s += k;\n\
    o[i] = s;\n}";

/// A switch LLVM 15 narrows to `i2` (DESIGN.md §5, `InvalidBitWidth`): widened back to `i32`
/// on the lowered path ([`OpenCL::emu::lower::widen_switches`]).
const SWITCH: &str = "kernel void k(global const uint *a, global uint *o, int ni, int nj, int c) {\n\
    int i = get_global_id(0); uint r;\n\
    switch (a[i] & 3u) { case 0: r = 1; break; case 1: r = 7; break; case 2: r = 9; break; default: r = 4; }\n\
    o[i] = r;\n}";

/// The toolchain found on `PATH` (or `CLPRISM_TOOLCHAIN`), and a copy of it without `opt`:
/// a directory of links to its clang and llvm-spirv.
fn toolchains(name: &str) -> Option<(Toolchain, Toolchain)> {
    let tc = find_toolchain(&fe())?;
    let dir = scratch(name).join("no-opt");
    std::fs::create_dir_all(&dir).unwrap();
    for p in [&tc.clang, &tc.llvm_spirv] {
        std::os::unix::fs::symlink(p, dir.join(p.file_name().unwrap())).unwrap();
    }
    let opts = FrontendOptions {
        toolchain: Some(dir),
        ..Default::default()
    };
    let no_opt = find_toolchain(&opts).expect("the linked toolchain is found");
    assert!(no_opt.opt.is_none(), "{no_opt:?}");
    Some((tc, no_opt))
}

/// `a`: 0, 1, ... 31, then 0xfffffff0 + 0 .. 31.
fn input() -> Vec<u8> {
    let mut a: Vec<u32> = (0..32).collect();
    a.extend((0..32).map(|i| 0xffff_fff0u32.wrapping_add(i)));
    a.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The arguments: [`input`], a 32-word output, `ni` = `nj` = 20, `c` = 5.
fn arguments() -> Vec<ArgValue> {
    let mut v = vec![ArgValue::Buffer(input()), ArgValue::Buffer(vec![0; 128])];
    v.extend([20i32, 20, 5].map(|x| ArgValue::Scalar(x.to_le_bytes().to_vec())));
    v
}

/// Emulates work-group 0 (32 work-items) of `k` on [`input`]: the output words.
fn outputs(words: &[u32]) -> Vec<u32> {
    let m = load_module(words).expect("load");
    let mut args = arguments();
    let shape = LaunchShape::new(&[32], &[32], None);
    emulate(&m, "k", &shape, [0; 3], &mut args, &EmuConfig::default()).expect("emulate");
    let ArgValue::Buffer(o) = &args[1] else {
        panic!("output kind changed")
    };
    o.chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// What [`BUILTINS`] writes for work-item `i`.
fn builtins(i: usize) -> u32 {
    let a: Vec<u32> = input()
        .chunks(4)
        .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect();
    let v = [
        a[i] as i32,
        a[i + 1] as i32,
        (a[i + 2] as i32).wrapping_neg(),
        a[i + 3] as i32,
    ];
    let (max, min) = (*v.iter().max().unwrap(), *v.iter().min().unwrap());
    let (r, ov) = a[i].overflowing_add(a[i + 32]);
    let (s, ov2) = a[i].overflowing_sub(3);
    let (t, ov3) = (a[i + 32] as i32).overflowing_sub(0x7fff_fff8);
    let d = (a[i + 32] as i32 as i64 - a[i].wrapping_add(0x7fff_fff0) as i32 as i64)
        .clamp(i32::MIN as i64, i32::MAX as i64) as i32;
    let terms = [
        v.iter().fold(0i32, |x, y| x.wrapping_add(*y)),
        max.wrapping_mul(3),
        min,
        v.iter().fold(-1, |x, y| x & y),
        v.iter().fold(0, |x, y| x | y),
        v.iter().fold(0, |x, y| x ^ y),
        max as f32 as i32,
        if ov { 1000 } else { 0 },
        if ov2 { 2000 } else { 0 },
        if ov3 { 4000 } else { 0 },
        r as i32,
        s as i32,
        t,
        d,
    ];
    terms.iter().fold(0u32, |x, y| x.wrapping_add(*y as u32))
}

/// What each kernel must write for work-item `i`.
fn expected(src: &str, i: u32) -> u32 {
    match src {
        s if s == BUILTINS => builtins(i as usize),
        s if s == TRIANGLE => i * i.saturating_sub(1) / 2,
        s if s == SATURATE => i.saturating_add(0xffff_fff0u32.wrapping_add(i)),
        s if s == CONDITIONS => {
            if i > 0 && i < 19 {
                2 * i
            } else {
                2
            }
        }
        _ => [1, 7, 9, 4][i as usize % 4],
    }
}

#[test]
fn rejected_o2_output_is_emulated_without_opt() {
    let Some((tc, no_opt)) = toolchains("emu_compile_path") else {
        eprintln!("SKIP: no toolchain");
        return;
    };
    // (source, path without opt, path with opt)
    let cases = [
        (SATURATE, CompilePath::O2Lowered, CompilePath::O0Opt),
        (CONDITIONS, CompilePath::O2Lowered, CompilePath::O0Opt),
        (BUILTINS, CompilePath::O2Lowered, CompilePath::O2Lowered),
        (TRIANGLE, CompilePath::O2Lowered, CompilePath::O0Opt),
        (SWITCH, CompilePath::O2Lowered, CompilePath::O0Opt),
    ];
    for (src, want, with_opt) in cases {
        let (words, path) = compile_path_with(&no_opt, src, "").expect("compiles without opt");
        assert_eq!(path, want, "{src}");
        let got = outputs(&words);
        for i in 0..32 {
            assert_eq!(
                got[i as usize],
                expected(src, i),
                "{want:?}, work-item {i}: {src}"
            );
        }
        // with opt (where this machine has one), the -O0 + opt path, with the same results
        if tc.opt.is_some() {
            let (w, p) = compile_path_with(&tc, src, "").unwrap();
            assert_eq!(p, with_opt, "{src}");
            assert_eq!(outputs(&w), got, "{src}");
        }
    }
    // a kernel llvm-spirv takes at -O2 stays on -O2 either way
    let plain =
        "kernel void k(global const uint *a, global uint *o) { o[get_global_id(0)] = a[0]; }";
    // (not emulated: only the path is checked)
    assert_eq!(
        compile_path_with(&no_opt, plain, "").unwrap().1,
        CompilePath::O2
    );
}

/// The last fallback, plain `-O0`: behind an llvm-spirv that takes only `-O0` output (a
/// wrapper that rejects modules without `optnone`, the attribute clang gives every function
/// at plain `-O0`), the saturating kernel compiles on `O0` and emulates to the host's values.
#[test]
fn plain_o0_is_the_last_fallback() {
    let Some((_, no_opt)) = toolchains("emu_compile_path_o0") else {
        eprintln!("SKIP: no toolchain");
        return;
    };
    let dis = ["llvm-dis-15", "llvm-dis"].into_iter().find(|n| {
        std::process::Command::new(n)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(dis) = dis else {
        eprintln!("SKIP: no llvm-dis");
        return;
    };
    let dir = no_opt.clang.parent().unwrap().to_path_buf();
    let spirv = dir.join(no_opt.llvm_spirv.file_name().unwrap());
    let real = std::fs::canonicalize(&no_opt.llvm_spirv).unwrap();
    std::fs::remove_file(&spirv).unwrap();
    let script = format!(
        "#!/bin/sh\nt=$(mktemp)\ncat > \"$t\"\n\
         if {dis} \"$t\" -o - | grep -q optnone; then \"{}\" \"$t\" -o -; r=$?; else echo rejected >&2; r=1; fi\n\
         rm -f \"$t\"\nexit $r\n",
        real.display()
    );
    std::fs::write(&spirv, script).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&spirv, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (words, path) = compile_path_with(&no_opt, SATURATE, "").expect("compiles at -O0");
    assert_eq!(path, CompilePath::O0);
    let got = outputs(&words);
    for i in 0..32 {
        assert_eq!(got[i as usize], expected(SATURATE, i), "work-item {i}");
    }
}

/// The lowered path keeps -O2's code: each kernel counts the warp instructions of the
/// `-O0` + `opt` path (where this machine has `opt`) within the 3 that lowering one
/// intrinsic may add.
#[test]
fn the_lowered_path_counts_like_o2() {
    let Some((tc, no_opt)) = toolchains("emu_compile_path_counts") else {
        eprintln!("SKIP: no toolchain");
        return;
    };
    let total = |words: &[u32]| -> u64 {
        let m = load_module(words).unwrap();
        let mut args = arguments();
        let shape = LaunchShape::new(&[32], &[32], None);
        let st = emulate(&m, "k", &shape, [0; 3], &mut args, &EmuConfig::default()).unwrap();
        let v = serde_json::to_value(st.instructions).unwrap();
        v.as_object()
            .unwrap()
            .values()
            .filter_map(|c| c["warp"].as_u64())
            .sum()
    };
    for src in [SATURATE, CONDITIONS] {
        let (lowered, _) = compile_path_with(&no_opt, src, "").unwrap();
        let l = total(&lowered);
        let Some(_) = tc.opt else {
            assert!(l > 0);
            continue;
        };
        let (with_opt, _) = compile_path_with(&tc, src, "").unwrap();
        let o = total(&with_opt);
        eprintln!("warp instructions: lowered -O2 {l}, -O0 + opt {o}");
        assert!(
            l > 0 && l.abs_diff(o) <= 3,
            "lowered -O2 {l}, -O0 + opt {o}: {src}"
        );
    }
}

/// mixbench's kernel (an operational-intensity sweep builds it once per type and number of
/// compute iterations): for `int`, LLVM's SLP vectorizer turns the final multiply-add
/// reduction into `llvm.vector.reduce.add.v4i32`, which llvm-spirv 15 rejects, so every
/// `int` build failed without `opt` (issue 32: "about 1 in 3 builds of the sweep").
const MIXBENCH: &str = "#define MAD(a, b, c) ((a) * (b) + (c))\n\
bool equal(class_T a, class_T b) { return a == b; }\n\
kernel void benchmark_func(class_T seed, global class_T *g_data) {\n\
    const int stride = BLOCK_SIZE;\n\
    int idx = get_group_id(0) * BLOCK_SIZE * ELEMENTS_PER_THREAD + get_local_id(0);\n\
    const int big_stride = get_num_groups(0) * BLOCK_SIZE * ELEMENTS_PER_THREAD;\n\
    class_T tmps[ELEMENTS_PER_THREAD];\n\
    for (int k = 0; k < FUSION_DEGREE; k++) {\n\
        for (int j = 0; j < ELEMENTS_PER_THREAD; j++) {\n\
            tmps[j] = g_data[idx + j * stride + k * big_stride];\n\
            for (int i = 0; i < COMPUTE_ITERATIONS; i++)\n\
                tmps[j] = MAD(tmps[j], tmps[j], seed);\n\
        }\n\
        class_T sum = (class_T)0;\n\
        for (int j = 0; j < ELEMENTS_PER_THREAD; j += 2)\n\
            sum = MAD(tmps[j], tmps[j + 1], sum);\n\
        if (equal(sum, (class_T)-1))\n\
            g_data[idx + k * big_stride] = sum;\n\
    }\n}";

/// mixbench's builds without `opt`: `float` on `-O2`, `int` on the lowered `-O2` (before:
/// not emulated); both emulate, with the same global loads (the same 4-byte elements at the
/// same addresses).
#[test]
fn a_mixbench_sweep_compiles_without_opt() {
    let Some((_, no_opt)) = toolchains("emu_compile_path_mixbench") else {
        eprintln!("SKIP: no toolchain");
        return;
    };
    let loads = |words: &[u32], seed: Vec<u8>| {
        let m = load_module(words).unwrap();
        // 2 work-groups of 256, 8 elements each, fusion degree 2: 8192 elements
        let mut args = vec![ArgValue::Scalar(seed), ArgValue::Buffer(vec![0; 4 * 8192])];
        let shape = LaunchShape::new(&[512], &[256], None);
        let cfg = EmuConfig::default();
        let st = emulate(&m, "benchmark_func", &shape, [0; 3], &mut args, &cfg).unwrap();
        serde_json::to_value(st.global_loads).unwrap()
    };
    for iterations in [0, 8, 64] {
        let opts = |t: &str| {
            format!("-Dclass_T={t} -DBLOCK_SIZE=256 -DELEMENTS_PER_THREAD=8 -DFUSION_DEGREE=2 -DCOMPUTE_ITERATIONS={iterations}")
        };
        let (f, pf) = compile_path_with(&no_opt, MIXBENCH, &opts("float")).unwrap();
        let (i, pi) = compile_path_with(&no_opt, MIXBENCH, &opts("int")).unwrap();
        assert_eq!(
            (pf, pi),
            (CompilePath::O2, CompilePath::O2Lowered),
            "{iterations}"
        );
        let (lf, li) = (
            loads(&f, 1f32.to_le_bytes().to_vec()),
            loads(&i, 1i32.to_le_bytes().to_vec()),
        );
        assert_eq!(lf, li, "{iterations} iterations: float and int load alike");
        assert!(lf["requests"].as_u64().unwrap() > 0);
    }
}

/// `frontend::UNROLL`: the tile loop of `examples/kernels/matmul_local.cl` (16 steps of a
/// multiply-add from two `__local` tiles) is unrolled as a GPU vendor's compiler does with a
/// small loop of known trip count (CUDA C++ Programming Guide, `#pragma unroll`; LLVM's
/// `-O3` threshold), so the emulated work-group issues about one branch per tile, not one
/// per step, and its lane instructions per multiply-add fall from 13 (clang's `-O2` for
/// `spir64` keeps the loop) to about 4. The memory counts are the same either way.
#[test]
fn small_loops_of_known_trip_count_are_unrolled() {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/kernels/matmul_local.cl"
    ))
    .unwrap();
    let spv = compile_source(&src, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
    let m = load_module(&spv).expect("load");
    let n = 256u32;
    let mat = || ArgValue::Buffer(vec![0; (n * n * 4) as usize]);
    let mut args = vec![
        mat(),
        mat(),
        mat(),
        ArgValue::Scalar(n.to_le_bytes().to_vec()),
        ArgValue::Local(16 * 16 * 4),
    ];
    let st = emulate(
        &m,
        "matmul_local",
        &LaunchShape::new(&[n as u64, n as u64], &[16, 16], None),
        [0, 0, 0],
        &mut args,
        &EmuConfig::default(),
    )
    .expect("emulate");
    let fma = st.instructions.fp32.lane as f64;
    assert_eq!(fma, 256.0 * n as f64, "one multiply-add per step: {st:?}");
    // 8 warps × 16 tiles: two local loads per step, one store of each tile per tile.
    assert_eq!(st.local_loads.requests, 8 * 16 * 16 * 2);
    let lanes: u64 = [
        st.instructions.int,
        st.instructions.fp32,
        st.instructions.conversion,
        st.instructions.branch,
        st.instructions.memory,
        st.instructions.other,
    ]
    .iter()
    .map(|c| c.lane)
    .sum();
    assert!(
        lanes as f64 / fma < 6.0,
        "{} lane instructions per multiply-add: {st:?}",
        lanes as f64 / fma
    );
    // about one branch per tile and work-item, not one per step
    assert!(st.instructions.branch.lane < 256 * 16 * 3, "{st:?}");
}
