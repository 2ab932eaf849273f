//! `queued_floor` (`src/model/project.rs`): a launch that waited behind other work on its
//! GPU (its record's `START − SUBMIT` over `QUEUED_BEHIND_NS`) costs the profile's
//! `kernel_floor_queued_ns` instead of the idle floor; the queue state is read from GPU
//! records only.

#[path = "common/model.rs"]
mod model_common;
use model_common::{close, launch, profile};

use OpenCL::accuracy::records::parse_line;
use OpenCL::emu::stats::{WarpLaneCount, WorkGroupStats};
use OpenCL::model::memory::{kernel_floor, kernel_floor_queued, QUEUED_BEHIND_NS};
use OpenCL::model::project::{project, Bound, ModelOptions};
use OpenCL::model::LaunchShape;

/// A work-group of 64 work-items with a few fp32 operations: a body far below the floor.
fn tiny() -> WorkGroupStats {
    let mut s = WorkGroupStats {
        warp_width: 32,
        work_items: 64,
        ..Default::default()
    };
    s.instructions.fp32 = WarpLaneCount {
        warp: 2 * 16,
        lane: 64 * 16,
    };
    s
}

fn opts(spec: &str) -> ModelOptions {
    ModelOptions::parse_spec(spec).unwrap()
}

#[test]
fn a_queued_launch_costs_the_queued_floor() {
    let off = opts("recommended,-queued_floor");
    let on = opts("recommended,+queued_floor");
    for name in ["h100-sxm.json", "h200.json"] {
        let p = profile(name);
        let q = p
            .kernel_floor_queued_ns
            .expect("the H100/H200 profiles have it");
        assert!(q > 3000.0 && q < kernel_floor(&p), "{name}: {q}");
        let idle = launch(4, 64);
        let queued = LaunchShape {
            queued: true,
            ..idle
        };
        let s = tiny();
        let base = project(&s, &idle, &p, &off).unwrap();
        // without the option the queue state changes nothing
        assert_eq!(project(&s, &queued, &p, &off).unwrap(), base);
        // an idle launch keeps the idle floor
        assert_eq!(project(&s, &idle, &p, &on).unwrap(), base);
        // a queued one is shorter by the difference of the two floors (additive floor)
        let b = project(&s, &queued, &p, &on).unwrap();
        assert_eq!(b.bound, Bound::Launch);
        assert!(
            close(base.projected_ns - b.projected_ns, kernel_floor(&p) - q),
            "{name}: {base:?} {b:?}"
        );
        // a profile without the figure: the idle floor
        let mut none = p.clone();
        none.kernel_floor_queued_ns = None;
        assert_eq!(kernel_floor_queued(&none), kernel_floor(&none));
        assert_eq!(
            project(&s, &queued, &none, &on).unwrap().projected_ns,
            project(&s, &idle, &none, &off).unwrap().projected_ns
        );
    }
}

fn record(kind: &str, queued_ns: u64) -> String {
    format!(
        r#"{{"schema":"clprism.launch/1","kernel":"k","program":"p","global":[64],
            "local":[16],"device":{{"index":"0:0","name":"d","type":"{kind}"}},
            "status":"complete","device_ns":5000,"queued_ns":{queued_ns}}}"#
    )
}

#[test]
fn the_queue_state_is_a_gpu_records_start_minus_submit() {
    let queued = |kind: &str, q: u64| {
        parse_line(&record(kind, q))
            .unwrap()
            .unwrap()
            .projection_shape()
            .unwrap()
            .0
            .queued
    };
    // an idle H100/H200: START − SUBMIT of about 4 µs
    assert!(!queued("gpu", 4_100));
    assert!(!queued("gpu", QUEUED_BEHIND_NS));
    // behind earlier work (fwt_stage's launches: 100-580 µs)
    assert!(queued("gpu", 234_000));
    // PoCL's START − SUBMIT is no GPU's queue state (7.5-20 µs for launches the app
    // waits for): unknown, the idle floor
    assert!(!queued("cpu", 234_000));
}
