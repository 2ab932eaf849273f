//! Device descriptions for the log (`platform:device` index, name, type, and the identity
//! readers match to a profile), cached per handle.

use crate::log::DeviceRef;
use opencl_sys::*;
use parking_lot::Mutex;
use rustc_hash::FxHashMap;
use std::ffi::c_void;
use std::sync::Arc;

use once_cell::sync::Lazy;

static CACHE: Lazy<Mutex<FxHashMap<usize, Arc<DeviceRef>>>> = Lazy::new(Default::default);
static DEFINES: Lazy<Mutex<FxHashMap<usize, Arc<str>>>> = Lazy::new(Default::default);

/// Reads a string info parameter through a real `clGet*Info`-style function.
pub fn info_string(f: impl Fn(usize, *mut c_void, *mut usize) -> cl_int) -> Option<String> {
    let mut size = 0usize;
    if f(0, std::ptr::null_mut(), &mut size) != CL_SUCCESS || size == 0 {
        return None;
    }
    let mut buf = vec![0u8; size];
    if f(size, buf.as_mut_ptr().cast(), std::ptr::null_mut()) != CL_SUCCESS {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    Some(String::from_utf8_lossy(&buf[..end]).into_owned())
}

/// A fixed-size info value (`T` plain data) from a `clGet*Info`-shaped query `f`; `None`
/// when the query fails.
///
/// # Safety
/// `f` writes at most the size it is given into the pointer it is given.
pub unsafe fn info_value<T: Copy + Default>(
    f: impl Fn(usize, *mut c_void, *mut usize) -> cl_int,
) -> Option<T> {
    let mut v = T::default();
    (f(
        std::mem::size_of::<T>(),
        (&mut v as *mut T).cast(),
        std::ptr::null_mut(),
    ) == CL_SUCCESS)
        .then_some(v)
}

/// The real library's platforms, in `clGetPlatformIDs` order (empty when the query fails).
fn platform_ids(t: &crate::loader::RealTable) -> Vec<cl_platform_id> {
    let Some(gp) = t.clGetPlatformIDs else {
        return Vec::new();
    };
    // SAFETY: standard two-call enumeration with a buffer of the reported size.
    unsafe {
        let mut n = 0;
        if gp(0, std::ptr::null_mut(), &mut n) != CL_SUCCESS {
            return Vec::new();
        }
        let mut plats = vec![std::ptr::null_mut(); n as usize];
        if gp(n, plats.as_mut_ptr(), std::ptr::null_mut()) != CL_SUCCESS {
            return Vec::new();
        }
        plats
    }
}

/// `platform`'s devices of every type, in `clGetDeviceIDs` order (empty when the query fails).
fn device_ids(t: &crate::loader::RealTable, platform: cl_platform_id) -> Vec<cl_device_id> {
    let Some(gd) = t.clGetDeviceIDs else {
        return Vec::new();
    };
    // SAFETY: standard two-call enumeration with a buffer of the reported size, on a platform
    // handle the real library returned.
    unsafe {
        let mut nd = 0;
        if gd(
            platform,
            CL_DEVICE_TYPE_ALL,
            0,
            std::ptr::null_mut(),
            &mut nd,
        ) != CL_SUCCESS
        {
            return Vec::new();
        }
        let mut devs = vec![std::ptr::null_mut(); nd as usize];
        let (p, n) = (platform, nd);
        if gd(
            p,
            CL_DEVICE_TYPE_ALL,
            n,
            devs.as_mut_ptr(),
            std::ptr::null_mut(),
        ) != CL_SUCCESS
        {
            return Vec::new();
        }
        devs
    }
}

/// All devices of the real library as `(platform index, device index, handle)`.
pub fn enumerate() -> Vec<(usize, usize, cl_device_id)> {
    let Some(t) = crate::loader::table() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (pi, p) in platform_ids(t).into_iter().enumerate() {
        let ids = device_ids(t, p);
        if ids.is_empty() {
            warn_platform_without_devices(t, pi, p);
        }
        for (di, d) in ids.into_iter().enumerate() {
            out.push((pi, di, d));
        }
    }
    out
}

/// One warning per platform whose device query fails with an error other than
/// `CL_DEVICE_NOT_FOUND`: PoCL-Remote fails its whole platform (`CL_INVALID_DEVICE`) when one
/// of its servers cannot be reached at start (docs/remote.md), and its devices, those of the
/// servers that answer included, are then missing from balance mode.
fn warn_platform_without_devices(t: &crate::loader::RealTable, pi: usize, p: cl_platform_id) {
    let Some(gd) = t.clGetDeviceIDs else {
        return;
    };
    let mut nd = 0;
    // SAFETY: a count query on a platform handle the real library returned.
    let err = unsafe { gd(p, CL_DEVICE_TYPE_ALL, 0, std::ptr::null_mut(), &mut nd) };
    if err == CL_SUCCESS || err == CL_DEVICE_NOT_FOUND {
        return;
    }
    let version = t
        .clGetPlatformInfo
        .and_then(|f| {
            // SAFETY: string query on a real platform.
            info_string(|n, pp, s| unsafe { f(p, CL_PLATFORM_VERSION, n, pp, s) })
        })
        .unwrap_or_default();
    crate::config::warn_once_per(
        &format!(
            "platform {pi} ({version}) gives no devices: clGetDeviceIDs returned {err}{}; \
             balance mode goes on without it",
            if version.contains("REMOTE") {
                " (a PoCL-Remote server cannot be reached: PoCL then leaves out every server)"
            } else {
                ""
            }
        ),
        &format!("platform-without-devices-{pi}"),
    );
}

/// `(platform index, device index)` of `dev` as [`enumerate`] numbers it, asking only the
/// device's own platform for its devices: enumerating every platform's devices would make
/// another vendor's driver open its devices in an app that never asked for them (PoCL starts
/// its worker threads and LLVM there) just to number the app's device in a log record.
fn index_of(dev: cl_device_id) -> Option<(usize, usize)> {
    let t = crate::loader::table()?;
    let gi = t.clGetDeviceInfo?;
    // SAFETY: a cl_platform_id-sized query on a device handle the app obtained.
    let platform = unsafe { info_value::<usize>(|n, p, s| gi(dev, CL_DEVICE_PLATFORM, n, p, s)) }?
        as cl_platform_id;
    let pi = platform_ids(t).iter().position(|&p| p == platform)?;
    let di = device_ids(t, platform).iter().position(|&d| d == dev)?;
    Some((pi, di))
}

/// Whether `dev` is a GPU or an accelerator: a device whose driver runs work on hardware of
/// its own (balance mode counts such siblings, and asks such drivers to allocate from other
/// threads), as opposed to a CPU device sharing the host's cores.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn is_gpu_like(dev: cl_device_id) -> bool {
    matches!(&*describe(dev).kind, "gpu" | "accelerator")
}

/// How many other devices of `dev`'s own platform carry its `CL_DEVICE_NAME` and type (its
/// like siblings: the other GPUs of a multi-GPU host), asking only that platform, as
/// [`index_of`] does. 0 when a query fails.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn like_siblings(dev: cl_device_id) -> usize {
    let Some(t) = crate::loader::table() else {
        return 0;
    };
    let Some(gi) = t.clGetDeviceInfo else {
        return 0;
    };
    // SAFETY: a cl_platform_id-sized query on a device handle the app obtained.
    let Some(platform) =
        (unsafe { info_value::<usize>(|n, p, s| gi(dev, CL_DEVICE_PLATFORM, n, p, s)) })
    else {
        return 0;
    };
    let me = describe(dev);
    device_ids(t, platform as cl_platform_id)
        .into_iter()
        .filter(|&d| d != dev)
        .filter(|&d| {
            let other = describe(d);
            other.name == me.name && other.kind == me.kind
        })
        .count()
}

/// Whether a device of `dev`'s own platform has a `CL_DEVICE_NAME` starting with `prefix`
/// (asking only that platform, as [`index_of`] does); false when a query fails.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn platform_has_device_named(dev: cl_device_id, prefix: &str) -> bool {
    let Some(t) = crate::loader::table() else {
        return false;
    };
    let Some(gi) = t.clGetDeviceInfo else {
        return false;
    };
    // SAFETY: a cl_platform_id-sized query on a device handle the app obtained.
    let Some(platform) =
        (unsafe { info_value::<usize>(|n, p, s| gi(dev, CL_DEVICE_PLATFORM, n, p, s)) })
    else {
        return false;
    };
    device_ids(t, platform as cl_platform_id)
        .into_iter()
        .any(|d| describe(d).name.starts_with(prefix))
}

/// The log description of a device (cached). The handle is only passed to the driver.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn describe(dev: cl_device_id) -> Arc<DeviceRef> {
    if let Some(d) = CACHE.lock().get(&(dev as usize)) {
        return d.clone();
    }
    let t = crate::loader::table();
    let name = t
        .and_then(|t| t.clGetDeviceInfo)
        // SAFETY: querying a string parameter of a device handle the app obtained.
        .and_then(|f| info_string(|n, p, s| unsafe { f(dev, CL_DEVICE_NAME, n, p, s) }))
        .unwrap_or_else(|| "unknown".into());
    let mut ty: cl_device_type = 0;
    if let Some(f) = t.and_then(|t| t.clGetDeviceInfo) {
        // SAFETY: cl_device_type-sized output.
        unsafe {
            f(
                dev,
                CL_DEVICE_TYPE,
                std::mem::size_of::<cl_device_type>(),
                (&mut ty as *mut cl_device_type).cast(),
                std::ptr::null_mut(),
            );
        }
    }
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        "gpu"
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        "cpu"
    } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        "accelerator"
    } else {
        "other"
    };
    let index = index_of(dev)
        .map(|(p, d)| format!("{p}:{d}"))
        .unwrap_or_else(|| "?".into());
    // the rest of the identity, for readers matching the device to a profile (written once
    // per device by the log writer: `log::schema::DeviceDef`)
    let text = |param| {
        t.and_then(|t| t.clGetDeviceInfo)
            // SAFETY: string query on a device handle the app obtained.
            .and_then(|f| info_string(|n, p, s| unsafe { f(dev, param, n, p, s) }))
            .unwrap_or_default()
    };
    let max_compute_units = t
        .and_then(|t| t.clGetDeviceInfo)
        // SAFETY: cl_uint-sized output on a device handle the app obtained.
        .and_then(|f| unsafe {
            info_value::<cl_uint>(|n, p, s| f(dev, CL_DEVICE_MAX_COMPUTE_UNITS, n, p, s))
        })
        .unwrap_or(0);
    let identity = crate::model::DeviceIdentity {
        name: name.clone(),
        vendor: text(CL_DEVICE_VENDOR),
        version: text(CL_DEVICE_VERSION),
        driver_version: text(CL_DRIVER_VERSION),
        max_compute_units,
    };
    let d = Arc::new(DeviceRef {
        index,
        name,
        kind: kind.into(),
        identity: Some(Arc::new(identity)),
    });
    CACHE.lock().insert(dev as usize, d.clone());
    d
}

/// The clang options that give the mini-emulator's build of a program for `dev` the macros
/// the device's own compiler predefines (`__OPENCL_VERSION__`, `__IMAGE_SUPPORT__`; see
/// [`crate::emu::frontend::device_defines`]), cached per handle. Appended to the app's
/// build options wherever a program is emulated for a launch on `dev`.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
pub fn compiler_defines(dev: cl_device_id) -> Arc<str> {
    if let Some(d) = DEFINES.lock().get(&(dev as usize)) {
        return d.clone();
    }
    let f = crate::loader::table().and_then(|t| t.clGetDeviceInfo);
    let version = f
        // SAFETY: string query on a device handle the app launched on.
        .and_then(|f| info_string(|n, p, s| unsafe { f(dev, CL_DEVICE_VERSION, n, p, s) }))
        .unwrap_or_default();
    let images = f
        // SAFETY: cl_bool-sized query on the same device.
        .and_then(|f| unsafe {
            info_value::<cl_bool>(|n, p, s| f(dev, CL_DEVICE_IMAGE_SUPPORT, n, p, s))
        })
        .is_none_or(|b| b != 0);
    let d: Arc<str> = crate::emu::frontend::device_defines(&version, images).into();
    DEFINES.lock().insert(dev as usize, d.clone());
    d
}
