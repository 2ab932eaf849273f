//! `__cxa_atexit`, interposed: the one symbol clprism exports that is not OpenCL's.
//!
//! Exit handlers run in reverse order of registration. Libraries register C++ static
//! destructors lazily, at first use: LLVM-15's code generator in PoCL registers its tables'
//! destructors while the app's own `clBuildProgram` compiles, and at exit destroyed them
//! while clprism's background build thread was still compiling with them (SIGSEGV or "LLVM
//! ERROR: Do not know how to split the result of this operator" in 23 of 30 cold-cache runs
//! of tests/c/quick_exit.c in balance mode). Registering clprism's exit hook around each
//! background call (`exec::background`) cannot order it after a registration made on another
//! thread while the call runs. So every registration made while a background driver call is
//! in flight is followed at once by one of clprism's exit hook, which therefore runs first
//! and waits for the call to end. Every other registration is forwarded untouched.

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};

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

/// Registers `f(arg)` to run at exit (or when `dso` is unloaded), as glibc does; then, while
/// a background driver call is in flight, registers clprism's exit hook after it.
///
/// # Safety
/// As glibc's `__cxa_atexit`.
#[no_mangle]
pub unsafe extern "C" fn __cxa_atexit(f: ExitFn, arg: *mut c_void, dso: *mut c_void) -> c_int {
    let Some(real) = real() else {
        return -1;
    };
    let r = real(f, arg, dso);
    if crate::exec::background::in_driver_call() {
        real(
            Some(crate::exec::background::exit_hook_with_arg),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
    }
    r
}
