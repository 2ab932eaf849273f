//! Reading the launch records of a project-mode log (`CLPRISM_LOG`, schema
//! `clprism.launch/1`, DESIGN.md §4) for the accuracy comparison.
//!
//! Keys read: `kernel`, `program`, `global`, `local`, `device` (`index`, `name`), `status`,
//! `device_ns`, and from project mode `emulation` (`status`, `stats`, `local_assumed`) and
//! `projection` (a `ProjectionSet` with `launch_device_profile`, and `launch_shape` when
//! the interposer records the [`LaunchShape`] it projected with). Unknown keys are
//! ignored, so the reader works on logs of other modes too (launches without statistics
//! are counted, not compared).

use crate::emu::stats::WorkGroupStats;
use crate::model::{LaunchShape, ProjectionSet};
use serde_json::Value;
use std::path::Path;

/// One kernel launch as the accuracy comparison needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Launch {
    /// Kernel name.
    pub kernel: String,
    /// Program identifier (16 hex digits).
    pub program: String,
    /// Global size per dimension, work-items.
    pub global: Vec<u64>,
    /// Local size per dimension (the app's, else the one project mode assumed), if known.
    pub local: Option<Vec<u64>>,
    /// `platform:device` of the launch.
    pub device_index: String,
    /// CL_DEVICE_NAME of the launch.
    pub device_name: String,
    /// Record status (`complete`, `failed`, ...).
    pub status: String,
    /// Measured device time (`END − START`), ns.
    pub device_ns: Option<u64>,
    /// `emulation.status`, when present.
    pub emulation_status: Option<String>,
    /// `emulation.stats`, when present.
    pub stats: Option<WorkGroupStats>,
    /// The launch shape project mode projected with, when recorded.
    pub shape: Option<LaunchShape>,
    /// `projection.launch_device_profile`: the profile of the launch's device.
    pub launch_device_profile: Option<String>,
    /// The projection project mode recorded (baseline options).
    pub recorded: Option<ProjectionSet>,
}

fn u64s(v: Option<&Value>) -> Option<Vec<u64>> {
    v?.as_array()?.iter().map(|x| x.as_u64()).collect()
}

/// Parses one log line. `Ok(None)` for lines that are not launch records (other
/// schemas, blank lines).
///
/// Errors: invalid JSON, or a launch record without `kernel` / `global`.
pub fn parse_line(line: &str) -> Result<Option<Launch>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    let v: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    let is_launch = v
        .get("schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.starts_with("clprism.launch/"));
    if !is_launch {
        return Ok(None);
    }
    let s = |k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
    let kernel = s("kernel").ok_or("launch record without `kernel`")?;
    let global = u64s(v.get("global")).ok_or("launch record without `global`")?;
    let emu = v.get("emulation");
    let stats = emu
        .and_then(|e| e.get("stats"))
        .and_then(|x| serde_json::from_value::<WorkGroupStats>(x.clone()).ok());
    let local = u64s(v.get("local")).or_else(|| u64s(emu.and_then(|e| e.get("local_assumed"))));
    let proj = v.get("projection");
    let shape = proj
        .and_then(|p| p.get("launch_shape"))
        .or_else(|| emu.and_then(|e| e.get("launch_shape")))
        .and_then(|x| serde_json::from_value::<LaunchShape>(x.clone()).ok());
    let recorded = proj
        .filter(|p| p.get("error").is_none())
        .and_then(|p| serde_json::from_value::<ProjectionSet>(p.clone()).ok());
    let dev = v.get("device");
    let ds = |k: &str| {
        dev.and_then(|d| d.get(k))
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string()
    };
    Ok(Some(Launch {
        kernel,
        program: s("program").unwrap_or_default(),
        global,
        local,
        device_index: ds("index"),
        device_name: ds("name"),
        status: s("status").unwrap_or_default(),
        device_ns: v.get("device_ns").and_then(Value::as_u64),
        emulation_status: emu
            .and_then(|e| e.get("status"))
            .and_then(Value::as_str)
            .map(str::to_string),
        stats,
        shape,
        launch_device_profile: proj
            .and_then(|p| p.get("launch_device_profile"))
            .and_then(Value::as_str)
            .map(str::to_string),
        recorded,
    }))
}

/// Reads every launch record of a JSONL log.
///
/// Errors: the file cannot be read, or a line is not valid JSON (named by line number).
pub fn read_log(path: &Path) -> Result<Vec<Launch>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        match parse_line(l) {
            Ok(Some(x)) => out.push(x),
            Ok(None) => {}
            Err(e) => return Err(format!("{}:{}: {e}", path.display(), i + 1)),
        }
    }
    Ok(out)
}

impl Launch {
    /// The shape to project with: the recorded one, else from the NDRange with no local
    /// memory (`None` when the local size is unknown).
    pub fn projection_shape(&self) -> Option<(LaunchShape, bool)> {
        if let Some(s) = self.shape {
            return Some((s, true));
        }
        let l = self.local.as_ref()?;
        LaunchShape::from_ndrange(&self.global, l, 0)
            .ok()
            .map(|s| (s, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_launch_lines_are_skipped_and_bad_json_is_an_error() {
        assert_eq!(parse_line("").unwrap(), None);
        assert_eq!(parse_line(r#"{"schema":"other/1"}"#).unwrap(), None);
        assert!(parse_line("{not json").is_err());
        assert!(parse_line(r#"{"schema":"clprism.launch/1","global":[1]}"#).is_err());
    }

    #[test]
    fn log_mode_record_has_no_stats() {
        let l = parse_line(
            r#"{"schema":"clprism.launch/1","kernel":"k","program":"p","global":[64],
               "local":[16],"device":{"index":"0:1","name":"cpu","type":"cpu"},
               "status":"complete","device_ns":1234,"queued_ns":5}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(l.device_ns, Some(1234));
        assert_eq!(l.device_index, "0:1");
        assert!(l.stats.is_none() && l.recorded.is_none());
        let (shape, recorded) = l.projection_shape().unwrap();
        assert!(!recorded);
        assert_eq!(shape.work_groups, 4);
        assert_eq!(shape.resources.work_group_size, 16);
    }

    #[test]
    fn assumed_local_size_is_used() {
        let l = parse_line(
            r#"{"schema":"clprism.launch/1","kernel":"k","global":[64],"local":null,
               "status":"complete","device_ns":1,
               "emulation":{"status":"ok","reused":false,"local_assumed":[32]}}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(l.local, Some(vec![32]));
        assert_eq!(l.emulation_status.as_deref(), Some("ok"));
    }
}
