//! Occupancy limited by each factor (Quintanilla eq. 2.1–2.4), on the H100 SXM profile
//! (CC 9.0 limits: 32 work-groups, 64 warps, 65536 registers allocated per warp in units
//! of 256, 233472 bytes of local memory in units of 128, work-groups up to 1024).

use std::path::Path;

use OpenCL::model::occupancy::{occupancy, KernelResources, Limiter, OccupancyError};
use OpenCL::model::profile::{load_file, Profile};

fn h100() -> Profile {
    load_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/h100-sxm.json")).unwrap()
}

fn wg(size: u64) -> KernelResources {
    KernelResources {
        work_group_size: size,
        ..Default::default()
    }
}

#[test]
fn limited_by_work_group_slots() {
    let p = h100();
    // 32 work-items = 1 warp; warps would allow 64 work-groups, slots allow 32.
    let o = occupancy(&p, &wg(32)).unwrap();
    assert_eq!(o.limiter, Limiter::WorkGroupSlots);
    assert_eq!(o.active_work_groups_per_cu, 32);
    assert_eq!(o.active_warps_per_cu, 32);
    assert!((o.fraction - 0.5).abs() < 1e-12);
}

#[test]
fn limited_by_warps() {
    let p = h100();
    // 1024 work-items = 32 warps → 64 / 32 = 2 work-groups, full occupancy.
    let o = occupancy(&p, &wg(1024)).unwrap();
    assert_eq!(o.limiter, Limiter::Warps);
    assert_eq!(o.active_work_groups_per_cu, 2);
    assert_eq!(o.fraction, 1.0);
    // A partial warp still takes a warp slot: 33 work-items = 2 warps.
    let o = occupancy(&p, &wg(33)).unwrap();
    assert_eq!(o.warps_per_work_group, 2);
}

#[test]
fn limited_by_registers() {
    let p = h100();
    // 128 registers × 32 lanes = 4096 per warp (multiple of 256); 8 warps → 32768 per
    // work-group → 65536 / 32768 = 2 work-groups = 16 warps = 0.25.
    let k = KernelResources {
        registers_per_work_item: Some(128),
        ..wg(256)
    };
    let o = occupancy(&p, &k).unwrap();
    assert_eq!(o.limiter, Limiter::Registers);
    assert_eq!(o.active_work_groups_per_cu, 2);
    assert!((o.fraction - 0.25).abs() < 1e-12);
    // Without a register count, private memory (512 B = 128 registers) is the estimate.
    let k = KernelResources {
        private_mem_bytes: Some(512),
        ..wg(256)
    };
    assert_eq!(occupancy(&p, &k).unwrap(), o);
    // Allocation unit: 33 registers × 32 = 1056 → 1280 per warp; 8 warps = 10240 per
    // work-group → 65536 / 10240 = 6 work-groups (48 warps) rather than 7.
    let k = KernelResources {
        registers_per_work_item: Some(33),
        ..wg(256)
    };
    let o = occupancy(&p, &k).unwrap();
    assert_eq!(o.limiter, Limiter::Registers);
    assert_eq!(o.active_work_groups_per_cu, 6);
}

#[test]
fn limited_by_local_memory() {
    let p = h100();
    // 48 KiB per work-group → 233472 / 49152 = 4 work-groups of 2 warps = 8 / 64.
    let k = KernelResources {
        local_mem_bytes: 49152,
        ..wg(64)
    };
    let o = occupancy(&p, &k).unwrap();
    assert_eq!(o.limiter, Limiter::LocalMemory);
    assert_eq!(o.active_work_groups_per_cu, 4);
    assert!((o.fraction - 0.125).abs() < 1e-12);
    // Rounding to the 128-byte allocation unit: 100 bytes count as 128.
    let mut small = p.clone();
    small.limits.local_mem_per_cu_bytes = 256;
    let k = KernelResources {
        local_mem_bytes: 100,
        ..wg(32)
    };
    let o = occupancy(&small, &k).unwrap();
    assert_eq!(o.active_work_groups_per_cu, 2);
    assert_eq!(o.limiter, Limiter::LocalMemory);
}

#[test]
fn kernels_that_cannot_run_are_errors() {
    let p = h100();
    assert_eq!(occupancy(&p, &wg(0)), Err(OccupancyError::EmptyWorkGroup));
    assert_eq!(
        occupancy(&p, &wg(2048)),
        Err(OccupancyError::WorkGroupTooLarge {
            size: 2048,
            max: 1024
        })
    );
    let k = KernelResources {
        local_mem_bytes: 300_000,
        ..wg(64)
    };
    assert!(matches!(
        occupancy(&p, &k),
        Err(OccupancyError::DoesNotFit {
            limiter: Limiter::LocalMemory,
            ..
        })
    ));
    // 255 registers × 32 = 8160 → 8192 per warp × 32 warps = 262144 > 65536.
    let k = KernelResources {
        registers_per_work_item: Some(255),
        ..wg(1024)
    };
    assert_eq!(
        occupancy(&p, &k),
        Err(OccupancyError::DoesNotFit {
            limiter: Limiter::Registers,
            need: 262144,
            have: 65536
        })
    );
}

#[test]
fn cpu_profile_runs_one_work_group_per_core() {
    let p = load_file(&Path::new(env!("CARGO_MANIFEST_DIR")).join("profiles/pocl-pthread.json"))
        .unwrap();
    let o = occupancy(&p, &wg(256)).unwrap();
    assert_eq!(o.active_work_groups_per_cu, 1);
    assert_eq!(o.limiter, Limiter::WorkGroupSlots);
    // Registers are not a CPU limit.
    let k = KernelResources {
        registers_per_work_item: Some(10_000),
        ..wg(4096)
    };
    assert!(occupancy(&p, &k).is_ok());
}

#[test]
fn occupancy_never_increases_with_more_resources() {
    let p = h100();
    for size in [32u64, 64, 96, 128, 256, 512, 1024] {
        let mut prev = f64::INFINITY;
        for local in [0u64, 1024, 8192, 32768, 65536, 131072] {
            let k = KernelResources {
                local_mem_bytes: local,
                registers_per_work_item: Some(32),
                ..wg(size)
            };
            let o = occupancy(&p, &k).unwrap();
            assert!(o.fraction <= prev, "size {size} local {local}");
            assert!(o.fraction > 0.0 && o.fraction <= 1.0);
            prev = o.fraction;
        }
    }
}
