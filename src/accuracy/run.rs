//! Running the example apps natively on each device under the interposer in project mode
//! (`CLPRISM_MODE=project`, `LD_PRELOAD`, one `CLPRISM_LOG` per app and device), and
//! reading the logs back.

use super::compare::DeviceRun;
use super::records::read_log;
use crate::model::{find_profile, DeviceIdentity, Profile};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The apps of `examples/run_all.sh`, in its order.
pub const APPS: &[&str] = &[
    "matmul_global",
    "matmul_local",
    "blackscholes",
    "nbody",
    "transpose",
    "reduction",
    "fwt",
    "floyd_warshall",
    "kmeans",
    "dct8x8",
    "mt_launch",
];

/// An OpenCL device and the profile it matches.
#[derive(Debug, Clone, PartialEq)]
pub struct Target {
    /// `platform:device`.
    pub index: String,
    /// What the driver reports.
    pub identity: DeviceIdentity,
    /// Matching profile name, if any.
    pub profile: Option<String>,
}

impl Target {
    /// Column name: the profile's, else `dev P:D`.
    pub fn column(&self) -> String {
        self.profile
            .clone()
            .unwrap_or_else(|| format!("dev {}", self.index))
    }
}

/// Every device of the real OpenCL library with its matching profile.
///
/// Errors: the real library cannot be loaded.
pub fn targets(profiles: &[Profile]) -> Result<Vec<Target>, String> {
    use crate::characterize::clx::{device_info, device_string};
    use opencl_sys::*;
    crate::loader::real().map_err(|e| format!("no real OpenCL library: {e}"))?;
    Ok(crate::registry::device::enumerate()
        .into_iter()
        .map(|(p, d, id)| {
            let identity = DeviceIdentity {
                name: device_string(id, CL_DEVICE_NAME).unwrap_or_default(),
                vendor: device_string(id, CL_DEVICE_VENDOR).unwrap_or_default(),
                version: device_string(id, CL_DEVICE_VERSION).unwrap_or_default(),
                driver_version: device_string(id, CL_DRIVER_VERSION).unwrap_or_default(),
                max_compute_units: device_info::<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS)
                    .unwrap_or(0),
            };
            let profile = find_profile(profiles, &identity).map(|p| p.name.clone());
            Target {
                index: format!("{p}:{d}"),
                identity,
                profile,
            }
        })
        .collect())
}

/// How to run the apps.
#[derive(Debug, Clone)]
pub struct RunSpec {
    /// Directory of the example binaries.
    pub examples: PathBuf,
    /// The interposer library (`LD_PRELOAD`).
    pub lib: PathBuf,
    /// Profiles directory (`CLPRISM_PROFILES`).
    pub profiles: PathBuf,
    /// Where the logs and the apps' output go.
    pub logs: PathBuf,
    /// Extra arguments per app.
    pub app_args: Vec<(String, Vec<String>)>,
    /// Longest run of one app, after which it is killed.
    pub timeout: Duration,
}

/// Log file of `app` on device `index`.
pub fn log_path(logs: &Path, app: &str, index: &str) -> PathBuf {
    logs.join(format!("{app}.{}.jsonl", index.replace(':', "_")))
}

/// Runs `app` on `t` in project mode and returns its launches.
///
/// Errors: the app cannot be started, fails, times out, or its log cannot be read (the
/// message names the app's output file).
pub fn run_app(spec: &RunSpec, app: &str, t: &Target) -> Result<DeviceRun, String> {
    let exe = spec.examples.join(app);
    let log = log_path(&spec.logs, app, &t.index);
    let out_file = log.with_extension("out");
    let _ = std::fs::remove_file(&log);
    let out =
        std::fs::File::create(&out_file).map_err(|e| format!("{}: {e}", out_file.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let args = spec
        .app_args
        .iter()
        .find(|(a, _)| a == app)
        .map(|(_, v)| v.clone())
        .unwrap_or_default();
    let mut child = Command::new(&exe)
        .args(&args)
        .env("CLPRISM_EXAMPLE_DEVICE", &t.index)
        .env("CLPRISM_MODE", "project")
        .env("LD_PRELOAD", &spec.lib)
        .env("CLPRISM_LOG", &log)
        .env("CLPRISM_PROFILES", &spec.profiles)
        .env("CLPRISM_SUMMARY", "off")
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", exe.display()))?;
    let t0 = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break s,
            Ok(None) if t0.elapsed() > spec.timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{app} on {} timed out after {:?} (output: {})",
                    t.index,
                    spec.timeout,
                    out_file.display()
                ));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("{app}: {e}")),
        }
    };
    if !status.success() {
        return Err(format!(
            "{app} on {} failed ({status}); output: {}",
            t.index,
            out_file.display()
        ));
    }
    let launches = read_log(&log)?;
    check_device(&launches, t, app)?;
    Ok(DeviceRun {
        app: app.to_string(),
        profile: t.column(),
        launches,
    })
}

/// Checks that the app really ran on `t`: the device names in its records must be `t`'s.
/// A mismatch means the app and clprism see the platforms in different orders (e.g. two ICD
/// loaders on one host), and pairing its times with `t`'s profile would be wrong.
///
/// Errors: a record names another device (the message names both).
pub fn check_device(
    launches: &[super::records::Launch],
    t: &Target,
    app: &str,
) -> Result<(), String> {
    match launches
        .iter()
        .find(|l| !l.device_name.is_empty() && l.device_name != t.identity.name)
    {
        Some(l) => Err(format!(
            "{app} asked for device {} ({}) but its launches ran on '{}' (index {}): the app \
             and clprism enumerate the platforms differently; not comparing",
            t.index, t.identity.name, l.device_name, l.device_index
        )),
        None => Ok(()),
    }
}

/// Reads logs written by an earlier run (`<app>.<P>_<D>.jsonl` in `logs`). A log's column
/// is the `launch_device_profile` its records carry, else the profile of the device with
/// that index in `targets`.
///
/// Errors: unreadable directory or log.
pub fn read_logs(logs: &Path, targets: &[Target]) -> Result<Vec<DeviceRun>, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(logs)
        .map_err(|e| format!("{}: {e}", logs.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        let Some((app, idx)) = stem.rsplit_once('.') else {
            continue;
        };
        let index = idx.replace('_', ":");
        let launches = read_log(&f)?;
        // The profile project mode matched when the log was written, else the profile of
        // the device with that index now.
        let column = launches
            .iter()
            .find_map(|l| l.launch_device_profile.clone())
            .or_else(|| {
                targets
                    .iter()
                    .find(|t| t.index == index)
                    .map(Target::column)
            })
            .unwrap_or_else(|| format!("dev {index}"));
        out.push(DeviceRun {
            app: app.to_string(),
            profile: column,
            launches,
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_names_round_trip() {
        let p = log_path(Path::new("/x"), "matmul_local", "0:1");
        assert_eq!(p, PathBuf::from("/x/matmul_local.0_1.jsonl"));
        let t = Target {
            index: "2:0".into(),
            identity: DeviceIdentity::default(),
            profile: None,
        };
        assert_eq!(t.column(), "dev 2:0");
    }

    #[test]
    fn launches_on_another_device_are_refused() {
        let rec = |dev: &str| {
            let line = format!(
                r#"{{"schema":"clprism.launch/1","kernel":"k","program":"p","global":[64],"device":{{"index":"0:0","name":"{dev}","kind":"gpu"}},"status":"complete","device_ns":5}}"#
            );
            crate::accuracy::records::parse_line(&line)
                .unwrap()
                .unwrap()
        };
        let t = Target {
            index: "1:0".into(),
            identity: DeviceIdentity {
                name: "NVIDIA H200".into(),
                ..Default::default()
            },
            profile: Some("h200".into()),
        };
        assert!(check_device(&[rec("NVIDIA H200")], &t, "app").is_ok());
        let e = check_device(&[rec("NVIDIA H200"), rec("cpu-x")], &t, "app").unwrap_err();
        assert!(e.contains("cpu-x") && e.contains("NVIDIA H200"), "{e}");
    }
}
