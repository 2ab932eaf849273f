//! Balance mode over PoCL-Remote servers on this machine (issue 33, docs/remote.md): two
//! `pocld` servers on loopback ports, each serving its own PoCL 3.1 `pthread` device, and the
//! local PoCL 3.1 `pthread` device, all in one platform list (Debian's ICD and the PoCL 6.0
//! remote client built by scripts/pocl_remote.sh). Apps run on the local device; clprism
//! splits their launches over it and both remote devices (`CLPRISM_SPLIT=always`), and the
//! outputs must be byte-identical to the native run.
mod common;
use common::remote::{dead_port, Cluster};
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Runs `exe args` under `env` (with `LD_PRELOAD` of clprism in balance mode when
/// `balance`), killing it after `limit`: `None` when it ran over.
fn run_for(
    exe: &Path,
    args: &[&str],
    env: &[(String, String)],
    balance: bool,
    limit: Duration,
    during: impl FnOnce(),
) -> Option<Output> {
    let mut c = Command::new(exe);
    c.args(args);
    for (k, _) in std::env::vars() {
        if k.starts_with("CLPRISM_") || k.starts_with("POCL_") || k.starts_with("OCL_ICD") {
            c.env_remove(k);
        }
    }
    if balance {
        c.env("LD_PRELOAD", lib())
            .env("CLPRISM_MODE", "balance")
            .env("CLPRISM_SPLIT", "always")
            .env("CLPRISM_BALANCE_EARLY", "off")
            .env("CLPRISM_SUMMARY", "off");
    }
    c.envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let dir = std::env::temp_dir().join(format!(
        "clprism-remote-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let (o, e) = (dir.join("out"), dir.join("err"));
    let mut child = c
        .stdout(std::fs::File::create(&o).unwrap())
        .stderr(std::fs::File::create(&e).unwrap())
        .stdin(Stdio::null())
        .spawn()
        .expect("spawn");
    during();
    let t0 = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let out = status.map(|status| Output {
        status,
        stdout: std::fs::read(&o).unwrap(),
        stderr: std::fs::read(&e).unwrap(),
    });
    if out.is_none() {
        eprintln!(
            "{} ran over {limit:?}; stderr:\n{}",
            exe.display(),
            String::from_utf8_lossy(&std::fs::read(&e).unwrap_or_default())
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
    out
}

fn with(env: &[(String, String)], more: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut v = env.to_vec();
    v.extend(more.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    v
}

/// The `schedule.share` of each launch record of `log`.
fn shares(log: &Path) -> Vec<Vec<f64>> {
    read_log(log)
        .iter()
        .map(|r| {
            r["schedule"]["share"]
                .as_array()
                .map(|a| a.iter().map(|x| x.as_f64().unwrap_or(0.0)).collect())
                .unwrap_or_default()
        })
        .collect()
}

/// Launches whose `schedule.share` gives work to at least 3 devices.
fn split_over_three(log: &Path) -> usize {
    shares(log)
        .iter()
        .filter(|s| s.iter().filter(|&&x| x > 0.0).count() >= 3)
        .count()
}

const LIMIT: Duration = Duration::from_secs(120);

/// Fixed fractions for the local device and the two servers. With Boyer's scheduler (the
/// default) a remote device's first chunk waits for the server to build the program (PoCL
/// 3.1 with LLVM behind `pocld`, 1-2 s on 2 cores), so the first launch abandons the remote
/// devices as stragglers and later launches run whole until those chunks drain: nothing
/// would be split over three devices in a short run (docs/remote.md).
const STATIC: &str = "static:0.34,0.33,0.33";

/// Example apps on the local device, natively and in balance mode over the local device and
/// both servers: byte-identical dumps, and launches whose work really went to all three.
#[test]
fn examples_split_over_the_local_device_and_two_servers() {
    let d = scratch("remote-examples");
    let cluster = Cluster::start(2, &d);
    let (l, r) = cluster.platform_indices();
    let app_dev = format!("{l}:0");
    let devices = format!("{l}:0,{r}:0,{r}:1");
    for (app, args) in [
        ("matmul_global", vec!["256"]),
        ("kmeans", vec!["65536", "5"]),
        ("transpose", vec![]),
    ] {
        let exe = examples().join(app);
        let (nat, bal, log) = (
            d.join(format!("{app}-n.bin")),
            d.join(format!("{app}-b.bin")),
            d.join(format!("{app}.jsonl")),
        );
        let mut a = args.clone();
        a.extend(["--dump", nat.to_str().unwrap()]);
        let env = with(&cluster.env(), &[("CLPRISM_EXAMPLE_DEVICE", &app_dev)]);
        let out = run_for(&exe, &a, &env, false, LIMIT, || {}).expect("native run hung");
        assert_ok(&out, &format!("{app} natively"));
        let mut a = args.clone();
        a.extend(["--dump", bal.to_str().unwrap()]);
        let env = with(
            &env,
            &[
                ("CLPRISM_DEVICES", &devices),
                ("CLPRISM_SCHEDULER", STATIC),
                ("CLPRISM_LOG", log.to_str().unwrap()),
            ],
        );
        let out = run_for(&exe, &a, &env, true, LIMIT, || {}).expect("balance run hung");
        assert_ok(&out, &format!("{app} in balance mode"));
        assert!(
            std::fs::read(&nat).unwrap() == std::fs::read(&bal).unwrap(),
            "{app}: balance output differs from native"
        );
        let three = split_over_three(&log);
        eprintln!(
            "{app}: {three} of {} launches ran on 3 devices; shares {:?}",
            shares(&log).len(),
            shares(&log)
        );
        assert!(three > 0, "{app}: no launch ran on 3 devices: {:?}", shares(&log));
    }
}
