//! Reading the launch records of a project-mode log (`CLPRISM_LOG`, schema
//! `clprism.launch/2` or `/1`, DESIGN.md §4) for the accuracy comparison; the references of
//! a compact log are resolved against its emulation definition lines
//! ([`schema::read_text`]).
//!
//! Keys read: `kernel`, `program`, `global`, `local`, `device` (`index`, `name`), `status`,
//! `device_ns`, and from project mode `emulation` (`status`, `stats`, `local_assumed`) and
//! `projection` (a `ProjectionSet` with `launch_device_profile`, and `launch_shape` when
//! the interposer records the [`LaunchShape`] it projected with), all through the typed
//! schema ([`crate::log::schema::Launch`]). Unknown keys are ignored, so the reader works on
//! logs of other modes too (launches without statistics are counted, not compared).

use crate::emu::stats::WorkGroupStats;
use crate::log::schema;
use crate::model::{LaunchShape, ProjectionSet};
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
    /// `START − SUBMIT` of the launch, ns, on a GPU (`None` for other devices): whether it
    /// waited behind other work on its device ([`crate::model::memory::queued_behind_work`]).
    pub queued_ns: Option<u64>,
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

/// Parses one log line. `Ok(None)` for lines that are not launch records (other
/// schemas, blank lines).
///
/// Errors: invalid JSON, or a launch record without `kernel` / `global`, or whose fields do
/// not fit the schema ([`crate::log::schema::Launch`]).
pub fn parse_line(line: &str) -> Result<Option<Launch>, String> {
    let line = line.trim();
    if line.is_empty() {
        return Ok(None);
    }
    // (unreadable `emulation` / `projection` objects are dropped: the launch is counted,
    // not compared)
    match schema::parse_lenient(line)? {
        Some((rec, _)) => from_record(rec).map(Some),
        _ => Ok(None),
    }
}

/// The accuracy view of a launch record (references already resolved).
fn from_record(rec: schema::Launch) -> Result<Launch, String> {
    if rec.kernel.is_empty() {
        return Err("launch record without `kernel`".into());
    }
    if rec.global.is_empty() {
        return Err("launch record without `global`".into());
    }
    let emu = rec.emulation.as_ref();
    let proj = rec.projection.as_ref();
    let local = rec
        .local
        .clone()
        .or_else(|| emu.and_then(|e| e.local_assumed.clone()));
    let shape = proj
        .and_then(|p| p.launch_shape)
        .or_else(|| emu.and_then(|e| e.launch_shape));
    let dev = |s: &str| {
        if s.is_empty() {
            "?".to_string()
        } else {
            s.to_string()
        }
    };
    Ok(Launch {
        program: rec.program.clone(),
        global: rec.global.clone(),
        local,
        device_index: dev(&rec.device.index),
        device_name: dev(&rec.device.name),
        status: rec.status.to_string(),
        device_ns: rec.device_ns,
        // the queue state is read on GPUs only: the threshold is an NVIDIA GPU's idle
        // START − SUBMIT (about 4 µs); PoCL's is 7.5-20 µs for launches the app waits
        // for (results/session28-model, "queued floor")
        queued_ns: rec.queued_ns.filter(|_| rec.device.kind == "gpu"),
        emulation_status: emu.and_then(|e| e.status.as_ref()).map(|s| s.to_string()),
        stats: emu.and_then(|e| e.stats.clone()),
        shape,
        launch_device_profile: proj.and_then(|p| p.launch_device_profile.clone()),
        recorded: proj.filter(|p| p.error.is_none()).map(|p| p.set.clone()),
        kernel: rec.kernel,
    })
}

/// Reads every launch record of a JSONL log.
///
/// Errors: the file cannot be read, or a line is not valid JSON (named by line number).
pub fn read_log(path: &Path) -> Result<Vec<Launch>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, l) in schema::read_text(&text).0 {
        let r = match l {
            schema::TextLine::Launch(rec, _) => from_record(*rec),
            schema::TextLine::Bad(e) => Err(e),
            schema::TextLine::Definition | schema::TextLine::Other => continue,
        };
        out.push(r.map_err(|e| format!("{}:{i}: {e}", path.display()))?);
    }
    Ok(out)
}

impl Launch {
    /// The shape to project with: the recorded one, else from the NDRange with no local
    /// memory (`None` when the local size is unknown).
    /// Its queue state ([`LaunchShape::queued`]) is the record's `queued_ns`.
    pub fn projection_shape(&self) -> Option<(LaunchShape, bool)> {
        let queued = crate::model::memory::queued_behind_work(self.queued_ns);
        if let Some(s) = self.shape {
            return Some((LaunchShape { queued, ..s }, true));
        }
        let l = self.local.as_ref()?;
        LaunchShape::from_ndrange(&self.global, l, 0)
            .ok()
            .map(|s| (LaunchShape { queued, ..s }, false))
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
