//! Reading a JSONL launch log (schema `clprism.launch/1`, DESIGN.md §4) leniently: lines that
//! are not JSON objects, carry another schema or lack a kernel name are skipped and counted;
//! the optional `emulation`, `projection` and `schedule` objects are read when present and
//! readable, and counted as unreadable otherwise (the launch itself is kept).

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::Path;

/// Schema prefix accepted (any minor revision of version 1 of the launch record).
pub const SCHEMA_PREFIX: &str = "clprism.launch/1";

/// The device a launch ran on, as logged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// `platform:device` index (`"0:1"`).
    #[serde(default)]
    pub index: String,
    /// `CL_DEVICE_NAME`.
    #[serde(default)]
    pub name: String,
    /// `gpu`, `cpu`, `accelerator` or `other`.
    #[serde(default, rename = "type")]
    pub kind: String,
}

/// The `emulation` record of a launch in project mode (Panwar et al. §IV-C): the statistics
/// of one emulated work-group, or an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Emulation {
    /// Wall time spent emulating, ns (absent for an error).
    pub emulation_ns: Option<u64>,
    /// The instruction or time budget ran out and the counts were extrapolated.
    pub budget_exhausted: bool,
    /// The statistics were reused from an earlier launch (cache hit).
    pub reused: bool,
    /// Why the emulation failed (`{"error": "reason"}`).
    pub error: Option<String>,
}

impl Emulation {
    fn from_value(v: &Value) -> Option<Emulation> {
        let o = v.as_object()?;
        let num = |k: &str| {
            o.get(k)
                .and_then(|x| x.as_u64().or_else(|| x.as_f64().map(|f| f.max(0.0) as u64)))
        };
        // Project mode's records nest the statistics under `stats` and give failures as
        // `status` + `reason`; a reused launch cost no emulation time.
        let reused = o.get("reused").and_then(Value::as_bool).unwrap_or(false);
        let stats = o.get("stats").and_then(Value::as_object);
        let stats_ns = stats
            .and_then(|s| s.get("emulation_ns"))
            .and_then(Value::as_u64)
            .filter(|_| !reused);
        let failed = matches!(
            o.get("status").and_then(Value::as_str),
            Some("unavailable") | Some("error")
        );
        Some(Emulation {
            emulation_ns: num("emulation_ns").or(stats_ns),
            budget_exhausted: o
                .get("budget_exhausted")
                .or_else(|| stats.and_then(|s| s.get("budget_exhausted")))
                .and_then(Value::as_bool)
                .unwrap_or(false),
            reused,
            error: o
                .get("error")
                .map(|e| match e.as_str() {
                    Some(s) => s.to_string(),
                    None => e.to_string(),
                })
                .or_else(|| {
                    failed.then(|| {
                        o.get("reason")
                            .and_then(Value::as_str)
                            .unwrap_or("unavailable")
                            .to_string()
                    })
                }),
        })
    }
}

/// Projection of one launch on one device profile (Panwar et al. §IV-D).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ProjectedDevice {
    /// Device profile name.
    #[serde(default)]
    pub device: String,
    /// Compute time, ns.
    #[serde(default)]
    pub t_compute_ns: Option<f64>,
    /// Global memory time, ns.
    #[serde(default)]
    pub t_global_ns: Option<f64>,
    /// Local memory time, ns.
    #[serde(default)]
    pub t_local_ns: Option<f64>,
    /// `compute`, `global` or `local`.
    #[serde(default)]
    pub bound: String,
    /// Projected kernel time, ns.
    #[serde(default)]
    pub projected_ns: Option<f64>,
    /// Rank among the devices, 1 = fastest.
    #[serde(default)]
    pub rank: Option<u32>,
}

/// The `projection` record of a launch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Projection {
    /// One entry per device profile.
    #[serde(default)]
    pub devices: Vec<ProjectedDevice>,
    /// Profile name of the fastest device.
    #[serde(default)]
    pub best: Option<String>,
}

/// A device taking part in a balanced launch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScheduleDevice {
    /// `platform:device` index.
    #[serde(default)]
    pub index: String,
    /// `CL_DEVICE_NAME`.
    #[serde(default)]
    pub name: String,
}

/// One chunk of work-groups given to one device (Boyer ch. 4, Figure 4.4).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Chunk {
    /// Position of the device in [`Schedule::devices`].
    #[serde(default)]
    pub device: usize,
    /// First work-group of the chunk (linear id).
    #[serde(default)]
    pub first_wg: u64,
    /// Work-groups in the chunk.
    #[serde(default)]
    pub count: u64,
    /// Host time of the enqueue, ns.
    #[serde(default)]
    pub enqueue_ns: Option<u64>,
    /// Start on the device, ns.
    #[serde(default)]
    pub start_ns: Option<u64>,
    /// End on the device, ns.
    #[serde(default)]
    pub end_ns: Option<u64>,
    /// The chunk was abandoned (its work-groups were given to another device).
    #[serde(default)]
    pub abandoned: bool,
}

/// The `schedule` record of a launch in balance mode.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Schedule {
    /// `boyer`, `static`, `css`, `gss`, `tss` or `single`.
    #[serde(default)]
    pub scheduler: String,
    /// Devices taking part.
    #[serde(default)]
    pub devices: Vec<ScheduleDevice>,
    /// Chunks in enqueue order.
    #[serde(default)]
    pub chunks: Vec<Chunk>,
    /// Work-groups of the NDRange.
    #[serde(default)]
    pub work_groups: Option<u64>,
    /// Fraction of the work-groups done by each device (same order as `devices`).
    #[serde(default)]
    pub share: Option<Vec<f64>>,
    /// Time between the first and the last device finishing, ns.
    #[serde(default)]
    pub idle_tail_ns: Option<u64>,
    /// How the outputs were merged: `footprint`, `diff` or `none`.
    #[serde(default)]
    pub merge: Option<String>,
    /// Why the launch fell back to a single device (null when balanced).
    #[serde(default)]
    pub fallback: Option<String>,
    /// Wall time of the whole balanced launch, ns.
    #[serde(default)]
    pub wall_ns: Option<u64>,
}

/// One launch record as read from a log.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Launch {
    /// 1-based line number in the file.
    pub line: usize,
    /// Launch sequence number within its process.
    pub seq: u64,
    /// Enqueue time, ns since the Unix epoch.
    pub time_ns: Option<u64>,
    /// Process id.
    pub pid: Option<u32>,
    /// `off`, `log`, `project` or `balance`.
    pub mode: String,
    /// Kernel function name.
    pub kernel: String,
    /// Program hash.
    pub program: Option<String>,
    /// Global size per dimension, work-items.
    pub global: Vec<u64>,
    /// Local size per dimension, work-items (None: driver's choice).
    pub local: Option<Vec<u64>>,
    /// Global offset per dimension, work-items.
    pub offset: Option<Vec<u64>>,
    /// The device of the command queue.
    pub device: Option<DeviceInfo>,
    /// `complete`, `failed`, `enqueue_failed`, `incomplete`, `no_profiling` or `untimed`.
    pub status: String,
    /// Measured device time, ns.
    pub device_ns: Option<u64>,
    /// Submission-to-start time, ns.
    pub queued_ns: Option<u64>,
    /// Mini-emulation record (project mode).
    pub emulation: Option<Emulation>,
    /// Projection record (project mode).
    pub projection: Option<Projection>,
    /// Schedule record (balance mode).
    pub schedule: Option<Schedule>,
}

impl Launch {
    /// The launch's measured time, ns: `device_ns`, or for a balanced launch without one
    /// (several devices) the schedule's `wall_ns`.
    pub fn measured_ns(&self) -> Option<u64> {
        self.device_ns
            .or_else(|| self.schedule.as_ref().and_then(|s| s.wall_ns))
    }

    /// Short device label: `index` (or the name when there is no index).
    pub fn device_label(&self) -> String {
        match &self.device {
            Some(d) if !d.index.is_empty() => d.index.clone(),
            Some(d) => d.name.clone(),
            None => String::new(),
        }
    }

    /// True for a launch split across devices by a real scheduler (not the `single`
    /// baseline scheduler).
    pub fn is_balanced(&self) -> bool {
        self.schedule
            .as_ref()
            .is_some_and(|s| s.scheduler != "single")
    }
}

/// A whole log file.
#[derive(Debug, Clone, Default)]
pub struct LoadedLog {
    /// The file name as given.
    pub name: String,
    /// Launch records in file order.
    pub launches: Vec<Launch>,
    /// Non-empty lines skipped as malformed.
    pub malformed: usize,
    /// Line number of the first malformed line.
    pub first_malformed: Option<usize>,
    /// Launches whose `emulation`, `projection` or `schedule` object could not be read (the
    /// launch is kept without it).
    pub unreadable_extras: usize,
}

fn u64_list(v: Option<&Value>) -> Option<Vec<u64>> {
    v?.as_array()?.iter().map(Value::as_u64).collect()
}

/// Parses one line; `Err(())` for a malformed line.
fn parse_line(line: &str, lineno: usize, unreadable: &mut usize) -> Result<Launch, ()> {
    let v: Value = serde_json::from_str(line).map_err(|_| ())?;
    let o = v.as_object().ok_or(())?;
    if let Some(s) = o.get("schema") {
        if !s.as_str().is_some_and(|s| s.starts_with(SCHEMA_PREFIX)) {
            return Err(());
        }
    }
    let kernel = o.get("kernel").and_then(Value::as_str).ok_or(())?;
    let get_u64 = |k: &str| o.get(k).and_then(Value::as_u64);
    let mut bad = false;
    let emulation = o.get("emulation").filter(|v| !v.is_null()).and_then(|v| {
        let e = Emulation::from_value(v);
        bad |= e.is_none();
        e
    });
    let projection = o.get("projection").filter(|v| !v.is_null()).and_then(|v| {
        let mut p = serde_json::from_value::<Projection>(v.clone()).ok();
        bad |= p.is_none();
        // project mode gives ranks, not a `best` key
        if let Some(p) = p.as_mut().filter(|p| p.best.is_none()) {
            p.best = p
                .devices
                .iter()
                .find(|d| d.rank == Some(1))
                .map(|d| d.device.clone());
        }
        p
    });
    let schedule = o.get("schedule").filter(|v| !v.is_null()).and_then(|v| {
        let s = serde_json::from_value::<Schedule>(v.clone()).ok();
        bad |= s.is_none();
        s
    });
    if bad {
        *unreadable += 1;
    }
    Ok(Launch {
        line: lineno,
        seq: get_u64("seq").unwrap_or(lineno as u64),
        time_ns: get_u64("time_ns"),
        pid: get_u64("pid").map(|p| p as u32),
        mode: o
            .get("mode")
            .and_then(Value::as_str)
            .unwrap_or("log")
            .to_string(),
        kernel: kernel.to_string(),
        program: o.get("program").and_then(Value::as_str).map(str::to_string),
        global: u64_list(o.get("global")).unwrap_or_default(),
        local: u64_list(o.get("local")),
        offset: u64_list(o.get("offset")),
        device: o
            .get("device")
            .and_then(|d| serde_json::from_value(d.clone()).ok()),
        status: o
            .get("status")
            .and_then(Value::as_str)
            .unwrap_or("unknown")
            .to_string(),
        device_ns: get_u64("device_ns"),
        queued_ns: get_u64("queued_ns"),
        emulation,
        projection,
        schedule,
    })
}

/// Parses a whole log text. Empty lines are ignored; malformed ones are counted.
pub fn parse_log(name: &str, text: &str) -> LoadedLog {
    let mut log = LoadedLog {
        name: name.to_string(),
        ..Default::default()
    };
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match parse_line(line, i + 1, &mut log.unreadable_extras) {
            Ok(l) => log.launches.push(l),
            Err(()) => {
                log.malformed += 1;
                log.first_malformed.get_or_insert(i + 1);
            }
        }
    }
    log
}

/// Reads and parses a log file, or standard input for `-` (invalid UTF-8 is replaced, so
/// such lines count as malformed).
///
/// Errors: the file cannot be read.
pub fn load(path: &Path) -> std::io::Result<LoadedLog> {
    let bytes = if path.as_os_str() == "-" {
        let mut b = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut b)?;
        b
    } else {
        std::fs::read(path)?
    };
    Ok(parse_log(
        &path.display().to_string(),
        &String::from_utf8_lossy(&bytes),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_log_mode_record() {
        let l = parse_log(
            "t",
            r#"{"schema":"clprism.launch/1","seq":4,"time_ns":17,"pid":9,"thread":9,"mode":"log","kernel":"add","program":"ab","work_dim":1,"global":[1024],"local":[64],"offset":null,"device":{"index":"0:1","name":"pthread","type":"cpu"},"status":"complete","device_ns":20706,"queued_ns":5}"#,
        );
        assert_eq!(l.malformed, 0);
        let r = &l.launches[0];
        assert_eq!((r.seq, r.pid, r.kernel.as_str()), (4, Some(9), "add"));
        assert_eq!(r.global, vec![1024]);
        assert_eq!(r.local, Some(vec![64]));
        assert_eq!(r.offset, None);
        assert_eq!(r.device_label(), "0:1");
        assert_eq!(r.measured_ns(), Some(20706));
        assert!(r.emulation.is_none() && r.projection.is_none() && r.schedule.is_none());
    }

    #[test]
    fn counts_malformed_lines_and_keeps_the_rest() {
        let text = "\n{\"kernel\":\"a\",\"device_ns\":5}\nnot json\n[1,2]\n{\"schema\":\"other/2\",\"kernel\":\"b\"}\n{\"seq\":1}\n{\"kernel\":\"c\"\n{\"kernel\":\"d\",\"device_ns\":null}\n";
        let l = parse_log("t", text);
        assert_eq!(l.launches.len(), 2);
        assert_eq!(l.malformed, 5);
        assert_eq!(l.first_malformed, Some(3));
        assert_eq!(l.launches[1].kernel, "d");
        assert_eq!(l.launches[1].measured_ns(), None);
    }

    #[test]
    fn reads_extras_and_flags_unreadable_ones() {
        let text = concat!(
            r#"{"kernel":"k","mode":"project","emulation":{"instructions":{},"emulation_ns":900,"budget_exhausted":true,"reused":false},"projection":{"devices":[{"device":"a100","t_compute_ns":1.5,"t_global_ns":3.0,"t_local_ns":0.0,"bound":"global","projected_ns":3.0,"rank":1}],"best":"a100"}}"#,
            "\n",
            r#"{"kernel":"k","mode":"project","emulation":{"error":"no SPIR-V"},"projection":{"devices":"oops"}}"#,
            "\n",
            r#"{"kernel":"k","mode":"balance","device_ns":null,"schedule":{"scheduler":"boyer","devices":[{"index":"0:0","name":"x"}],"chunks":[{"device":0,"first_wg":0,"count":4,"enqueue_ns":1,"start_ns":2,"end_ns":3,"abandoned":false}],"work_groups":4,"share":[1.0],"idle_tail_ns":0,"merge":"none","fallback":null,"wall_ns":77}}"#,
        );
        let l = parse_log("t", text);
        assert_eq!(l.malformed, 0);
        assert_eq!(l.unreadable_extras, 1);
        let e = l.launches[0].emulation.as_ref().unwrap();
        assert_eq!(e.emulation_ns, Some(900));
        assert!(e.budget_exhausted && !e.reused && e.error.is_none());
        assert_eq!(
            l.launches[0].projection.as_ref().unwrap().devices[0].rank,
            Some(1)
        );
        assert_eq!(
            l.launches[1].emulation.as_ref().unwrap().error.as_deref(),
            Some("no SPIR-V")
        );
        assert!(l.launches[1].projection.is_none());
        let s = l.launches[2].schedule.as_ref().unwrap();
        assert_eq!(s.chunks[0].count, 4);
        assert!(l.launches[2].is_balanced());
        assert_eq!(l.launches[2].measured_ns(), Some(77));
    }
}
