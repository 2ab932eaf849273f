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

/// An application command on queue `q` writes buffer `m` (generated stubs of the `writes:N`
/// entry points, called before the command is forwarded): in balance mode its replicas
/// become stale, and so do its parent's or sub-buffers'; in project mode a deferred
/// snapshot of it is copied first (`project::before_write`).
#[inline]
pub fn wrote_buffer(q: usize, m: tables::Key) {
    match crate::config::get().mode {
        crate::config::Mode::Balance => {
            // a partial write keeps the rest: bytes only devices hold come back first
            crate::exec::gather_for_app(m);
            crate::exec::invalidate_by_host(m);
            if let Some(Some((parent, _))) = TABLES.buffers.with(m, |b| b.parent) {
                crate::exec::invalidate_by_host(parent);
            }
        }
        // SAFETY: the app's queue and buffer, as passed to the command being forwarded.
        crate::config::Mode::Project => unsafe {
            project::before_write(q as opencl_sys::cl_command_queue, m)
        },
        _ => {}
    }
}

/// The application enqueues a command other than a launch on queue `q` (generated stubs of
/// every forwarded `clEnqueue*` entry point): in balance mode, the next balanced launch on
/// that queue waits for it (`exec::pipeline`'s quiet queue). One atomic load otherwise.
#[inline]
pub fn queue_command(q: usize) {
    if crate::config::get().mode == crate::config::Mode::Balance {
        crate::exec::note_app_command(q);
    }
}

/// The application enqueues a barrier or a marker on queue `q` with `waits` events in its
/// wait list (`clEnqueueBarrierWithWaitList`, `clEnqueueMarkerWithWaitList`; the stubs of
/// `clEnqueueBarrier` and `clEnqueueMarker` call nothing). Without a wait list it only
/// orders the queue's commands, which the launch thread's order keeps already, so the queue
/// stays quiet: PolyBench-ACC puts one between the kernels of each time step (fdtd-2d,
/// jacobi-2d), and a launch behind it could not be issued ahead (`exec::launch::ahead`).
/// With a wait list, the next launch waits for it ([`queue_command`]).
#[inline]
pub fn ordering_command(q: usize, waits: u32) {
    if waits > 0 {
        queue_command(q);
    }
}

/// An application command on queue `q` reads buffer `m` (generated stubs of the `reads:N`
/// entry points, called before the command is forwarded): in balance mode the bytes that
/// only balance devices hold are copied into it first (`exec::gather_for_app`).
#[inline]
pub fn read_buffer(_q: usize, m: tables::Key) {
    if crate::config::get().mode == crate::config::Mode::Balance {
        crate::exec::gather_for_app(m);
    }
}

/// An application command on queue `q` may write the `n` buffers at `list` (generated stubs
/// of the `writes:N*M` entry points: migrations, native kernels, GL hand-overs); see
/// [`wrote_buffer`].
///
/// # Safety
/// `list` is null or points to `n` handles, as the application passed them.
#[inline]
pub unsafe fn wrote_buffers(q: usize, n: usize, list: *const usize) {
    if list.is_null()
        || !matches!(
            crate::config::get().mode,
            crate::config::Mode::Balance | crate::config::Mode::Project
        )
    {
        return;
    }
    for &m in std::slice::from_raw_parts(list, n) {
        if m != 0 {
            wrote_buffer(q, m);
        }
    }
}
