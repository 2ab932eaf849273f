//! Tests of the record schema (`log::schema`).
use super::*;

/// A record with every field of the writers set (both schedule shapes are covered by
/// `forwarded` below).
fn full() -> Launch {
    let chunk = Chunk {
        device: 1,
        first_wg: 2,
        count: 3,
        work_groups: Some(6),
        enqueue_ns: Some(10),
        failed: Some(-5),
        abandoned: true,
        end_ns: Some(30),
        device_ns: Some(15),
        start_ns: Some(15),
    };
    let set: ProjectionSet = serde_json::from_value(serde_json::json!({
        "options": {}, "skipped": [{"device": "x", "reason": "too big"}],
        "devices": [{"device": "a", "t_compute_ns": 1.0, "t_global_ns": 2.0,
            "t_local_ns": 0.5, "t_latency_ns": 1.5, "bound": "global", "projected_ns": 2.0,
            "rank": 1, "occupancy": 0.5, "limiter": "warps", "active_work_groups_per_cu": 4,
            "waves": 2}]
    }))
    .unwrap();
    Launch {
        schema: SCHEMA_VERSION.into(),
        seq: 1,
        time_ns: 2,
        pid: 3,
        thread: 4,
        mode: Mode::Balance,
        kernel: "k".into(),
        program: "0123456789abcdef".into(),
        work_dim: 1,
        global: vec![64],
        local: Some(vec![16]),
        offset: Some(vec![0]),
        device: Device {
            index: "0:0".into(),
            name: "d".into(),
            kind: "cpu".into(),
            ..Default::default()
        },
        status: LaunchStatus::Complete,
        error_code: Some(-5),
        device_ns: Some(7),
        queued_ns: Some(8),
        timing_p: Some(0.25),
        emulation: Some(Emulation {
            key: Some(3),
            reason: Some("r".into()),
            local_assumed: Some(vec![16]),
            footprint_sector: Some(32),
            snapshot_bytes: Some(64),
            snapshot_bytes_read: Some(32),
            snapshot_deferred_bytes: Some(16),
            snapshot_later_bytes: Some(8),
            snapshot_lost_bytes: Some(4),
            snapshot_wait_ns: Some(9),
            snapshot_held_ns: Some(11),
            compile_path: Some(CompilePath::O2Lowered),
            reused_from: Some(2),
            start_unix_ns: Some(5),
            launch_shape: Some(LaunchShape::default()),
            emulation_ns: Some(1),
            budget_exhausted: Some(false),
            error: Some("e".into()),
            ..Emulation::with_stats(WorkGroupStats::default(), false)
        }),
        projection: Some(Projection {
            set,
            launch_shape: Some(LaunchShape::default()),
            launch_device_profile: Some("a".into()),
            error: Some("e".into()),
            best: Some("a".into()),
            key: Some(3),
            launch_device_ns: Some(2.0),
            launch_device_rank: Some(1),
        }),
        schedule: Some(Schedule {
            scheduler: Some("boyer".into()),
            warm_start: Some(false),
            split_decision: Some(Some(SplitDecisionLog {
                decision: SplitDecision {
                    split: true,
                    reason: "r".into(),
                    est_home_ns: Some(1.0),
                    est_split_ns: None,
                    est_transfer_ns: Some(2.0),
                },
                upload_bytes: Some(3),
                host_rate_measured: Some(true),
            })),
            devices_excluded: Some(vec![ExcludedDevice {
                index: "0:2".into(),
                reason: "r".into(),
            }]),
            devices: vec![ScheduleDevice {
                index: "0:0".into(),
                name: "d".into(),
            }],
            split_dim: Some(0),
            work_groups: Some(4),
            wgs_per_unit: Some(1),
            wave_work_groups: Some(vec![4]),
            registers_per_work_item: Some(vec![Some(8), None]),
            chunks: vec![chunk],
            share: Some(vec![1.0]),
            idle_tail_ns: Some(0),
            makespan_ns: Some(30),
            merge: Some(Merge::Footprint),
            merged_bytes: Some(64),
            fetched_bytes: Some(16),
            launch_thread: Some(true),
            issued_ahead: Some(true),
            pushed_bytes: Some(128),
            issued_ns: Some(40),
            resident_bytes: Some(32),
            early_read_chunks: Some(0),
            pinned_staging_bytes: Some(0),
            footprint: Some(Some(FootprintLog {
                derived_ms: Some(1.5),
                sampled_groups: Some(2),
                skipped_loops: Some(0),
                from_cache: Some(false),
                reason: Some("r".into()),
            })),
            app_device_direct: Some(true),
            phases: Some(vec![Phase {
                name: "build".into(),
                start_ns: 0,
                end_ns: 5,
            }]),
            local_chosen: Some(false),
            fallback: None,
            best: Some(Some(BestChoice {
                by: BestBy::Projection,
                device: 0,
                projected_ns: Some(vec![Some(1.0), None]),
                profiles: vec![Some("a".into()), None],
                measured_ns_per_wg: vec![None, Some(2.0)],
                cached: false,
                choose_ms: 0.5,
                inputs: Some("zero-filled".into()),
                reason: Some("r".into()),
            })),
            verify: Some(Verify {
                differing_bytes: Some(0),
                error: Some("e".into()),
            }),
            wall_ns: Some(40),
            started_ns: Some(12),
            one_device_reason: Some("r".into()),
            devices_ready_ms: Some(1.25),
            decision_ns: Some(3),
            probe: Some(ProbeLog {
                work_groups: 3,
                of_work_groups: 40,
                device_ns: 1_500,
            }),
            t0_unix_ns: Some(9),
            transfers: Some(vec![Transfer {
                device: Some(0),
                kind: Some("upload".into()),
                bytes: Some(64),
                start_ns: Some(1),
                end_ns: Some(2),
            }]),
        }),
    }
}

#[test]
fn full_record_round_trips_and_matches_the_table() {
    let line = serde_json::to_string(&full()).unwrap();
    round_trip(&line).unwrap();
    let back: Launch = serde_json::from_str(&line).unwrap();
    assert_eq!(back, full());
    let mut paths = key_paths(&serde_json::from_str(&line).unwrap());
    // the definition line's top-level fields
    let def = EmulationDef {
        schema: SCHEMA_VERSION.into(),
        record: RECORD_EMULATION.into(),
        key: 3,
        ..Default::default()
    };
    let def_line = serde_json::to_string(&def).unwrap();
    round_trip(&def_line).unwrap();
    paths.extend(key_paths(&serde_json::from_str(&def_line).unwrap()));
    // the device definition line's
    let dev = DeviceDef::new(1, &full().device, &Default::default());
    let dev_line = serde_json::to_string(&dev).unwrap();
    round_trip(&dev_line).unwrap();
    paths.extend(key_paths(&serde_json::from_str(&dev_line).unwrap()));
    let table: std::collections::BTreeSet<String> =
        FIELDS.iter().map(|f| f.path.to_string()).collect();
    // the table's intermediate rows (`schedule.footprint`, ...) describe objects
    let missing: Vec<_> = paths.iter().filter(|p| !documented(p)).collect();
    assert!(missing.is_empty(), "fields not in FIELDS: {missing:?}");
    let stale: Vec<_> = table
        .iter()
        .filter(|t| !paths.contains(*t) && !paths.iter().any(|p| p.starts_with(&format!("{t}."))))
        .collect();
    assert!(stale.is_empty(), "FIELDS rows the types lack: {stale:?}");
}

#[test]
fn forwarded_schedule_is_compact() {
    let s = Schedule::forwarded(
        "kept whole on the app's device: one work-group cannot be split",
        12,
    );
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"merge": "none", "fallback": "kept whole on the app's device: one work-group cannot be split",
            "decision_ns": 12, "devices": [], "chunks": []})
    );
    assert!(s.fallback.as_ref().unwrap().is_kept_whole());
    // a balanced-path schedule writes `fallback: null` and keeps null objects null
    let v = serde_json::json!({"devices": [], "chunks": [], "fallback": null,
        "split_decision": null, "footprint": null, "best": null});
    round_trip_value::<Schedule>(&v).unwrap();
    round_trip_value::<Schedule>(&serde_json::to_value(&s).unwrap()).unwrap();
}

#[test]
fn chunk_helpers_write_what_exec_wrote() {
    let mut c = Chunk::enqueued(1, 8, 4, 2, 100);
    assert_eq!(
        to_value(&c),
        serde_json::json!({"device": 1, "first_wg": 8, "count": 4, "work_groups": 8,
            "enqueue_ns": 100})
    );
    c.completed(500, Some(300));
    assert_eq!(
        (c.end_ns, c.device_ns, c.start_ns, c.lost()),
        (Some(500), Some(300), Some(200), false)
    );
    c.abandoned = true;
    assert_eq!(to_value(&c)["abandoned"], true);
    assert!(c.lost());
    assert_eq!(
        to_value(&Verify::differing(0)),
        serde_json::json!({"differing_bytes": 0})
    );
}

#[test]
fn closed_sets_keep_unknown_values() {
    for s in LaunchStatus::KNOWN {
        assert_eq!(LaunchStatus::parse(s).as_str(), *s);
        assert!(!matches!(LaunchStatus::parse(s), LaunchStatus::Other(_)));
    }
    assert_eq!(
        LaunchStatus::parse("weird"),
        LaunchStatus::Other("weird".into())
    );
    for t in [
        "global size is not a multiple of the local size",
        "kept whole on the app's device: it is the only balance device",
        "kernel uses global atomics",
    ] {
        let r: FallbackReason = serde_json::from_value(Value::String(t.into())).unwrap();
        assert_eq!(serde_json::to_value(&r).unwrap(), Value::String(t.into()));
    }
    assert_eq!(
        FallbackReason::parse("every balance device is busy with abandoned work"),
        FallbackReason::AllDevicesBusy
    );
}

#[test]
fn lenient_reading_drops_unreadable_parts() {
    let (l, bad) = parse_lenient(
        r#"{"kernel":"k","projection":{"devices":"oops"},"schedule":{"chunks":[{"device":0,"first_wg":0,"count":4}]}}"#,
    )
    .unwrap()
    .unwrap();
    assert_eq!(bad, 1);
    assert!(l.projection.is_none());
    assert_eq!(l.schedule.unwrap().chunks[0].count, 4);
    assert_eq!(l.mode, Mode::Log);
    assert!(parse_lenient(r#"{"schema":"other/2"}"#).unwrap().is_none());
}

/// `docs/log-schema.md` is what [`markdown`] generates (`CLPRISM_BLESS=1` rewrites it).
#[test]
fn docs_table_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/log-schema.md");
    let want = markdown();
    if std::env::var_os("CLPRISM_BLESS").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "docs/log-schema.md is out of date: run `clprism schema --markdown > docs/log-schema.md` \
         or `CLPRISM_BLESS=1 cargo test --lib log::schema`"
    );
}
