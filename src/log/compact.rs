//! The compact project-mode log (schema `clprism.launch/2`, issue 19 item 4): the launch
//! records held in memory keep their full `emulation` and `projection` objects (the summary
//! and the trace read them), but a record whose objects name an emulation key
//! (`emulation.key`, set by `intercept::project`) is written as a small reference, and the
//! key's statistics and device-independent projection are written once, in a definition
//! line ([`schema::EmulationDef`]) just before the first record that refers to it. Readers
//! resolve the references ([`schema::Definitions`]); `clprism schema --expand` writes the
//! self-contained form. Every mode's first record naming a device is preceded by that
//! device's definition line ([`schema::DeviceDef`]: what matches it to a profile).
//!
//! Anchored projections (issue 19 item 3) are not written here: see
//! [`schema::Projection::anchored`] for why readers derive them.

use super::schema::{self, Emulation, Projection};
use super::LaunchRecord;
use serde_json::Value;
use std::collections::HashSet;

/// The written form of a launch's keyed `emulation` and `projection` objects.
#[derive(Debug, Clone)]
pub struct Compact {
    /// The emulation key's id.
    pub key: u64,
    /// `"emulation":{..},"projection":{..}` of the definition line, without braces.
    def_body: String,
    /// `"emulation":{..},"projection":{..}` of the launch record (references), without
    /// braces.
    refs: String,
}

impl Compact {
    /// The compact form of a launch's `emulation` and `projection` objects; `None` when
    /// the emulation names no key (written in full).
    pub fn of(emulation: Option<&Value>, projection: Option<&Value>) -> Option<Compact> {
        let e: Emulation = serde_json::from_value(emulation?.clone()).ok()?;
        let key = e.key?;
        let p: Option<Projection> = projection.and_then(|p| serde_json::from_value(p.clone()).ok());
        // definition: the emulation as first written (a reused launch may come first)
        let mut def_e = e.clone();
        if let Some(st) = def_e.stats.as_mut() {
            if widen_footprints(&mut st.footprints) {
                def_e.footprint_sector = Some(FOOTPRINT_SECTOR as u32);
            }
        }
        def_e.key = None;
        def_e.reused = false;
        if def_e.status == Some(schema::EmulationStatus::Reused) {
            def_e.status = Some(schema::EmulationStatus::Ok);
        }
        let ref_e = Emulation {
            key: Some(key),
            status: e.status.clone(),
            reused: e.reused,
            ..Default::default()
        };
        let mut def = serde_json::Map::new();
        let mut refs = serde_json::Map::new();
        def.insert(schema::KEY_EMULATION.into(), schema::to_value(&def_e));
        refs.insert(schema::KEY_EMULATION.into(), schema::to_value(&ref_e));
        if let Some(p) = p {
            let own = p
                .launch_device_profile
                .as_deref()
                .and_then(|n| p.set.devices.iter().find(|d| d.device == n));
            let ref_p = Projection {
                key: Some(key),
                launch_device_profile: p.launch_device_profile.clone(),
                launch_device_ns: own.map(|d| d.projected_ns),
                launch_device_rank: own.map(|d| d.rank),
                best: p.best_device(),
                ..Default::default()
            };
            let mut def_p = p;
            def_p.key = None;
            def_p.launch_device_profile = None;
            // device independent: `launch_device_profile` null (each reference names its own)
            def.insert(schema::KEY_PROJECTION.into(), schema::to_value(&def_p));
            refs.insert(schema::KEY_PROJECTION.into(), schema::to_value(&ref_p));
        }
        Some(Compact {
            key,
            def_body: inner(&def),
            refs: inner(&refs),
        })
    }
}

/// Footprints of more ranges than this (all arguments together) are written widened to
/// whole [`FOOTPRINT_SECTOR`]s: a work-group reading every third word of a buffer has tens
/// of thousands of 4-byte ranges (hundreds of KB of JSON).
const FOOTPRINT_RANGES_MAX: usize = 256;
/// Granularity of widened footprints, bytes: the emulator's sector, which every profile's
/// `sector_bytes` is a multiple of, so the cache-reuse model (distinct sectors read) gives
/// the same figures on the widened footprints.
pub const FOOTPRINT_SECTOR: u64 = 32;

/// Widens the footprints to whole [`FOOTPRINT_SECTOR`]s and merges them, when they hold
/// more than [`FOOTPRINT_RANGES_MAX`] ranges; whether it did.
fn widen_footprints(fps: &mut [crate::emu::stats::ArgFootprint]) -> bool {
    let n: usize = fps.iter().map(|f| f.read.len() + f.written.len()).sum();
    if n <= FOOTPRINT_RANGES_MAX {
        return false;
    }
    let widen = |v: &mut Vec<[u64; 2]>| {
        let mut out: Vec<[u64; 2]> = Vec::new();
        for r in v.iter().filter(|r| r[1] > r[0]) {
            let (s, e) = (
                r[0] / FOOTPRINT_SECTOR * FOOTPRINT_SECTOR,
                r[1].div_ceil(FOOTPRINT_SECTOR) * FOOTPRINT_SECTOR,
            );
            match out.last_mut() {
                Some(l) if s <= l[1] => l[1] = l[1].max(e),
                _ => out.push([s, e]),
            }
        }
        *v = out;
    };
    for f in fps.iter_mut() {
        widen(&mut f.read);
        widen(&mut f.written);
    }
    true
}

/// `"k":v,...` of a map, without the braces.
fn inner(m: &serde_json::Map<String, Value>) -> String {
    let t = serde_json::to_string(m).unwrap_or_else(|_| "{}".into());
    t[1..t.len().saturating_sub(1).max(1)].to_string()
}

/// Appends `body` (`"k":v,...`) to the JSON object text `line`.
fn append(line: &mut String, body: &str) {
    if body.is_empty() || !line.ends_with('}') {
        return;
    }
    line.pop();
    if !line.ends_with('{') {
        line.push(',');
    }
    line.push_str(body);
    line.push('}');
}

/// The writer's state: the keys whose definition line was written, and the devices whose
/// [`schema::DeviceDef`] line was.
#[derive(Debug, Default)]
pub struct Compactor {
    defined: HashSet<u64>,
    /// Identities (by address: each device's is read once and kept) already defined.
    devices: HashSet<usize>,
}

impl Compactor {
    /// The text to write for `rec`: its line, preceded by its key's definition line the
    /// first time the key is written, and before that by its device's definition line the
    /// first time the device is named (any mode; lines joined by `\n`, no trailing newline).
    pub fn lines(&mut self, rec: &LaunchRecord) -> String {
        let line = self.launch_lines(rec);
        match self.device_line(rec) {
            Some(mut out) => {
                out.push('\n');
                out.push_str(&line);
                out
            }
            None => line,
        }
    }

    /// The device's definition line ([`schema::DeviceDef`]) when `rec` is the first record
    /// naming its device, else `None` (also when the device's identity is unknown). Every
    /// writer path calls it, the plain log-mode path included.
    pub fn device_line(&mut self, rec: &LaunchRecord) -> Option<String> {
        let d = &rec.device;
        let id = d.identity.as_ref()?;
        // keyed by the identity's address: one allocation per device, none per record
        if !self.devices.insert(std::sync::Arc::as_ptr(id) as usize) {
            return None;
        }
        serde_json::to_string(&schema::DeviceDef::new(rec.pid, d, id)).ok()
    }

    /// [`Compactor::lines`] without the device definition.
    fn launch_lines(&mut self, rec: &LaunchRecord) -> String {
        let own = rec
            .extra
            .get(schema::KEY_EMULATION)
            .and_then(|e| Compact::of(Some(e), rec.extra.get(schema::KEY_PROJECTION)));
        let shared = rec.shared_extra.as_ref().and_then(|s| s.compact.as_ref());
        let (c, mut line) = match (own, shared) {
            (Some(c), _) => {
                let mut r = rec.clone();
                r.extra.remove(schema::KEY_EMULATION);
                r.extra.remove(schema::KEY_PROJECTION);
                let mut line = super::record_line(&r);
                append(&mut line, &c.refs);
                (c, line)
            }
            (None, Some(c)) => {
                let mut line = serde_json::to_string(rec).unwrap_or_default();
                append(&mut line, &c.refs);
                (c.clone(), line)
            }
            (None, None) => return super::record_line(rec),
        };
        if self.defined.insert(c.key) {
            let head = schema::EmulationDef {
                schema: super::SCHEMA.into(),
                record: schema::RECORD_EMULATION.into(),
                key: c.key,
                pid: rec.pid,
                kernel: rec.kernel.to_string(),
                program: rec.program.to_string(),
                emulation: None,
                projection: None,
            };
            let mut def = serde_json::to_string(&head).unwrap_or_default();
            append(&mut def, &c.def_body);
            def.push('\n');
            def.push_str(&line);
            line = def;
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests_support::record;
    use super::*;
    use std::sync::Arc;

    fn attachments(reused: bool, profile: &str) -> Vec<(String, Value)> {
        let stats = crate::emu::stats::WorkGroupStats {
            emulation_ns: 7000,
            work_items: 64,
            ..Default::default()
        };
        let mut e = Emulation::with_stats(stats, reused);
        e.key = Some(4);
        e.local_assumed = Some(vec![64]);
        let set: crate::model::ProjectionSet = serde_json::from_value(serde_json::json!({
            "devices": [
                {"device": "a", "t_compute_ns": 1.0, "t_global_ns": 2.0, "t_local_ns": 0.0,
                 "bound": "global", "projected_ns": 2000.0, "rank": 1},
                {"device": "b", "t_compute_ns": 1.0, "t_global_ns": 3.0, "t_local_ns": 0.0,
                 "bound": "global", "projected_ns": 3000.0, "rank": 2}]
        }))
        .unwrap();
        let p = Projection {
            key: Some(4),
            set,
            launch_device_profile: Some(profile.into()),
            ..Default::default()
        };
        vec![
            (schema::KEY_EMULATION.into(), schema::to_value(&e)),
            (schema::KEY_PROJECTION.into(), schema::to_value(&p)),
        ]
    }

    /// The full record as version 1 wrote it: the attachments without `key`.
    fn full(rec: &LaunchRecord) -> schema::Launch {
        let mut v: Value = serde_json::from_str(&super::super::record_line(rec)).unwrap();
        v["emulation"].as_object_mut().unwrap().remove("key");
        v["projection"].as_object_mut().unwrap().remove("key");
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn references_resolve_to_the_full_records() {
        let mut c = Compactor::default();
        // a reused launch (shared attachments) written before the emulated one
        let mut a = record(1);
        a.shared_extra = Some(Arc::new(super::super::SharedExtra::new(attachments(
            true, "b",
        ))));
        let mut b = record(0);
        b.extra.extend(attachments(false, "a"));
        let mut d = record(2);
        d.shared_extra = a.shared_extra.clone();
        let text = [c.lines(&a), c.lines(&b), c.lines(&d)].join("\n");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "one definition line: {text}");
        assert!(lines[0].contains("\"record\":\"emulation\""));
        for l in &lines {
            schema::round_trip(l).unwrap();
        }
        assert!(lines[1].len() < 700, "{}", lines[1]);
        let r: Value = serde_json::from_str(lines[1]).unwrap();
        assert_eq!(r["projection"]["launch_device_rank"], 2);
        assert_eq!(r["projection"]["launch_device_ns"], 3000.0);
        assert_eq!(r["projection"]["best"], "a");
        let (read, unresolved) = schema::read_text(&text);
        assert_eq!(unresolved, 0);
        let got: Vec<schema::Launch> = read
            .into_iter()
            .filter_map(|(_, t)| match t {
                schema::TextLine::Launch(l, 0) => Some(*l),
                _ => None,
            })
            .collect();
        assert_eq!(got, vec![full(&a), full(&b), full(&d)]);
        // the expanded text: the same records, without definition lines
        let x = schema::expand(&text);
        let back: Vec<schema::Launch> = x
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(back, got);
        // a reference without its definition keeps its essentials and is reported
        let (read, unresolved) = schema::read_text(lines[3]);
        assert_eq!(unresolved, 1);
        let schema::TextLine::Launch(l, _) = &read[0].1 else {
            panic!()
        };
        let p = l.projection.as_ref().unwrap();
        assert_eq!(p.best_device().as_deref(), Some("a"));
        assert_eq!(l.emulation.as_ref().unwrap().key, Some(4));
    }

    #[test]
    fn widened_footprints_project_the_same() {
        use crate::emu::stats::{ArgFootprint, GlobalTraffic, WorkGroupStats};
        // every third word of a buffer, and a few exact ranges of another argument
        let read: Vec<[u64; 2]> = (0..3000u64).map(|i| [i * 12, i * 12 + 4]).collect();
        let st = WorkGroupStats {
            work_items: 64,
            warp_width: 32,
            global_loads: GlobalTraffic {
                requests: 100,
                sectors: 400,
                lines: 200,
                bytes: 12000,
            },
            footprints: vec![
                ArgFootprint {
                    arg: 0,
                    read,
                    written: vec![[5, 9], [100, 104]],
                },
                ArgFootprint {
                    arg: 1,
                    read: vec![[0, 1], [33, 34], [4096, 8192]],
                    written: vec![],
                },
            ],
            ..Default::default()
        };
        let mut wide = st.clone();
        assert!(widen_footprints(&mut wide.footprints));
        assert_eq!(wide.footprints[0].read, vec![[0, 36000]]);
        assert_eq!(wide.footprints[0].written, vec![[0, 32], [96, 128]]);
        assert_eq!(wide.footprints[1].read, vec![[0, 64], [4096, 8192]]);
        let profiles = crate::model::load_dir(&crate::model::profile::builtin_dir()).unwrap();
        assert!(profiles
            .iter()
            .all(|p| (p.sector_bytes as u64).is_multiple_of(FOOTPRINT_SECTOR)));
        let shape = crate::model::LaunchShape::from_ndrange(&[4096], &[64], 0).unwrap();
        for opts in [
            crate::model::ModelOptions::default(),
            crate::model::ModelOptions::all(),
        ] {
            let project = |s: &WorkGroupStats| {
                crate::model::project_all(std::slice::from_ref(s), &shape, &profiles, &opts)
                    .unwrap()
            };
            assert_eq!(project(&st), project(&wide));
        }
        // few ranges: written exactly
        let mut small = st.footprints[1..].to_vec();
        assert!(!widen_footprints(&mut small));
        assert_eq!(small, st.footprints[1..]);
    }

    #[test]
    fn a_device_is_defined_once_before_its_first_record() {
        let mut c = Compactor::default();
        let id = crate::model::DeviceIdentity {
            name: "d".into(),
            version: "OpenCL 3.0 PoCL HSTR: basic-x".into(),
            max_compute_units: 1,
            ..Default::default()
        };
        let mut r = record(0);
        r.device = Arc::new(super::super::DeviceRef {
            identity: Some(Arc::new(id.clone())),
            ..(*r.device).clone()
        });
        let first = c.lines(&r);
        let lines: Vec<&str> = first.lines().collect();
        assert_eq!(lines.len(), 2, "{first}");
        schema::round_trip(lines[0]).unwrap();
        let def: schema::DeviceDef = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(def.record, schema::RECORD_DEVICE);
        assert_eq!(def.identity(), id);
        assert_eq!(lines[1], super::super::record_line(&r));
        // later records of the device: the record alone
        assert_eq!(c.lines(&record(1)), super::super::record_line(&record(1)));
        let mut r2 = record(2);
        r2.device = r.device.clone();
        assert_eq!(c.lines(&r2), super::super::record_line(&r2));
    }

    #[test]
    fn records_without_a_key_are_written_in_full() {
        let mut c = Compactor::default();
        let mut r = record(0);
        r.set_emulation(&Emulation::failed(
            schema::EmulationStatus::Unavailable,
            "why",
            false,
        ));
        assert_eq!(c.lines(&r), super::super::record_line(&r));
    }
}
