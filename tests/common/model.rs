//! Helpers of the model's tests (`tests/model_*.rs`), included by `#[path]` where the rest of
//! `common` (examples, PoCL runs) is not needed.

use std::path::{Path, PathBuf};

use OpenCL::model::occupancy::KernelResources;
use OpenCL::model::profile::{load_file, Profile};
use OpenCL::model::project::LaunchShape;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf()
}

/// The device profile `profiles/NAME`.
pub fn profile(name: &str) -> Profile {
    load_file(&root().join("profiles").join(name)).unwrap()
}

/// Equal to 1e-9 relative (1e-9 absolute near 0).
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// A launch of `wgs` work-groups of `size` work-items, no other resources known.
pub fn launch(wgs: u64, size: u64) -> LaunchShape {
    LaunchShape {
        work_groups: wgs,
        resources: KernelResources {
            work_group_size: size,
            ..Default::default()
        },
        kernel_read_bytes: None,
        queued: false,
    }
}
