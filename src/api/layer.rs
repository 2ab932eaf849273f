//! Loader-layer mode: the same library works as a Khronos / ocl-icd loader layer
//! (`OPENCL_LAYERS=/path/libOpenCL.so`, `cl_loader_layers`). The loader hands clprism the
//! next layer's dispatch table (`clInitLayer`), which becomes the "real" function table, and
//! calls clprism through the dispatch table returned here, whose entries are clprism's
//! exported stubs. Everything else (interception, log, balance) is unchanged.

use opencl_sys::cl_icd::cl_icd_dispatch;
use opencl_sys::cl_layer::*;
use opencl_sys::*;
use parking_lot::Mutex;
use std::ffi::c_void;

/// Entries in a `cl_icd_dispatch` (pointer-sized fields).
const DISPATCH_ENTRIES: usize =
    std::mem::size_of::<cl_icd_dispatch>() / std::mem::size_of::<usize>();

static OUR_DISPATCH: Mutex<Option<Box<cl_icd_dispatch>>> = Mutex::new(None);

/// `clGetLayerInfo`: `CL_LAYER_API_VERSION` (100) and `CL_LAYER_NAME` ("clprism").
///
/// # Safety
/// Standard info-query contract.
#[no_mangle]
pub unsafe extern "C" fn clGetLayerInfo(
    param: cl_layer_info,
    size: usize,
    value: *mut c_void,
    size_ret: *mut usize,
) -> cl_int {
    let bytes: Vec<u8> = match param {
        CL_LAYER_API_VERSION => CL_LAYER_API_VERSION_100.to_ne_bytes().to_vec(),
        CL_LAYER_NAME => b"clprism\0".to_vec(),
        _ => return CL_INVALID_VALUE,
    };
    if !value.is_null() {
        if size < bytes.len() {
            return CL_INVALID_VALUE;
        }
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), value.cast::<u8>(), bytes.len());
    }
    if !size_ret.is_null() {
        *size_ret = bytes.len();
    }
    CL_SUCCESS
}

/// `clInitLayer`: takes the next layer's dispatch table and returns clprism's.
///
/// # Safety
/// `target` points to `num_entries` dispatch entries; the out-pointers are writable.
#[no_mangle]
pub unsafe extern "C" fn clInitLayer(
    num_entries: cl_uint,
    target: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
) -> cl_int {
    crate::api::guard(
        "clInitLayer",
        || {
            if target.is_null() || num_entries_ret.is_null() || layer_dispatch_ret.is_null() {
                return CL_INVALID_VALUE;
            }
            // copy what the loader provides; missing trailing entries stay null
            let mut next: cl_icd_dispatch = std::mem::zeroed();
            let n = (num_entries as usize).min(DISPATCH_ENTRIES);
            std::ptr::copy_nonoverlapping(
                target as *const usize,
                &mut next as *mut cl_icd_dispatch as *mut usize,
                n,
            );
            if let Err(e) = crate::loader::set_layer_target(super::RealTable::from_dispatch(&next))
            {
                crate::config::error(&e);
                return CL_INVALID_OPERATION;
            }
            let mut ours = Box::new(next);
            super::fill_dispatch(&mut ours);
            *layer_dispatch_ret = &*ours as *const cl_icd_dispatch;
            *num_entries_ret = n as cl_uint;
            *OUR_DISPATCH.lock() = Some(ours);
            CL_SUCCESS
        },
        || CL_INVALID_OPERATION,
    )
}

/// `clInitLayerWithProperties`: as [`clInitLayer`]; no layer properties are defined yet.
///
/// # Safety
/// As [`clInitLayer`].
#[no_mangle]
pub unsafe extern "C" fn clInitLayerWithProperties(
    num_entries: cl_uint,
    target: *const cl_icd_dispatch,
    num_entries_ret: *mut cl_uint,
    layer_dispatch_ret: *mut *const cl_icd_dispatch,
    _properties: *const cl_layer_properties,
) -> cl_int {
    clInitLayer(num_entries, target, num_entries_ret, layer_dispatch_ret)
}

/// `clDeinitLayer`: flushes the log (the dispatch table stays valid until unload).
#[no_mangle]
pub extern "C" fn clDeinitLayer() -> cl_int {
    let _ = std::panic::catch_unwind(crate::log::flush);
    CL_SUCCESS
}
