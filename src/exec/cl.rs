//! Thin wrappers over the real library's function table for clprism's own OpenCL work
//! (shadow contexts, replicas, chunk launches, merges). They go straight to the real table,
//! never through clprism's exported symbols, so they are neither intercepted nor logged.
//! Every wrapper returns the driver's error code on failure.

#![allow(clippy::missing_safety_doc)]

use crate::loader::RealTable;
use opencl_sys::*;
use std::ffi::{c_void, CString};

/// A driver error: the failing call and its code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClError {
    /// Name of the OpenCL call.
    pub call: &'static str,
    /// The driver's error code.
    pub code: cl_int,
}

impl std::fmt::Display for ClError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} returned {}", self.call, self.code)
    }
}

/// Result of a real OpenCL call.
pub type ClResult<T> = Result<T, ClError>;

/// The real function table (exec runs only after the real library loaded).
pub fn rt() -> ClResult<&'static RealTable> {
    crate::loader::table().ok_or(ClError {
        call: "loader",
        code: CL_INVALID_OPERATION,
    })
}

macro_rules! f {
    ($name:ident) => {
        rt()?.$name.ok_or(ClError {
            call: stringify!($name),
            code: CL_INVALID_OPERATION,
        })?
    };
}

fn check(call: &'static str, code: cl_int) -> ClResult<()> {
    if code == CL_SUCCESS {
        Ok(())
    } else {
        Err(ClError { call, code })
    }
}

/// A context holding exactly `dev`.
pub unsafe fn create_context(dev: cl_device_id) -> ClResult<cl_context> {
    let mut e = 0;
    let c = f!(clCreateContext)(
        std::ptr::null(),
        1,
        &dev,
        std::ptr::null_mut(),
        std::ptr::null_mut(),
        &mut e,
    );
    check("clCreateContext", e).map(|_| c)
}

/// An in-order queue with profiling.
pub unsafe fn create_queue(ctx: cl_context, dev: cl_device_id) -> ClResult<cl_command_queue> {
    let mut e = 0;
    let q = f!(clCreateCommandQueue)(ctx, dev, CL_QUEUE_PROFILING_ENABLE, &mut e);
    check("clCreateCommandQueue", e).map(|_| q)
}

/// A buffer of `size` bytes.
pub unsafe fn create_buffer(ctx: cl_context, size: usize) -> ClResult<cl_mem> {
    let mut e = 0;
    let m = f!(clCreateBuffer)(
        ctx,
        CL_MEM_READ_WRITE,
        size.max(1),
        std::ptr::null_mut(),
        &mut e,
    );
    check("clCreateBuffer", e).map(|_| m)
}

/// A buffer of `size` bytes in host memory the driver allocates (`CL_MEM_ALLOC_HOST_PTR`;
/// NVIDIA's driver page-locks it, so transfers to and from it run at full PCIe speed).
pub unsafe fn create_host_buffer(ctx: cl_context, size: usize) -> ClResult<cl_mem> {
    let mut e = 0;
    let m = f!(clCreateBuffer)(
        ctx,
        CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
        size.max(1),
        std::ptr::null_mut(),
        &mut e,
    );
    check("clCreateBuffer", e).map(|_| m)
}

/// Maps the first `size` bytes of `m` for reading and writing (blocking); the pointer stays
/// valid until [`unmap`].
pub unsafe fn map(q: cl_command_queue, m: cl_mem, size: usize) -> ClResult<*mut u8> {
    let mut e = 0;
    let p = f!(clEnqueueMapBuffer)(
        q,
        m,
        CL_TRUE,
        CL_MAP_READ | CL_MAP_WRITE,
        0,
        size.max(1),
        0,
        std::ptr::null(),
        std::ptr::null_mut(),
        &mut e,
    );
    check("clEnqueueMapBuffer", e)?;
    if p.is_null() {
        return Err(ClError {
            call: "clEnqueueMapBuffer",
            code: CL_MAP_FAILURE,
        });
    }
    Ok(p.cast())
}

/// Unmaps `ptr` (from [`map`] of `m`) and waits for it.
pub unsafe fn unmap(q: cl_command_queue, m: cl_mem, ptr: *mut u8) -> ClResult<()> {
    check(
        "clEnqueueUnmapMemObject",
        f!(clEnqueueUnmapMemObject)(q, m, ptr.cast(), 0, std::ptr::null(), std::ptr::null_mut()),
    )?;
    finish(q)
}

/// Builds `source` for `dev` with `options`; on failure returns the build log in the error.
pub unsafe fn build_source(
    ctx: cl_context,
    dev: cl_device_id,
    source: &str,
    options: &str,
) -> Result<cl_program, String> {
    let t = rt().map_err(|e| e.to_string())?;
    let cs = CString::new(source).map_err(|_| "source contains NUL".to_string())?;
    let mut e = 0;
    let mut p = cs.as_ptr();
    let prog = (t
        .clCreateProgramWithSource
        .ok_or("no clCreateProgramWithSource")?)(
        ctx, 1, &mut p, std::ptr::null(), &mut e
    );
    if e != CL_SUCCESS {
        return Err(format!("clCreateProgramWithSource returned {e}"));
    }
    finish_build(prog, dev, options)
}

/// The binary of a program built for exactly one device (`CL_PROGRAM_BINARIES`); `None`
/// when the driver gives none.
pub unsafe fn program_binary(prog: cl_program) -> Option<Vec<u8>> {
    let f = rt().ok()?.clGetProgramInfo?;
    let size: usize = info(|n, p, r| f(prog, CL_PROGRAM_BINARY_SIZES, n, p, r))?;
    if size == 0 {
        return None;
    }
    let mut bin = vec![0u8; size];
    let mut ptr = bin.as_mut_ptr();
    let r = f(
        prog,
        CL_PROGRAM_BINARIES,
        std::mem::size_of::<*mut u8>(),
        (&mut ptr as *mut *mut u8).cast(),
        std::ptr::null_mut(),
    );
    (r == CL_SUCCESS).then_some(bin)
}

/// Builds a program from a device binary (same device model) for `dev`.
pub unsafe fn build_binary(
    ctx: cl_context,
    dev: cl_device_id,
    bin: &[u8],
    options: &str,
) -> Result<cl_program, String> {
    let t = rt().map_err(|e| e.to_string())?;
    let mut e = 0;
    let mut st = 0;
    let len = bin.len();
    let mut ptr = bin.as_ptr();
    let prog = (t
        .clCreateProgramWithBinary
        .ok_or("no clCreateProgramWithBinary")?)(
        ctx, 1, &dev, &len, &mut ptr, &mut st, &mut e
    );
    if e != CL_SUCCESS {
        return Err(format!("clCreateProgramWithBinary returned {e}"));
    }
    finish_build(prog, dev, options)
}

unsafe fn finish_build(
    prog: cl_program,
    dev: cl_device_id,
    options: &str,
) -> Result<cl_program, String> {
    let t = rt().map_err(|e| e.to_string())?;
    let co = CString::new(options).unwrap_or_default();
    let r = (t.clBuildProgram.ok_or("no clBuildProgram")?)(
        prog,
        1,
        &dev,
        co.as_ptr(),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    );
    if r != CL_SUCCESS {
        let log = build_log(prog, dev);
        release_program(prog);
        return Err(format!("clBuildProgram returned {r}: {}", log.trim()));
    }
    Ok(prog)
}

/// The build log of `prog` for `dev` (empty when the driver gives none).
///
/// # Safety
/// `prog` is a valid program built for `dev`.
pub unsafe fn build_log(prog: cl_program, dev: cl_device_id) -> String {
    rt().ok()
        .and_then(|t| t.clGetProgramBuildInfo)
        .and_then(|f| {
            crate::registry::device::info_string(|n, p, s| {
                f(prog, dev, CL_PROGRAM_BUILD_LOG, n, p, s)
            })
        })
        .unwrap_or_default()
}

/// A kernel of `prog`.
pub unsafe fn create_kernel(prog: cl_program, name: &str) -> ClResult<cl_kernel> {
    let cn = CString::new(name).unwrap_or_default();
    let mut e = 0;
    let k = f!(clCreateKernel)(prog, cn.as_ptr(), &mut e);
    check("clCreateKernel", e).map(|_| k)
}

/// Sets one kernel argument (`value` null for `__local`).
pub unsafe fn set_arg(k: cl_kernel, i: u32, size: usize, value: *const c_void) -> ClResult<()> {
    check("clSetKernelArg", f!(clSetKernelArg)(k, i, size, value))
}

/// Enqueues an NDRange with explicit offset/global/local (an empty `l`: the driver picks the
/// local size), returning its event.
pub unsafe fn enqueue_ndrange(
    q: cl_command_queue,
    k: cl_kernel,
    dim: u32,
    off: &[usize],
    g: &[usize],
    l: &[usize],
    wait: &[cl_event],
) -> ClResult<cl_event> {
    let mut ev = std::ptr::null_mut();
    let wp = if wait.is_empty() {
        std::ptr::null()
    } else {
        wait.as_ptr()
    };
    let r = f!(clEnqueueNDRangeKernel)(
        q,
        k,
        dim,
        off.as_ptr(),
        g.as_ptr(),
        if l.is_empty() {
            std::ptr::null()
        } else {
            l.as_ptr()
        },
        wait.len() as u32,
        wp,
        &mut ev,
    );
    check("clEnqueueNDRangeKernel", r).map(|_| ev)
}

/// Reads `dst.len()` bytes at `offset` of `m` (blocking).
pub unsafe fn read(q: cl_command_queue, m: cl_mem, offset: usize, dst: &mut [u8]) -> ClResult<()> {
    if dst.is_empty() {
        return Ok(());
    }
    check(
        "clEnqueueReadBuffer",
        f!(clEnqueueReadBuffer)(
            q,
            m,
            CL_TRUE,
            offset,
            dst.len(),
            dst.as_mut_ptr().cast(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        ),
    )
}

/// Starts a non-blocking read of `dst.len()` bytes at `offset` of `m`; `dst` must stay alive
/// until the returned event completes.
pub unsafe fn read_async(
    q: cl_command_queue,
    m: cl_mem,
    offset: usize,
    dst: &mut [u8],
) -> ClResult<cl_event> {
    let mut ev = std::ptr::null_mut();
    check(
        "clEnqueueReadBuffer",
        f!(clEnqueueReadBuffer)(
            q,
            m,
            CL_FALSE,
            offset,
            dst.len(),
            dst.as_mut_ptr().cast(),
            0,
            std::ptr::null(),
            &mut ev,
        ),
    )?;
    flush(q)?;
    Ok(ev)
}

/// Enqueues a device-side copy of `len` bytes from `src` at `src_off` to `dst` at `dst_off`
/// (both buffers of the queue's context), non-blocking.
pub unsafe fn copy(
    q: cl_command_queue,
    src: cl_mem,
    dst: cl_mem,
    src_off: usize,
    dst_off: usize,
    len: usize,
) -> ClResult<()> {
    if len == 0 {
        return Ok(());
    }
    check(
        "clEnqueueCopyBuffer",
        f!(clEnqueueCopyBuffer)(
            q,
            src,
            dst,
            src_off,
            dst_off,
            len,
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        ),
    )
}

/// Writes `src` at `offset` of `m`; blocking when `blocking`.
pub unsafe fn write(
    q: cl_command_queue,
    m: cl_mem,
    offset: usize,
    src: &[u8],
    blocking: bool,
) -> ClResult<()> {
    if src.is_empty() {
        return Ok(());
    }
    let b = if blocking { CL_TRUE } else { CL_FALSE };
    check(
        "clEnqueueWriteBuffer",
        f!(clEnqueueWriteBuffer)(
            q,
            m,
            b,
            offset,
            src.len(),
            src.as_ptr().cast(),
            0,
            std::ptr::null(),
            std::ptr::null_mut(),
        ),
    )
}

/// Starts a non-blocking write of `src` at `offset` of `m` and returns its event; `src` must
/// stay alive and unchanged until the event completes.
pub unsafe fn write_event(
    q: cl_command_queue,
    m: cl_mem,
    offset: usize,
    src: &[u8],
) -> ClResult<cl_event> {
    write_after(q, m, offset, src, &[])
}

/// [`write_event`] after the events `wait` (of `q`'s context).
///
/// # Safety
/// As [`write_event`]; the events are valid.
pub unsafe fn write_after(
    q: cl_command_queue,
    m: cl_mem,
    offset: usize,
    src: &[u8],
    wait: &[cl_event],
) -> ClResult<cl_event> {
    let mut ev = std::ptr::null_mut();
    let wp = if wait.is_empty() {
        std::ptr::null()
    } else {
        wait.as_ptr()
    };
    check(
        "clEnqueueWriteBuffer",
        f!(clEnqueueWriteBuffer)(
            q,
            m,
            CL_FALSE,
            offset,
            src.len(),
            src.as_ptr().cast(),
            wait.len() as cl_uint,
            wp,
            &mut ev,
        ),
    )?;
    Ok(ev)
}

/// A marker on `q` waiting for `wait` (all earlier commands when empty).
pub unsafe fn marker(q: cl_command_queue, wait: &[cl_event]) -> ClResult<cl_event> {
    let mut ev = std::ptr::null_mut();
    let wp = if wait.is_empty() {
        std::ptr::null()
    } else {
        wait.as_ptr()
    };
    check(
        "clEnqueueMarkerWithWaitList",
        f!(clEnqueueMarkerWithWaitList)(q, wait.len() as u32, wp, &mut ev),
    )
    .map(|_| ev)
}

/// A barrier on `q` waiting for `wait` and every earlier command; later commands wait for it.
pub unsafe fn barrier(q: cl_command_queue, wait: &[cl_event]) -> ClResult<cl_event> {
    let mut ev = std::ptr::null_mut();
    let wp = if wait.is_empty() {
        std::ptr::null()
    } else {
        wait.as_ptr()
    };
    check(
        "clEnqueueBarrierWithWaitList",
        f!(clEnqueueBarrierWithWaitList)(q, wait.len() as u32, wp, &mut ev),
    )
    .map(|_| ev)
}

/// A user event in `ctx`.
pub unsafe fn user_event(ctx: cl_context) -> ClResult<cl_event> {
    let mut e = 0;
    let ev = f!(clCreateUserEvent)(ctx, &mut e);
    check("clCreateUserEvent", e).map(|_| ev)
}

/// Sets a user event's status (`CL_COMPLETE` or a negative error).
pub unsafe fn set_user_event(ev: cl_event, status: cl_int) -> ClResult<()> {
    check("clSetUserEventStatus", f!(clSetUserEventStatus)(ev, status))
}

/// Waits for events, one at a time: they may belong to different contexts (one per device),
/// which a single `clWaitForEvents` refuses. Every event is waited for even after a failure;
/// the first error is returned.
pub unsafe fn wait(evs: &[cl_event]) -> ClResult<()> {
    let w = f!(clWaitForEvents);
    let mut first = Ok(());
    for e in evs {
        let r = check("clWaitForEvents", w(1, e));
        if first.is_ok() {
            first = r;
        }
    }
    first
}

/// Waits for `evs` by polling their status (never `clWaitForEvents`, which PoCL 6.0's
/// remote client lets block for good on a dead server's event), at most `bound` in all:
/// yielding for the first 200 µs, then sleeping 20 µs, doubling up to 100 µs (the chunk
/// loop's poll interval), so a wait ends at most ~100 µs after its last event.
/// `Ok` holds the first failed event's error (or `Ok(())`) once every event completed or
/// failed; `Err(i)`: event `i` was still pending when the bound passed (the caller must then
/// neither release the events nor free the host memory their commands use).
pub unsafe fn wait_bounded(
    evs: &[cl_event],
    bound: std::time::Duration,
) -> Result<ClResult<()>, usize> {
    let start = std::time::Instant::now();
    let (spin, until) = (start + std::time::Duration::from_micros(200), start + bound);
    let mut pause = std::time::Duration::from_micros(20);
    let mut first = Ok(());
    for (i, e) in evs.iter().enumerate() {
        loop {
            match event_status(*e) {
                Ok(s) if s == CL_COMPLETE => break,
                Ok(s) if s < 0 => {
                    if first.is_ok() {
                        first = Err(ClError {
                            call: "clWaitForEvents",
                            code: s,
                        });
                    }
                    break;
                }
                Ok(_) => {}
                Err(err) => {
                    if first.is_ok() {
                        first = Err(err);
                    }
                    break;
                }
            }
            let now = std::time::Instant::now();
            if now >= until {
                return Err(i);
            }
            if now < spin {
                std::thread::yield_now();
                continue;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_micros(100));
        }
    }
    Ok(first)
}

/// Takes one more reference to `ev`.
pub unsafe fn retain_event(ev: cl_event) -> ClResult<()> {
    check("clRetainEvent", f!(clRetainEvent)(ev))
}

/// Takes one more reference to memory object `m` (through the driver, not clprism's hook).
pub unsafe fn retain_mem(m: cl_mem) -> ClResult<()> {
    check("clRetainMemObject", f!(clRetainMemObject)(m))
}

/// Takes one more reference to program `p`.
pub unsafe fn retain_program(p: cl_program) -> ClResult<()> {
    check("clRetainProgram", f!(clRetainProgram)(p))
}

/// Takes one more reference to context `c`.
pub unsafe fn retain_context(c: cl_context) -> ClResult<()> {
    check("clRetainContext", f!(clRetainContext)(c))
}

/// `CL_EVENT_COMMAND_EXECUTION_STATUS` of `ev`: `CL_COMPLETE` (0), a later state (> 0) or
/// the command's error (< 0).
pub unsafe fn event_status(ev: cl_event) -> ClResult<cl_int> {
    let f = f!(clGetEventInfo);
    info(|n, v, r| f(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, n, v, r)).ok_or(ClError {
        call: "clGetEventInfo",
        code: CL_INVALID_EVENT,
    })
}

/// Registers a completion callback.
pub unsafe fn on_complete(
    ev: cl_event,
    cb: extern "C" fn(cl_event, cl_int, *mut c_void),
    user: *mut c_void,
) -> ClResult<()> {
    check(
        "clSetEventCallback",
        f!(clSetEventCallback)(ev, CL_COMPLETE, cb as *mut c_void, user),
    )
}

/// Flushes a queue.
pub unsafe fn flush(q: cl_command_queue) -> ClResult<()> {
    check("clFlush", f!(clFlush)(q))
}

/// Waits for a queue to drain.
pub unsafe fn finish(q: cl_command_queue) -> ClResult<()> {
    check("clFinish", f!(clFinish)(q))
}

/// Defines `name(handle)`: releases a handle through the real table (errors and null handles
/// ignored).
macro_rules! release_fn {
    ($(#[$doc:meta])* $name:ident, $ty:ty, $entry:ident) => {
        $(#[$doc])*
        pub unsafe fn $name(h: $ty) {
            if let Ok(t) = rt() {
                if let (Some(f), false) = (t.$entry, h.is_null()) {
                    f(h);
                }
            }
        }
    };
}

release_fn!(
    /// Releases an event (errors ignored).
    release_event, cl_event, clReleaseEvent
);
release_fn!(
    /// Releases a memory object (errors ignored).
    release_mem, cl_mem, clReleaseMemObject
);
release_fn!(
    /// Releases a program (errors ignored).
    release_program, cl_program, clReleaseProgram
);
release_fn!(
    /// Releases a kernel (errors ignored).
    release_kernel, cl_kernel, clReleaseKernel
);
release_fn!(
    /// Releases a context (errors ignored).
    release_context, cl_context, clReleaseContext
);
release_fn!(
    /// Releases a command queue (errors ignored).
    release_queue, cl_command_queue, clReleaseCommandQueue
);

pub use crate::registry::device::info_value as info;

/// The device of a queue.
pub unsafe fn queue_device(q: cl_command_queue) -> ClResult<cl_device_id> {
    let g = f!(clGetCommandQueueInfo);
    info::<usize>(|n, p, s| g(q, CL_QUEUE_DEVICE, n, p, s))
        .map(|d| d as cl_device_id)
        .ok_or(ClError {
            call: "clGetCommandQueueInfo",
            code: CL_INVALID_COMMAND_QUEUE,
        })
}

/// `CL_KERNEL_WORK_GROUP_SIZE` of kernel `k` on device `dev`: the largest work-group it can
/// run there, work-items (`None` when the query fails).
///
/// # Safety
/// `k` and `dev` are valid handles.
pub unsafe fn kernel_work_group_size(k: cl_kernel, dev: cl_device_id) -> Option<usize> {
    let g = crate::loader::table()?.clGetKernelWorkGroupInfo?;
    info::<usize>(|n, p, s| g(k, dev, CL_KERNEL_WORK_GROUP_SIZE, n, p, s))
}

/// The context of a queue.
pub unsafe fn queue_context(q: cl_command_queue) -> ClResult<cl_context> {
    let g = f!(clGetCommandQueueInfo);
    info::<usize>(|n, p, s| g(q, CL_QUEUE_CONTEXT, n, p, s))
        .map(|d| d as cl_context)
        .ok_or(ClError {
            call: "clGetCommandQueueInfo",
            code: CL_INVALID_COMMAND_QUEUE,
        })
}

/// The first device a program is associated with (`CL_PROGRAM_DEVICES`), or `None` when the
/// query fails.
pub unsafe fn program_first_device(p: cl_program) -> Option<cl_device_id> {
    let g = rt().ok()?.clGetProgramInfo?;
    let n: cl_uint = info(|n, v, s| g(p, CL_PROGRAM_NUM_DEVICES, n, v, s))?;
    let mut devs = vec![std::ptr::null_mut::<c_void>() as cl_device_id; n as usize];
    let bytes = devs.len() * std::mem::size_of::<cl_device_id>();
    (n > 0
        && g(
            p,
            CL_PROGRAM_DEVICES,
            bytes,
            devs.as_mut_ptr().cast(),
            std::ptr::null_mut(),
        ) == CL_SUCCESS)
        .then(|| devs[0])
}
