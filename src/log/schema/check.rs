//! Checks that a logged record and its typed form agree (round trips, key paths, which
//! keys the field table documents).

use super::*;

/// Converts a typed record to a JSON value (for [`crate::log::LaunchRecord::extra`]);
/// `null` if serialization failed (it cannot for the types here: no maps with non-string
/// keys).
pub fn to_value<T: Serialize>(t: &T) -> Value {
    serde_json::to_value(t).unwrap_or(Value::Null)
}

/// Reads one launch record leniently: `Ok(None)` for a line of another schema or an
/// [`EmulationDef`] line (its references are not resolved: see [`read_text`]); the launch and
/// how many of its `emulation` / `projection` / `schedule` objects were unreadable (those
/// are dropped, the launch is kept).
///
/// Errors: not JSON, not an object, or the top-level fields do not fit [`Launch`].
pub fn parse_lenient(line: &str) -> Result<Option<(Launch, usize)>, String> {
    Ok(match parse_line(line)? {
        Some(LogLine::Launch(l, bad)) => Some((*l, bad)),
        _ => None,
    })
}

/// Checks that a record the interposer wrote is exactly what the schema describes: it
/// deserializes into [`Launch`] and serializes back to the same JSON value (no unknown
/// field, no field of another type or nesting). Returns the differing paths.
pub fn round_trip(line: &str) -> Result<(), String> {
    let orig: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    match orig.get("record").map(|r| r.as_str()) {
        Some(Some(RECORD_DEVICE)) => return round_trip_value::<DeviceDef>(&orig),
        Some(_) => return round_trip_value::<EmulationDef>(&orig),
        None => {}
    }
    round_trip_value::<Launch>(&orig)
}

/// [`round_trip`] for any part of a record (a `schedule` object as [`Schedule`], ...).
pub fn round_trip_value<T: Serialize + serde::de::DeserializeOwned>(
    orig: &Value,
) -> Result<(), String> {
    let typed: T =
        serde_json::from_value(orig.clone()).map_err(|e| format!("does not parse: {e}"))?;
    let back = serde_json::to_value(&typed).map_err(|e| e.to_string())?;
    let mut diffs = Vec::new();
    diff_values("", orig, &back, &mut diffs);
    if diffs.is_empty() {
        Ok(())
    } else {
        Err(diffs.join("; "))
    }
}

fn diff_values(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, va) in x {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match y.get(k) {
                    Some(vb) => diff_values(&p, va, vb, out),
                    None => out.push(format!("{p}: not in the schema (dropped)")),
                }
            }
            for k in y.keys().filter(|k| !x.contains_key(*k)) {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                out.push(format!("{p}: added by the schema"));
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff_values(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        (Value::Number(x), Value::Number(y)) if x.as_f64() == y.as_f64() => {}
        _ if a == b => {}
        _ => out.push(format!("{path}: {a} became {b}")),
    }
}

/// Every key path of a JSON value (`schedule.chunks[].device`), objects and arrays walked;
/// paths under an entry of [`OPAQUE`] are reported as that entry.
pub fn key_paths(v: &Value) -> std::collections::BTreeSet<String> {
    fn walk(path: &str, v: &Value, out: &mut std::collections::BTreeSet<String>) {
        if OPAQUE.contains(&path) {
            out.insert(path.to_string());
            return;
        }
        match v {
            Value::Object(o) => {
                for (k, x) in o {
                    let p = if path.is_empty() {
                        k.clone()
                    } else {
                        format!("{path}.{k}")
                    };
                    walk(&p, x, out);
                }
            }
            Value::Array(a) if a.iter().any(|x| x.is_object()) => {
                for x in a {
                    walk(&format!("{path}[]"), x, out);
                }
            }
            _ => {
                out.insert(path.to_string());
            }
        }
    }
    let mut out = Default::default();
    walk("", v, &mut out);
    out
}

/// Whether a key path from [`key_paths`] is documented in [`FIELDS`]: a row, or (for an
/// empty array or an object written as `null`) the parent of rows.
pub fn documented(path: &str) -> bool {
    FIELDS.iter().any(|f| {
        f.path == path
            || f.path
                .strip_prefix(path)
                .is_some_and(|rest| rest.starts_with("[].") || rest.starts_with('.'))
    })
}

/// Paths documented as one row whose inner structure is another module's type.
pub const OPAQUE: &[&str] = &[
    "emulation.stats",
    "emulation.launch_shape",
    "projection.options",
    "projection.launch_shape",
];
