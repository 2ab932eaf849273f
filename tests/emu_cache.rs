//! SPIR-V cache of the emulator front end (DESIGN.md §5): a filled cache serves a machine
//! without a toolchain; entries are private files written atomically.
//! (One test function: it changes process environment variables.)
mod common;
use common::fe;

use OpenCL::emu::*;

#[test]
fn cache_serves_without_toolchain() {
    if find_toolchain(&fe()).is_none() {
        eprintln!("SKIP: no toolchain");
        return;
    }
    let dir = std::env::temp_dir().join(format!("clprism-cache-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::env::set_var("CLPRISM_CACHE", &dir);
    let src = "kernel void k(global int* o) { o[0] = X; }";
    let (w1, o1) = compile_cached(src, "-DX=7", &fe()).unwrap();
    assert_eq!(o1, Origin::Compiled);
    let (w2, o2) = compile_cached(src, "-DX=7 -cl-mad-enable", &fe()).unwrap();
    // -cl-mad-enable is dropped, so this is the same key
    assert_eq!(o2, Origin::Cache);
    assert_eq!(w1, w2);
    use std::os::unix::fs::PermissionsExt;
    let dmode = std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777;
    assert_eq!(dmode, 0o700);
    let files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(files.len(), 1, "one entry, no temporary files left");
    assert_eq!(
        files[0].metadata().unwrap().permissions().mode() & 0o777,
        0o600
    );
    // No toolchain: the cache still serves; other sources get a clear reason.
    std::env::set_var("CLPRISM_TOOLCHAIN", dir.join("no-such-toolchain"));
    std::env::set_var("PATH", "/nonexistent");
    let (w3, o3) = compile_cached(src, "-DX=7", &fe()).unwrap();
    assert_eq!((w3, o3), (w1.clone(), Origin::Cache));
    let e = compile_source(src, "-DX=8", &fe()).unwrap_err();
    assert!(
        matches!(e, EmuError::NoToolchain(ref s) if s.contains("CLPRISM_TOOLCHAIN")),
        "{e:?}"
    );
    // The cached module is usable.
    let m = load_module(&w1).unwrap();
    let mut args = vec![ArgValue::Buffer(vec![0; 4])];
    emulate(
        &m,
        "k",
        &LaunchShape::new(&[1], &[1], None),
        [0; 3],
        &mut args,
        &EmuConfig::default(),
    )
    .unwrap();
    assert_eq!(args[0], ArgValue::Buffer(7i32.to_le_bytes().to_vec()));
    let _ = std::fs::remove_dir_all(&dir);
}
