//! The OpenCL calls of the characterizer, through the real library's function table
//! (`exec::cl` wrappers where they exist, the few extra queries here): device info,
//! kernel launches timed with profiling events, and copies timed with profiling events.
//! OpenCL handles are opaque: they are only passed back to the driver, never dereferenced.

#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::exec::cl::{self, ClError, ClResult};
use opencl_sys::*;
use std::ffi::c_void;

macro_rules! f {
    ($name:ident) => {
        cl::rt()?.$name.ok_or(ClError {
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

/// A fixed-size `clGetDeviceInfo` value.
pub fn device_info<T: Copy + Default>(dev: cl_device_id, param: cl_device_info) -> Option<T> {
    let f = cl::rt().ok()?.clGetDeviceInfo?;
    // SAFETY: `T`-sized output buffer for a device handle from the real library.
    unsafe { cl::info::<T>(|n, p, s| f(dev, param, n, p, s)) }
}

/// A string `clGetDeviceInfo` value.
pub fn device_string(dev: cl_device_id, param: cl_device_info) -> Option<String> {
    let f = cl::rt().ok()?.clGetDeviceInfo?;
    // SAFETY: two-call string query on a device handle from the real library.
    crate::registry::device::info_string(|n, p, s| unsafe { f(dev, param, n, p, s) })
}

/// A `size_t` `clGetKernelWorkGroupInfo` value.
pub fn kernel_wg_info(k: cl_kernel, dev: cl_device_id, param: cl_uint) -> Option<usize> {
    let f = cl::rt().ok()?.clGetKernelWorkGroupInfo?;
    // SAFETY: usize-sized output for a kernel of clprism's own program.
    unsafe { cl::info::<usize>(|n, p, s| f(k, dev, param, n, p, s)) }
}

/// `END − START` of a completed command, ns (profiling events).
///
/// Errors: the driver's code from `clGetEventProfilingInfo`.
pub fn event_ns(ev: cl_event) -> ClResult<u64> {
    let g = f!(clGetEventProfilingInfo);
    let get = |param| -> ClResult<u64> {
        let mut v: cl_ulong = 0;
        // SAFETY: cl_ulong-sized output for a completed event.
        let r = unsafe {
            g(
                ev,
                param,
                std::mem::size_of::<cl_ulong>(),
                (&mut v as *mut cl_ulong).cast(),
                std::ptr::null_mut(),
            )
        };
        check("clGetEventProfilingInfo", r).map(|_| v)
    };
    let s = get(CL_PROFILING_COMMAND_START)?;
    let e = get(CL_PROFILING_COMMAND_END)?;
    Ok(e.saturating_sub(s))
}

/// A kernel argument.
#[derive(Debug, Clone, Copy)]
pub enum Arg {
    /// A buffer.
    Mem(cl_mem),
    /// A `uint`.
    U32(u32),
    /// A `float`.
    F32(f32),
    /// A `__local` buffer of this many bytes.
    Local(usize),
}

/// Sets the arguments of `k` in order.
///
/// Errors: the driver's code from `clSetKernelArg`.
pub fn set_args(k: cl_kernel, args: &[Arg]) -> ClResult<()> {
    for (i, a) in args.iter().enumerate() {
        let i = i as u32;
        // SAFETY: each value lives for the call; sizes match the argument types.
        unsafe {
            match a {
                Arg::Mem(m) => cl::set_arg(
                    k,
                    i,
                    std::mem::size_of::<cl_mem>(),
                    (m as *const cl_mem).cast::<c_void>(),
                )?,
                Arg::U32(v) => cl::set_arg(k, i, 4, (v as *const u32).cast())?,
                Arg::F32(v) => cl::set_arg(k, i, 4, (v as *const f32).cast())?,
                Arg::Local(n) => cl::set_arg(k, i, *n, std::ptr::null())?,
            }
        }
    }
    Ok(())
}

/// Runs a 1-D NDRange of `global` work-items in work-groups of `local` and returns its
/// device time (`END − START`, ns).
///
/// Errors: the driver's code of the failing call.
pub fn time_kernel(
    q: cl_command_queue,
    k: cl_kernel,
    global: usize,
    local: usize,
) -> ClResult<u64> {
    // SAFETY: clprism's own queue and kernel; the event is released before returning.
    unsafe {
        let ev = cl::enqueue_ndrange(q, k, 1, &[0], &[global], &[local], &[])?;
        let r = cl::wait(&[ev]).and_then(|_| event_ns(ev));
        cl::release_event(ev);
        r
    }
}

/// Times a copy of `host.len()` bytes between host memory and `m` (offset 0) with
/// profiling events; `to_device` selects the direction. Blocking.
///
/// Errors: the driver's code of the failing call.
pub fn time_copy(
    q: cl_command_queue,
    m: cl_mem,
    host: &mut [u8],
    to_device: bool,
) -> ClResult<u64> {
    let mut ev: cl_event = std::ptr::null_mut();
    // SAFETY: `host` outlives the blocking copy; the event is released before returning.
    unsafe {
        let r = if to_device {
            f!(clEnqueueWriteBuffer)(
                q,
                m,
                CL_TRUE,
                0,
                host.len(),
                host.as_ptr().cast(),
                0,
                std::ptr::null(),
                &mut ev,
            )
        } else {
            f!(clEnqueueReadBuffer)(
                q,
                m,
                CL_TRUE,
                0,
                host.len(),
                host.as_mut_ptr().cast(),
                0,
                std::ptr::null(),
                &mut ev,
            )
        };
        let name = if to_device {
            "clEnqueueWriteBuffer"
        } else {
            "clEnqueueReadBuffer"
        };
        check(name, r)?;
        let t = event_ns(ev);
        cl::release_event(ev);
        t
    }
}

/// clprism's own context, profiling queue and program(s) on one device; released on drop.
pub struct Session {
    /// The device.
    pub dev: cl_device_id,
    /// A context holding only `dev`.
    pub ctx: cl_context,
    /// In-order queue with profiling.
    pub queue: cl_command_queue,
    programs: Vec<cl_program>,
    kernels: Vec<(String, cl_kernel)>,
    mems: Vec<cl_mem>,
}

impl Session {
    /// Opens a context and a profiling queue on `dev`.
    ///
    /// Errors: the driver's code.
    pub fn open(dev: cl_device_id) -> ClResult<Session> {
        // SAFETY: clprism-owned objects on a real device handle.
        unsafe {
            let ctx = cl::create_context(dev)?;
            let queue = match cl::create_queue(ctx, dev) {
                Ok(q) => q,
                Err(e) => {
                    if let Some(f) = cl::rt()?.clReleaseContext {
                        f(ctx);
                    }
                    return Err(e);
                }
            };
            Ok(Session {
                dev,
                ctx,
                queue,
                programs: Vec::new(),
                kernels: Vec::new(),
                mems: Vec::new(),
            })
        }
    }

    /// Builds `source` and creates the named kernels.
    ///
    /// Errors: the build log, or the failing `clCreateKernel`.
    pub fn build(&mut self, source: &str, kernels: &[&str]) -> Result<(), String> {
        // SAFETY: clprism's own context and device.
        let p = unsafe { cl::build_source(self.ctx, self.dev, source, "")? };
        self.programs.push(p);
        for k in kernels {
            // SAFETY: `p` was built successfully.
            let h = unsafe { cl::create_kernel(p, k) }.map_err(|e| format!("{k}: {e}"))?;
            self.kernels.push((k.to_string(), h));
        }
        Ok(())
    }

    /// A kernel created by [`Session::build`].
    ///
    /// Errors: no such kernel.
    pub fn kernel(&self, name: &str) -> Result<cl_kernel, String> {
        self.kernels
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, k)| *k)
            .ok_or_else(|| format!("kernel {name} was not built"))
    }

    /// A read-write buffer of `bytes` bytes, released with the session.
    ///
    /// Errors: the driver's code.
    pub fn buffer(&mut self, bytes: usize) -> ClResult<cl_mem> {
        // SAFETY: clprism's own context.
        let m = unsafe { cl::create_buffer(self.ctx, bytes)? };
        self.mems.push(m);
        Ok(m)
    }

    /// Fills `m` (of `bytes` bytes) with `value` through a blocking write.
    ///
    /// Errors: the driver's code.
    pub fn fill(&self, m: cl_mem, bytes: usize, value: f32) -> ClResult<()> {
        let chunk = bytes.min(16 << 20);
        let src: Vec<u8> = value
            .to_le_bytes()
            .iter()
            .copied()
            .cycle()
            .take(chunk)
            .collect();
        let mut off = 0;
        while off < bytes {
            let n = chunk.min(bytes - off);
            // SAFETY: `src` lives for the blocking write.
            unsafe { cl::write(self.queue, m, off, &src[..n], true)? };
            off += n;
        }
        Ok(())
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: releasing only what this session created.
        unsafe {
            let _ = cl::finish(self.queue);
            for (_, k) in self.kernels.drain(..) {
                cl::release_kernel(k);
            }
            for p in self.programs.drain(..) {
                cl::release_program(p);
            }
            for m in self.mems.drain(..) {
                cl::release_mem(m);
            }
            if let Ok(t) = cl::rt() {
                if let Some(f) = t.clReleaseCommandQueue {
                    f(self.queue);
                }
                if let Some(f) = t.clReleaseContext {
                    f(self.ctx);
                }
            }
        }
    }
}
