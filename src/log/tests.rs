//! Unit tests of the log writer (`super`): the plain writer against serde, the sampler,
//! the record lifecycle.

use super::*;

fn rec() -> LaunchRecord {
    tests_support::record(3)
}

#[test]
fn summary_reads_the_typed_attachments() {
    let stats = crate::emu::stats::WorkGroupStats {
        emulation_ns: 7000,
        ..Default::default()
    };
    let set: crate::model::ProjectionSet = serde_json::from_value(serde_json::json!({
        "devices": [{"device": "a", "t_compute_ns": 1.0, "t_global_ns": 2.0,
            "t_local_ns": 0.0, "bound": "global", "projected_ns": 2000.0, "rank": 1}]
    }))
    .unwrap();
    let proj = schema::Projection {
        set,
        launch_device_profile: Some("a".into()),
        ..Default::default()
    };
    // the first launch emulated, two more reuse its (shared) result
    let mut first = rec();
    first.set_emulation(&schema::Emulation::with_stats(stats.clone(), false));
    first.set_projection(&proj);
    let shared = Arc::new(SharedExtra::new(vec![
        (
            "emulation".into(),
            schema::to_value(&schema::Emulation::with_stats(stats, true)),
        ),
        ("projection".into(), schema::to_value(&proj)),
    ]));
    let mut s = summary::Summary::default();
    s.add(&first);
    for _ in 0..2 {
        let mut r = rec();
        r.shared_extra = Some(shared.clone());
        s.add(&r);
    }
    let k = s.kernel("k").unwrap();
    assert_eq!((k.launches, k.emulations, k.emulation_ns), (3, 1, 7000));
    assert_eq!(k.projected["a"], (6000.0, 3));
    assert_eq!(k.launch_profile.as_deref(), Some("a"));
}

/// The plain writer's line is serde's, whatever the optional fields hold, and its cached
/// fragments follow the record's own kernel and device.
#[test]
fn plain_lines_match_serde() {
    let mut w = PlainWriter::default();
    let dev2 = Arc::new(DeviceRef {
        index: "1:0".into(),
        name: "a \"quoted\" \\ name é\n".into(),
        kind: "gpu".into(),
        ..Default::default()
    });
    for i in 0..12u64 {
        let mut r = rec();
        r.seq = i;
        r.time_ns = u64::MAX - i;
        r.work_dim = 1 + (i % 3) as u32;
        r.global = Dims::of(&[1 << 20, 3, 7], r.work_dim);
        r.local = (i % 2 == 0).then(|| Dims::of(&[64, 1, 1], r.work_dim));
        r.offset = (i % 3 == 0).then(|| Dims::of(&[0, 5, 9], r.work_dim));
        r.status = ["complete", "untimed", "enqueue_failed", "no_profiling"][i as usize % 4];
        r.error_code = (i % 4 == 2).then_some(-54);
        r.device_ns = (i % 2 == 1).then_some(i * 1000);
        r.queued_ns = (i % 4 == 1).then_some(17);
        r.timing_p = (i % 3 == 1).then_some(1.0 / (i + 2) as f64);
        if i >= 6 {
            r.device = dev2.clone();
            r.kernel = format!("k\"{i}").into();
        }
        let mut buf = Vec::new();
        w.write(&r, &mut buf);
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            record_line(&r),
            "record {i}"
        );
    }
}

/// A forwarded launch's typed schedule is written from cached fragments as serde writes
/// the record whose `extra` holds `Schedule::forwarded` (balance mode's cheap path), for
/// every kind of reason, a reason seen again under another `Arc` included.
#[test]
fn forwarded_lines_match_serde() {
    let mut w = PlainWriter::default();
    let reasons = [
        "kept whole on the app's device: one work-group cannot be split",
        "kept whole on the app's device: 3.4 us there, too short for a split to pay (under 100 us); the balance devices are not opened",
        "program created from IL: NDRange queries cannot be rewritten",
        "every balance device is busy with abandoned work",
        "an \"odd\" reason \\ with µs and a\nnewline",
        "",
    ];
    for (i, text) in reasons.iter().chain(reasons.iter()).enumerate() {
        let mut r = rec();
        r.seq = i as u64;
        r.mode = "balance";
        r.timing_p = (i % 2 == 1).then_some(0.25);
        let reason = if i < reasons.len() {
            ReasonText::from(*text)
        } else {
            let t = text.to_string();
            ReasonText::deferred(move || t.clone())
        };
        r.forwarded = Some(Forwarded {
            reason,
            decision_ns: [0, 7, u64::MAX][i % 3],
            devices_ready_ms: [None, Some(385.398), Some(0.0), Some(1e-3)][i % 4],
            launch_thread: i % 5 == 1,
        });
        let mut buf = Vec::new();
        w.write(&r, &mut buf);
        let serde_line = record_line(&r.with_schedule_in_extra());
        assert_eq!(String::from_utf8(buf).unwrap(), serde_line, "record {i}");
        assert_eq!(r.schedule(), r.with_schedule_in_extra().schedule());
        assert!(serde_line.contains("\"schedule\":{"), "{serde_line}");
    }
    // one fragment per reason text, not per Arc; record 1's shared reason came with
    // `launch_thread` and is written without a fragment
    assert_eq!(w.reasons.len(), reasons.len() - 1);
}

#[test]
fn dims_hold_the_used_dimensions() {
    let d = Dims::of(&[4, 5, 6], 2);
    assert_eq!(&*d, &[4, 5]);
    assert_eq!(serde_json::to_string(&d).unwrap(), "[4,5]");
    assert_eq!(Dims::from(vec![1, 2, 3, 4]), Dims::of(&[1, 2, 3], 3));
}

#[test]
fn shared_extra_is_written_like_extra() {
    let emu = schema::Emulation {
        status: Some(schema::EmulationStatus::Reused),
        reused: true,
        ..Default::default()
    };
    let entries = vec![
        ("emulation".to_string(), schema::to_value(&emu)),
        (
            "projection".to_string(),
            schema::to_value(&schema::Projection::default()),
        ),
    ];
    let mut a = rec();
    a.extra.extend(entries.clone());
    let mut b = rec();
    b.shared_extra = Some(Arc::new(SharedExtra::new(entries)));
    let va: serde_json::Value = serde_json::from_str(&record_line(&a)).unwrap();
    let vb: serde_json::Value = serde_json::from_str(&record_line(&b)).unwrap();
    assert_eq!(va, vb);
    assert_eq!(b.emulation().unwrap(), emu);
    assert!(b.schedule().is_none());
    // no shared entries: the plain serialization
    let c = rec();
    assert_eq!(record_line(&c), serde_json::to_string(&c).unwrap());
}
