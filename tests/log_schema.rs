//! The typed log schema (`log::schema`, issue 20 item 2) cannot drift from the writers: real
//! example apps run under LD_PRELOAD in log, project and balance modes (the balanced path,
//! forwarded launches, `CLPRISM_SPLIT=auto`'s decision, the `best` scheduler,
//! `CLPRISM_VERIFY`), and every record they write deserializes into `log::schema::Launch`
//! and serializes back to the same JSON value (no unknown field, no other type or nesting),
//! and every key path it holds is a row of the schema table (`docs/log-schema.md`).

mod common;
use common::*;
use OpenCL::log::schema;

/// Runs `prog args` under `mode` with `env`; returns the log's lines.
fn log_lines(
    test: &str,
    prog: &str,
    args: &[&str],
    mode: &'static str,
    env: &[(&str, &str)],
) -> Vec<String> {
    let d = scratch(test);
    let log = d.join("l.jsonl");
    let mut e = vec![
        ("CLPRISM_LOG", log.to_str().unwrap()),
        ("CLPRISM_SUMMARY", "off"),
    ];
    e.extend_from_slice(env);
    let out = run(&examples().join(prog), args, Via::Preload(mode), &e);
    assert_ok(&out, &format!("{prog} in {mode} mode"));
    let text = std::fs::read_to_string(&log).unwrap();
    let lines: Vec<String> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(String::from)
        .collect();
    assert!(!lines.is_empty(), "{test}: empty log");
    lines
}

/// Every line round-trips through the typed schema and holds only documented paths.
fn check(test: &str, lines: &[String]) -> Vec<schema::Launch> {
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if let Err(e) = schema::round_trip(l) {
            panic!("{test}: line {}: {e}\n{l}", i + 1);
        }
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        for p in schema::key_paths(&v) {
            assert!(
                schema::documented(&p),
                "{test}: line {}: `{p}` is not in log::schema::FIELDS",
                i + 1
            );
        }
    }
    // the launch records, references to emulation definitions resolved
    let (read, unresolved) = schema::read_text(&lines.join("\n"));
    assert_eq!(unresolved, 0, "{test}: a reference without its definition");
    for (i, t) in read {
        match t {
            schema::TextLine::Launch(l, bad) => {
                assert_eq!(bad, 0, "{test}: line {i}: unreadable part");
                out.push(*l)
            }
            schema::TextLine::Definition => {}
            other => panic!("{test}: line {i}: {other:?}"),
        }
    }
    out
}

#[test]
fn log_and_project_records_fit_the_schema() {
    for prog in ["reduction", "kmeans"] {
        let l = log_lines(&format!("schema-log-{prog}"), prog, &[], "log", &[]);
        let recs = check(prog, &l);
        assert!(recs
            .iter()
            .all(|r| r.mode == schema::Mode::Log && r.status == schema::LaunchStatus::Complete));
    }
    // project mode: emulation (ok, reused) and projection on every launch
    for prog in ["reduction", "matmul_local"] {
        let l = log_lines(&format!("schema-project-{prog}"), prog, &[], "project", &[]);
        let recs = check(prog, &l);
        assert!(
            recs.iter().all(|r| r.emulation.is_some()),
            "{prog}: a launch without emulation"
        );
        assert!(recs.iter().any(|r| r
            .projection
            .as_ref()
            .is_some_and(|p| !p.set.devices.is_empty())));
    }
}

#[test]
fn balance_records_fit_the_schema() {
    // the balanced path (chunks, phases, footprint), and forwarded launches (fallback)
    let l = log_lines("schema-balance-reduction", "reduction", &[], "balance", &[]);
    let recs = check("reduction balance", &l);
    let scheds: Vec<_> = recs.iter().filter_map(|r| r.schedule.as_ref()).collect();
    assert!(
        scheds
            .iter()
            .any(|s| s.is_balanced() && s.devices_used() == 2),
        "no split launch"
    );
    let l = log_lines(
        "schema-balance-kmeans",
        "kmeans",
        &[],
        "balance",
        &[("CLPRISM_VERIFY", "1")],
    );
    let recs = check("kmeans balance verify", &l);
    assert!(recs
        .iter()
        .filter_map(|r| r.schedule.as_ref())
        .any(|s| s.verify.is_some()));
    // CLPRISM_SPLIT=auto: split decisions and launches kept whole
    let l = log_lines(
        "schema-balance-auto",
        "matmul_global",
        &["64", "4"],
        "balance",
        &[("CLPRISM_SPLIT", "auto")],
    );
    let recs = check("matmul_global auto", &l);
    assert!(recs
        .iter()
        .filter_map(|r| r.schedule.as_ref())
        .any(|s| s.fallback.is_some()));
    // the best scheduler's choice
    let profiles = root().join("profiles");
    let l = log_lines(
        "schema-balance-best",
        "matmul_global",
        &["64", "2"],
        "balance",
        &[
            ("CLPRISM_SCHEDULER", "best"),
            ("CLPRISM_PROFILES", profiles.to_str().unwrap()),
        ],
    );
    let recs = check("matmul_global best", &l);
    assert!(recs
        .iter()
        .filter_map(|r| r.schedule.as_ref())
        .any(|s| matches!(s.best, Some(Some(_)))));
}
