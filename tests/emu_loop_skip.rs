//! Footprint-only emulation (`EmuConfig::skip_write_free_loops`, `emu::dataflow`'s
//! `loop_skips`): loops that cannot change which bytes a kernel writes are jumped over, so
//! balance mode gets N-body's write footprint without emulating 524,288 interactions per
//! work-item. The oracle is the full emulation of the same work-groups: the written ranges
//! must be identical, and a loop whose values reach an address or a branch must run.
//! Needs clang + llvm-spirv.
mod common;
use common::fe;

use OpenCL::emu::*;

fn module(src: &str) -> Module {
    let spv = compile_source(src, "", &fe()).expect("compile (needs clang-N + llvm-spirv-N)");
    load_module(&spv).expect("load")
}

fn scalar_u32(x: u32) -> ArgValue {
    ArgValue::Scalar(x.to_le_bytes().to_vec())
}

fn emulate_1d(
    m: &Module,
    kernel: &str,
    global: u64,
    local: u64,
    group: u64,
    args: &mut [ArgValue],
    skip: bool,
) -> WorkGroupStats {
    let cfg = EmuConfig {
        skip_write_free_loops: skip,
        ..Default::default()
    };
    emulate_1d_with(m, kernel, global, local, group, args, &cfg)
}

fn emulate_1d_with(
    m: &Module,
    kernel: &str,
    global: u64,
    local: u64,
    group: u64,
    args: &mut [ArgValue],
    cfg: &EmuConfig,
) -> WorkGroupStats {
    emulate(
        m,
        kernel,
        &LaunchShape::new(&[global], &[local], None),
        [group, 0, 0],
        args,
        cfg,
    )
    .expect("emulate")
}

/// (argument, written ranges) of every argument with writes.
fn written(st: &WorkGroupStats) -> Vec<(u32, Vec<[u64; 2]>)> {
    st.footprints
        .iter()
        .filter(|f| !f.written.is_empty())
        .map(|f| (f.arg, f.written.clone()))
        .collect()
}

fn nbody_args(bodies: usize) -> Vec<ArgValue> {
    vec![
        ArgValue::Buffer(vec![0; bodies * 16]),
        ArgValue::Buffer(vec![0; bodies * 16]),
        ArgValue::Buffer(vec![0; bodies * 16]),
        ArgValue::Buffer(vec![0; bodies * 16]),
        ArgValue::Local(64 * 16),
        scalar_u32(bodies as u32),
        ArgValue::Scalar(0.01f32.to_le_bytes().to_vec()),
        ArgValue::Scalar(0.1f32.to_le_bytes().to_vec()),
    ]
}

#[test]
fn nbody_footprint_skips_the_all_pairs_loop_and_matches_the_full_emulation() {
    let src = std::fs::read_to_string("examples/kernels/nbody.cl").unwrap();
    let m = module(&src);
    // small enough to emulate whole: the oracle
    for g in [0u64, 3] {
        let full = emulate_1d(&m, "nbody_step", 256, 64, g, &mut nbody_args(256), false);
        let skip = emulate_1d(&m, "nbody_step", 256, 64, g, &mut nbody_args(256), true);
        assert!(!full.budget_exhausted);
        assert_eq!(full.skipped_loops, 0);
        assert!(skip.skipped_loops > 0, "the all-pairs loop was not skipped");
        assert_eq!(written(&skip), written(&full));
        let w = g * 64 * 16;
        assert_eq!(
            written(&full),
            vec![(2, vec![[w, w + 1024]]), (3, vec![[w, w + 1024]])]
        );
        // `pos` is read in the skipped loop (and before it); `vel` only after it
        assert_eq!(skip.skipped_loop_reads, vec![0]);
    }
    // the benchmark's size: 524,288 bodies, work-group 4,097 of 8,192
    let bodies = 524_288usize;
    let mut args = nbody_args(bodies);
    let st = emulate_1d(&m, "nbody_step", bodies as u64, 64, 4097, &mut args, true);
    assert!(!st.budget_exhausted);
    let w = 4097 * 64 * 16;
    assert_eq!(
        written(&st),
        vec![(2, vec![[w, w + 1024]]), (3, vec![[w, w + 1024]])]
    );
}

/// Each kernel writes where a loop's result says, or under a loop's result: the loop must
/// run, and the footprint equals the full emulation's.
#[test]
fn loops_whose_values_reach_an_address_or_a_branch_are_not_skipped() {
    let kernels = [
        // the loop's counter escapes into the address
        "kernel void k(global const float *a, global float *o, uint n) {
            uint i = get_global_id(0), j = 0;
            while (j < n + i) j += 3;
            o[j] = a[0]; }",
        // a break sets a flag that selects the written element
        "kernel void k(global const float *a, global float *o, uint n) {
            uint i = get_global_id(0); int found = 0;
            for (uint j = 0; j < n; j++) { if (j * j > i) { found = 1; break; } }
            o[i + found * 64] = a[i]; }",
        // the loop stores to global memory
        "kernel void k(global const float *a, global float *o, uint n) {
            uint i = get_global_id(0);
            for (uint j = 0; j < n; j++) o[(i * 8 + j) % 256] = a[j]; }",
    ];
    for src in kernels {
        let m = module(src);
        let args = || {
            vec![
                ArgValue::Buffer(vec![0; 1024]),
                ArgValue::Buffer(vec![0; 4096]),
                scalar_u32(5),
            ]
        };
        for g in 0..2 {
            let full = emulate_1d(&m, "k", 64, 32, g, &mut args(), false);
            let skip = emulate_1d(&m, "k", 64, 32, g, &mut args(), true);
            assert_eq!(skip.skipped_loops, 0, "{src}");
            assert!(!written(&full).is_empty());
            assert_eq!(written(&skip), written(&full), "{src}");
        }
    }
}

/// A reduction loop whose result is only stored (a value, not an address) is skipped, and
/// the buffer it reads is reported even though no work-item reads it outside the loop.
#[test]
fn a_loop_feeding_only_stored_values_is_skipped_and_its_reads_reported() {
    let m = module(
        "kernel void k(global const float *a, global const float *b, global float *o, uint n) {
            uint i = get_global_id(0); float acc = 0;
            for (uint j = 0; j < n; j++) acc += b[j] * a[i];
            o[i] = acc; }",
    );
    let args = || {
        vec![
            ArgValue::Buffer(vec![0; 1024]),
            ArgValue::Buffer(vec![0; 1 << 20]),
            ArgValue::Buffer(vec![0; 1024]),
            scalar_u32(1 << 18),
        ]
    };
    // 64 work-items × 262,144 iterations: the full emulation runs out of a 20 M
    // lane-instruction budget. The budget is set here, and the wall-time budget out of reach,
    // so the verdict does not depend on the machine's speed (with the default 200 M budget
    // only the 5 s wall-time budget stopped it, and a fast run finished: a flaky test)
    let budget = |skip| EmuConfig {
        skip_write_free_loops: skip,
        instr_budget: 20_000_000,
        time_budget_ns: 600_000_000_000,
        ..Default::default()
    };
    let full = emulate_1d_with(&m, "k", 256, 64, 2, &mut args(), &budget(false));
    let skip = emulate_1d_with(&m, "k", 256, 64, 2, &mut args(), &budget(true));
    assert!(full.budget_exhausted);
    assert!(!skip.budget_exhausted);
    assert!(skip.skipped_loops > 0);
    assert_eq!(written(&skip), vec![(2, vec![[512, 768]])]);
    // `a[i]` is loop-invariant (LLVM hoists its load out of the loop): only `b` is read in it
    assert_eq!(skip.skipped_loop_reads, vec![1]);
    assert!(skip
        .footprints
        .iter()
        .all(|f| f.arg != 1 || f.read.is_empty()));
    assert!(skip
        .footprints
        .iter()
        .any(|f| f.arg == 0 && !f.read.is_empty()));
}

/// The naive matrix product that accumulates into its output element in global memory
/// (PolyBench-ACC's gemm, 2mm, 3mm: `c[i] *= beta; for (k..) c[i] += ...`): the loop stores
/// only through a pointer already stored to before it, so it adds no byte to the footprint
/// and is jumped over. The skipped emulation writes the same bytes as the full one, reports
/// the buffers the loop reads, and still sees the output read. A loop that stores to an
/// address not written before it is not skipped.
#[test]
fn an_accumulation_into_an_element_written_before_the_loop_is_skipped() {
    let m = module(
        "kernel void gemm(global const float *a, global const float *b, global float *c, uint n) {
            uint j = get_global_id(0), i = get_global_id(1);
            if (i < n && j < n) {
                c[i * n + j] *= 0.5f;
                for (uint k = 0; k < n; k++) c[i * n + j] += 1.5f * a[i * n + k] * b[k * n + j];
            } }
         kernel void scatter(global const float *a, global float *c, uint n) {
            uint i = get_global_id(0);
            c[i] = 0;
            for (uint k = 0; k < n; k++) c[i + k * 64] = a[k]; }",
    );
    let n = 256u32;
    let bytes = (n * n * 4) as usize;
    let args = || {
        vec![
            ArgValue::Buffer(vec![0; bytes]),
            ArgValue::Buffer(vec![0; bytes]),
            ArgValue::Buffer(vec![0; bytes]),
            scalar_u32(n),
        ]
    };
    let cfg = |skip| EmuConfig {
        skip_write_free_loops: skip,
        time_budget_ns: 600_000_000_000,
        ..Default::default()
    };
    // one row of 64 work-items: emulated as a 1-D launch, row 0
    let full = emulate_1d_with(&m, "gemm", n as u64, 64, 1, &mut args(), &cfg(false));
    let skip = emulate_1d_with(&m, "gemm", n as u64, 64, 1, &mut args(), &cfg(true));
    assert!(!full.budget_exhausted);
    assert!(
        skip.skipped_loops > 0,
        "the accumulation loop was not skipped"
    );
    assert_eq!(written(&skip), written(&full));
    assert!(skip.global_stores.requests * 10 < full.global_stores.requests);
    // the loop reads `a` and `b` (the output's element is read before it, by `c *= 0.5f`)
    let mut reads = skip.skipped_loop_reads.clone();
    reads.sort_unstable();
    assert!(reads.starts_with(&[0, 1]), "{reads:?}");
    assert!(skip
        .footprints
        .iter()
        .any(|f| f.arg == 2 && !f.read.is_empty()));

    let scatter_args = || {
        vec![
            ArgValue::Buffer(vec![0; 1024]),
            ArgValue::Buffer(vec![0; 64 * 4 * 64]),
            scalar_u32(16),
        ]
    };
    let s = emulate_1d_with(&m, "scatter", 64, 64, 0, &mut scatter_args(), &cfg(true));
    assert_eq!(
        s.skipped_loops, 0,
        "a loop writing new addresses was skipped"
    );
}
