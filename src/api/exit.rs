//! `__cxa_atexit`, interposed: the one symbol clprism exports that is not OpenCL's.
//!
//! Exit handlers run in reverse order of registration, and libraries register theirs
//! lazily, at first use: LLVM-15's code generator in PoCL registers its tables' destructors
//! while the app's own `clBuildProgram` compiles, NVIDIA's compiler 1,205 handlers during the
//! first context clprism's background thread creates. Any such teardown that runs before
//! clprism's exit work destroys a driver under a clprism thread still in it: the background
//! build (SIGSEGV or "LLVM ERROR: Do not know how to split the result of this operator" in
//! 23 of 30 cold-cache runs of tests/c/quick_exit.c in balance mode), or the log writer
//! reading the device times of the last launches.
//!
//! So once clprism has registered an exit hook of its own (its log writer or its background
//! work started), every later registration, on any thread, is followed at once by
//! [`clprism_exit`], which therefore always runs first: it waits for the background driver
//! calls in flight and drains the log while every driver is still alive. Registrations
//! before that, and all registrations once clprism's exit work began, are forwarded
//! untouched.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

type ExitFn = Option<unsafe extern "C" fn(*mut c_void)>;
type CxaAtexit = unsafe extern "C" fn(ExitFn, *mut c_void, *mut c_void) -> c_int;

/// The next `__cxa_atexit` in the lookup order (glibc's), found at first use.
static REAL: AtomicUsize = AtomicUsize::new(0);

fn real() -> Option<CxaAtexit> {
    let mut p = REAL.load(Ordering::Acquire);
    if p == 0 {
        // SAFETY: dlsym with a NUL-terminated name; RTLD_NEXT skips this DSO.
        p = unsafe { libc::dlsym(libc::RTLD_NEXT, c"__cxa_atexit".as_ptr()) } as usize;
        REAL.store(p, Ordering::Release);
    }
    // SAFETY: glibc's `__cxa_atexit`, whose signature this is.
    (p != 0).then(|| unsafe { std::mem::transmute::<usize, CxaAtexit>(p) })
}

/// Set once clprism registered an exit hook of its own.
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// clprism's exit work, in order: the background work stops (waiting only for the driver
/// calls in flight, `exec::background`; the cache trim removes nothing more, `cache`), then the log writes what is pending and the
/// summary (`log::shutdown`). Idempotent; a panic is caught.
pub extern "C" fn clprism_exit(_: *mut c_void) {
    let _ = std::panic::catch_unwind(|| {
        crate::exec::background::get().shut_down();
        crate::cache::stop();
        if let Some(line) = crate::exec::directory_summary() {
            crate::config::eprintln_safe(&format!("clprism: balance: {line}"));
        }
        if let Some(line) = crate::exec::finish_summary() {
            crate::config::debug(|| line);
        }
        crate::log::shutdown();
    });
}

fn is_clprism_hook(f: ExitFn) -> bool {
    let Some(f) = f else { return false };
    let f = f as *const () as usize;
    f == crate::exec::background::exit_hook as *const () as usize
        || f == crate::log::at_exit as *const () as usize
        || f == clprism_exit as *const () as usize
}

/// Registers `f(arg)` to run at exit (or when `dso` is unloaded), as glibc does; then, once
/// clprism is active and until its exit work began, registers [`clprism_exit`] after it.
///
/// # Safety
/// As glibc's `__cxa_atexit`.
#[no_mangle]
pub unsafe extern "C" fn __cxa_atexit(f: ExitFn, arg: *mut c_void, dso: *mut c_void) -> c_int {
    let Some(real) = real() else {
        return -1;
    };
    let r = real(f, arg, dso);
    if is_clprism_hook(f) {
        ACTIVE.store(true, Ordering::SeqCst);
    }
    if ACTIVE.load(Ordering::SeqCst) && !crate::exec::background::get().exiting() {
        real(
            Some(clprism_exit),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
    }
    r
}
