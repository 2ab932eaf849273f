//! The application's own build of a program, read back so that the balance devices of the
//! same model build from it instead of compiling the source again (issue 31, item 1: the
//! devices ready soon after the app's first build).
//!
//! Balance mode builds the app's source on each of its own contexts with
//! `-cl-kernel-arg-info` (and `-cl-nv-verbose` on NVIDIA). Those options make NVIDIA's driver
//! compile from scratch on a machine's first run: 60-170 ms on four H200s for PolyBench 2mm,
//! 3mm and gemm, while the launch that opened the devices ran on the app's GPU alone; 8 ms
//! once NVIDIA's own cache of compiled programs held the same source and options (session
//! 29, call a, `results/session29-2026-11-28`). The app's build for its device is a binary
//! that a device of the same name and driver loads without compiling
//! (`clCreateProgramWithBinary`, OpenCL 1.2 §5.6.1), and it is the very code the app runs
//! natively. A device built from it is used only when every kernel of the program answers
//! `clGetKernelArgInfo` (which the split needs, `exec::program::arg_kinds`); else that
//! device builds from source as before.

use super::cl;
use opencl_sys::*;

/// The app's program, retained while its binary is read on a background thread, and its
/// device. The retain is released when this is dropped, so the program's reference count is
/// raised only for the time of the read.
pub struct HeldProgram {
    program: usize,
    device: usize,
}

/// The binary of the app's build of a program for one device, and that device's model.
pub struct AppBinary {
    /// `CL_DEVICE_NAME` and `CL_DRIVER_VERSION` of the device it was built for, as
    /// [`model`] writes them.
    pub model: String,
    /// `CL_PROGRAM_BINARIES` for that device (PTX on NVIDIA).
    pub bytes: Vec<u8>,
}

/// The model of a device as [`AppBinary::model`] names it: its name and driver version.
pub fn model(name: &str, driver_version: &str) -> String {
    format!("{name}|{driver_version}")
}

impl HeldProgram {
    /// Retains the app's `program` for its `device` when `CLPRISM_BALANCE_APP_BINARY` says so:
    /// by default when `device` is a GPU or an accelerator (a CPU device's binary can take
    /// hundreds of ms to produce: PoCL generates it on request, 398 ms for 2mm on this
    /// 2-core machine; and CPU devices of one host share their cores anyway). `None`:
    /// nothing retained.
    ///
    /// # Safety
    /// `program` and `device` are the app's valid handles.
    pub unsafe fn hold(program: cl_program, device: cl_device_id) -> Option<Self> {
        let wanted = crate::config::get()
            .balance_app_binary
            .unwrap_or_else(|| crate::registry::device::is_gpu_like(device));
        if program.is_null() || device.is_null() || !wanted {
            return None;
        }
        cl::retain_program(program).ok()?;
        Some(Self {
            program: program as usize,
            device: device as usize,
        })
    }

    /// The program's binary for its device and the device's model; `None` when the program
    /// was built for more than one device or the driver gives no binary.
    pub fn read(&self) -> Option<AppBinary> {
        // SAFETY: the program is retained by `self`; the device is the app's.
        unsafe {
            let p = self.program as cl_program;
            let d = self.device as cl_device_id;
            let f = cl::rt().ok()?.clGetProgramInfo?;
            let devices: cl_uint = cl::info(|n, v, r| f(p, CL_PROGRAM_NUM_DEVICES, n, v, r))?;
            if devices != 1 {
                return None;
            }
            let bytes = cl::program_binary(p)?;
            let name = crate::registry::device::describe(d).name.clone();
            let driver = super::devices::driver_version(d)?;
            Some(AppBinary {
                model: model(&name, &driver),
                bytes,
            })
        }
    }
}

impl Drop for HeldProgram {
    fn drop(&mut self) {
        // SAFETY: the retain taken in `hold`.
        unsafe { cl::release_program(self.program as cl_program) };
    }
}

/// Builds `binary` for `dev` of clprism's context `ctx` with `options`, and keeps it only
/// when every kernel of the program answers `clGetKernelArgInfo`. `Err`: why not (the caller
/// then builds from source).
///
/// # Safety
/// `ctx` holds `dev`; both are clprism's own.
pub unsafe fn build(
    ctx: cl_context,
    dev: cl_device_id,
    binary: &[u8],
    options: &str,
) -> Result<cl_program, String> {
    let p = cl::build_binary(ctx, dev, binary, options)?;
    match kernels_with_arg_info(p) {
        Ok(()) => Ok(p),
        Err(e) => {
            cl::release_program(p);
            Err(e)
        }
    }
}

/// `Ok` when every kernel of the built program `p` gives its argument kinds.
///
/// # Safety
/// `p` is a built program of clprism's own.
unsafe fn kernels_with_arg_info(p: cl_program) -> Result<(), String> {
    let f = cl::rt()
        .map_err(|e| e.to_string())?
        .clGetProgramInfo
        .ok_or("no clGetProgramInfo")?;
    let names =
        crate::registry::device::info_string(|n, v, r| f(p, CL_PROGRAM_KERNEL_NAMES, n, v, r))
            .ok_or("no CL_PROGRAM_KERNEL_NAMES")?;
    for name in names.split(';').filter(|n| !n.is_empty()) {
        let k = cl::create_kernel(p, name).map_err(|e| format!("kernel {name}: {e}"))?;
        let kinds = super::program::arg_kinds(k);
        cl::release_kernel(k);
        kinds.map_err(|e| format!("kernel {name}: no argument info ({e})"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_is_the_name_and_the_driver_version() {
        assert_eq!(model("NVIDIA H200", "580.95"), "NVIDIA H200|580.95");
        assert_ne!(
            model("NVIDIA H200", "580.95"),
            model("NVIDIA H100", "580.95")
        );
    }
}
