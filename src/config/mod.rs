//! The `CLPRISM_*` environment variables (DESIGN.md §3), parsed once, from the one table in
//! [`controls`] (which also generates `docs/controls.md` and `clprism run --help`).
//!
//! A malformed value never aborts the application: it produces one warning line on stderr
//! naming the variable, the bad value and the value used instead.

pub mod controls;

pub use controls::{Config, Control, Reader, CONTROLS};
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
/// docs/results.md, "Interposer overhead"). Sampling keeps the event cost off most launches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceTiming {
    /// Every launch gets an event and a measured `device_ns`.
    All,
    /// The default: every launch of a kernel while it is new, then a random sample sized so
    /// that the estimated total device time of the kernel keeps a 95 % confidence interval
    /// of about ± `target_bp` basis points (`crate::log::sampling`).
    Adaptive {
        /// Target relative half-width of the 95 % confidence interval of a kernel's total
        /// device time, in basis points (200 = 2 %).
        target_bp: u32,
    },
    /// The first launch of each kernel object and then every `every`-th launch of it are
    /// timed; the others are logged with status `untimed`. `every` ≥ 1.
    Sample {
        /// Period in launches of one kernel object.
        every: u64,
    },
    /// No launch is timed: profiling is not turned on for the app's queues and records have
    /// status `untimed` (unless the app's own queue profiles and the app asks for an event).
    Off,
}

/// The adaptive rule's default target: ± 5 % (95 % confidence) on each kernel's total. At
/// ± 2 % an H100 timed 2,196 of 20,000 launches of a 6 µs stencil (+3.7 µs per launch over
/// native, most of it NVIDIA's price for a profiled event), which misses the +2 µs goal
/// of issue 21 (results/session11-2026-11-24).
pub const ADAPTIVE_TARGET_BP: u32 = 500;

impl DeviceTiming {
    /// Whether clprism turns profiling on for the queues it sees created.
    pub fn enables_profiling(self) -> bool {
        !matches!(self, DeviceTiming::Off)
    }
}

/// Parses `adaptive[:PCT]` | `all` | `off` | `sample:N` (N ≥ 1, `sample:1` = `all`;
/// 0.1 ≤ PCT ≤ 50).
pub fn parse_device_timing(s: &str) -> Option<DeviceTiming> {
    match s.trim().to_ascii_lowercase().as_str() {
        "all" | "on" | "1" => Some(DeviceTiming::All),
        "off" | "0" => Some(DeviceTiming::Off),
        "adaptive" => Some(DeviceTiming::Adaptive {
            target_bp: ADAPTIVE_TARGET_BP,
        }),
        t => {
            if let Some(pct) = t.strip_prefix("adaptive:") {
                let pct: f64 = pct.trim().trim_end_matches('%').parse().ok()?;
                if !(0.1..=50.0).contains(&pct) {
                    return None;
                }
                return Some(DeviceTiming::Adaptive {
                    target_bp: (pct * 100.0).round() as u32,
                });
            }
            let n: u64 = t.strip_prefix("sample:")?.trim().parse().ok()?;
            match n {
                0 => None,
                1 => Some(DeviceTiming::All),
                every => Some(DeviceTiming::Sample { every }),
            }
        }
    }
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

/// `CLPRISM_BALANCE_SIBLINGS` values: which like devices of the app's device make `auto`
/// open the balance devices at the first build and probe first launches (`exec::early`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Siblings {
    /// GPUs and accelerators: siblings that add compute of their own.
    Gpu,
    /// Any device type (CPU devices sharing the host's cores too: for tests).
    Any,
    /// Never: the opening waits for `CLPRISM_BALANCE_OPEN_COST`'s credit.
    Off,
}

/// Default of `CLPRISM_EMU_SNAPSHOT_MAX`, bytes (256 MiB).
pub const DEFAULT_EMU_SNAPSHOT_MAX: u64 = 256 << 20;
/// Default of `CLPRISM_PINNED_MAX`, bytes (4 GiB).
pub const DEFAULT_PINNED_MAX: u64 = 4 << 30;

/// Default of `CLPRISM_CACHE_MAX`: 1 GiB.
pub const DEFAULT_CACHE_MAX: u64 = 1 << 30;

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

/// Parses a `CLPRISM_MODE` value (case-insensitive).
pub fn parse_mode(v: &str) -> Option<Mode> {
    match v.trim().to_ascii_lowercase().as_str() {
        "off" => Some(Mode::Off),
        "log" => Some(Mode::Log),
        "project" => Some(Mode::Project),
        "balance" => Some(Mode::Balance),
        _ => None,
    }
}

impl Config {
    /// Parses the configuration from a variable lookup (the environment in production, a map
    /// in tests), row by row of [`CONTROLS`]. Returns the configuration and the warning lines
    /// to print (one per malformed variable).
    pub fn from_lookup(get: impl Fn(&str) -> Option<String>, pid: u32) -> (Config, Vec<String>) {
        let mut warnings = Vec::new();
        let mut cfg = Config::parse_rows(&get, pid, &mut warnings);
        if !IMPLEMENTED_MODES.contains(&cfg.mode) {
            warnings.push(format!(
                "CLPRISM_MODE={} is not implemented in this build yet; using log",
                cfg.mode.as_str()
            ));
            cfg.mode = Mode::Log;
        }
        (cfg, warnings)
    }
}

/// The configuration read from the environment now, without printing warnings: for the
/// `clprism` command (which reads its own rows, such as `CLPRISM_LIB`, and leaves the warnings
/// to the interposer in the app's process) and for the library constructor.
pub fn from_env_quiet() -> Config {
    Config::from_lookup(|k| std::env::var(k).ok(), std::process::id()).0
}

/// Whether the Chrome trace is on when the library is loaded: `CLPRISM_TRACE` is set and
/// `CLPRISM_MODE` is not `off`. Reads only those two rows and prints nothing, so processes
/// that never use OpenCL stay silent.
pub fn trace_at_load() -> bool {
    let (cfg, _) = Config::from_lookup(
        |k| match k {
            "CLPRISM_TRACE" | "CLPRISM_MODE" => std::env::var(k).ok(),
            _ => None,
        },
        std::process::id(),
    );
    cfg.trace.is_some() && cfg.mode != Mode::Off
}

/// clprism's cache directory (not created): [`cache_dir_from`] with the process's
/// `CLPRISM_CACHE` ([`get`]).
pub fn cache_dir() -> Option<PathBuf> {
    cache_dir_from(get().cache.as_deref())
}

/// `CLPRISM_CACHE`, else `$XDG_CACHE_HOME/clprism`, else `$HOME/.cache/clprism` (not created).
/// `cache` is the parsed `CLPRISM_CACHE` ([`Config::cache`]).
pub fn cache_dir_from(cache: Option<&std::path::Path>) -> Option<PathBuf> {
    if let Some(d) = cache {
        return Some(d.to_path_buf());
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(d).join("clprism"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|h| PathBuf::from(h).join(".cache").join("clprism"))
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
        let adaptive = DeviceTiming::Adaptive {
            target_bp: ADAPTIVE_TARGET_BP,
        };
        let (c, w) = parse(&[]);
        assert_eq!(c.device_timing, adaptive);
        assert!(c.device_timing.enables_profiling());
        assert!(w.is_empty());
        let (c, _) = parse(&[("CLPRISM_DEVICE_TIMING", "all")]);
        assert_eq!(c.device_timing, DeviceTiming::All);
        let (c, _) = parse(&[("CLPRISM_DEVICE_TIMING", "off")]);
        assert_eq!(c.device_timing, DeviceTiming::Off);
        assert!(!c.device_timing.enables_profiling());
        let (c, _) = parse(&[("CLPRISM_DEVICE_TIMING", "sample:100")]);
        assert_eq!(c.device_timing, DeviceTiming::Sample { every: 100 });
        assert!(c.device_timing.enables_profiling());
        let (c, _) = parse(&[("CLPRISM_DEVICE_TIMING", "sample:1")]);
        assert_eq!(c.device_timing, DeviceTiming::All);
        let (c, _) = parse(&[("CLPRISM_DEVICE_TIMING", "adaptive:5")]);
        assert_eq!(c.device_timing, DeviceTiming::Adaptive { target_bp: 500 });
        let (c, _) = parse(&[("CLPRISM_DEVICE_TIMING", "adaptive:0.5%")]);
        assert_eq!(c.device_timing, DeviceTiming::Adaptive { target_bp: 50 });
        for bad in [
            "sample:0",
            "sample:",
            "sometimes",
            "sample:-3",
            "adaptive:0",
            "adaptive:",
            "adaptive:80",
        ] {
            let (c, w) = parse(&[("CLPRISM_DEVICE_TIMING", bad)]);
            assert_eq!(c.device_timing, adaptive, "{bad}");
            assert_eq!(w.len(), 1, "{bad}");
            assert!(w[0].contains("CLPRISM_DEVICE_TIMING"), "{bad}");
        }
    }

    #[test]
    fn table_rows_are_named_and_unique() {
        let mut seen = std::collections::HashSet::new();
        for c in CONTROLS {
            assert!(c.name.starts_with("CLPRISM_"), "{}", c.name);
            assert!(seen.insert(c.name), "{} twice", c.name);
            assert!(!c.usage.is_empty() && !c.doc.is_empty(), "{}", c.name);
        }
    }

    #[test]
    fn every_malformed_value_gives_one_warning_naming_variable_value_and_default() {
        for (var, bad) in [
            ("CLPRISM_MODE", "fast"),
            ("CLPRISM_DEVICE_TIMING", "sometimes"),
            ("CLPRISM_LOG_POLL_US", "soon"),
            ("CLPRISM_VERIFY", "yes"),
            ("CLPRISM_EMU_SNAPSHOT_MAX", "lots"),
            ("CLPRISM_PINNED_MAX", "-1"),
            ("CLPRISM_SPLIT", "sometimes"),
            ("CLPRISM_BALANCE_EARLY", "later"),
        ] {
            let row = CONTROLS.iter().find(|c| c.name == var).unwrap();
            let (_, w) = parse(&[(var, bad)]);
            assert_eq!(w.len(), 1, "{var}: {w:?}");
            assert_eq!(w[0], malformed(var, bad, row.values, row.default));
            assert!(w[0].contains(&format!("using {}", row.default)), "{w:?}");
        }
    }

    #[test]
    fn blank_values_count_as_unset() {
        let (c, w) = parse(&[
            ("CLPRISM_MODE", " "),
            ("CLPRISM_LOG", ""),
            ("CLPRISM_TRACE", ""),
            ("CLPRISM_FAULT", "  "),
            ("CLPRISM_DEBUG", ""),
        ]);
        assert_eq!(c.mode, Mode::Log);
        assert_eq!(c.log, LogTarget::File("clprism-42.jsonl".into()));
        assert!(c.trace.is_none() && c.fault.is_none() && !c.debug);
        assert!(w.is_empty());
        let (c, _) = parse(&[("CLPRISM_TRACE", "/t/%p.json"), ("CLPRISM_DEBUG", "1")]);
        assert_eq!(c.trace, Some(PathBuf::from("/t/42.json")));
        assert!(c.debug);
        let (c, _) = parse(&[("CLPRISM_LOG_POLL_US", "0"), ("CLPRISM_SUMMARY", "/s-%p")]);
        assert_eq!(c.log_poll_us, Some(0));
        assert_eq!(c.summary, SummaryTarget::File("/s-42".into()));
    }

    #[test]
    fn bad_verify_warns() {
        let (c, w) = parse(&[("CLPRISM_VERIFY", "yes")]);
        assert!(!c.verify);
        assert_eq!(w.len(), 1);
    }
}
