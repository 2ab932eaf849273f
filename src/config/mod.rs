//! The `CLPRISM_*` environment variables (DESIGN.md §3), parsed once.
//!
//! A malformed value never aborts the application: it produces one warning line on stderr
//! naming the variable, the bad value and the value used instead.

use once_cell::sync::Lazy;
use std::path::PathBuf;

/// What clprism does besides forwarding (`CLPRISM_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Pure forwarding: no side tables, no log.
    Off,
    /// Per-kernel log with measured device time (the default).
    Log,
    /// Log plus mini-emulation and projection on every profiled device.
    Project,
    /// Log plus splitting each NDRange across all devices.
    Balance,
}

impl Mode {
    /// Lower-case name as accepted in `CLPRISM_MODE`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Log => "log",
            Mode::Project => "project",
            Mode::Balance => "balance",
        }
    }
}

/// Modes this build implements; a requested mode outside this list falls back to `log` with
/// one warning.
pub const IMPLEMENTED_MODES: &[Mode] = &[Mode::Off, Mode::Log, Mode::Project, Mode::Balance];

/// Where the end-of-run summary goes (`CLPRISM_SUMMARY`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SummaryTarget {
    /// Standard error (default).
    Stderr,
    /// A file path.
    File(PathBuf),
    /// No summary.
    Off,
}

/// Where the per-kernel JSONL log goes (`CLPRISM_LOG`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTarget {
    /// Standard error (`-`).
    Stderr,
    /// A file path, `%p` already replaced by the pid.
    File(PathBuf),
    /// No log (`off`).
    Off,
}

/// Which launches log mode times on the device (`CLPRISM_DEVICE_TIMING`).
///
/// Timing a launch needs an event on a queue with `CL_QUEUE_PROFILING_ENABLE`, and drivers
/// charge for both (NVIDIA: ~1.6 µs per event, several µs per launch on a profiled queue;
/// README "Interposer overhead"). Sampling keeps the event cost off most launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceTiming {
    /// Every launch gets an event and a measured `device_ns` (default).
    All,
    /// The first launch of each kernel name and then every `every`-th launch of it are timed;
    /// the others are logged with status `untimed`. `every` ≥ 1.
    Sample {
        /// Period in launches of one kernel name.
        every: u64,
    },
    /// No launch is timed: profiling is not turned on for the app's queues and records have
    /// status `untimed` (unless the app's own queue profiles and the app asks for an event).
    Off,
}

impl DeviceTiming {
    /// Whether clprism turns profiling on for the queues it sees created.
    pub fn enables_profiling(self) -> bool {
        !matches!(self, DeviceTiming::Off)
    }
}

/// Parses `all` | `off` | `sample:N` (N ≥ 1, `sample:1` = `all`).
pub fn parse_device_timing(s: &str) -> Option<DeviceTiming> {
    match s.trim().to_ascii_lowercase().as_str() {
        "all" | "on" | "1" => Some(DeviceTiming::All),
        "off" | "0" => Some(DeviceTiming::Off),
        t => {
            let n: u64 = t.strip_prefix("sample:")?.trim().parse().ok()?;
            match n {
                0 => None,
                1 => Some(DeviceTiming::All),
                every => Some(DeviceTiming::Sample { every }),
            }
        }
    }
}

/// The parsed configuration.
#[derive(Debug, Clone)]
pub struct Config {
    /// `CLPRISM_MODE`, default `log`.
    pub mode: Mode,
    /// `CLPRISM_REAL_OPENCL`: explicit path of the real OpenCL library.
    pub real_opencl: Option<PathBuf>,
    /// `CLPRISM_LOG`, default `clprism-%p.jsonl` in the working directory.
    pub log: LogTarget,
    /// `CLPRISM_SUMMARY`, default stderr.
    pub summary: SummaryTarget,
    /// `CLPRISM_TRACE`: Chrome trace event JSON path, default off.
    pub trace: Option<PathBuf>,
    /// `CLPRISM_DEVICES`, raw (parsed by `exec`), default `gpu` else `all`.
    pub devices: Option<String>,
    /// `CLPRISM_SCHEDULER`, raw (parsed by `sched`), default `boyer`.
    pub scheduler: Option<String>,
    /// `CLPRISM_BOYER`, raw (parsed by `sched`).
    pub boyer: Option<String>,
    /// `CLPRISM_PROFILES`: directory of device profiles.
    pub profiles: Option<PathBuf>,
    /// `CLPRISM_TOOLCHAIN`: directory with clang and llvm-spirv of one LLVM version.
    pub toolchain: Option<PathBuf>,
    /// `CLPRISM_CACHE`: SPIR-V and projection cache directory.
    pub cache: Option<PathBuf>,
    /// `CLPRISM_VERIFY=1`: run balanced launches natively too and compare bytes.
    pub verify: bool,
    /// `CLPRISM_EMU_SNAPSHOT_MAX`: most bytes of buffer snapshots that project mode holds at
    /// once (device copies plus their host read-backs); a launch whose buffer arguments
    /// would exceed it is not emulated (the record says why). Default 256 MiB.
    pub emu_snapshot_max: u64,
    /// `CLPRISM_DEVICE_TIMING`: which launches get a measured device time, default all.
    pub device_timing: DeviceTiming,
    /// `CLPRISM_PINNED_MAX`: most bytes of page-locked host staging that balance mode keeps
    /// (snapshots of inputs for the other devices, read-back of their chunks); transfers
    /// beyond it use ordinary heap memory. 0 turns pinned staging off. Default 4 GiB.
    pub pinned_max: u64,
    /// `CLPRISM_SPLIT`: whether balance mode may keep a launch whole on the app's device when
    /// splitting would not pay for its transfers (`sched::split`), default `auto`.
    pub split: SplitPolicy,
    /// `CLPRISM_BALANCE_EARLY`: whether balance mode opens its devices and builds the app's
    /// programs on them in the background once the app has built a program, instead of at
    /// the first launch. Default on.
    pub balance_early: bool,
    /// `CLPRISM_FAULT`: test-only fault injection in balance mode (`block:I`, `fail:I`,
    /// `open-delay:MS`; parsed by `exec::devices::parse_fault`).
    pub fault: Option<String>,
    /// `CLPRISM_LOG_POLL_US`: shortest time between two passes of the log writer over the
    /// pending launch events, µs (benchmark aid; `None`: the writer's default).
    pub log_poll_us: Option<u64>,
    /// `CLPRISM_DEBUG`: set (any value) to print timestamped `clprism-debug:` lines on
    /// stderr for balance mode's device opening, builds and launches.
    pub debug: bool,
}

/// `CLPRISM_SPLIT` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitPolicy {
    /// Split only when the measured figures say it pays (`sched::split::decide`); a kernel's
    /// first launch runs whole on the app's device to measure it.
    Auto,
    /// Split every launch that can be split.
    Always,
}

/// Default of `CLPRISM_EMU_SNAPSHOT_MAX`, bytes (256 MiB).
pub const DEFAULT_EMU_SNAPSHOT_MAX: u64 = 256 << 20;
/// Default of `CLPRISM_PINNED_MAX`, bytes (4 GiB).
pub const DEFAULT_PINNED_MAX: u64 = 4 << 30;

/// Parses a byte count with an optional binary suffix (`K`, `M`, `G`, with or without
/// `iB`/`B`): `64M` = 64 MiB.
pub fn parse_bytes(s: &str) -> Option<u64> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let digits_end = upper
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(upper.len());
    let (num, suffix) = upper.split_at(digits_end);
    let n: u64 = num.parse().ok()?;
    let mult: u64 = match suffix.trim() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// Formats the standard warning line for a malformed variable.
pub fn malformed(var: &str, value: &str, expected: &str, used: &str) -> String {
    format!("{var}='{value}' is not valid (expected {expected}); using {used}")
}

fn path_var(v: Option<String>) -> Option<PathBuf> {
    v.filter(|s| !s.is_empty()).map(PathBuf::from)
}

impl Config {
    /// Parses the configuration from a variable lookup (the environment in production, a map
    /// in tests). Returns the configuration and the warning lines to print.
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>, pid: u32) -> (Config, Vec<String>) {
        let mut warnings = Vec::new();
        let mode = match get("CLPRISM_MODE").as_deref().map(str::trim) {
            None | Some("") => Mode::Log,
            Some(v) => {
                let parsed = match v.to_ascii_lowercase().as_str() {
                    "off" => Some(Mode::Off),
                    "log" => Some(Mode::Log),
                    "project" => Some(Mode::Project),
                    "balance" => Some(Mode::Balance),
                    _ => None,
                };
                match parsed {
                    None => {
                        warnings.push(malformed(
                            "CLPRISM_MODE",
                            v,
                            "off|log|project|balance",
                            "log",
                        ));
                        Mode::Log
                    }
                    Some(m) if !IMPLEMENTED_MODES.contains(&m) => {
                        warnings.push(format!(
                            "CLPRISM_MODE={} is not implemented in this build yet; using log",
                            m.as_str()
                        ));
                        Mode::Log
                    }
                    Some(m) => m,
                }
            }
        };
        let log = match get("CLPRISM_LOG").as_deref() {
            None | Some("") => LogTarget::File(PathBuf::from(format!("clprism-{pid}.jsonl"))),
            Some("-") => LogTarget::Stderr,
            Some("off") => LogTarget::Off,
            Some(p) => LogTarget::File(PathBuf::from(p.replace("%p", &pid.to_string()))),
        };
        let summary = match get("CLPRISM_SUMMARY").as_deref() {
            None | Some("") | Some("stderr") => SummaryTarget::Stderr,
            Some("off") => SummaryTarget::Off,
            Some(p) => SummaryTarget::File(PathBuf::from(p.replace("%p", &pid.to_string()))),
        };
        let verify = match get("CLPRISM_VERIFY").as_deref().map(str::trim) {
            None | Some("") | Some("0") => false,
            Some("1") => true,
            Some(v) => {
                warnings.push(malformed("CLPRISM_VERIFY", v, "0 or 1", "0"));
                false
            }
        };
        let emu_snapshot_max = match get("CLPRISM_EMU_SNAPSHOT_MAX").as_deref().map(str::trim) {
            None | Some("") => DEFAULT_EMU_SNAPSHOT_MAX,
            Some(v) => match parse_bytes(v) {
                Some(n) => n,
                None => {
                    warnings.push(malformed(
                        "CLPRISM_EMU_SNAPSHOT_MAX",
                        v,
                        "a byte count such as 268435456 or 256M",
                        "256M",
                    ));
                    DEFAULT_EMU_SNAPSHOT_MAX
                }
            },
        };
        let pinned_max = match get("CLPRISM_PINNED_MAX").as_deref().map(str::trim) {
            None | Some("") => DEFAULT_PINNED_MAX,
            Some(v) => parse_bytes(v).unwrap_or_else(|| {
                warnings.push(malformed(
                    "CLPRISM_PINNED_MAX",
                    v,
                    "a byte count such as 1073741824 or 1G (0: off)",
                    "4G",
                ));
                DEFAULT_PINNED_MAX
            }),
        };
        let split = match get("CLPRISM_SPLIT").as_deref().map(str::trim) {
            None | Some("") | Some("auto") => SplitPolicy::Auto,
            Some("always") => SplitPolicy::Always,
            Some(v) => {
                warnings.push(malformed("CLPRISM_SPLIT", v, "auto or always", "auto"));
                SplitPolicy::Auto
            }
        };
        let balance_early = match get("CLPRISM_BALANCE_EARLY").as_deref().map(str::trim) {
            None | Some("") | Some("on") | Some("1") => true,
            Some("off") | Some("0") => false,
            Some(v) => {
                warnings.push(malformed("CLPRISM_BALANCE_EARLY", v, "on or off", "on"));
                true
            }
        };
        let device_timing = match get("CLPRISM_DEVICE_TIMING").as_deref().map(str::trim) {
            None | Some("") => DeviceTiming::All,
            Some(v) => parse_device_timing(v).unwrap_or_else(|| {
                warnings.push(malformed(
                    "CLPRISM_DEVICE_TIMING",
                    v,
                    "all, off or sample:N with N >= 1",
                    "all",
                ));
                DeviceTiming::All
            }),
        };
        let log_poll_us = match get("CLPRISM_LOG_POLL_US").as_deref().map(str::trim) {
            None | Some("") => None,
            Some(v) => v.parse::<u64>().ok().or_else(|| {
                warnings.push(malformed(
                    "CLPRISM_LOG_POLL_US",
                    v,
                    "microseconds, e.g. 0 or 1000",
                    "1000",
                ));
                None
            }),
        };
        let trace = path_var(get("CLPRISM_TRACE"))
            .map(|p| PathBuf::from(p.to_string_lossy().replace("%p", &pid.to_string())));
        let cfg = Config {
            mode,
            real_opencl: path_var(get("CLPRISM_REAL_OPENCL")),
            log,
            summary,
            trace,
            devices: get("CLPRISM_DEVICES").filter(|s| !s.is_empty()),
            scheduler: get("CLPRISM_SCHEDULER").filter(|s| !s.is_empty()),
            boyer: get("CLPRISM_BOYER").filter(|s| !s.is_empty()),
            profiles: path_var(get("CLPRISM_PROFILES")),
            toolchain: path_var(get("CLPRISM_TOOLCHAIN")),
            cache: path_var(get("CLPRISM_CACHE")),
            verify,
            emu_snapshot_max,
            device_timing,
            pinned_max,
            split,
            balance_early,
            debug: get("CLPRISM_DEBUG").is_some_and(|v| !v.is_empty()),
            fault: get("CLPRISM_FAULT").filter(|s| !s.trim().is_empty()),
            log_poll_us,
        };
        (cfg, warnings)
    }
}

/// When the configuration was read: the app's first OpenCL call through clprism.
static FIRST_CALL: once_cell::sync::OnceCell<std::time::Instant> = once_cell::sync::OnceCell::new();

/// Time since the app's first OpenCL call through clprism (when the configuration was read).
pub fn since_first_call() -> std::time::Duration {
    FIRST_CALL.get_or_init(std::time::Instant::now).elapsed()
}

static CONFIG: Lazy<Config> = Lazy::new(|| {
    FIRST_CALL.get_or_init(std::time::Instant::now);
    let (cfg, warnings) = Config::from_lookup(|k| std::env::var(k).ok(), std::process::id());
    for w in warnings {
        warn(&w);
    }
    cfg
});

/// The process-wide configuration, read from the environment on first use.
pub fn get() -> &'static Config {
    &CONFIG
}

/// Prints one `clprism: warning:` line on stderr.
pub fn warn(msg: &str) {
    eprintln_safe(&format!("clprism: warning: {msg}"));
}

static ONCE_KEYS: Lazy<parking_lot::Mutex<std::collections::HashSet<String>>> =
    Lazy::new(Default::default);

/// Prints a warning only the first time `key` is seen in this process (repeated fallbacks of
/// one kernel, one bad variable).
pub fn warn_once_per(msg: &str, key: &str) {
    if ONCE_KEYS.lock().insert(key.to_string()) {
        warn(msg);
    }
}

/// Prints one `clprism-debug: [ms since the first OpenCL call] [thread] msg` line on stderr when
/// `CLPRISM_DEBUG` is set; `msg` is only formatted then.
pub fn debug(msg: impl FnOnce() -> String) {
    if get().debug {
        let ms = since_first_call().as_secs_f64() * 1e3;
        let t = std::thread::current();
        eprintln_safe(&format!(
            "clprism-debug: {ms:10.3} ms [{}] {}",
            t.name().unwrap_or("app"),
            msg()
        ));
    }
}

/// Prints one `clprism: error:` line on stderr.
pub fn error(msg: &str) {
    eprintln_safe(&format!("clprism: error: {msg}"));
}

/// Writes a line to stderr without panicking if stderr is closed.
pub fn eprintln_safe(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn parse(vars: &[(&str, &str)]) -> (Config, Vec<String>) {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::from_lookup(|k| m.get(k).cloned(), 42)
    }

    #[test]
    fn defaults() {
        let (c, w) = parse(&[]);
        assert_eq!(c.mode, Mode::Log);
        assert_eq!(c.log, LogTarget::File("clprism-42.jsonl".into()));
        assert_eq!(c.summary, SummaryTarget::Stderr);
        assert!(w.is_empty());
    }

    #[test]
    fn malformed_mode_warns_once_and_uses_log() {
        let (c, w) = parse(&[("CLPRISM_MODE", "fast")]);
        assert_eq!(c.mode, Mode::Log);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("CLPRISM_MODE") && w[0].contains("fast") && w[0].contains("log"));
    }

    #[test]
    fn pid_substitution_and_off() {
        let (c, _) = parse(&[("CLPRISM_LOG", "/tmp/x-%p.jsonl"), ("CLPRISM_MODE", "OFF")]);
        assert_eq!(c.log, LogTarget::File("/tmp/x-42.jsonl".into()));
        assert_eq!(c.mode, Mode::Off);
    }

    #[test]
    fn project_mode_is_implemented() {
        let (c, w) = parse(&[("CLPRISM_MODE", "project")]);
        assert_eq!(c.mode, Mode::Project);
        assert!(w.is_empty(), "{w:?}");
    }

    #[test]
    fn snapshot_cap() {
        let (c, w) = parse(&[]);
        assert_eq!(c.emu_snapshot_max, DEFAULT_EMU_SNAPSHOT_MAX);
        assert!(w.is_empty());
        let (c, _) = parse(&[("CLPRISM_EMU_SNAPSHOT_MAX", "64M")]);
        assert_eq!(c.emu_snapshot_max, 64 << 20);
        let (c, _) = parse(&[("CLPRISM_EMU_SNAPSHOT_MAX", "4096")]);
        assert_eq!(c.emu_snapshot_max, 4096);
        let (c, w) = parse(&[("CLPRISM_EMU_SNAPSHOT_MAX", "lots")]);
        assert_eq!(c.emu_snapshot_max, DEFAULT_EMU_SNAPSHOT_MAX);
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("CLPRISM_EMU_SNAPSHOT_MAX"));
        let (c, w) = parse(&[]);
        assert_eq!((c.pinned_max, w.len()), (DEFAULT_PINNED_MAX, 0));
        let (c, _) = parse(&[("CLPRISM_PINNED_MAX", "0")]);
        assert_eq!(c.pinned_max, 0);
        let (c, _) = parse(&[("CLPRISM_PINNED_MAX", "512M")]);
        assert_eq!(c.pinned_max, 512 << 20);
        let (c, w) = parse(&[("CLPRISM_SPLIT", "always")]);
        assert_eq!((c.split, w.len()), (SplitPolicy::Always, 0));
        let (c, w) = parse(&[("CLPRISM_BALANCE_EARLY", "off")]);
        assert!(!c.balance_early && w.is_empty());
        let (c, w) = parse(&[("CLPRISM_BALANCE_EARLY", "later")]);
        assert!(c.balance_early);
        assert!(w[0].contains("CLPRISM_BALANCE_EARLY"), "{w:?}");
        let (c, w) = parse(&[("CLPRISM_SPLIT", "sometimes")]);
        assert_eq!(c.split, SplitPolicy::Auto);
        assert!(w[0].contains("CLPRISM_SPLIT"));
        let (c, w) = parse(&[("CLPRISM_PINNED_MAX", "-1")]);
        assert_eq!(c.pinned_max, DEFAULT_PINNED_MAX);
        assert!(w[0].contains("CLPRISM_PINNED_MAX"));
    }

    #[test]
    fn device_timing() {
        let (c, w) = parse(&[]);
        assert_eq!(c.device_timing, DeviceTiming::All);
        assert!(w.is_empty());
        let (c, _) = parse(&[("CLPRISM_DEVICE_TIMING", "off")]);
        assert_eq!(c.device_timing, DeviceTiming::Off);
        assert!(!c.device_timing.enables_profiling());
        let (c, _) = parse(&[("CLPRISM_DEVICE_TIMING", "sample:100")]);
        assert_eq!(c.device_timing, DeviceTiming::Sample { every: 100 });
        assert!(c.device_timing.enables_profiling());
        let (c, _) = parse(&[("CLPRISM_DEVICE_TIMING", "sample:1")]);
        assert_eq!(c.device_timing, DeviceTiming::All);
        for bad in ["sample:0", "sample:", "sometimes", "sample:-3"] {
            let (c, w) = parse(&[("CLPRISM_DEVICE_TIMING", bad)]);
            assert_eq!(c.device_timing, DeviceTiming::All, "{bad}");
            assert_eq!(w.len(), 1, "{bad}");
            assert!(w[0].contains("CLPRISM_DEVICE_TIMING"), "{bad}");
        }
    }

    #[test]
    fn bad_verify_warns() {
        let (c, w) = parse(&[("CLPRISM_VERIFY", "yes")]);
        assert!(!c.verify);
        assert_eq!(w.len(), 1);
    }
}
