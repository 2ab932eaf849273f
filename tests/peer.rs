//! Peer suites in CI (issue 6, item 1): piglit's cl-api tests and every 6th piglit
//! program/execute test (`scripts/peer_suites.sh --quick`), natively and through clprism in
//! off, log, project and balance modes on PoCL; every test's result must equal the native
//! one. The full comparison (all program/execute tests, pyopencl's tests and examples) is
//! `scripts/peer_suites.sh` (results/peer/table.md).
mod common;
use common::*;
use std::collections::BTreeMap;
use std::process::Command;

/// Tests whose result through clprism legitimately differs from native (with the cause);
/// each is listed in docs/usage.md's known limitations. (suite, test, mode)
const KNOWN: &[(&str, &str, &str)] = &[];

fn results(p: &std::path::Path) -> BTreeMap<(String, String), String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .filter_map(|l| {
            let v: Vec<&str> = l.split('\t').collect();
            (v.len() == 3).then(|| ((v[0].into(), v[1].into()), v[2].into()))
        })
        .collect()
}

#[test]
fn piglit_results_equal_native_in_every_mode() {
    let piglit = std::path::Path::new("/usr/lib/x86_64-linux-gnu/piglit/bin/cl-program-tester");
    if !piglit.exists() {
        eprintln!("SKIP: piglit is not installed (scripts/setup.sh installs it)");
        return;
    }
    let d = scratch("peer");
    let modes = ["off", "log", "project", "balance"];
    let out = Command::new(root().join("scripts/peer_suites.sh"))
        .arg("--quick")
        .arg("--out")
        .arg(&d)
        .args(modes)
        .env("CLPRISM_TEST_LIB", lib())
        .env("PEER_TIMEOUT", "60")
        .env(
            "POCL_DEVICES",
            std::env::var("POCL_DEVICES").unwrap_or_else(|_| "pthread pthread basic".into()),
        )
        .output()
        .expect("peer_suites.sh");
    assert_ok(&out, "peer_suites.sh --quick");
    let native = results(&d.join("native.tsv"));
    assert!(
        native.len() > 40,
        "too few native results: {}",
        native.len()
    );
    let mut diffs = Vec::new();
    for m in modes {
        let got = results(&d.join(format!("{m}.tsv")));
        for (k, r) in &native {
            let g = got.get(k).map(String::as_str).unwrap_or("missing");
            if g != r && !KNOWN.contains(&(k.0.as_str(), k.1.as_str(), m)) {
                diffs.push(format!("{} / {}: native {r}, {m} {g}", k.0, k.1));
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "results differ from native:\n{}\n(outputs in {})",
        diffs.join("\n"),
        d.display()
    );
}
