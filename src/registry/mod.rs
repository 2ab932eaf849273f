//! What clprism knows about the application's OpenCL objects, shared by the layers above it
//! (DESIGN.md §1, with `registry` split out of `intercept`, see below): the side tables keyed
//! by the real handles (`tables`, filled by `intercept`'s hooks, read by `exec` when it
//! replays a launch) and the descriptions of devices (`device`).
//!
//! Design change: DESIGN.md places the side tables inside `intercept`, which left `exec`
//! reading them from the layer above it. They live here, below both, so every dependency
//! points down: `intercept` → `exec` → `registry` → `loader`.

pub mod binaries;
pub mod device;
pub mod tables;

use once_cell::sync::Lazy;

/// The process-wide side tables.
pub static TABLES: Lazy<tables::Tables> = Lazy::new(tables::Tables::default);
