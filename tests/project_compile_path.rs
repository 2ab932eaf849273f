//! Project mode on a machine whose toolchain has clang and llvm-spirv but no LLVM `opt`
//! (issue 32 item 2): kernels whose `-O2` output llvm-spirv 15 rejects are still emulated,
//! and the record says which compile path was taken (`emulation.compile_path`).
//! `tests/c/saturate.c` on PoCL's pthread device.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

/// `saturate` under project mode with `CLPRISM_TOOLCHAIN=toolchain` and a fresh SPIR-V cache:
/// its two launch records (`sat`, `cond`), resolved.
fn saturate(dir: &Path, toolchain: &Path) -> Vec<Value> {
    let log = dir.join("l.jsonl");
    let cache = dir.join("cache");
    let out = run(
        &c_program("saturate"),
        &[],
        Via::Preload("project"),
        &[
            ("POCL_DEVICES", "pthread"),
            ("CLPRISM_LOG", log.to_str().unwrap()),
            ("CLPRISM_CACHE", cache.to_str().unwrap()),
            ("CLPRISM_TOOLCHAIN", toolchain.to_str().unwrap()),
        ],
    );
    assert_ok(&out, "saturate under project mode");
    assert!(String::from_utf8_lossy(&out.stdout).contains("PASS"));
    let recs = read_log(&log);
    assert_eq!(recs.len(), 2, "{recs:?}");
    recs
}

/// A directory of links to the toolchain's clang and llvm-spirv, and to its opt when `opt`.
fn toolchain_dir(dir: &Path, opt: bool) -> Option<std::path::PathBuf> {
    let tc = OpenCL::emu::find_toolchain(&fe())?;
    let d = dir.join(if opt { "with-opt" } else { "no-opt" });
    std::fs::create_dir_all(&d).unwrap();
    let tools = [
        Some(&tc.clang),
        Some(&tc.llvm_spirv),
        tc.opt.as_ref().filter(|_| opt),
    ];
    for p in tools.into_iter().flatten() {
        std::os::unix::fs::symlink(p, d.join(p.file_name().unwrap())).unwrap();
    }
    Some(d)
}

/// With `opt` hidden, both kernels are emulated on the lowered `-O2` path and projected;
/// with it (where this machine has one) on the `-O0` + `opt` path, with the same loads and
/// the same bytes read and written (stores may differ: -O2 sinks `cond`'s two stores into
/// one after the branch, which `opt`'s passes do not).
#[test]
fn kernels_llvm_spirv_rejects_at_o2_are_emulated_without_opt() {
    let d = scratch("project_compile_path");
    let Some(no_opt) = toolchain_dir(&d, false) else {
        eprintln!("SKIP: no toolchain");
        return;
    };
    let recs = saturate(&d.join("run-no-opt"), &no_opt);
    for r in &recs {
        let e = &r["emulation"];
        assert_eq!(e["status"], "ok", "{}: {e}", r["kernel"]);
        assert_eq!(e["compile_path"], "O2-lowered", "{}: {e}", r["kernel"]);
        let devices = r["projection"]["devices"].as_array();
        assert!(devices.is_some_and(|d| !d.is_empty()), "{r}");
    }
    let has_opt = OpenCL::emu::find_toolchain(&fe()).is_some_and(|t| t.opt.is_some());
    if !has_opt {
        eprintln!("no opt here: the O0+opt comparison is skipped");
        return;
    }
    let with_opt = toolchain_dir(&d, true).unwrap();
    let opt_recs = saturate(&d.join("run-opt"), &with_opt);
    for (a, b) in recs.iter().zip(&opt_recs) {
        assert_eq!(b["emulation"]["compile_path"], "O0+opt", "{b}");
        let mem = |r: &Value| {
            let s = &r["emulation"]["stats"];
            (s["global_loads"].clone(), s["footprints"].clone())
        };
        assert_eq!(mem(a), mem(b), "{}: the paths load alike", a["kernel"]);
    }
}
