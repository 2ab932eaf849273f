//! What the driver tells about a device (`clGetDeviceInfo`), and the occupancy limits that
//! OpenCL does not expose: for NVIDIA devices from the compute capability
//! (`CL_DEVICE_COMPUTE_CAPABILITY_*_NV`) and the CUDA C++ Programming Guide's table
//! "Technical Specifications per Compute Capability"; for CPU drivers from how PoCL runs
//! work-groups (one at a time per worker thread); otherwise marked ESTIMATED.

use super::clx::{device_info, device_string};
use crate::model::{DeviceIdentity, DeviceKind};
use opencl_sys::*;

/// `cl_nv_device_attribute_query`: compute capability, major.
pub const CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV: cl_device_info = 0x4000;
/// `cl_nv_device_attribute_query`: compute capability, minor.
pub const CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV: cl_device_info = 0x4001;
/// `cl_nv_device_attribute_query`: 32-bit registers per block.
pub const CL_DEVICE_REGISTERS_PER_BLOCK_NV: cl_device_info = 0x4002;
/// `cl_nv_device_attribute_query`: warp size.
pub const CL_DEVICE_WARP_SIZE_NV: cl_device_info = 0x4003;

/// A number and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its source, for the profile's `sources`.
    pub source: String,
}

fn s<T>(value: T, source: impl Into<String>) -> Sourced<T> {
    Sourced {
        value,
        source: source.into(),
    }
}

/// Per-SM limits of an NVIDIA compute capability (CUDA C++ Programming Guide, "Technical
/// Specifications per Compute Capability"): (resident warps, resident blocks, shared
/// memory per SM in bytes). `None` for capabilities not in the table.
pub fn nvidia_cc_limits(major: u32, minor: u32) -> Option<(u32, u32, u64)> {
    const K: u64 = 1024;
    Some(match (major, minor) {
        (5, 0) => (64, 32, 64 * K),
        (5, 2) => (64, 32, 96 * K),
        (6, 0) => (64, 32, 64 * K),
        (6, 1) => (64, 32, 96 * K),
        (7, 0) => (64, 32, 96 * K),
        (7, 5) => (32, 16, 64 * K),
        (8, 0) => (64, 32, 164 * K),
        (8, 6) => (48, 16, 100 * K),
        (8, 7) => (48, 16, 164 * K),
        (8, 9) => (48, 24, 100 * K),
        (9, 0) => (64, 32, 228 * K),
        _ => return None,
    })
}

/// Everything the characterizer takes from the driver (or from tables keyed by what the
/// driver reports).
#[derive(Debug, Clone)]
pub struct DeviceFacts {
    /// Identity for the profile's `match`.
    pub identity: DeviceIdentity,
    /// GPU or CPU.
    pub kind: DeviceKind,
    /// CL_DEVICE_MAX_COMPUTE_UNITS.
    pub compute_units: Sourced<u32>,
    /// CL_DEVICE_MAX_CLOCK_FREQUENCY, MHz.
    pub clock_mhz: Sourced<f64>,
    /// Warp width (NVIDIA: CL_DEVICE_WARP_SIZE_NV; else the kernel's
    /// CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, filled in later).
    pub warp_width: Option<Sourced<u32>>,
    /// CL_DEVICE_MAX_WORK_GROUP_SIZE.
    pub max_work_group_size: Sourced<u32>,
    /// CL_DEVICE_LOCAL_MEM_SIZE (per work-group maximum), bytes.
    pub local_mem_per_wg: u64,
    /// Local memory per compute unit, bytes.
    pub local_mem_per_cu: Sourced<u64>,
    /// Resident work-groups per compute unit.
    pub max_wg_per_cu: Sourced<u32>,
    /// Resident warps per compute unit (None: max_work_group_size / warp width, set later).
    pub max_warps_per_cu: Option<Sourced<u32>>,
    /// Registers per compute unit, when the driver tells them.
    pub registers_per_cu: Option<Sourced<u32>>,
    /// Register allocation unit, when known.
    pub register_allocation_unit: Option<Sourced<u32>>,
    /// CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, bytes.
    pub l2_bytes: Sourced<u64>,
    /// CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, bytes.
    pub line_bytes: Sourced<u32>,
    /// Local memory banks and bank width.
    pub banks: Sourced<(u32, u32)>,
    /// CL_DEVICE_MAX_MEM_ALLOC_SIZE, bytes.
    pub max_alloc: u64,
    /// fp64 supported (CL_DEVICE_DOUBLE_FP_CONFIG ≠ 0).
    pub fp64: bool,
}

/// Reads the facts of `dev`.
pub fn read_facts(dev: cl_device_id) -> DeviceFacts {
    let drv = |what: &str, v: String| format!("driver: {what} = {v} (clGetDeviceInfo)");
    let name = device_string(dev, CL_DEVICE_NAME).unwrap_or_default();
    let vendor = device_string(dev, CL_DEVICE_VENDOR).unwrap_or_default();
    let version = device_string(dev, CL_DEVICE_VERSION).unwrap_or_default();
    let driver_version = device_string(dev, CL_DRIVER_VERSION).unwrap_or_default();
    let cus: u32 = device_info::<cl_uint>(dev, CL_DEVICE_MAX_COMPUTE_UNITS).unwrap_or(1);
    let ty: cl_device_type = device_info(dev, CL_DEVICE_TYPE).unwrap_or(0);
    let kind = if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceKind::Cpu
    } else {
        DeviceKind::Gpu
    };
    let clock: u32 = device_info::<cl_uint>(dev, CL_DEVICE_MAX_CLOCK_FREQUENCY).unwrap_or(0);
    let max_wg: usize = device_info(dev, CL_DEVICE_MAX_WORK_GROUP_SIZE).unwrap_or(1);
    let lmem: cl_ulong = device_info(dev, CL_DEVICE_LOCAL_MEM_SIZE).unwrap_or(0);
    let cache: cl_ulong = device_info(dev, CL_DEVICE_GLOBAL_MEM_CACHE_SIZE).unwrap_or(0);
    let line: cl_uint = device_info(dev, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE).unwrap_or(0);
    let max_alloc: cl_ulong = device_info(dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE).unwrap_or(1 << 27);
    let dfp: cl_ulong = device_info(dev, CL_DEVICE_DOUBLE_FP_CONFIG).unwrap_or(0);
    let is_nvidia = vendor.to_lowercase().contains("nvidia");
    let cc = if is_nvidia {
        match (
            device_info::<cl_uint>(dev, CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV),
            device_info::<cl_uint>(dev, CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV),
        ) {
            (Some(a), Some(b)) => Some((a, b)),
            _ => None,
        }
    } else {
        None
    };
    let nv_warp = if is_nvidia {
        device_info::<cl_uint>(dev, CL_DEVICE_WARP_SIZE_NV)
    } else {
        None
    };
    let nv_regs = if is_nvidia {
        device_info::<cl_uint>(dev, CL_DEVICE_REGISTERS_PER_BLOCK_NV)
    } else {
        None
    };
    let cc_lim = cc.and_then(|(a, b)| nvidia_cc_limits(a, b));
    let cc_src = |what: &str| {
        let (a, b) = cc.unwrap_or_default();
        format!(
            "spec: CUDA C++ Programming Guide, Technical Specifications per Compute \
             Capability, {what} for CC {a}.{b} (CC from CL_DEVICE_COMPUTE_CAPABILITY_*_NV)"
        )
    };

    let (max_wg_per_cu, max_warps_per_cu, local_mem_per_cu) = match (kind, cc_lim) {
        (DeviceKind::Cpu, _) => (
            s(
                1,
                "PoCL-style CPU driver: one work-group at a time per worker thread \
                 (compute unit)",
            ),
            None,
            s(
                lmem.max(1),
                drv("CL_DEVICE_LOCAL_MEM_SIZE", lmem.to_string()),
            ),
        ),
        (DeviceKind::Gpu, Some((w, b, sm))) => (
            s(b, cc_src("maximum resident blocks per SM")),
            Some(s(w, cc_src("maximum resident warps per SM"))),
            s(sm.max(lmem), cc_src("maximum shared memory per SM")),
        ),
        (DeviceKind::Gpu, None) => (
            s(
                16,
                "ESTIMATED: unknown GPU family, 16 resident work-groups per compute unit \
                 assumed",
            ),
            None,
            s(
                lmem.max(1),
                format!(
                    "ESTIMATED: = {}",
                    drv("CL_DEVICE_LOCAL_MEM_SIZE", lmem.to_string())
                ),
            ),
        ),
    };
    let banks = match (kind, is_nvidia) {
        (DeviceKind::Cpu, _) => s(
            (1, 4),
            "a CPU has no local memory banks: 1 = not banked; 4-B words",
        ),
        (DeviceKind::Gpu, true) => s(
            (32, 4),
            "spec: CUDA C++ Programming Guide, shared memory: 32 banks of 4 bytes (CC >= 5.0)",
        ),
        (DeviceKind::Gpu, false) => s((32, 4), "ESTIMATED: 32 banks of 4 bytes assumed"),
    };
    DeviceFacts {
        identity: DeviceIdentity {
            name: name.clone(),
            vendor,
            version,
            driver_version,
            max_compute_units: cus,
        },
        kind,
        compute_units: s(cus, drv("CL_DEVICE_MAX_COMPUTE_UNITS", cus.to_string())),
        clock_mhz: s(
            clock.max(1) as f64,
            drv("CL_DEVICE_MAX_CLOCK_FREQUENCY", format!("{clock} MHz")),
        ),
        warp_width: nv_warp.map(|w| s(w, drv("CL_DEVICE_WARP_SIZE_NV", w.to_string()))),
        max_work_group_size: s(
            max_wg.max(1) as u32,
            drv("CL_DEVICE_MAX_WORK_GROUP_SIZE", max_wg.to_string()),
        ),
        local_mem_per_wg: lmem,
        local_mem_per_cu,
        max_wg_per_cu,
        max_warps_per_cu,
        registers_per_cu: nv_regs.map(|r| {
            s(
                r,
                format!(
                    "{} (registers per block; equal to the registers per SM on CC >= 5.0)",
                    drv("CL_DEVICE_REGISTERS_PER_BLOCK_NV", r.to_string())
                ),
            )
        }),
        register_allocation_unit: cc_lim.map(|_| {
            s(
                256,
                "spec: CUDA Occupancy Calculator, register allocation unit 256 per warp (CC >= 5.0)",
            )
        }),
        l2_bytes: s(
            cache,
            format!(
                "{}{}",
                drv("CL_DEVICE_GLOBAL_MEM_CACHE_SIZE", format!("{cache} bytes")),
                if is_nvidia {
                    "; check against the spec sheet's L2 size: drivers differ in which cache \
                     they report here"
                } else {
                    ""
                }
            ),
        ),
        line_bytes: s(
            line.max(32),
            drv("CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE", format!("{line} bytes")),
        ),
        banks,
        max_alloc,
        fp64: dfp != 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cc_table_has_hopper_and_ampere() {
        // Hopper (H100/H200): 2048 threads = 64 warps, 32 blocks, 228 KiB per SM.
        assert_eq!(nvidia_cc_limits(9, 0), Some((64, 32, 228 * 1024)));
        // GA10x: 1536 threads = 48 warps.
        assert_eq!(nvidia_cc_limits(8, 6).map(|t| t.0), Some(48));
        assert_eq!(nvidia_cc_limits(1, 3), None);
    }
}
