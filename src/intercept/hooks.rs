//! Hook implementations for the entry points marked `intercept` in
//! `cl-headers/entry_points.tsv`. Each hook calls the real function first, and records only
//! when the real call succeeded; the real return value and error code go back to the app.

#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

use super::launch::Launch;
use super::passthrough;
use crate::log::{self, LaunchRecord};
use crate::registry::tables::*;
use crate::registry::TABLES;
use opencl_sys::*;
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

/// Resolves a real entry point or returns `$fail` from the hook.
macro_rules! real {
    ($name:ident, $fail:expr) => {
        match crate::loader::table().and_then(|t| t.$name) {
            Some(f) => f,
            None => {
                crate::loader::unavailable(stringify!($name));
                return $fail;
            }
        }
    };
}

unsafe fn fail_handle<T>(e: *mut cl_int) -> *mut T {
    crate::loader::fail_handle(e)
}

/// Runs `f` (recording work) with panics caught: a recording failure must never change what
/// the application sees.
fn record(what: &str, f: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).is_err() {
        crate::config::error(&format!(
            "recording {what} failed; the call itself succeeded"
        ));
    }
}

unsafe fn ok_handle(h: *mut c_void, errcode_ret: *mut cl_int) -> bool {
    !h.is_null() && (errcode_ret.is_null() || *errcode_ret == CL_SUCCESS)
}

/// Calls the real function with a local errcode slot when the app passed none, so success
/// can be checked; returns (handle, errcode).
macro_rules! with_err {
    ($errcode_ret:ident, |$e:ident| $call:expr) => {{
        let mut local: cl_int = CL_SUCCESS;
        let $e: *mut cl_int = if $errcode_ret.is_null() {
            &mut local
        } else {
            $errcode_ret
        };
        let h = $call;
        (h, *$e)
    }};
}

/// Retain/release hooks of one object kind: forward, then mirror the application's reference
/// count in the side table (removing the entry at zero).
macro_rules! refcount_hooks {
    ($retain:ident, $release:ident, $ty:ty, $table:ident) => {
        pub unsafe fn $retain(h: $ty) -> cl_int {
            let r = real!($retain, crate::loader::UNAVAILABLE)(h);
            if r == CL_SUCCESS && !passthrough() {
                TABLES.$table.retain(h as Key);
            }
            r
        }

        pub unsafe fn $release(h: $ty) -> cl_int {
            let r = real!($release, crate::loader::UNAVAILABLE)(h);
            if r == CL_SUCCESS && !passthrough() {
                TABLES.$table.release(h as Key);
            }
            r
        }
    };
}

// ---------------------------------------------------------------- contexts

unsafe fn context_devices(ctx: cl_context) -> Vec<Key> {
    let Some(f) = crate::loader::table().and_then(|t| t.clGetContextInfo) else {
        return vec![];
    };
    let mut size = 0usize;
    if f(ctx, CL_CONTEXT_DEVICES, 0, std::ptr::null_mut(), &mut size) != CL_SUCCESS {
        return vec![];
    }
    let mut devs = vec![std::ptr::null_mut::<c_void>(); size / std::mem::size_of::<cl_device_id>()];
    if f(
        ctx,
        CL_CONTEXT_DEVICES,
        size,
        devs.as_mut_ptr().cast(),
        std::ptr::null_mut(),
    ) != CL_SUCCESS
    {
        return vec![];
    }
    devs.into_iter().map(|d| d as Key).collect()
}

pub unsafe fn clCreateContext(
    props: *const cl_context_properties,
    n: cl_uint,
    devices: *const cl_device_id,
    notify: *mut c_void,
    user: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    let f = real!(clCreateContext, fail_handle(errcode_ret));
    crate::exec::wait_for_background_start();
    if !passthrough()
        && crate::config::get().mode == crate::config::Mode::Balance
        && n > 0
        && !devices.is_null()
    {
        record("clCreateContext (balance opening)", || {
            crate::exec::early::open_at_context(std::slice::from_raw_parts(devices, n as usize));
        });
    }
    let ctx = f(props, n, devices, notify, user, errcode_ret);
    if !passthrough() && !ctx.is_null() {
        record("clCreateContext", || {
            let devs = std::slice::from_raw_parts(devices, n as usize)
                .iter()
                .map(|d| *d as Key)
                .collect();
            TABLES
                .contexts
                .insert(ctx as Key, ContextInfo { devices: devs });
        });
    }
    ctx
}

pub unsafe fn clCreateContextFromType(
    props: *const cl_context_properties,
    ty: cl_device_type,
    notify: *mut c_void,
    user: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_context {
    let f = real!(clCreateContextFromType, fail_handle(errcode_ret));
    crate::exec::wait_for_background_start();
    let ctx = f(props, ty, notify, user, errcode_ret);
    if !passthrough() && !ctx.is_null() {
        record("clCreateContextFromType", || {
            let devices = context_devices(ctx);
            if crate::config::get().mode == crate::config::Mode::Balance {
                // the devices are known only now (clpeak's context, through cl.hpp): the
                // opening overlaps the app's queue, buffers and build instead of its context
                let ids: Vec<cl_device_id> = devices.iter().map(|&d| d as cl_device_id).collect();
                crate::exec::early::open_at_context(&ids);
            }
            TABLES.contexts.insert(ctx as Key, ContextInfo { devices });
        });
    }
    ctx
}

// ---------------------------------------------------------------- command queues

unsafe fn queue_context(q: cl_command_queue) -> Key {
    crate::loader::table()
        .and_then(|t| t.clGetCommandQueueInfo)
        .and_then(|f| crate::exec::cl::info::<usize>(|n, p, r| f(q, CL_QUEUE_CONTEXT, n, p, r)))
        .unwrap_or(0)
}

fn record_queue(
    q: cl_command_queue,
    ctx: cl_context,
    dev: cl_device_id,
    props: cl_command_queue_properties,
    array: Option<Vec<cl_queue_properties>>,
    profiling: bool,
) {
    record("command queue", || {
        let info = QueueInfo {
            context: ctx as Key,
            device: dev as Key,
            device_ref: crate::registry::device::describe(dev),
            app_properties: props,
            app_property_array: array,
            profiling,
        };
        TABLES.queues.insert(q as Key, info);
    });
}

pub unsafe fn clCreateCommandQueue(
    ctx: cl_context,
    dev: cl_device_id,
    props: cl_command_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    let f = real!(clCreateCommandQueue, fail_handle(errcode_ret));
    if passthrough() {
        return f(ctx, dev, props, errcode_ret);
    }
    let timing = crate::config::get().device_timing.enables_profiling();
    create_recorded_queue(
        (ctx, dev, props, None),
        errcode_ret,
        timing.then_some(|e| f(ctx, dev, props | CL_QUEUE_PROFILING_ENABLE, e)),
        |e| f(ctx, dev, props, e),
    )
}

/// Creates a command queue with profiling added (`profiled`, when given) so launches can be
/// timed, else (or when the driver refuses that) exactly as the application asked (`plain`),
/// and records it with the application's properties `(ctx, dev, props, property array)`.
/// Returns the driver's queue; `errcode_ret` gets the driver's code of the call that counted.
unsafe fn create_recorded_queue(
    (ctx, dev, props, array): (
        cl_context,
        cl_device_id,
        cl_command_queue_properties,
        Option<Vec<cl_queue_properties>>,
    ),
    errcode_ret: *mut cl_int,
    profiled: Option<impl FnOnce(*mut cl_int) -> cl_command_queue>,
    plain: impl FnOnce(*mut cl_int) -> cl_command_queue,
) -> cl_command_queue {
    if let Some(create) = profiled {
        let (q, err) = with_err!(errcode_ret, |e| create(e));
        if !q.is_null() && err == CL_SUCCESS {
            record_queue(q, ctx, dev, props, array, true);
            return q;
        }
    }
    let q = plain(errcode_ret);
    if ok_handle(q, errcode_ret) {
        let profiling = props & CL_QUEUE_PROFILING_ENABLE != 0;
        record_queue(q, ctx, dev, props, array, profiling);
    }
    q
}

/// Reads a zero-terminated (key, value) property list.
unsafe fn property_list(p: *const cl_queue_properties) -> Option<Vec<cl_queue_properties>> {
    if p.is_null() {
        return None;
    }
    let mut v = Vec::new();
    let mut i = 0;
    loop {
        let k = *p.add(i);
        v.push(k);
        if k == 0 || v.len() > 256 {
            break;
        }
        v.push(*p.add(i + 1));
        i += 2;
    }
    Some(v)
}

pub unsafe fn clCreateCommandQueueWithProperties(
    ctx: cl_context,
    dev: cl_device_id,
    props: *const cl_queue_properties,
    errcode_ret: *mut cl_int,
) -> cl_command_queue {
    let f = real!(clCreateCommandQueueWithProperties, fail_handle(errcode_ret));
    if passthrough() {
        return f(ctx, dev, props, errcode_ret);
    }
    let app = property_list(props);
    let mut app_props: cl_command_queue_properties = 0;
    let mut ours: Vec<cl_queue_properties> = Vec::new();
    if let Some(list) = &app {
        for kv in list.chunks(2) {
            if kv.len() == 2 {
                if kv[0] == CL_QUEUE_PROPERTIES as cl_queue_properties {
                    app_props = kv[1];
                }
                ours.extend_from_slice(kv);
            }
        }
    }
    let on_device = app_props & CL_QUEUE_ON_DEVICE != 0;
    let timing = !on_device && crate::config::get().device_timing.enables_profiling();
    if timing {
        match ours
            .iter()
            .step_by(2)
            .position(|k| *k == CL_QUEUE_PROPERTIES as cl_queue_properties)
        {
            Some(i) => ours[2 * i + 1] |= CL_QUEUE_PROFILING_ENABLE,
            None => ours.extend_from_slice(&[
                CL_QUEUE_PROPERTIES as cl_queue_properties,
                CL_QUEUE_PROFILING_ENABLE,
            ]),
        }
    }
    ours.push(0);
    create_recorded_queue(
        (ctx, dev, app_props, app),
        errcode_ret,
        timing.then_some(|e| f(ctx, dev, ours.as_ptr(), e)),
        |e| f(ctx, dev, props, e),
    )
}

/// Writes `value` into an info query's output (size check as the spec requires).
unsafe fn answer(value: &[u8], size: usize, out: *mut c_void, size_ret: *mut usize) -> cl_int {
    if !out.is_null() {
        if size < value.len() {
            return CL_INVALID_VALUE;
        }
        std::ptr::copy_nonoverlapping(value.as_ptr(), out.cast::<u8>(), value.len());
    }
    if !size_ret.is_null() {
        *size_ret = value.len();
    }
    CL_SUCCESS
}

/// `clFinish`: in balance mode, served by clprism when the queue holds only balanced launches
/// the launch thread has finished (`exec::finish_early`); otherwise the driver's.
pub unsafe fn clFinish(q: cl_command_queue) -> cl_int {
    let f = real!(clFinish, crate::loader::UNAVAILABLE);
    if passthrough() || crate::config::get().mode != crate::config::Mode::Balance {
        return f(q);
    }
    if crate::exec::finish_early(q as usize) {
        return CL_SUCCESS;
    }
    let r = f(q);
    if r == CL_SUCCESS {
        crate::exec::note_driver_finish(q as usize);
    }
    r
}

pub unsafe fn clGetCommandQueueInfo(
    q: cl_command_queue,
    param: cl_command_queue_info,
    size: usize,
    out: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    let f = real!(clGetCommandQueueInfo, crate::loader::UNAVAILABLE);
    if !passthrough() && (param == CL_QUEUE_PROPERTIES || param == CL_QUEUE_PROPERTIES_ARRAY) {
        if let Some(info) = TABLES.queues.get(q as Key) {
            // Validate the handle through the driver first, so errors stay the driver's.
            let mut probe = 0usize;
            let r = f(q, param, 0, std::ptr::null_mut(), &mut probe);
            if r != CL_SUCCESS {
                return f(q, param, size, out, size_ret);
            }
            return if param == CL_QUEUE_PROPERTIES {
                answer(&info.app_properties.to_ne_bytes(), size, out, size_ret)
            } else {
                let arr = info.app_property_array.unwrap_or_default();
                let bytes: Vec<u8> = arr.iter().flat_map(|v| v.to_ne_bytes()).collect();
                answer(&bytes, size, out, size_ret)
            };
        }
    }
    f(q, param, size, out, size_ret)
}

pub unsafe fn clGetEventProfilingInfo(
    ev: cl_event,
    param: cl_profiling_info,
    size: usize,
    out: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    let f = real!(clGetEventProfilingInfo, crate::loader::UNAVAILABLE);
    if !passthrough() {
        if let Some(gi) = crate::loader::table().and_then(|t| t.clGetEventInfo) {
            let mut q: cl_command_queue = std::ptr::null_mut();
            let r = gi(
                ev,
                CL_EVENT_COMMAND_QUEUE,
                std::mem::size_of::<cl_command_queue>(),
                (&mut q as *mut cl_command_queue).cast(),
                std::ptr::null_mut(),
            );
            if r == CL_SUCCESS && !q.is_null() {
                let hidden = TABLES
                    .queues
                    .with(q as Key, |i| {
                        i.app_properties & CL_QUEUE_PROFILING_ENABLE == 0
                    })
                    .unwrap_or(false);
                if hidden {
                    // what the driver says for a queue without profiling
                    return CL_PROFILING_INFO_NOT_AVAILABLE;
                }
            }
        }
        // a balanced launch's event spans the launch, not the barrier the app got
        if crate::config::get().mode == crate::config::Mode::Balance {
            if let Some(t) = crate::exec::launch_profiling(ev, param) {
                if !size_ret.is_null() {
                    *size_ret = std::mem::size_of::<u64>();
                }
                if out.is_null() {
                    return CL_SUCCESS;
                }
                if size < std::mem::size_of::<u64>() {
                    return CL_INVALID_VALUE;
                }
                *(out as *mut u64) = t;
                return CL_SUCCESS;
            }
        }
    }
    f(ev, param, size, out, size_ret)
}

// ---------------------------------------------------------------- buffers

pub unsafe fn clCreateBuffer(
    ctx: cl_context,
    flags: cl_mem_flags,
    size: usize,
    host: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let m = real!(clCreateBuffer, fail_handle(errcode_ret))(ctx, flags, size, host, errcode_ret);
    if !passthrough() && !m.is_null() {
        TABLES.buffers.insert(
            m as Key,
            BufferInfo {
                context: ctx as Key,
                size,
                flags,
                host_ptr: host as usize,
                parent: None,
            },
        );
    }
    m
}

pub unsafe fn clCreateBufferWithProperties(
    ctx: cl_context,
    props: *const cl_mem_properties,
    flags: cl_mem_flags,
    size: usize,
    host: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let m = real!(clCreateBufferWithProperties, fail_handle(errcode_ret))(
        ctx,
        props,
        flags,
        size,
        host,
        errcode_ret,
    );
    if !passthrough() && !m.is_null() {
        TABLES.buffers.insert(
            m as Key,
            BufferInfo {
                context: ctx as Key,
                size,
                flags,
                host_ptr: host as usize,
                parent: None,
            },
        );
    }
    m
}

pub unsafe fn clCreateSubBuffer(
    buf: cl_mem,
    flags: cl_mem_flags,
    ty: cl_buffer_create_type,
    info: *const c_void,
    errcode_ret: *mut cl_int,
) -> cl_mem {
    let m = real!(clCreateSubBuffer, fail_handle(errcode_ret))(buf, flags, ty, info, errcode_ret);
    if !passthrough() && !m.is_null() && ty == CL_BUFFER_CREATE_TYPE_REGION && !info.is_null() {
        let region = &*(info as *const cl_buffer_region);
        let ctx = TABLES.buffers.with(buf as Key, |b| b.context).unwrap_or(0);
        TABLES.buffers.insert(
            m as Key,
            BufferInfo {
                context: ctx,
                size: region.size,
                flags,
                host_ptr: 0,
                parent: Some((buf as Key, region.origin)),
            },
        );
    }
    m
}

pub unsafe fn clRetainMemObject(m: cl_mem) -> cl_int {
    let r = real!(clRetainMemObject, crate::loader::UNAVAILABLE)(m);
    if r == CL_SUCCESS && !passthrough() {
        TABLES.buffers.retain(m as Key);
    }
    r
}

pub unsafe fn clReleaseMemObject(m: cl_mem) -> cl_int {
    let r = real!(clReleaseMemObject, crate::loader::UNAVAILABLE)(m);
    if r == CL_SUCCESS && !passthrough() && TABLES.buffers.release(m as Key).is_some() {
        crate::exec::forget(m as Key);
    }
    r
}

// ---------------------------------------------------------------- programs

fn insert_program(p: cl_program, ctx: cl_context, origin: ProgramOrigin, hash: Arc<str>) {
    TABLES.programs.insert(
        p as Key,
        ProgramInfo {
            context: ctx as Key,
            origin,
            options: "".into(),
            hash,
            embedded_headers: false,
            from_binary: false,
        },
    );
}

pub unsafe fn clCreateProgramWithSource(
    ctx: cl_context,
    count: cl_uint,
    strings: *mut *const c_char,
    lengths: *const usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let p = real!(clCreateProgramWithSource, fail_handle(errcode_ret))(
        ctx,
        count,
        strings,
        lengths,
        errcode_ret,
    );
    if !passthrough() && !p.is_null() {
        record("clCreateProgramWithSource", || {
            let mut src = Vec::new();
            for i in 0..count as usize {
                let s = *strings.add(i);
                if s.is_null() {
                    continue;
                }
                let len = if lengths.is_null() || *lengths.add(i) == 0 {
                    CStr::from_ptr(s).to_bytes().len()
                } else {
                    *lengths.add(i)
                };
                src.extend_from_slice(std::slice::from_raw_parts(s.cast::<u8>(), len));
            }
            let hash = content_hash(&[b"source", &src]);
            let text: Arc<str> = String::from_utf8_lossy(&src).into();
            insert_program(p, ctx, ProgramOrigin::Source(text), hash);
        });
    }
    p
}

pub unsafe fn clCreateProgramWithBinary(
    ctx: cl_context,
    n: cl_uint,
    devices: *const cl_device_id,
    lengths: *const usize,
    binaries: *mut *const u8,
    status: *mut cl_int,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let p = real!(clCreateProgramWithBinary, fail_handle(errcode_ret))(
        ctx,
        n,
        devices,
        lengths,
        binaries,
        status,
        errcode_ret,
    );
    if !passthrough() && !p.is_null() {
        record("clCreateProgramWithBinary", || {
            let mut bins = Vec::new();
            let mut parts: Vec<&[u8]> = vec![b"binary"];
            for i in 0..n as usize {
                let b: Arc<[u8]> =
                    std::slice::from_raw_parts(*binaries.add(i), *lengths.add(i)).into();
                bins.push((*devices.add(i) as Key, b));
            }
            if let Some(known) =
                crate::registry::binaries::lookup_all(bins.iter().map(|(_, b)| &b[..]))
            {
                // the source program these binaries were read back from: split and emulated
                // like it; the app's program object stays the binary one
                crate::config::debug(|| {
                    format!(
                        "clCreateProgramWithBinary: {} binaries mapped back to their source",
                        bins.len()
                    )
                });
                let hash = content_hash(&[b"source", known.source.as_bytes()]);
                TABLES.programs.insert(
                    p as Key,
                    ProgramInfo {
                        context: ctx as Key,
                        origin: ProgramOrigin::Source(known.source),
                        options: known.options,
                        hash,
                        from_binary: true,
                        embedded_headers: false,
                    },
                );
                return;
            }
            for (_, b) in &bins {
                parts.push(b);
            }
            let hash = content_hash(&parts);
            insert_program(p, ctx, ProgramOrigin::Binary(bins), hash);
        });
    }
    p
}

pub unsafe fn clGetProgramInfo(
    p: cl_program,
    param: cl_program_info,
    size: usize,
    out: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    let f = real!(clGetProgramInfo, crate::loader::UNAVAILABLE);
    let r = f(p, param, size, out, size_ret);
    if r == CL_SUCCESS && param == CL_PROGRAM_BINARIES && !out.is_null() && !passthrough() {
        record("clGetProgramInfo(CL_PROGRAM_BINARIES)", || {
            remember_binaries(f, p, size, out.cast::<*const u8>())
        });
    }
    r
}

/// The app read the binaries of program `p` into the `size` bytes of pointers at `out`:
/// when clprism knows the source and options that built `p`, it remembers them for each
/// binary ([`crate::registry::binaries`]), so a program later created from these binaries
/// (in this run or another) is split and emulated like the source program.
unsafe fn remember_binaries(
    f: unsafe extern "C" fn(cl_program, cl_program_info, usize, *mut c_void, *mut usize) -> cl_int,
    p: cl_program,
    size: usize,
    out: *const *const u8,
) {
    let Some(info) = TABLES.programs.get(p as Key) else {
        return;
    };
    let ProgramOrigin::Source(source) = &info.origin else {
        return;
    };
    let mut sizes_len = 0usize;
    if f(
        p,
        CL_PROGRAM_BINARY_SIZES,
        0,
        std::ptr::null_mut(),
        &mut sizes_len,
    ) != CL_SUCCESS
    {
        return;
    }
    let mut sizes = vec![0usize; sizes_len / std::mem::size_of::<usize>()];
    if f(
        p,
        CL_PROGRAM_BINARY_SIZES,
        sizes.len() * std::mem::size_of::<usize>(),
        sizes.as_mut_ptr().cast(),
        std::ptr::null_mut(),
    ) != CL_SUCCESS
    {
        return;
    }
    let n = (size / std::mem::size_of::<*const u8>()).min(sizes.len());
    for (i, &len) in sizes.iter().enumerate().take(n) {
        let b = *out.add(i);
        if b.is_null() || len == 0 {
            continue; // the app skipped this device, or it has no binary
        }
        let binary = std::slice::from_raw_parts(b, len);
        match crate::registry::binaries::remember(binary, source, &info.options) {
            Ok(written) => {
                crate::config::debug(|| {
                    format!(
                    "clGetProgramInfo(CL_PROGRAM_BINARIES): binary {i} ({len} bytes) of program \
                     {} {}",
                    info.hash,
                    if written { "remembered" } else { "already known" }
                )
                })
            }
            Err(e) => crate::config::debug(|| {
                format!("clGetProgramInfo(CL_PROGRAM_BINARIES): cannot remember binary {i}: {e}")
            }),
        }
    }
}

pub unsafe fn clCreateProgramWithIL(
    ctx: cl_context,
    il: *const c_void,
    len: usize,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let p = real!(clCreateProgramWithIL, fail_handle(errcode_ret))(ctx, il, len, errcode_ret);
    if !passthrough() && !p.is_null() {
        record("clCreateProgramWithIL", || {
            let bytes: Arc<[u8]> = std::slice::from_raw_parts(il.cast::<u8>(), len).into();
            let hash = content_hash(&[b"il", &bytes]);
            insert_program(p, ctx, ProgramOrigin::Il(bytes), hash);
        });
    }
    p
}

/// Records the options of the app's build of `p`, except for a program mapped back from
/// binaries to its source, which keeps the options of that source build.
unsafe fn set_options(p: cl_program, options: *const c_char) {
    let o: Arc<str> = if options.is_null() {
        "".into()
    } else {
        CStr::from_ptr(options).to_string_lossy().into()
    };
    TABLES.programs.with_mut(p as Key, |i| {
        if !i.from_binary {
            i.options = o;
        }
    });
}

pub unsafe fn clBuildProgram(
    p: cl_program,
    n: cl_uint,
    devices: *const cl_device_id,
    options: *const c_char,
    notify: *mut c_void,
    user: *mut c_void,
) -> cl_int {
    if !passthrough() {
        record("clBuildProgram", || set_options(p, options));
    }
    let t = std::time::Instant::now();
    let build = real!(clBuildProgram, crate::loader::UNAVAILABLE);
    let r = crate::exec::app_compile(|| build(p, n, devices, options, notify, user));
    let cfg = crate::config::get();
    if r == CL_SUCCESS && !passthrough() && cfg.mode == crate::config::Mode::Balance {
        let build_ns = t.elapsed().as_nanos() as u64;
        record("clBuildProgram (build time)", || {
            if let Some(info) = TABLES.programs.get(p as Key) {
                crate::exec::note_app_build(&info, build_ns);
            }
        });
    }
    if r == CL_SUCCESS
        && !passthrough()
        && cfg.mode == crate::config::Mode::Balance
        && cfg.balance_early
    {
        // `always` opens the devices and builds the program there now; `auto` once a probe
        // finds a long launch where the app's device has like siblings (`exec::early`), else
        // once launches long enough to split add up (`exec::opening_deferred`)
        record("clBuildProgram (balance pre-build)", || {
            if let Some(info) = TABLES.programs.get(p as Key) {
                let dev = if n > 0 && !devices.is_null() {
                    Some(*devices)
                } else {
                    crate::exec::cl::program_first_device(p)
                };
                if let Some(d) = dev {
                    crate::exec::early::note_build(d);
                }
                if cfg.split == crate::config::SplitPolicy::Always {
                    crate::exec::prebuild_in_background(&info);
                }
            }
        });
    }
    r
}

pub unsafe fn clCompileProgram(
    p: cl_program,
    n: cl_uint,
    devices: *const cl_device_id,
    options: *const c_char,
    nh: cl_uint,
    headers: *const cl_program,
    names: *mut *const c_char,
    notify: *mut c_void,
    user: *mut c_void,
) -> cl_int {
    if !passthrough() {
        record("clCompileProgram", || {
            set_options(p, options);
            TABLES
                .programs
                .with_mut(p as Key, |i| i.embedded_headers = nh > 0);
        });
    }
    let compile = real!(clCompileProgram, crate::loader::UNAVAILABLE);
    crate::exec::app_compile(|| compile(p, n, devices, options, nh, headers, names, notify, user))
}

pub unsafe fn clLinkProgram(
    ctx: cl_context,
    n: cl_uint,
    devices: *const cl_device_id,
    options: *const c_char,
    ni: cl_uint,
    inputs: *const cl_program,
    notify: *mut c_void,
    user: *mut c_void,
    errcode_ret: *mut cl_int,
) -> cl_program {
    let link = real!(clLinkProgram, fail_handle(errcode_ret));
    let p = crate::exec::app_compile(|| {
        link(
            ctx,
            n,
            devices,
            options,
            ni,
            inputs,
            notify,
            user,
            errcode_ret,
        )
    });
    if !passthrough() && !p.is_null() {
        record("clLinkProgram", || {
            if ni == 1 {
                if let Some(mut info) = linked_alone(*inputs, options) {
                    info.context = ctx as Key;
                    TABLES.programs.insert(p as Key, info);
                    return;
                }
            }
            let ins: Vec<Key> = (0..ni as usize).map(|i| *inputs.add(i) as Key).collect();
            let hashes: Vec<Arc<str>> = ins
                .iter()
                .map(|k| {
                    TABLES
                        .programs
                        .with(*k, |i| i.identity())
                        .unwrap_or_else(|| "?".into())
                })
                .collect();
            let mut parts: Vec<&[u8]> = vec![b"link"];
            parts.extend(hashes.iter().map(|h| h.as_bytes()));
            let hash = content_hash(&parts);
            insert_program(p, ctx, ProgramOrigin::Linked(ins), hash);
            set_options(p, options);
        });
    }
    p
}

/// Link options that `clBuildProgram` does not take (the rest are valid build options).
const LINK_ONLY_OPTIONS: [&str; 2] = ["-create-library", "-enable-link-options"];

/// The record of a program linked from the one compiled program `input` with link `options`
/// (hashcat compiles and links each kernel file alone): the same as `input`'s source built
/// with its compile options and the link options, so it is split, emulated and its binaries
/// remembered like a program built from source. `None` when `input` is not a source program
/// clprism knows, or was compiled with embedded headers.
unsafe fn linked_alone(input: cl_program, options: *const c_char) -> Option<ProgramInfo> {
    let mut info = TABLES.programs.get(input as Key)?;
    if !matches!(info.origin, ProgramOrigin::Source(_)) || info.embedded_headers {
        return None;
    }
    let link: Vec<String> = if options.is_null() {
        Vec::new()
    } else {
        CStr::from_ptr(options)
            .to_string_lossy()
            .split_whitespace()
            .filter(|o| !LINK_ONLY_OPTIONS.contains(o))
            .map(str::to_string)
            .collect()
    };
    if !link.is_empty() {
        info.options = format!("{} {}", info.options, link.join(" ")).trim().into();
    }
    info.from_binary = false;
    Some(info)
}

// ---------------------------------------------------------------- kernels

unsafe fn kernel_name(k: cl_kernel) -> Arc<str> {
    crate::loader::table()
        .and_then(|t| t.clGetKernelInfo)
        .and_then(|f| {
            crate::registry::device::info_string(|n, p, s| f(k, CL_KERNEL_FUNCTION_NAME, n, p, s))
        })
        .unwrap_or_else(|| "?".into())
        .into()
}

unsafe fn kernel_program(k: cl_kernel) -> Key {
    crate::loader::table()
        .and_then(|t| t.clGetKernelInfo)
        .and_then(|f| crate::exec::cl::info::<usize>(|n, p, r| f(k, CL_KERNEL_PROGRAM, n, p, r)))
        .unwrap_or(0)
}

fn insert_kernel(k: cl_kernel, program: Key, name: Arc<str>) {
    // the program's content and build options: a kernel exists only once its program is
    // built, and the program cannot be built again while it does
    let program_hash = TABLES
        .programs
        .with(program, |p| p.identity())
        .unwrap_or_else(|| "unknown".into());
    TABLES.add_kernel(
        k as Key,
        KernelInfo {
            program,
            name: name.clone(),
            args: Vec::new(),
            launch: KernelLaunch::new(name, program_hash),
        },
    );
}

pub unsafe fn clCreateKernel(
    p: cl_program,
    name: *const c_char,
    errcode_ret: *mut cl_int,
) -> cl_kernel {
    let k = real!(clCreateKernel, fail_handle(errcode_ret))(p, name, errcode_ret);
    if !passthrough() && !k.is_null() {
        record("clCreateKernel", || {
            insert_kernel(k, p as Key, CStr::from_ptr(name).to_string_lossy().into())
        });
    }
    k
}

pub unsafe fn clCreateKernelsInProgram(
    p: cl_program,
    n: cl_uint,
    kernels: *mut cl_kernel,
    n_ret: *mut cl_uint,
) -> cl_int {
    let r = real!(clCreateKernelsInProgram, crate::loader::UNAVAILABLE)(p, n, kernels, n_ret);
    if r == CL_SUCCESS && !passthrough() && !kernels.is_null() {
        record("clCreateKernelsInProgram", || {
            let made = if n_ret.is_null() { n } else { (*n_ret).min(n) };
            for i in 0..made as usize {
                let k = *kernels.add(i);
                insert_kernel(k, p as Key, kernel_name(k));
            }
        });
    }
    r
}

pub unsafe fn clCloneKernel(src: cl_kernel, errcode_ret: *mut cl_int) -> cl_kernel {
    let k = real!(clCloneKernel, fail_handle(errcode_ret))(src, errcode_ret);
    if !passthrough() && !k.is_null() {
        record("clCloneKernel", || match TABLES.kernels.get(src as Key) {
            Some(mut info) => {
                // a kernel object of its own: its own launch count
                info.launch =
                    KernelLaunch::new(info.launch.name.clone(), info.launch.program_hash.clone());
                TABLES.add_kernel(k as Key, info)
            }
            None => insert_kernel(k, kernel_program(k), kernel_name(k)),
        });
    }
    k
}

pub unsafe fn clSetKernelArg(
    k: cl_kernel,
    index: cl_uint,
    size: usize,
    value: *const c_void,
) -> cl_int {
    let r = real!(clSetKernelArg, crate::loader::UNAVAILABLE)(k, index, size, value);
    // Argument values are only needed to replay a launch (balance, project); log mode keeps
    // this call as cheap as plain forwarding.
    if r == CL_SUCCESS && super::records_args() {
        let arg = if value.is_null() {
            KernelArg::Local(size)
        } else {
            KernelArg::Value(ArgBytes::copy_from(value.cast(), size))
        };
        let i = index as usize;
        TABLES.kernels.with_mut(k as Key, |info| {
            if info.args.len() <= i {
                info.args.resize(i + 1, None);
            }
            info.args[i] = Some(arg);
        });
    }
    r
}

refcount_hooks!(clRetainContext, clReleaseContext, cl_context, contexts);
refcount_hooks!(
    clRetainCommandQueue,
    clReleaseCommandQueue,
    cl_command_queue,
    queues
);
refcount_hooks!(clRetainProgram, clReleaseProgram, cl_program, programs);

pub unsafe fn clRetainKernel(k: cl_kernel) -> cl_int {
    let r = real!(clRetainKernel, crate::loader::UNAVAILABLE)(k);
    if r == CL_SUCCESS && !passthrough() {
        TABLES.kernels.retain(k as Key);
    }
    r
}

pub unsafe fn clReleaseKernel(k: cl_kernel) -> cl_int {
    let r = real!(clReleaseKernel, crate::loader::UNAVAILABLE)(k);
    if r == CL_SUCCESS && !passthrough() {
        TABLES.release_kernel(k as Key);
    }
    r
}
// ---------------------------------------------------------------- launches

unsafe fn queue_info(q: cl_command_queue) -> Option<QueueInfo> {
    if let Some(i) = TABLES.queues.get(q as Key) {
        return Some(i);
    }
    // A queue created before clprism could see it (e.g. loader-layer mode): describe it now.
    let f = crate::loader::table()?.clGetCommandQueueInfo?;
    let mut dev: cl_device_id = std::ptr::null_mut();
    if f(
        q,
        CL_QUEUE_DEVICE,
        std::mem::size_of::<cl_device_id>(),
        (&mut dev as *mut cl_device_id).cast(),
        std::ptr::null_mut(),
    ) != CL_SUCCESS
    {
        return None;
    }
    let mut props: cl_command_queue_properties = 0;
    f(
        q,
        CL_QUEUE_PROPERTIES,
        8,
        (&mut props as *mut u64).cast(),
        std::ptr::null_mut(),
    );
    let info = QueueInfo {
        context: queue_context(q),
        device: dev as Key,
        device_ref: crate::registry::device::describe(dev),
        app_properties: props,
        app_property_array: None,
        profiling: props & CL_QUEUE_PROFILING_ENABLE != 0,
    };
    Some(info)
}

/// The pending log record of `launch` (counts the kernel's launches for the timing sample).
///
/// The per-launch path of log mode (issue 21): the kernel's and queue's entries come from
/// [`crate::registry::tables::Tables::launch_refs`] (no table lock in the steady state), the
/// sizes are stored inline, and nothing here allocates once the kernel's sampler exists.
pub(crate) unsafe fn launch_record(launch: &Launch) -> LaunchRecord {
    let (q, k, work_dim) = (launch.queue, launch.kernel, launch.work_dim);
    let (kernel, recorded) = TABLES.launch_refs(q as Key, k as Key);
    let (name, program, nth, sampler) = match &kernel {
        Some(kl) => {
            let nth = kl.count();
            // the sampler is found once per kernel object, not on every launch
            let sampler = adaptive_target().map(|t| {
                kl.sampler
                    .get_or_init(|| log::sampling::sampler(&kl.program_hash, &kl.name, t))
            });
            (kl.name.clone(), kl.program_hash.clone(), nth, sampler)
        }
        None => (kernel_name(k), "unknown".into(), 0, None),
    };
    let unknown_sampler;
    let sampler = match (sampler, &kernel) {
        (Some(s), _) => Some(s),
        (None, None) => {
            unknown_sampler = adaptive_target().map(|t| log::sampling::sampler(&program, &name, t));
            unknown_sampler.as_ref()
        }
        (None, Some(_)) => None,
    };
    let (timed, timing_p, sampler) = timing(nth, sampler);
    // the recorded queue's device, without copying the rest of its entry (every launch)
    let device = recorded
        .or_else(|| queue_info(q).map(|i| i.device_ref))
        .unwrap_or_else(|| {
            Arc::new(log::DeviceRef {
                index: "?".into(),
                name: "unknown".into(),
                kind: "other".into(),
                ..Default::default()
            })
        });
    LaunchRecord {
        schema: log::SCHEMA,
        seq: log::next_seq(),
        time_ns: log::unix_ns(),
        pid: log::pid(),
        thread: log::thread_id(),
        mode: crate::config::get().mode.as_str(),
        kernel: name,
        program,
        work_dim,
        global: log::Dims::of(&launch.global, work_dim),
        local: launch.local.map(|l| log::Dims::of(&l, work_dim)),
        offset: launch.offset.map(|o| log::Dims::of(&o, work_dim)),
        device,
        status: "pending",
        error_code: None,
        device_ns: None,
        queued_ns: None,
        extra: Default::default(),
        shared_extra: None,
        device_times: None,
        timed,
        timing_p,
        sampler,
        forwarded: None,
    }
}

/// The adaptive timing target (relative 95 % half-width) when launches are sampled
/// adaptively: `CLPRISM_DEVICE_TIMING=adaptive`, outside project mode (which compares its
/// projections with every measured launch).
fn adaptive_target() -> Option<f64> {
    use crate::config::{DeviceTiming, Mode};
    let c = crate::config::get();
    match c.device_timing {
        DeviceTiming::Adaptive { target_bp } if c.mode != Mode::Project => {
            Some(target_bp as f64 / 1e4)
        }
        _ => None,
    }
}

/// Whether the `nth` launch (from 0) of a kernel object gets a device timing event
/// (`CLPRISM_DEVICE_TIMING`), the probability it had of getting one when below 1, and the
/// adaptive sampler (given when sampling adaptively) to tell its device time.
fn timing(
    nth: u64,
    sampler: Option<&Arc<log::sampling::Sampler>>,
) -> (bool, Option<f64>, Option<Arc<log::sampling::Sampler>>) {
    use crate::config::DeviceTiming;
    if let Some(s) = sampler {
        let (timed, p) = s.draw();
        // kept on untimed launches too: balance mode may still time one (`launched`)
        return (timed, (p < 1.0).then_some(p), Some(s.clone()));
    }
    match crate::config::get().device_timing {
        DeviceTiming::All | DeviceTiming::Adaptive { .. } => (true, None, None),
        DeviceTiming::Sample { every } => {
            let timed = nth.is_multiple_of(every);
            (timed, (nth > 0).then_some(1.0 / every as f64), None)
        }
        DeviceTiming::Off => (false, None, None),
    }
}

/// Enqueues through `enqueue` (which receives the event slot to fill) and logs the launch.
unsafe fn logged_launch(
    mut rec: LaunchRecord,
    event: *mut cl_event,
    enqueue: impl FnOnce(*mut cl_event) -> cl_int,
) -> cl_int {
    if !rec.timed {
        // Not timed (`CLPRISM_DEVICE_TIMING`): no event of clprism's, nothing to poll; the
        // app's own event slot (possibly null) is passed through untouched.
        rec.timing_p = None;
        rec.sampler = None;
        let r = enqueue(event);
        if r != CL_SUCCESS {
            rec.status = "enqueue_failed";
            rec.error_code = Some(r);
        } else {
            rec.status = "untimed";
        }
        log::finished(rec);
        return r;
    }
    let mut own: cl_event = std::ptr::null_mut();
    let slot = if event.is_null() {
        &mut own as *mut cl_event
    } else {
        event
    };
    let r = enqueue(slot);
    if r != CL_SUCCESS {
        rec.status = "enqueue_failed";
        rec.error_code = Some(r);
        log::finished(rec);
        return r;
    }
    let ev = *slot;
    let t = crate::loader::table();
    // clprism's own reference, released by the log writer once the event completes
    if !event.is_null() {
        if let Some(retain) = t.and_then(|t| t.clRetainEvent) {
            retain(ev);
        }
    }
    log::pending_watched(rec, ev as usize);
    r
}

pub unsafe fn clEnqueueNDRangeKernel(
    q: cl_command_queue,
    k: cl_kernel,
    work_dim: cl_uint,
    offset: *const usize,
    global: *const usize,
    local: *const usize,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = real!(clEnqueueNDRangeKernel, crate::loader::UNAVAILABLE);
    let launch = if passthrough() {
        None
    } else {
        Launch::ndrange(q, k, work_dim, offset, global, local, n_wait, wait)
    };
    match launch {
        Some(launch) => launched(&launch, event),
        None => f(q, k, work_dim, offset, global, local, n_wait, wait, event),
    }
}

/// A one-dimensional launch of one work-item through the same path as any NDRange.
pub unsafe fn clEnqueueTask(
    q: cl_command_queue,
    k: cl_kernel,
    n_wait: cl_uint,
    wait: *const cl_event,
    event: *mut cl_event,
) -> cl_int {
    let f = real!(clEnqueueTask, crate::loader::UNAVAILABLE);
    if passthrough() {
        return f(q, k, n_wait, wait, event);
    }
    launched(&Launch::task(q, k, n_wait, wait), event)
}

/// One launch in the configured mode: balance tries to split it, project emulates it, and
/// whatever is forwarded is logged (with the reason it was not split, in balance mode).
unsafe fn launched(launch: &Launch, event: *mut cl_event) -> cl_int {
    let mut rec = launch_record(launch);
    // balance mode may run part of the launch as a probe first and forward only the rest
    let mut launch = *launch;
    let launch = &mut launch;
    let mut measure = None;
    if crate::config::get().mode == crate::config::Mode::Balance {
        let t = std::time::Instant::now();
        match super::balance::try_balance(launch, event, &rec) {
            Ok(code) => return code,
            Err(forward) => {
                // decision_ns: what clprism spent on the app's thread before forwarding
                let decision_ns = t.elapsed().as_nanos() as u64;
                // typed: the writer makes its JSON (from cached fragments), not this thread
                rec.forwarded = Some(log::Forwarded {
                    reason: forward.reason,
                    decision_ns,
                    devices_ready_ms: crate::exec::devices_ready_ms(),
                    launch_thread: false,
                });
                // the app's device runs it on the app's buffers: complete them first
                super::balance::gather_args(launch.kernel);
                crate::exec::note_app_command(launch.queue as usize);
                super::balance::invalidate_args(launch.kernel, &forward.unwritten);
                // a measurement needs a profiled queue: without one, timing the launch would
                // only add an event and a poll per launch (CLPRISM_DEVICE_TIMING=off)
                measure = forward.measure.filter(|_| profiled(launch.queue));
                if measure.is_some() {
                    // balance measures this launch through its event: timed, whatever the
                    // sample says
                    rec.timed = true;
                    rec.timing_p = None;
                }
            }
        }
    }
    if crate::config::get().mode == crate::config::Mode::Project {
        return projected_launch(launch, rec, event);
    }
    logged_launch(rec, event, |slot| {
        let r = launch.forward(None, slot);
        if let Some(m) = measure {
            if r == CL_SUCCESS && !slot.is_null() && !(*slot).is_null() {
                crate::exec::watch_forwarded(*slot, m);
            }
        }
        r
    })
}

/// Whether queue `q` has profiling on (clprism's `CLPRISM_DEVICE_TIMING`, or the app's own
/// request): only then can a forwarded launch be measured from its event.
pub(super) fn profiled(q: cl_command_queue) -> bool {
    crate::config::get().device_timing.enables_profiling()
        || TABLES
            .queues
            .with(q as Key, |i| i.profiling)
            .unwrap_or(false)
}

/// Project mode (see `super::project`): snapshot before the kernel, emulation and projection
/// on the worker thread after it.
unsafe fn projected_launch(launch: &Launch, mut rec: LaunchRecord, event: *mut cl_event) -> cl_int {
    let app_wait = launch.wait_list();
    // buffers this launch may write lose their deferred snapshots' pre-launch contents
    super::project::before_kernel(launch);
    let plan = super::project::before_launch(launch, &mut rec);
    let kernel_wait = match &plan {
        super::project::Plan::Job(p) if p.kernel_wait(app_wait).len() > app_wait.len() => {
            Some(p.kernel_wait(app_wait))
        }
        _ => None,
    };
    let r = logged_launch(rec, event, |slot| launch.forward(kernel_wait, slot));
    super::project::after_launch(plan, r == CL_SUCCESS);
    r
}

// ---------------------------------------------------------------- extension functions

pub unsafe fn clGetExtensionFunctionAddress(name: *const c_char) -> *mut c_void {
    real!(clGetExtensionFunctionAddress, std::ptr::null_mut())(name)
}

pub unsafe fn clGetExtensionFunctionAddressForPlatform(
    p: cl_platform_id,
    name: *const c_char,
) -> *mut c_void {
    real!(
        clGetExtensionFunctionAddressForPlatform,
        std::ptr::null_mut()
    )(p, name)
}
