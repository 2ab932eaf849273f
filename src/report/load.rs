//! Reading a JSONL launch log (schema `clprism.launch/2` or `/1`, DESIGN.md §4) leniently:
//! lines that are not JSON objects, carry another schema or lack a kernel name are skipped
//! and counted; the optional `emulation`, `projection` and `schedule` objects are read when
//! present and readable, and counted as unreadable otherwise (the launch itself is kept).
//! The references of a compact log are resolved against its emulation definition lines
//! ([`schema::read_text`]); a reference to a missing definition counts as unreadable.

use crate::log::schema;
use serde::Serialize;
use std::path::Path;

/// Schema prefix shared by the versions accepted ([`schema::SCHEMA_READ`]).
pub const SCHEMA_PREFIX: &str = schema::SCHEMA_PREFIX;

/// One launch record as read from a log: the record ([`schema::Launch`], the type the
/// interposer writes) and where it was in the file. Derefs to the record.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Launch {
    /// 1-based line number in the file.
    pub line: usize,
    /// The record as logged (`emulation`, `projection`, `schedule` dropped when unreadable).
    #[serde(flatten)]
    pub record: schema::Launch,
    /// The kernel's row name in the reports: its name, or `name#program` when the log holds
    /// a kernel of that name in more than one program ([`schema::KernelLabels`]). Each log
    /// names its own kernels, so that two runs of an app that builds its program with
    /// options of its device (another program on each) still compare kernel by kernel.
    #[serde(skip)]
    pub label: String,
}

impl std::ops::Deref for Launch {
    type Target = schema::Launch;
    fn deref(&self) -> &schema::Launch {
        &self.record
    }
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
        if self.device.index.is_empty() {
            self.device.name.clone()
        } else {
            self.device.index.clone()
        }
    }

    /// Process id, when logged.
    pub fn pid(&self) -> Option<u32> {
        (self.pid != 0).then_some(self.pid)
    }

    /// True for a launch with a `schedule` whose scheduler is not the `single` baseline
    /// scheduler (forwarded launches included: they count as fallbacks).
    pub fn is_balanced(&self) -> bool {
        self.schedule
            .as_ref()
            .is_some_and(|s| s.scheduler.as_deref() != Some("single"))
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

/// Parses a whole log text. Empty lines are ignored; malformed ones (not a JSON object, of
/// another schema or record kind, without a kernel name, or whose top-level fields do not
/// fit the schema) are counted; emulation definition lines are not launches.
pub fn parse_log(name: &str, text: &str) -> LoadedLog {
    let mut log = LoadedLog {
        name: name.to_string(),
        ..Default::default()
    };
    let (lines, unresolved) = schema::read_text(text);
    log.unreadable_extras = unresolved;
    for (lineno, l) in lines {
        match l {
            schema::TextLine::Launch(record, bad) if !record.kernel.is_empty() => {
                log.unreadable_extras += (bad > 0) as usize;
                log.launches.push(Launch {
                    line: lineno,
                    label: String::new(),
                    record: *record,
                })
            }
            schema::TextLine::Definition => {}
            _ => {
                log.malformed += 1;
                log.first_malformed.get_or_insert(lineno);
            }
        }
    }
    let labels = schema::KernelLabels::new(
        log.launches
            .iter()
            .map(|l| (l.kernel.as_str(), l.program.as_str())),
    );
    for l in &mut log.launches {
        l.label = labels.label(&l.kernel, &l.program);
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
        assert_eq!((r.seq, r.pid(), r.kernel.as_str()), (4, Some(9), "add"));
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
        assert_eq!(e.wall_ns(), Some(900));
        assert!(e.budget_exhausted() && !e.reused && e.failure().is_none());
        assert_eq!(
            l.launches[0].projection.as_ref().unwrap().set.devices[0].rank,
            1
        );
        assert_eq!(
            l.launches[1]
                .emulation
                .as_ref()
                .unwrap()
                .failure()
                .as_deref(),
            Some("no SPIR-V")
        );
        assert!(l.launches[1].projection.is_none());
        let s = l.launches[2].schedule.as_ref().unwrap();
        assert_eq!(s.chunks[0].count, 4);
        assert!(l.launches[2].is_balanced());
        assert_eq!(l.launches[2].measured_ns(), Some(77));
    }
}
