//! The instruction side of the model (`src/model/project.rs`): `issue_partitions` (a compute
//! unit issues from as many warp schedulers as it has warps, at most `schedulers_per_cu`)
//! and `prune_other` (copies, composites and shuffles cost no issue slot; Wang §III-A.1).

#[path = "common/model.rs"]
mod model_common;
use model_common::{close, launch, profile};

use OpenCL::emu::stats::{WarpLaneCount, WorkGroupStats};
use OpenCL::model::project::{project, Bound, ModelOptions};

/// A compute-bound work-group of `size` work-items (no memory): `fp32` lane operations per
/// work-item, and as many `other` ones (a float4 body's component extractions).
fn compute_only(size: u64, fp32: u64) -> WorkGroupStats {
    let warps = size.div_ceil(32);
    let mut s = WorkGroupStats {
        warp_width: 32,
        work_items: size,
        ..Default::default()
    };
    s.instructions.fp32 = WarpLaneCount {
        warp: warps * fp32,
        lane: size * fp32,
    };
    s.instructions.other = WarpLaneCount {
        warp: warps * fp32,
        lane: size * fp32,
    };
    s
}

fn opts(spec: &str) -> ModelOptions {
    ModelOptions::parse_spec(spec).unwrap()
}

#[test]
fn schedulers_without_a_warp_issue_nothing() {
    let h100 = profile("h100-sxm.json");
    assert_eq!(h100.schedulers_per_cu, Some(4));
    let base = opts("recommended,-issue_partitions");
    let on = opts("recommended,+issue_partitions");
    // nbody_step's shape: 32 work-groups of 64 work-items on 132 SMs, one work-group and
    // two warps per busy SM: two of its four schedulers issue, the time doubles.
    let s = compute_only(64, 200_000);
    let a = project(&s, &launch(32, 64), &h100, &base).unwrap();
    let b = project(&s, &launch(32, 64), &h100, &on).unwrap();
    assert_eq!(a.bound, Bound::Compute);
    assert!(close(b.t_compute_ns, 2.0 * a.t_compute_ns), "{a:?} {b:?}");
    // One warp per SM: a quarter of the SM issues.
    let s1 = compute_only(32, 200_000);
    let a = project(&s1, &launch(132, 32), &h100, &base).unwrap();
    let b = project(&s1, &launch(132, 32), &h100, &on).unwrap();
    assert!(close(b.t_compute_ns, 4.0 * a.t_compute_ns));
    // Four warps per SM or more (here 256 work-items, 8 warps): nothing changes, and a
    // profile without `schedulers_per_cu` sets no limit.
    let s8 = compute_only(256, 20_000);
    let a = project(&s8, &launch(132, 256), &h100, &base).unwrap();
    let b = project(&s8, &launch(132, 256), &h100, &on).unwrap();
    assert!(close(a.t_compute_ns, b.t_compute_ns));
    let mut none = h100.clone();
    none.schedulers_per_cu = None;
    none.sources.remove("schedulers_per_cu");
    none.validate().unwrap();
    let a = project(&s, &launch(32, 64), &none, &base).unwrap();
    let b = project(&s, &launch(32, 64), &none, &on).unwrap();
    assert!(close(a.t_compute_ns, b.t_compute_ns));
}

#[test]
fn copies_and_composites_cost_no_issue_slot() {
    let h100 = profile("h100-sxm.json");
    let s = compute_only(256, 20_000);
    let l = launch(1056, 256);
    let a = project(&s, &l, &h100, &opts("recommended,-prune_other")).unwrap();
    let b = project(&s, &l, &h100, &opts("recommended,+prune_other")).unwrap();
    // fp32 and int issue at about the same rate on the H100 (28,130 and 28,620 lanes/ns):
    // without the `other` half the time is about halved, and is the fp32 part exactly.
    let tp = &h100.instruction_throughput;
    let fp32_only = 1056.0 * 256.0 * 20_000.0 / tp.fp32;
    assert!(
        close(b.t_compute_ns, fp32_only),
        "{} {fp32_only}",
        b.t_compute_ns
    );
    assert!(close(
        a.t_compute_ns,
        fp32_only + 1056.0 * 256.0 * 20_000.0 / tp.other
    ));
}
