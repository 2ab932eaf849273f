//! Finds and opens the real OpenCL library (the ICD loader) and holds its function table
//! (DESIGN.md §2).
//!
//! Search order: `CLPRISM_REAL_OPENCL` if set (and nothing else), else the OpenCL loader the
//! process already has mapped (the one the application was bound to), else `libOpenCL.so.1`
//! where the dynamic linker looks for it (`LD_LIBRARY_PATH`, then `/etc/ld.so.cache`), then
//! `libOpenCL.so.1` and `libOpenCL.so` in the usual system library directories. A candidate
//! that is this library itself (same device and inode as the file `dladdr` reports for our
//! own symbol) or another copy of clprism (it exports `clprism_identity`) is skipped. The library is opened by absolute path, never by bare name,
//! because a bare `dlopen("libOpenCL.so.1")` can return clprism itself.

pub mod ldcache;
pub mod table;

use once_cell::sync::Lazy;
use parking_lot::Mutex;
use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
pub use table::RealTable;

/// Returned by an entry point when the real library or the symbol is unavailable.
pub const UNAVAILABLE: opencl_sys::cl_int = opencl_sys::CL_INVALID_OPERATION;

/// Reports (once per process) that an entry point could not be forwarded.
#[cold]
pub fn unavailable(name: &str) {
    report_unavailable(name);
}

/// Failure value of a handle-returning entry point: sets `*errcode_ret` to [`UNAVAILABLE`]
/// and returns null.
///
/// # Safety
/// `errcode_ret` is null or points to a writable `cl_int`.
#[cold]
pub unsafe fn fail_handle<T>(errcode_ret: *mut opencl_sys::cl_int) -> *mut T {
    if !errcode_ret.is_null() {
        *errcode_ret = UNAVAILABLE;
    }
    std::ptr::null_mut()
}

/// The opened real library and its resolved entry points.
pub struct RealLibrary {
    /// Absolute path that was opened.
    pub path: PathBuf,
    /// Resolved entry points.
    pub table: RealTable,
    _lib: libloading::Library,
}

static REAL: Lazy<Result<RealLibrary, String>> = Lazy::new(|| {
    let r = open_real(crate::config::get().real_opencl.as_deref());
    if let Err(e) = &r {
        crate::config::error(&format!(
            "cannot load the real OpenCL library: {e}; every OpenCL call will fail \
             (set CLPRISM_REAL_OPENCL=/path/to/libOpenCL.so.1)"
        ));
    }
    r
});

/// The real library, or the reason it could not be loaded (reported once on stderr).
pub fn real() -> Result<&'static RealLibrary, &'static str> {
    REAL.as_ref().map_err(|e| e.as_str())
}

/// In loader-layer mode, the next layer's entry points (set once by `clInitLayer`).
static LAYER_TARGET: once_cell::sync::OnceCell<RealTable> = once_cell::sync::OnceCell::new();

/// Installs the next layer's dispatch table as the real table (loader-layer mode). Errors
/// when called twice.
pub fn set_layer_target(t: RealTable) -> Result<(), String> {
    LAYER_TARGET
        .set(t)
        .map_err(|_| "clInitLayer called twice".to_string())
}

/// The real function table: the next layer's in loader-layer mode, else the real library's
/// (if it was loaded).
#[inline]
pub fn table() -> Option<&'static RealTable> {
    if let Some(t) = LAYER_TARGET.get() {
        return Some(t);
    }
    REAL.as_ref().ok().map(|r| &r.table)
}

static REPORTED: Lazy<Mutex<HashSet<String>>> = Lazy::new(|| Mutex::new(HashSet::new()));

/// Reports once per entry point that it cannot be forwarded.
pub fn report_unavailable(name: &str) {
    if let Ok(r) = real() {
        if REPORTED.lock().insert(name.to_string()) {
            crate::config::error(&format!(
                "{name} is not provided by the real OpenCL library {}",
                r.path.display()
            ));
        }
    }
}

/// Path of the file this code was loaded from (clprism's own library or test binary).
pub fn own_path() -> Option<PathBuf> {
    // SAFETY: dladdr only reads loader data for an address inside this object.
    unsafe {
        let mut info: libc::Dl_info = std::mem::zeroed();
        // any address inside this object will do: take this function's own
        let addr = own_path as *const libc::c_void;
        if libc::dladdr(addr, &mut info) != 0 && !info.dli_fname.is_null() {
            let s = std::ffi::CStr::from_ptr(info.dli_fname)
                .to_string_lossy()
                .into_owned();
            return std::fs::canonicalize(&s).ok().or(Some(PathBuf::from(s)));
        }
    }
    None
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

/// System directories searched after `LD_LIBRARY_PATH`.
const SYSTEM_DIRS: &[&str] = &[
    "/usr/lib/x86_64-linux-gnu",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/lib64",
    "/usr/lib",
    "/usr/local/lib",
    "/usr/local/cuda/lib64",
    "/opt/rocm/lib",
];

/// OpenCL loaders already mapped into the process (what the dynamic linker bound the
/// application to, under `LD_PRELOAD`), in load order, found with `dl_iterate_phdr`.
pub fn loaded_loaders() -> Vec<PathBuf> {
    extern "C" fn cb(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut libc::c_void,
    ) -> libc::c_int {
        // SAFETY: the loader passes valid entries; `data` is the Vec below.
        unsafe {
            let out = &mut *(data as *mut Vec<PathBuf>);
            let name = (*info).dlpi_name;
            if !name.is_null() {
                let p = PathBuf::from(
                    std::ffi::CStr::from_ptr(name)
                        .to_string_lossy()
                        .into_owned(),
                );
                if p.file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(|f| f.starts_with("libOpenCL.so"))
                {
                    out.push(p);
                }
            }
        }
        0
    }
    let mut out: Vec<PathBuf> = Vec::new();
    // SAFETY: the callback only reads the entries it is given.
    unsafe { libc::dl_iterate_phdr(Some(cb), &mut out as *mut Vec<PathBuf> as *mut libc::c_void) };
    out
}

/// Candidate paths for the real library, in search order: loaders already mapped into the
/// process (other than clprism), then `libOpenCL.so.1` where the dynamic linker would look
/// for an application linked with `-lOpenCL` (the directories of `LD_LIBRARY_PATH`, then the
/// entries of `/etc/ld.so.cache` in its order, see [`ldcache`]), then `libOpenCL.so.1` and
/// `libOpenCL.so` in the usual system directories.
pub fn candidates() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var("LD_LIBRARY_PATH")
        .unwrap_or_default()
        .split(':')
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .collect();
    let mut out: Vec<PathBuf> = loaded_loaders()
        .into_iter()
        .filter(|p| p.is_absolute())
        .collect();
    let push = |p: PathBuf, out: &mut Vec<PathBuf>| {
        if p.exists() && !out.contains(&p) {
            out.push(p);
        }
    };
    // the dynamic linker's order for `libOpenCL.so.1`: LD_LIBRARY_PATH, ld.so.cache, defaults
    for d in &dirs {
        push(d.join("libOpenCL.so.1"), &mut out);
    }
    for p in ldcache::lookup("libOpenCL.so.1") {
        push(p, &mut out);
    }
    dirs.extend(SYSTEM_DIRS.iter().map(PathBuf::from));
    for n in ["libOpenCL.so.1", "libOpenCL.so"] {
        for d in &dirs {
            push(d.join(n), &mut out);
        }
    }
    out
}

/// Opens one candidate and checks that it is a real OpenCL library and not clprism.
///
/// Errors: the file is clprism itself or another copy of it, cannot be opened, or exports no
/// OpenCL entry point.
pub fn open_candidate(path: &Path) -> Result<RealLibrary, String> {
    if let Some(me) = own_path() {
        if same_file(path, &me) {
            return Err(format!("{} is clprism itself", path.display()));
        }
    }
    if !path.exists() {
        return Err(format!("{} does not exist", path.display()));
    }
    // SAFETY: opening a shared library runs its initialisers; an OpenCL ICD loader is expected.
    let lib = unsafe {
        libloading::os::unix::Library::open(
            Some(path),
            libloading::os::unix::RTLD_NOW | libloading::os::unix::RTLD_LOCAL,
        )
    }
    .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    // SAFETY: probing for a symbol by name.
    if unsafe { lib.get::<*const ()>(b"clprism_identity\0") }.is_ok() {
        return Err(format!(
            "{} is a copy of clprism, not the real OpenCL library",
            path.display()
        ));
    }
    let lib: libloading::Library = lib.into();
    // SAFETY: the table's prototypes are those of the Khronos headers.
    let table = unsafe { RealTable::resolve(&lib) };
    if table.clGetPlatformIDs.is_none() || table.resolved_count() < 10 {
        return Err(format!("{} exports no OpenCL entry points", path.display()));
    }
    Ok(RealLibrary {
        path: path.to_path_buf(),
        table,
        _lib: lib,
    })
}

/// Finds and opens the real library: `explicit` only when given, else the first good candidate.
pub fn open_real(explicit: Option<&Path>) -> Result<RealLibrary, String> {
    if let Some(p) = explicit {
        return open_candidate(p).map_err(|e| format!("CLPRISM_REAL_OPENCL: {e}"));
    }
    let mut reasons = Vec::new();
    for c in candidates() {
        match open_candidate(&c) {
            Ok(r) => return Ok(r),
            Err(e) => reasons.push(e),
        }
    }
    if reasons.is_empty() {
        Err(
            "no libOpenCL.so.1 found on LD_LIBRARY_PATH or in the system library directories"
                .into(),
        )
    } else {
        Err(reasons.join("; "))
    }
}
