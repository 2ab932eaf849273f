//! Occupancy of a kernel on a device (Quintanilla §2.3, eq. 2.1–2.4; Panwar §IV-A
//! footnote 1: occupancy = active warps / maximum active warps per compute unit).
//!
//! Active work-groups per compute unit = min over the resources (work-group slots, warp
//! slots, registers, local memory) of how many work-groups that resource can hold.

use super::profile::Profile;
use serde::{Deserialize, Serialize};
use std::fmt;

/// What one work-group of the kernel needs (from the launch and the driver's kernel info).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelResources {
    /// Work-items per work-group (product of the local size).
    pub work_group_size: u64,
    /// Local memory per work-group, bytes: CL_KERNEL_LOCAL_MEM_SIZE (static) plus the
    /// sizes of `__local` kernel arguments (dynamic).
    pub local_mem_bytes: u64,
    /// CL_KERNEL_PRIVATE_MEM_SIZE per work-item, bytes, when the driver tells it. Used as a
    /// lower-bound register estimate (`ceil(bytes / 4)` 32-bit registers) only when
    /// `registers_per_work_item` is unknown.
    pub private_mem_bytes: Option<u64>,
    /// 32-bit registers per work-item when the driver tells them (e.g. NVIDIA build log).
    pub registers_per_work_item: Option<u32>,
}

/// The resource that bounds the active work-groups per compute unit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// `limits.max_work_groups_per_cu` (the default, for records that do not say).
    #[default]
    WorkGroupSlots,
    /// `limits.max_warps_per_cu`.
    Warps,
    /// `limits.registers_per_cu`.
    Registers,
    /// `limits.local_mem_per_cu_bytes`.
    LocalMemory,
}

impl fmt::Display for Limiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Limiter::WorkGroupSlots => "work_group_slots",
            Limiter::Warps => "warps",
            Limiter::Registers => "registers",
            Limiter::LocalMemory => "local_memory",
        })
    }
}

/// Occupancy of one kernel on one device.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Occupancy {
    /// Warps per work-group, `ceil(work_group_size / warp_width)`.
    pub warps_per_work_group: u64,
    /// Resident work-groups per compute unit.
    pub active_work_groups_per_cu: u64,
    /// Resident warps per compute unit.
    pub active_warps_per_cu: u64,
    /// `active_warps_per_cu / limits.max_warps_per_cu`, in (0, 1].
    pub fraction: f64,
    /// The binding resource.
    pub limiter: Limiter,
}

/// Why a kernel cannot run on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum OccupancyError {
    /// Work-group size 0.
    EmptyWorkGroup,
    /// Work-group larger than `limits.max_work_group_size`.
    WorkGroupTooLarge {
        /// Requested work-items.
        size: u64,
        /// Device maximum.
        max: u32,
    },
    /// One work-group needs more of a resource than one compute unit has.
    DoesNotFit {
        /// The resource.
        limiter: Limiter,
        /// Needed by one work-group (warps, registers or bytes).
        need: u64,
        /// Available per compute unit.
        have: u64,
    },
}

impl fmt::Display for OccupancyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OccupancyError::EmptyWorkGroup => write!(f, "work-group size is 0"),
            OccupancyError::WorkGroupTooLarge { size, max } => {
                write!(
                    f,
                    "work-group of {size} work-items exceeds the device maximum {max}"
                )
            }
            OccupancyError::DoesNotFit {
                limiter,
                need,
                have,
            } => write!(
                f,
                "one work-group needs {need} {limiter} but a compute unit has {have}"
            ),
        }
    }
}

impl std::error::Error for OccupancyError {}

fn round_up(x: u64, unit: u64) -> u64 {
    x.div_ceil(unit) * unit
}

/// Occupancy of a kernel with resources `k` on the device of `profile`.
///
/// Registers per work-group = `round_up(regs × warp_width, register_allocation_unit) ×
/// warps_per_work_group` (allocation per warp, as NVIDIA's occupancy calculator does);
/// local memory per work-group is rounded up to `local_mem_allocation_unit`. On ties the
/// reported limiter is the first of registers, local memory, warps, work-group slots.
///
/// Errors: [`OccupancyError`] when the work-group is empty, too large, or one work-group
/// does not fit in a compute unit.
pub fn occupancy(profile: &Profile, k: &KernelResources) -> Result<Occupancy, OccupancyError> {
    let lim = &profile.limits;
    if k.work_group_size == 0 {
        return Err(OccupancyError::EmptyWorkGroup);
    }
    if k.work_group_size > lim.max_work_group_size as u64 {
        return Err(OccupancyError::WorkGroupTooLarge {
            size: k.work_group_size,
            max: lim.max_work_group_size,
        });
    }
    let ww = profile.warp_width.max(1) as u64;
    let warps = k.work_group_size.div_ceil(ww);
    let max_warps = lim.max_warps_per_cu as u64;

    let mut cands: Vec<(Limiter, u64, u64, u64)> = Vec::with_capacity(4); // (who, wgs, need, have)

    let regs = k
        .registers_per_work_item
        .map(|r| r as u64)
        .or(k.private_mem_bytes.map(|b| b.div_ceil(4)));
    if let (Some(r), Some(per_cu)) = (regs, lim.registers_per_cu) {
        if r > 0 {
            let per_warp = round_up(r * ww, profile.register_allocation_unit() as u64);
            let per_wg = per_warp * warps;
            cands.push((
                Limiter::Registers,
                per_cu as u64 / per_wg,
                per_wg,
                per_cu as u64,
            ));
        }
    }
    if k.local_mem_bytes > 0 {
        let per_wg = round_up(k.local_mem_bytes, profile.local_mem_allocation_unit());
        cands.push((
            Limiter::LocalMemory,
            lim.local_mem_per_cu_bytes / per_wg,
            per_wg,
            lim.local_mem_per_cu_bytes,
        ));
    }
    cands.push((Limiter::Warps, max_warps / warps, warps, max_warps));
    cands.push((
        Limiter::WorkGroupSlots,
        lim.max_work_groups_per_cu as u64,
        1,
        lim.max_work_groups_per_cu as u64,
    ));

    let mut best = cands[0];
    for c in &cands[1..] {
        if c.1 < best.1 {
            best = *c;
        }
    }
    let (limiter, active, need, have) = best;
    if active == 0 {
        return Err(OccupancyError::DoesNotFit {
            limiter,
            need,
            have,
        });
    }
    let active_warps = active * warps;
    Ok(Occupancy {
        warps_per_work_group: warps,
        active_work_groups_per_cu: active,
        active_warps_per_cu: active_warps,
        fraction: (active_warps as f64 / max_warps as f64).min(1.0),
        limiter,
    })
}
