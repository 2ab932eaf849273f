//! The static data-dependence check of global writes (`emu::dataflow`) on the example
//! kernels: balance mode trusts sampled footprints only for kernels it calls clean.
mod common;
use common::fe;

use OpenCL::emu::{compile_source, dataflow::data_dependent_writes, load_module};

fn verdicts(file: &str) -> Vec<(String, Option<String>)> {
    let path = format!("{}/examples/kernels/{file}", env!("CARGO_MANIFEST_DIR"));
    let src = std::fs::read_to_string(&path).unwrap();
    let words = compile_source(&src, "", &fe()).unwrap_or_else(|e| panic!("{file}: {e}"));
    let m = load_module(&words).unwrap();
    m.kernel_names()
        .into_iter()
        .map(|k| {
            let v = data_dependent_writes(&words, &k).unwrap();
            (k, v)
        })
        .collect()
}

#[test]
fn example_kernels_get_the_expected_verdicts() {
    let mut all = Vec::new();
    for f in std::fs::read_dir(format!("{}/examples/kernels", env!("CARGO_MANIFEST_DIR"))).unwrap()
    {
        let name = f.unwrap().file_name().into_string().unwrap();
        if name.ends_with(".cl") {
            all.extend(verdicts(&name));
        }
    }
    for (k, v) in &all {
        eprintln!("{k}: {v:?}");
    }
    let get = |k: &str| {
        all.iter()
            .find(|x| x.0 == k)
            .unwrap_or_else(|| panic!("{k}"))
            .1
            .clone()
    };
    // writes indexed by ids only
    for k in [
        "matmul_global",
        "matmul_local",
        "blackscholes",
        "nbody_step",
        "transpose",
        "dct8x8",
    ] {
        assert_eq!(get(k), None, "{k}");
    }
    // `if (via < old) dist[..] = via`: the footprint depends on the matrix
    assert!(get("floyd_pass").unwrap().contains("conditional"));
}

/// `data_dependent_reads`: the read hulls of balance mode's buffer directory are trusted only
/// for kernels whose loads follow the ids. A stencil's and a matrix product's reads do; a
/// gather through an index array, a load under a data-dependent branch and a loop whose trip
/// count is loaded do not.
#[test]
fn reads_that_follow_the_ids_and_reads_that_follow_data() {
    let src = r#"
__kernel void stencil(__global const float *a, __global float *b, int n) {
    int i = get_global_id(0);
    if (i > 0 && i < n - 1) b[i] = a[i - 1] + a[i] + a[i + 1];
}
__kernel void product(__global const float *a, __global const float *b, __global float *c, int n) {
    int i = get_global_id(1), j = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
    c[i * n + j] = s;
}
__kernel void indirect(__global const int *idx, __global const float *x, __global float *y) {
    int i = get_global_id(0);
    y[i] = x[idx[i]];
}
__kernel void guarded(__global const float *x, __global const float *z, __global float *y) {
    int i = get_global_id(0);
    float v = x[i];
    if (v > 0.0f) v += z[i];
    y[i] = v;
}
__kernel void counted(__global const int *len, __global const float *x, __global float *y) {
    int i = get_global_id(0);
    float s = 0.0f;
    for (int k = 0; k < len[0]; k++) s += x[k];
    y[i] = s;
}
"#;
    let words = compile_source(src, "", &fe()).unwrap();
    let reads = |k: &str| OpenCL::emu::dataflow::data_dependent_reads(&words, k).unwrap();
    assert_eq!(reads("stencil"), None);
    assert_eq!(reads("product"), None);
    assert!(
        reads("indirect").unwrap().contains("address"),
        "{:?}",
        reads("indirect")
    );
    assert!(
        reads("guarded").unwrap().contains("conditional"),
        "{:?}",
        reads("guarded")
    );
    // the loop's counter is data-dependent past its loaded bound: its loads' addresses too
    assert!(reads("counted").is_some());
    // (the stores of all five follow the ids)
    for k in ["stencil", "product", "indirect", "guarded", "counted"] {
        assert_eq!(data_dependent_writes(&words, k).unwrap(), None, "{k}");
    }
}

/// By-value arguments whose value cannot change which bytes a kernel writes
/// (`value_params_free_of_writes`): a time step that only indexes a read-only table (PolyBench
/// fdtd-2d's kernel 1) is free, with that table's reads moved; one that moves a store, guards
/// a store or indexes a buffer the kernel also writes is not.
#[test]
fn by_value_arguments_that_cannot_move_the_writes() {
    use OpenCL::emu::dataflow::value_params_free_of_writes;
    let src = r#"
__kernel void fict(__global const float *fict_, __global float *ey, __global const float *hz,
                   int t, int nx, int ny) {
    int j = get_global_id(0); int i = get_global_id(1);
    if (i < nx && j < ny) {
        if (i == 0) ey[i * ny + j] = fict_[t];
        else ey[i * ny + j] = ey[i * ny + j] - 0.5f * (hz[i * ny + j] - hz[(i - 1) * ny + j]);
    }
}
__kernel void shifted(__global float *a, int s) { a[get_global_id(0) + s] = 1.0f; }
__kernel void guarded(__global float *a, int s) { if (s > 3) a[get_global_id(0)] = 1.0f; }
__kernel void own(__global float *a, int s) { int i = get_global_id(0); a[i] = a[i + s]; }
"#;
    let words = compile_source(src, "", &fe()).unwrap();
    // fict: t (3) moves only fict_'s (0) loads; nx and ny (4, 5) guard the stores
    assert_eq!(
        value_params_free_of_writes(&words, "fict", &[3, 4, 5]).unwrap(),
        vec![(3, vec![0])]
    );
    assert!(value_params_free_of_writes(&words, "shifted", &[1])
        .unwrap()
        .is_empty());
    assert!(value_params_free_of_writes(&words, "guarded", &[1])
        .unwrap()
        .is_empty());
    assert!(value_params_free_of_writes(&words, "own", &[1])
        .unwrap()
        .is_empty());
}
