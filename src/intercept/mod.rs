//! The OpenCL calls clprism needs to see (DESIGN.md §1-§2): object creation and release,
//! `clSetKernelArg`, `clEnqueueNDRangeKernel`. Every hook forwards to the real library and
//! records into side tables keyed by the real handles; the application's handles are never
//! wrapped. Error codes returned are always the real driver's.

pub mod balance;
pub mod hooks;
pub mod launch;
pub mod project;

use crate::registry::{tables, TABLES};

/// True when kernel argument values are recorded (modes that replay launches).
#[inline]
pub fn records_args() -> bool {
    matches!(
        crate::config::get().mode,
        crate::config::Mode::Balance | crate::config::Mode::Project
    )
}

/// True when clprism only forwards (`CLPRISM_MODE=off`).
#[inline]
pub fn passthrough() -> bool {
    crate::config::get().mode == crate::config::Mode::Off
}

/// An application command writes buffer `m` (generated stubs of the `writes:N` entry points):
/// in balance mode its replicas become stale, and so do its parent's or sub-buffers'.
#[inline]
pub fn wrote_buffer(m: tables::Key) {
    if crate::config::get().mode != crate::config::Mode::Balance {
        return;
    }
    crate::exec::invalidate(m);
    if let Some(Some((parent, _))) = TABLES.buffers.with(m, |b| b.parent) {
        crate::exec::invalidate(parent);
    }
}
