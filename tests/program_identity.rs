//! A program's identity is its source and its build options (issue 32 item 1): one source
//! built with different `-D` values is different programs in the log, in `clprism report`
//! (and the exit summary) and in `clprism accuracy`. tests/c/build_variants.c builds one
//! source three times, `-DREPS=1`, `-DREPS=64` and ` -DREPS=1  ` (the first options spaced
//! otherwise, so the same program), and launches each build's kernel `steps` three times,
//! on PoCL. Needs `cargo build` first.

mod common;

use common::{assert_ok, c_program, launches_printed, lib, read_log, root, run, scratch, Via};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Launches per build of the app.
const LAUNCHES: usize = 3;

fn clprism(args: &[&str]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_clprism"));
    for (k, _) in std::env::vars() {
        if k.starts_with("CLPRISM_") {
            c.env_remove(k);
        }
    }
    let o = c.args(args).output().expect("spawn clprism");
    assert_ok(&o, &format!("clprism {}", args.join(" ")));
    o
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// Runs the app under the interposer in `mode` on the PoCL devices `pocl`; returns its log
/// and output.
fn app_log(dir: &Path, mode: &'static str, pocl: &str, extra: &[(&str, &str)]) -> PathBuf {
    let log = dir.join(format!("{}.{mode}.jsonl", pocl.replace(' ', "_")));
    let profiles = root().join("profiles");
    let mut env = vec![
        ("POCL_DEVICES", pocl),
        ("CLPRISM_LOG", log.to_str().unwrap()),
        ("CLPRISM_DEVICE_TIMING", "all"),
        ("CLPRISM_PROFILES", profiles.to_str().unwrap()),
        ("CLPRISM_SUMMARY", "off"),
    ];
    env.extend_from_slice(extra);
    let out = run(&c_program("build_variants"), &[], Via::Preload(mode), &env);
    assert_ok(&out, &format!("build_variants ({mode}, {pocl})"));
    assert_eq!(launches_printed(&out), 3 * LAUNCHES);
    log
}

/// The programs of the launches, in launch order: the first and third builds' program, and
/// the second's. Asserts that the log holds exactly these two, with their launches.
fn two_programs(recs: &[Value]) -> (String, String) {
    assert_eq!(recs.len(), 3 * LAUNCHES, "{recs:?}");
    let mut recs: Vec<&Value> = recs.iter().collect();
    recs.sort_by_key(|r| r["seq"].as_u64());
    let prog = |i: usize| recs[i]["program"].as_str().unwrap().to_string();
    let (one, sixty_four) = (prog(0), prog(LAUNCHES));
    for (i, r) in recs.iter().enumerate() {
        assert_eq!(r["kernel"], "steps");
        let want = if i / LAUNCHES == 1 { &sixty_four } else { &one };
        assert_eq!(
            r["program"].as_str(),
            Some(want.as_str()),
            "launch {i}: {r}"
        );
    }
    assert_ne!(
        one, sixty_four,
        "two builds with other -D values share a program"
    );
    for p in [&one, &sixty_four] {
        assert!(
            p.len() == 16 && p.chars().all(|c| c.is_ascii_hexdigit()),
            "{p}"
        );
    }
    (one, sixty_four)
}

fn label(program: &str) -> String {
    format!("steps#{}", &program[..8])
}

#[test]
fn one_source_built_with_two_option_sets_is_two_programs_in_the_log_and_the_report() {
    let _ = lib();
    let dir = scratch("program_identity_report");
    let summary = dir.join("summary.txt");
    let log = app_log(
        &dir,
        "log",
        "pthread pthread",
        &[("CLPRISM_SUMMARY", summary.to_str().unwrap())],
    );
    let (one, sixty_four) = two_programs(&read_log(&log));
    let f = log.to_str().unwrap();

    // report, JSON: a row per program, with its launches and its program
    let j: Value =
        serde_json::from_str(&stdout(&clprism(&["report", f, "--format", "json"]))).unwrap();
    let rows = j["kernels"].as_array().unwrap();
    let got: BTreeMap<String, (String, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["kernel"].as_str().unwrap().to_string(),
                (
                    r["program"].as_str().unwrap().to_string(),
                    r["launches"].as_u64().unwrap(),
                ),
            )
        })
        .collect();
    let want: BTreeMap<String, (String, u64)> = [
        (label(&one), (one.clone(), 2 * LAUNCHES as u64)),
        (label(&sixty_four), (sixty_four.clone(), LAUNCHES as u64)),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want, "{j}");
    assert_eq!(j["total"]["launches"], 3 * LAUNCHES as u64);

    // the table: the two rows
    let table = stdout(&clprism(&["report", f]));
    for p in [&one, &sixty_four] {
        assert_eq!(
            table
                .lines()
                .filter(|l| l.starts_with(&format!("{} ", label(p))))
                .count(),
            1,
            "{table}"
        );
    }

    // --kernel: one program's launches by its row name, every build's by the name
    let launches = |k: &str| {
        let v: Value = serde_json::from_str(&stdout(&clprism(&[
            "report", f, "--kernel", k, "--format", "json",
        ])))
        .unwrap();
        v[0]["launches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["program"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        launches(&label(&sixty_four)),
        vec![sixty_four.clone(); LAUNCHES]
    );
    assert_eq!(launches("steps").len(), 3 * LAUNCHES);

    // the exit summary: a row per program
    let s = std::fs::read_to_string(&summary).unwrap();
    for (p, n) in [(&one, 2 * LAUNCHES), (&sixty_four, LAUNCHES)] {
        let row = s
            .lines()
            .find(|l| l.starts_with(&format!("{} ", label(p))))
            .unwrap_or_else(|| panic!("no row of {} in\n{s}", label(p)));
        assert_eq!(
            row.split_whitespace().nth(1),
            Some(n.to_string().as_str()),
            "{s}"
        );
    }
}

#[test]
fn one_source_built_with_two_option_sets_is_two_kernels_in_accuracy() {
    let _ = lib();
    let dir = scratch("program_identity_accuracy");
    // two PoCL devices stand for two machines (as tests/accuracy_logs.rs)
    let pthread = app_log(&dir, "log", "pthread", &[]);
    let basic = app_log(&dir, "log", "basic", &[]);
    let projected = app_log(&dir, "project", "pthread", &[]);
    let programs = two_programs(&read_log(&projected));
    // the identity does not depend on the device or the mode
    assert_eq!(two_programs(&read_log(&pthread)), programs);
    assert_eq!(two_programs(&read_log(&basic)), programs);
    let (one, sixty_four) = programs;

    // each program was emulated as itself: 64 steps of the loop are other instructions. Its
    // other launches reuse that emulation, and a reusing record may be written before the
    // emulated one (the writer writes records as their emulations end), so the emulated
    // launch is looked up by its status, not by its place in the file
    let recs = read_log(&projected);
    let int_lanes = |p: &str| {
        let r = recs
            .iter()
            .find(|r| r["program"] == p && r["emulation"]["status"] == "ok")
            .unwrap_or_else(|| panic!("no emulated launch of {p}"));
        r["emulation"]["stats"]["instructions"]["int"]["lane"]
            .as_u64()
            .unwrap()
    };
    // (the front end unrolls the 64 steps fully, as a GPU's compiler does, and LLVM folds
    // the unrolled `x * 3 + r` chain into one multiply-add by constants: different counts,
    // not 64 times as many; `emu::frontend::UNROLL`)
    assert_ne!(
        int_lanes(&sixty_four),
        int_lanes(&one),
        "each program emulated as itself"
    );

    let measured = format!("{},{}", pthread.display(), basic.display());
    let profiles = root().join("profiles");
    let acc = |format: &str| {
        stdout(&clprism(&[
            "accuracy",
            "--measured",
            &measured,
            "--projected",
            projected.to_str().unwrap(),
            "--profiles",
            profiles.to_str().unwrap(),
            "--format",
            format,
        ]))
    };
    let table = acc("table");
    let j: Value = serde_json::from_str(&acc("json")).unwrap();
    assert_eq!(j["unmatched"].as_array().unwrap().len(), 0, "{table}");
    let rows = j["rows"].as_array().unwrap();
    let mut got: Vec<(String, String, u64)> = rows
        .iter()
        .map(|r| {
            // the launch device's cell counts the program's own launches
            (
                r["id"]["program"].as_str().unwrap().to_string(),
                r["label"].as_str().unwrap().to_string(),
                r["cells"][0]["launches"].as_u64().unwrap(),
            )
        })
        .collect();
    got.sort();
    let mut want = vec![
        (
            one.clone(),
            format!("{} [16384/64]", label(&one)),
            2 * LAUNCHES as u64,
        ),
        (
            sixty_four.clone(),
            format!("{} [16384/64]", label(&sixty_four)),
            LAUNCHES as u64,
        ),
    ];
    want.sort();
    assert_eq!(got, want, "{table}");
    for (_, l, _) in &want {
        assert!(table.contains(l.as_str()), "{table}");
    }
    assert_eq!(j["summary"]["kernels"], 2, "{table}");
}
