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
