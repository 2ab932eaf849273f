//! `clprism emulate` prints the statistics JSON of one work-group.
mod common;
use common::fe;
use std::process::Command;

#[test]
fn emulate_subcommand_prints_stats_json() {
    if OpenCL::emu::find_toolchain(&fe()).is_none() {
        eprintln!("SKIP: no toolchain");
        return;
    }
    let k =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernels/local_reduce_arg.cl");
    let out = Command::new(env!("CARGO_BIN_EXE_clprism"))
        .args([
            "emulate",
            k.to_str().unwrap(),
            "--kernel",
            "local_reduce_arg",
            "--global",
            "2048",
            "--local",
            "256",
            "--group",
            "6",
        ])
        .args([
            "--arg",
            "buf:8192:fill=randf",
            "--arg",
            "local:1024",
            "--arg",
            "buf:32",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["work_items"], 256);
    assert_eq!(v["group"][0], 6);
    assert_eq!(v["barriers"], 9); // 1 + log2(256)
    assert_eq!(v["footprints"][0]["read"][0][0], 6 * 256 * 4);
    assert_eq!(
        v["footprints"][1]["written"][0],
        serde_json::json!([24, 28])
    );
    // Usage errors exit with 2 and say why.
    let out = Command::new(env!("CARGO_BIN_EXE_clprism"))
        .args(["emulate", k.to_str().unwrap(), "--global", "64"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("argument"));
    // Unsupported features are reported by name, exit 1.
    let dir = std::env::temp_dir().join(format!("clprism-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let f = dir.join("p.cl");
    std::fs::write(
        &f,
        "kernel void p(global int* o) { printf(\"x\"); o[0] = 1; }",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_clprism"))
        .args([
            "emulate",
            f.to_str().unwrap(),
            "--global",
            "1",
            "--local",
            "1",
            "--arg",
            "buf:4",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("printf"));
    let _ = std::fs::remove_dir_all(&dir);
}
