//! The table of `CLPRISM_*` variables (in the spirit of the OpenCL Intercept Layer's
//! `controls.h`): one row per variable, which the [`controls!`] macro turns into
//!
//! * a field of [`Config`] (its doc comment is the row's usage line),
//! * the parsing of that field in [`Config::from_lookup`] (the row's parser, its default, and
//!   the one warning line for a malformed value),
//! * an entry of [`CONTROLS`], from which `docs/controls.md` ([`markdown`]) and the environment
//!   part of `clprism run --help` ([`usage_lines`]) are generated.
//!
//! To add a variable: add a row here, run `cargo run --bin clprism -- controls --markdown >
//! docs/controls.md` (or `CLPRISM_BLESS=1 cargo test --test docs`), and use the new field
//! through [`super::get`] (in the app's process) or [`super::from_env_quiet`] (in the
//! `clprism` command).

use super::{
    parse_bytes, parse_device_timing, DeviceTiming, LogTarget, Mode, SplitPolicy, SummaryTarget,
    DEFAULT_CACHE_MAX, DEFAULT_EMU_SNAPSHOT_MAX, DEFAULT_PINNED_MAX,
};
use std::path::PathBuf;

/// Which program reads a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reader {
    /// The interposer (`libOpenCL.so`) in the application's process, at its first OpenCL call.
    Library,
    /// The `clprism` command (`run`, `accuracy`, `emulate`).
    Command,
    /// The example apps under `examples/` (C, `examples/common.c`).
    Examples,
    /// The test suite (`tests/`).
    Tests,
}

impl Reader {
    /// Short name used in the generated table.
    pub fn as_str(self) -> &'static str {
        match self {
            Reader::Library => "library",
            Reader::Command => "clprism",
            Reader::Examples => "examples",
            Reader::Tests => "tests",
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct Control {
    /// The variable's name, `CLPRISM_...`.
    pub name: &'static str,
    /// Who reads it.
    pub reader: Reader,
    /// Accepted values, man-page style (`off|log|project|balance`, `BYTES`, `FILE`).
    pub values: &'static str,
    /// What is used when it is unset, empty or malformed.
    pub default: &'static str,
    /// An example value.
    pub example: &'static str,
    /// One line: what it does.
    pub usage: &'static str,
    /// The longer description (Markdown).
    pub doc: &'static str,
}

/// Parses one variable: unset or blank → `dflt`; a value the parser refuses → `dflt` and one
/// warning naming the variable, the bad value and the value used.
#[allow(clippy::too_many_arguments)]
fn parse_row<T>(
    get: &dyn Fn(&str) -> Option<String>,
    name: &str,
    values: &str,
    default: &str,
    pid: u32,
    parse: fn(&str, u32) -> Option<T>,
    dflt: fn(u32) -> T,
    warnings: &mut Vec<String>,
) -> T {
    match get(name) {
        Some(v) if !v.trim().is_empty() => {
            let v = v.trim();
            parse(v, pid).unwrap_or_else(|| {
                warnings.push(super::malformed(name, v, values, default));
                dflt(pid)
            })
        }
        _ => dflt(pid),
    }
}

/// Defines [`Config`], its parsing and [`CONTROLS`] from one list of rows.
macro_rules! controls {
    ($(
        $field:ident: $ty:ty {
            name: $name:literal,
            reader: $reader:ident,
            values: $values:literal,
            default: $default:literal => $dflt:expr,
            parse: $parse:expr,
            example: $example:literal,
            usage: $usage:literal,
            doc: $doc:literal $(,)?
        }
    )*) => {
        /// The parsed configuration: one field per row of [`CONTROLS`].
        #[derive(Debug, Clone)]
        pub struct Config {
            $(
                #[doc = concat!("`", $name, "` (", $values, ", default ", $default, "): ", $usage)]
                pub $field: $ty,
            )*
        }

        /// Every `CLPRISM_*` variable, in the order of `docs/controls.md`.
        pub static CONTROLS: &[Control] = &[
            $(
                Control {
                    name: $name,
                    reader: Reader::$reader,
                    values: $values,
                    default: $default,
                    example: $example,
                    usage: $usage,
                    doc: $doc,
                },
            )*
        ];

        impl Config {
            /// Parses every row; malformed values add a warning to `warnings`.
            pub(super) fn parse_rows(
                get: &dyn Fn(&str) -> Option<String>,
                pid: u32,
                warnings: &mut Vec<String>,
            ) -> Config {
                Config {
                    $(
                        $field: parse_row::<$ty>(
                            get, $name, $values, $default, pid, $parse, $dflt, warnings,
                        ),
                    )*
                }
            }
        }
    };
}

fn with_pid(p: &str, pid: u32) -> String {
    p.replace("%p", &pid.to_string())
}

fn raw(v: &str, _: u32) -> Option<Option<String>> {
    Some(Some(v.to_string()))
}

fn path(v: &str, _: u32) -> Option<Option<PathBuf>> {
    Some(Some(PathBuf::from(v)))
}

/// `on`/`1` or `off`/`0`.
fn on_off(v: &str, _: u32) -> Option<bool> {
    match v {
        "on" | "1" => Some(true),
        "off" | "0" => Some(false),
        _ => None,
    }
}

fn bytes(v: &str, _: u32) -> Option<u64> {
    parse_bytes(v)
}

controls! {
    mode: Mode {
        name: "CLPRISM_MODE",
        reader: Library,
        values: "off|log|project|balance",
        default: "log" => |_| Mode::Log,
        parse: |v, _| super::parse_mode(v),
        example: "project",
        usage: "what clprism does besides forwarding every call to the real OpenCL library",
        doc: "`off`: pure forwarding, no side tables, no log. `log`: one JSON record per kernel \
launch with the measured device time, and a per-kernel summary at exit. `project`: log, plus \
the first work-group of each launch emulated on the CPU on a background thread and its runtime \
projected on every profiled device ([projection.md](projection.md)). `balance`: log, plus each \
NDRange split into chunks of whole work-groups run on all balance devices at once \
([balance.md](balance.md)). Case-insensitive. Also read, without any warning, when the library \
is loaded: with `off` no trace is recorded (`CLPRISM_TRACE`).",
    }
    real_opencl: Option<PathBuf> {
        name: "CLPRISM_REAL_OPENCL",
        reader: Library,
        values: "PATH",
        default: "search" => |_| None,
        parse: path,
        example: "/usr/lib/x86_64-linux-gnu/libOpenCL.so.1",
        usage: "the real OpenCL library (ICD loader); nothing else is tried when set",
        doc: "Unset: the loader the app is already bound to, else `libOpenCL.so.1` where the \
dynamic linker finds it (`LD_LIBRARY_PATH`, then `/etc/ld.so.cache`), then the system library \
directories, skipping clprism itself. A path that is clprism itself, missing, or a library \
without OpenCL gives one clear error and no crash.",
    }
    log: LogTarget {
        name: "CLPRISM_LOG",
        reader: Library,
        values: "FILE|-|off",
        default: "clprism-%p.jsonl" => |pid| LogTarget::File(PathBuf::from(format!("clprism-{pid}.jsonl"))),
        parse: |v, pid| Some(match v {
            "-" => LogTarget::Stderr,
            "off" => LogTarget::Off,
            p => LogTarget::File(PathBuf::from(with_pid(p, pid))),
        }),
        example: "/tmp/run-%p.jsonl",
        usage: "the per-kernel JSONL log: a path (%p = pid), - for stderr, or off",
        doc: "The file is created with mode 0600; kernel sources and buffer contents never \
appear in it. Record fields: [log-schema.md](log-schema.md).",
    }
    summary: SummaryTarget {
        name: "CLPRISM_SUMMARY",
        reader: Library,
        values: "stderr|off|FILE",
        default: "stderr" => |_| SummaryTarget::Stderr,
        parse: |v, pid| Some(match v {
            "stderr" => SummaryTarget::Stderr,
            "off" => SummaryTarget::Off,
            p => SummaryTarget::File(PathBuf::from(with_pid(p, pid))),
        }),
        example: "off",
        usage: "where the end-of-run per-kernel summary goes (%p = pid in a path)",
        doc: "In project mode the summary adds, per kernel, the measured mean device time, the \
mean emulation time of one work-group, the projected time on the launch device's profile and \
the three devices with the smallest mean projected time.",
    }
    trace: Option<PathBuf> {
        name: "CLPRISM_TRACE",
        reader: Library,
        values: "FILE",
        default: "off" => |_| None,
        parse: |v, pid| Some(Some(PathBuf::from(with_pid(v, pid)))),
        example: "/tmp/run-%p.json",
        usage: "write a Chrome trace event JSON timeline (Perfetto) to FILE at exit (%p = pid)",
        doc: "Not in `off` mode. Read when the library is loaded (so that every OpenCL call is \
timed), without any warning, and again at the first OpenCL call. A process killed by a signal \
writes none. Tracks and checks: [usage.md](usage.md#timeline-clprism_trace).",
    }
    device_timing: DeviceTiming {
        name: "CLPRISM_DEVICE_TIMING",
        reader: Library,
        values: "adaptive[:PCT]|all|off|sample:N",
        default: "adaptive" => |_| DeviceTiming::Adaptive { target_bp: crate::config::ADAPTIVE_TARGET_BP },
        parse: |v, _| parse_device_timing(v),
        example: "all",
        usage: "which launches get a measured device_ns in log mode",
        doc: "`adaptive` (default): per kernel (program and function name), launch t is timed with \
probability π = min(1, c/t), drawn at random before it runs, with c = max(32, n₀/2) and \
n₀ = (1.96·CV/ε)² (Cochran's sample size for a total to relative error ε, *Sampling \
Techniques* 1977 §4.4), CV being the coefficient of variation of the kernel's device times \
timed so far (1/3 until 8 have completed) and ε the target: ± PCT % (default 2, from 0.1 to \
50) on the 95 % confidence interval of the kernel's total device time. So the first c \
launches of a kernel (at least 32) are all timed, then a sample that thins out as c/t and \
keeps that interval near ± ε however long the run (about c·(1 + ln(N/c)) of N launches are \
timed). The summary weights each timed launch by 1/π (Hájek estimator, Särndal et al. 1992 \
§5.7) and prints per kernel `timed n of N, total T ms +- r %` (95 % confidence). Launches \
that balance mode measures are always timed, and in project mode every launch is. \
`all` (also `on`, `1`, `sample:1`): every launch. `off` (also `0`): profiling is not \
turned on for the app's queues; records say `untimed`. `sample:N` (N ≥ 1): the first launch of \
each kernel object and every N-th after it (estimated like a random 1-in-N sample). Untimed \
launches say `untimed`; timed ones chosen with probability below 1 carry it as `timing_p`. \
Timing needs an event on a profiled queue, which \
NVIDIA charges several µs per launch for ([results.md](results.md#interposer-overhead-issue-2-one-nvidia-h100-and-one-h200)).",
    }
    log_poll_us: Option<u64> {
        name: "CLPRISM_LOG_POLL_US",
        reader: Library,
        values: "MICROSECONDS",
        default: "10000" => |_| None,
        parse: |v, _| v.parse::<u64>().ok().map(Some),
        example: "0",
        usage: "benchmark aid: shortest time between two passes of the log writer over pending events",
        doc: "`0` polls on every message, the behaviour before rate limiting, compared in \
`bench/overhead.sh` (`OVERHEAD_OLD_POLL=1`).",
    }
    devices: Option<String> {
        name: "CLPRISM_DEVICES",
        reader: Library,
        values: "all|gpu|gpu:N|cpu|P:D,...,remote",
        default: "gpu, else all" => |_| None,
        parse: raw,
        example: "1:0,remote",
        usage: "balance: the devices taking part (remote servers: docs/remote.md)",
        doc: "`gpu:N`: the first N GPUs; a list of `P:D` (platform:device indices) and \
`remote` (every device of a PoCL-Remote platform): `1:0,remote` is the local device 1:0 and \
every server's devices. Parsed by `exec::devices`. When the app's own device is the only \
balance device, nothing is split or copied ([remote.md](remote.md)).",
    }
    scheduler: Option<String> {
        name: "CLPRISM_SCHEDULER",
        reader: Library,
        values: "boyer|static:F1,F2,...|css:FRAC|gss|tss|single[:I]|best",
        default: "boyer" => |_| None,
        parse: raw,
        example: "static:0.6,0.4",
        usage: "balance: the chunk scheduler",
        doc: "Parsed by `sched::parse`. `best` runs each whole launch on the device the \
projection ranks first (profiles from `CLPRISM_PROFILES`, work-group 0 emulated on zero-filled \
buffers, once per kernel and shape); when a device has no profile it tries each device once, \
then takes the fastest measured. `schedule.best` says which rule chose and why.",
    }
    boyer: Option<String> {
        name: "CLPRISM_BOYER",
        reader: Library,
        values: "KEY=VALUE,...",
        default: "beta=0.07,delta=1.5,gamma=2,overdue=4,early=on,warm=0.75" => |_| None,
        parse: raw,
        example: "beta=0.05,warm=off",
        usage: "balance: parameters of Boyer's scheduler",
        doc: "The paper's `beta`, `delta`, `gamma` (§4.3.2, Table 4.2) and clprism's extensions \
`overdue=<factor|off>` (abandon a device running past factor × its expected time while others \
idle; `off` turns off only this extension: the paper's own straggler abandonment, when the last \
work-group is claimed, stays), `early=<on|off>` (final split as soon as a grown chunk would reach a device's share) and \
`warm=<fraction|off>` (a repeated launch of a kernel starts from the Ω every device measured in \
its last launch: each device's first chunk is this fraction of its eq. 4.3 share, the rest is \
split when one device finishes; after the hybrid Boyer proposes in §4.6; record field \
`schedule.warm_start`). Parsed by `sched::parse`.",
    }
    verify: bool {
        name: "CLPRISM_VERIFY",
        reader: Library,
        values: "0|1",
        default: "0" => |_| false,
        parse: |v, _| match v { "0" => Some(false), "1" => Some(true), _ => None },
        example: "1",
        usage: "balance: also run each balanced launch natively and report differing bytes",
        doc: "The result goes into the record's `schedule.verify`.",
    }
    agreement: bool {
        name: "CLPRISM_BALANCE_AGREEMENT",
        reader: Library,
        values: "on|off",
        default: "on" => |_| true,
        parse: on_off,
        example: "off",
        usage: "balance: check a kernel's first split over devices unlike the app's against a whole run",
        doc: "A kernel's first split over a device of another name or driver version than the \
app's device (a CPU beside a GPU, PoCL's basic beside its pthread device) is compared byte for \
byte with a whole run on the app's device (as `CLPRISM_VERIFY`, once per kernel). If they differ, \
the app gets the whole run's bytes and the kernel runs whole from then on, with the reason in \
its records: another compiler may round or contract floating point differently, and a split \
must be byte-identical to a single-device run. `off` skips the check.",
    }
    float_on_unlike: bool {
        name: "CLPRISM_BALANCE_FLOAT",
        reader: Library,
        values: "like|any",
        default: "like" => |_| false,
        parse: |v, _| match v { "like" => Some(false), "any" => Some(true), _ => None },
        example: "any",
        usage: "balance: devices a floating-point kernel may be split over",
        doc: "`like`: a kernel that does floating-point arithmetic (add, multiply, divide, \
math built-ins; found in its SPIR-V) is split only over devices of the app's device's name and \
driver version, because another compiler may contract or round it otherwise and a split must be \
byte-identical to a single-device run; the other devices are listed in the record's \
`schedule.devices_excluded` with this reason. Integer and data-movement kernels split over every \
device. `any`: floating-point kernels split over unlike devices too, their first split checked \
by `CLPRISM_BALANCE_AGREEMENT`; later splits may then differ in the last bits (on PoCL 5.0, \
Rodinia gaussian, hotspot and hotspot3D agree at their first split and differ later).",
    }
    fault: Option<String> {
        name: "CLPRISM_FAULT",
        reader: Library,
        values: "block:I|fail:I|differ:I|stall:I:MS|open-delay:MS",
        default: "none" => |_| None,
        parse: raw,
        example: "block:1",
        usage: "testing aid for balance mode: inject a device fault",
        doc: "`block:I`: device I (index among the participating devices) never completes a \
chunk; `fail:I`: enqueues on device I fail; `stall:I:MS`: device I's chunks wait until MS ms \
after it opened (they become abandoned stragglers that drain later); `open-delay:MS`: opening the devices takes MS ms \
longer. Parsed by `exec::devices::parse_fault`.",
    }
    profiles: Option<PathBuf> {
        name: "CLPRISM_PROFILES",
        reader: Library,
        values: "DIR",
        default: "profiles/" => |_| None,
        parse: path,
        example: "$PWD/profiles",
        usage: "project: directory of device profiles (every *.json in it is projected)",
        doc: "Default: `profiles/` of the source tree the library was built from. Also read by \
`clprism emulate --project` when `--profiles` is not given. Schema: `profiles/README.md`.",
    }
    toolchain: Option<PathBuf> {
        name: "CLPRISM_TOOLCHAIN",
        reader: Library,
        values: "DIR",
        default: "PATH" => |_| None,
        parse: path,
        example: "/usr/lib/llvm-15/bin",
        usage: "project and balance: directory with clang-N and llvm-spirv-N (and opt-N) of one LLVM version",
        doc: "`DIR` and `DIR/bin` are searched; unset, the tools are searched on `PATH`. Also \
read by `clprism emulate`. An empty toolchain and cache give `unavailable` emulations with a \
reason naming the toolchain. LLVM's `opt` beside them is optional: it serves the programs whose \
`-O2` output llvm-spirv rejects; without it they are compiled along the other fallbacks \
(`emulation.compile_path`, docs/projection.md). A directory of links to clang and llvm-spirv \
alone hides `opt` (`tests/project_compile_path.rs`).",
    }
    cache: Option<PathBuf> {
        name: "CLPRISM_CACHE",
        reader: Library,
        values: "DIR",
        default: "$XDG_CACHE_HOME/clprism" => |_| None,
        parse: path,
        example: "/tmp/clprism-cache",
        usage: "clprism's cache directory: SPIR-V, footprint models, binaries, app binaries' sources",
        doc: "Unset: `$XDG_CACHE_HOME/clprism`, else `$HOME/.cache/clprism`. Holds SPIR-V (a \
cache filled on another machine serves one without toolchain), footprint models, the binaries \
balance mode built (`binaries/`), and the source of the program binaries the app read back \
(`binary-<hash>.json`, the source sealed with a key derived from the binary). Files are 0600; a \
symlink at an entry is not followed. Its size is bounded by `CLPRISM_CACHE_MAX`; `clprism cache \
stats` shows it.",
    }
    cache_max: u64 {
        name: "CLPRISM_CACHE_MAX",
        reader: Library,
        values: "BYTES|off",
        default: "1G" => |_| DEFAULT_CACHE_MAX,
        parse: |v, _| match v.to_ascii_lowercase().as_str() {
            "off" => Some(0),
            _ => parse_bytes(v),
        },
        example: "256M",
        usage: "most bytes the cache directory holds; past it the least recently used entries go (0, off: no bound)",
        doc: "Bytes on disk (as `du` counts them) of clprism's own entries in the cache directory \
(`CLPRISM_CACHE`: SPIR-V, footprint models, registers, app binaries' sources, `binaries/`); \
other files there (e.g. `scripts/pocl_remote.sh`'s build) are neither counted nor removed. \
Suffixes `K`, `M`, `G` are KiB, MiB, GiB. A process checks the bound once, at its first read or \
write of an entry, on a low-priority background thread that never delays the app nor holds up its exit: when \
the entries exceed the bound, the least recently used ones (by modification time, refreshed when \
an entry is read and is older than 10 minutes) are removed until they fill at most 90 % of it. One \
process trims a directory at a time, and a directory of 4,096 entries or more is not scanned \
again for 5 minutes. docs/usage.md, \"The cache directory\", has the details and the costs. `0` or `off`: no bound, nothing is removed. Also read by `clprism cache` \
(`stats`, `trim`, `clear`; docs/usage.md).",
    }
    emu_snapshot_max: u64 {
        name: "CLPRISM_EMU_SNAPSHOT_MAX",
        reader: Library,
        values: "BYTES",
        default: "256M" => |_| DEFAULT_EMU_SNAPSHOT_MAX,
        parse: bytes,
        example: "1G",
        usage: "project: most bytes of device-side buffer snapshots held at once",
        doc: "The device copies of the buffers project-mode launches read, held until their \
emulation ends. On the host a snapshot over 1 MiB costs only the 64 KiB pages the emulated \
work-group touches (read back on first touch); smaller ones are read whole. Suffixes `K`, `M`, \
`G` (with or without `iB`/`B`) are KiB, MiB, GiB. A launch whose buffer arguments would exceed \
it is not emulated, with the reason in its record. Buffers the kernel only reads are not copied at \
the launch: when the app writes one before the emulation ended and its copy does not fit, the \
write is held back on the device until the emulation has read its pages (bounded; \
`emulation.snapshot_held_ns`, docs/projection.md).",
    }
    pinned_max: u64 {
        name: "CLPRISM_PINNED_MAX",
        reader: Library,
        values: "BYTES",
        default: "4G" => |_| DEFAULT_PINNED_MAX,
        parse: bytes,
        example: "0",
        usage: "balance: most bytes of page-locked host staging kept for transfers (0: off)",
        doc: "Staging between the app's buffers and the other devices (input snapshots, \
read-back of their chunks), reused across launches; past it, or if the driver refuses, heap \
memory is used. Record field `schedule.pinned_staging_bytes`.",
    }
    split: SplitPolicy {
        name: "CLPRISM_SPLIT",
        reader: Library,
        values: "auto|always",
        default: "auto" => |_| SplitPolicy::Auto,
        parse: |v, _| match v {
            "auto" => Some(SplitPolicy::Auto),
            "always" => Some(SplitPolicy::Always),
            _ => None,
        },
        example: "always",
        usage: "balance: split a launch only when the measured figures say it pays, or always",
        doc: "`auto` decides before any barrier, build or footprint: a kernel's first launch is \
forwarded and measured, a one-work-group launch is never split, later ones split when the ideal \
makespan over all devices plus the host transfers (and at least the shortest split measured) \
beats the app's device alone by 5 % (`exec::decide`, `sched::split`; record fields \
`split_decision`, `fallback`; [balance.md](balance.md)). Applies when the app's device is one \
of the balance devices. With `CLPRISM_BALANCE_EARLY` on, `auto` opens the balance devices (and \
builds the program on them) only once launches of at least 100 us each on the app's device add \
up to `CLPRISM_BALANCE_OPEN_COST` (`exec::opening_deferred`); until then launches are forwarded \
and say so. \
`always` splits every launch that can be split.",
    }
    balance_open_cost_ms: u64 {
        name: "CLPRISM_BALANCE_OPEN_COST",
        reader: Library,
        values: "MILLISECONDS",
        default: "500" => |_| 500,
        parse: |v, _| v.parse::<u64>().ok(),
        example: "0",
        usage: "balance auto: app device time of long launches before the balance devices open",
        doc: "`CLPRISM_SPLIT=auto` opens the balance devices (and builds the app's programs on \
them) once the launches long enough to split (at least 100 us each on the app's device) add up \
to this much device time: a split can save at most the time of the launches it splits, so \
opening costs an app that exits soon after at most what splitting could have gained by then \
(ski rental). The default is about what opening one H100 and PoCL's CPU device took \
(`devices_ready_ms` 427-579 ms). `0`: open at the second launch of a kernel long enough to \
split.",
    }
    balance_split_floor_us: u64 {
        name: "CLPRISM_BALANCE_SPLIT_FLOOR",
        reader: Library,
        values: "MICROSECONDS",
        default: "500" => |_| 500,
        parse: |v, _| v.parse::<u64>().ok(),
        example: "500",
        usage: "balance auto: what a split launch is assumed to cost at least on a GPU before one is measured",
        doc: "`CLPRISM_SPLIT=auto` estimates no split launch below this much wall time while none \
was measured on a GPU or accelerator app device (the barrier on the app's queue, an enqueue and a \
completion per device): a launch shorter than about twice it is kept whole until a split of \
another kernel measures the real floor. A shorter measured split replaces it at once, and once \
four later splits (not a kernel's first) were measured, the shortest split replaces it even when \
longer (`exec::launch::floor`). The default is about what a split launch issued behind the one \
before took on 2 and 4 H200s (0.55-0.70 ms). CPU app devices assume 50 us.",
    }
    balance_siblings: crate::config::Siblings {
        name: "CLPRISM_BALANCE_SIBLINGS",
        reader: Library,
        values: "gpu|any|off",
        default: "gpu" => |_| crate::config::Siblings::Gpu,
        parse: |v, _| match v {
            "gpu" => Some(crate::config::Siblings::Gpu),
            "any" => Some(crate::config::Siblings::Any),
            "off" | "0" => Some(crate::config::Siblings::Off),
            _ => None,
        },
        example: "off",
        usage: "balance: probe first launches where the app's device has like siblings; a long one opens the devices",
        doc: "When the app's device has siblings (devices of its platform with its name; `gpu`: \
only GPUs and accelerators, whose siblings add compute; `any`: CPU devices too, for tests on PoCL), \
the first launch of a kernel runs its first Boyer chunk (`beta`·2/N of the work-groups along the \
split dimension) on the app's device as a probe instead of being forwarded whole to be measured. \
A probe whose rest takes at least `CLPRISM_BALANCE_OPEN_COST` opens the balance devices at once \
(the app's device goes on in chunks while they open), and the rest is split when the probe's \
time says a split pays, else forwarded (`exec::early`, issue 31 items 1-2). Kernels with NDRange \
queries (`get_group_id`, `get_global_size`, ...) are not probed. `off`: first launches are \
forwarded whole to be measured.",
    }
    debug: bool {
        name: "CLPRISM_DEBUG",
        reader: Library,
        values: "ANY",
        default: "off" => |_| false,
        parse: |_, _| Some(true),
        example: "1",
        usage: "any value: timestamped clprism-debug: lines on stderr",
        doc: "Device opening, builds, balance decisions, the exit; each line has the ms since \
the app's first OpenCL call and the thread name.",
    }
    balance_gather: bool {
        name: "CLPRISM_BALANCE_GATHER",
        reader: Library,
        values: "lazy|eager",
        default: "lazy" => |_| true,
        parse: |v, _| match v {
            "lazy" => Some(true),
            "eager" => Some(false),
            _ => None,
        },
        example: "eager",
        usage: "balance: leave what a split launch wrote on the devices until the app needs it",
        doc: "`lazy`: what each device wrote in a split launch with a footprint model stays on \
that device (the buffer directory, `exec::directory`); a later chunk fetches only the ranges it \
reads that are stale on its device (its read hull, halos included), and the app's buffer is \
brought up to date only when the app reads, maps, copies, fills or releases it, or a launch \
that is not split uses it. `eager`: every split launch gathers its results into the app's \
buffer at once (the behaviour before the directory).",
    }
    balance_async: bool {
        name: "CLPRISM_BALANCE_ASYNC",
        reader: Library,
        values: "on|off",
        default: "on" => |_| true,
        parse: on_off,
        example: "off",
        usage: "balance: return from a balanced launch at once, run it on clprism's launch thread",
        doc: "`on`: a launch balance mode may split returns to the app at once with an event that \
completes when all its chunks have (a barrier on the app's queue gated by a user event); \
clprism's launch thread plans and runs the launches in the order they came, and the app's \
waits, `clFinish`, blocking reads and callbacks see its completion. Not on a platform with a \
PoCL `basic` device (PoCL 3.1 lets commands pass a barrier gated by a user event there, see \
results/pocl-user-event); there, and with `off`, the launch runs on the app's thread before the \
call returns (the behaviour before session 20).",
    }
    balance_early: bool {
        name: "CLPRISM_BALANCE_EARLY",
        reader: Library,
        values: "on|off",
        default: "on" => |_| true,
        parse: on_off,
        example: "off",
        usage: "balance: open the devices and build the app's programs on them in the background",
        doc: "Once the app has built a program (`CLPRISM_SPLIT=always`), or once a launch is long \
enough to split (`auto`), a background thread opens the balance devices and builds the program \
there, so no launch waits for it; the app's later context \
creations and program builds wait until the devices are open (NVIDIA's driver crashed when \
clprism created contexts while the app compiled). `off`: the first launch opens the devices and \
waits.",
    }
    balance_pipeline: bool {
        name: "CLPRISM_BALANCE_PIPELINE",
        reader: Library,
        values: "on|off",
        default: "on" => |_| true,
        parse: on_off,
        example: "on",
        usage: "balance: issue the app's next launch behind the running one (owner computes); off: one at a time",
        doc: "`on`: once a launch whose results stay on the devices has its chunks running (one \
slab per device, owner computes), the launch thread takes the app's next launch if it is already \
queued behind it on a quiet queue, plans it and enqueues its halo copies and chunks behind the \
running ones on each device's in-order queue (the halos read on the queue that computes them), \
so the devices do not wait for the host between the two. The buffer directory takes the running \
launch's slabs as written when the next one is planned. A chunk of the running launch that fails \
fails the launch issued behind it too, with the driver's code. Not over PoCL-Remote devices (a \
server killed with reads queued behind its chunks hung the app). Needs `CLPRISM_BALANCE_ASYNC=on`; \
the record says `schedule.issued_ahead`. Measured on 2 H200s (results/session26-2026-11-28, \
`gpu-b.sh`): PolyBench fdtd-2d (5,000 steps at 16384²) ran 1.36-1.40x native with `off` and \
1.50-1.53x with `on` under `CLPRISM_SPLIT=always` (1.26x and 1.44x under `auto`), 2 of its 3 \
launches per step issued ahead; `off` runs one launch at a time.",
    }
    balance_push: bool {
        name: "CLPRISM_BALANCE_PUSH",
        reader: Library,
        values: "on|off",
        default: "on" => |_| true,
        parse: on_off,
        example: "off",
        usage: "balance: copy the halos of the launch expected next while the running one computes",
        doc: "`on`: when a launch whose results stay on the devices has its chunks running (one \
slab per device) and the app has nothing queued behind it (it waits in `clFinish`, say), the \
launch thread issues the halo copies of the launch that followed the same kernel on the same \
buffers last time, ordered after the running chunks (reads on the chunks' queues, writes gated on \
the devices), and the buffer directory counts them as held: the expected launch then starts \
without a halo batch. At most 16 MiB and no range of 1 MiB or more (halos, not arrays). A wrong \
guess only moves bytes. Not over PoCL-Remote devices (as \
`CLPRISM_BALANCE_PIPELINE`, which it needs). The record says `schedule.pushed_bytes` \
(`exec::launch::forecast`).",
    }
    balance_early_finish: bool {
        name: "CLPRISM_BALANCE_EARLY_FINISH",
        reader: Library,
        values: "on|off",
        default: "on" => |_| true,
        parse: on_off,
        example: "off",
        usage: "balance: serve the app's clFinish when its queue holds only finished balanced launches",
        doc: "`on`: the app's `clFinish` of a queue whose latest commands are balanced launches \
handed to the launch thread (nothing else enqueued there since, no event of theirs given to \
the app) returns once the launch thread has finished them, without asking the driver: the driver \
would wait for the user events that gate the app's queue to be delivered (about 60 us per \
wait on NVIDIA's driver), which an app that waits at every time step pays at each. \
`off`: every `clFinish` goes to the driver (`exec::pipeline::Pipeline::finish_early`).",
    }
    balance_spin: Option<bool> {
        name: "CLPRISM_BALANCE_SPIN",
        reader: Library,
        values: "auto|on|off",
        default: "auto" => |_| None,
        parse: |v, _| match v {
            "on" | "1" => Some(Some(true)),
            "off" | "0" => Some(Some(false)),
            "auto" => Some(None),
            _ => None,
        },
        example: "off",
        usage: "balance: the launch thread and a served clFinish poll before they sleep",
        doc: "`on`: after a launch ends, the launch thread polls for the app's next launch for \
up to 300 us before it sleeps, and a `clFinish` served by clprism (`CLPRISM_BALANCE_EARLY_FINISH`) \
polls for up to 2 ms, so neither pays a thread's wake-up (30-45 us on the H200 hosts) once per \
time step of an app that waits at each. `auto` (the default): on when every balance device is a \
GPU or an accelerator; on CPU devices the polling would take the cores the kernels run on \
(`exec::pipeline::SPIN`).",
    }
    balance_open_at_context: bool {
        name: "CLPRISM_BALANCE_OPEN",
        reader: Library,
        values: "launch|context",
        default: "context" => |_| true,
        parse: |v, _| match v {
            "context" => Some(true),
            "launch" => Some(false),
            _ => None,
        },
        example: "launch",
        usage: "balance: open the like devices when the app creates its context (launch: at the first long launch or build)",
        doc: "`context` (the default): when the app creates a context on a device that has like siblings (the other GPUs of its model, `CLPRISM_BALANCE_SIBLINGS`), the balance devices start opening on a background thread at once, one context at a time, while the driver creates the app's own context and the app goes on; an app's compile waits only for the context creation in flight (0.14-0.34 s on an H200), and the creations not begun wait for the compile (creating contexts while the app built a program crashed NVIDIA's driver: `exec::open_gate`). On 4 H200s (first runs, `auto`) gemm 16384³ ran 2.62× faster than natively with `launch` and 3.26× with `context`, 3mm 1.58 → 2.61×, 2mm 1.26 → 1.97×; an app of about 1.5 s that never splits took 0.15-0.3 s longer (results/session30-2026-11-28). `launch`: the devices open once the app's first long launch (`auto`) or build (`always`) has begun, with the app's GPU running that launch alone meanwhile; for hosts that run many short processes. Nothing opens at the context when the app's device has no like sibling (PoCL's CPU devices unless `CLPRISM_BALANCE_SIBLINGS=any`). Needs `CLPRISM_BALANCE_EARLY` on (`exec::early::open_at_context`).",
    }
    balance_issue_parallel: Option<bool> {
        name: "CLPRISM_BALANCE_ISSUE",
        reader: Library,
        values: "auto|parallel|serial",
        default: "auto" => |_| None,
        parse: |v, _| match v {
            "parallel" => Some(Some(true)),
            "serial" => Some(Some(false)),
            "auto" => Some(None),
            _ => None,
        },
        example: "parallel",
        usage: "balance: issue a split launch's halo copies and chunks from a thread per device",
        doc: "`parallel`: a split launch's halo reads (grouped by the device read from), halo \
writes and chunk enqueues (grouped by the device written to) are issued from a small pool of \
threads, one per device, instead of one after the other from the launch thread (`serial`). \
`auto` (the default): parallel for a launch over three GPUs or more, serial otherwise. On NVIDIA \
each enqueue costs the caller 25-45 us: with launches issued ahead on 4 H200s the launch thread \
was busy longer than the kernels (four chunk enqueues ~200 us per fdtd-2d launch), and parallel \
issue took PolyBench fdtd-2d (5,000 steps at 16384²) from 8.27-8.31 s to 7.37-7.51 s; on 2 H200s \
it made no difference (10.46-10.72 s serial, 10.51 s parallel; results/session27-2026-11-28, \
`gpu-g.sh`, `gpu-h.sh`). Before launches were issued ahead, parallel issue was within 6 % of \
serial on 4 H200s (session 24: NVIDIA serialises calls on different contexts) (`exec::launch::issue`).",
    }
    lib: Option<PathBuf> {
        name: "CLPRISM_LIB",
        reader: Command,
        values: "PATH",
        default: "next to clprism" => |_| None,
        parse: path,
        example: "$PWD/target/release/libOpenCL.so",
        usage: "the clprism libOpenCL.so that clprism run and clprism accuracy preload",
        doc: "`--lib` overrides it. Unset: `target/<profile>/libOpenCL.so` next to the `clprism` \
executable, or `../lib/libOpenCL.so` and `../lib/clprism/libOpenCL.so` for an installed layout.",
    }
    example_device: Option<String> {
        name: "CLPRISM_EXAMPLE_DEVICE",
        reader: Examples,
        values: "P:D",
        default: "0:0" => |_| None,
        parse: raw,
        example: "0:1",
        usage: "the platform:device an example app runs on",
        doc: "Read by `examples/common.c` (`ex_select_device`); `clprism accuracy` sets it for each \
device. A malformed value stops the example with exit status 2.",
    }
    test_lib: Option<PathBuf> {
        name: "CLPRISM_TEST_LIB",
        reader: Tests,
        values: "PATH",
        default: "newest target/*/libOpenCL.so" => |_| None,
        parse: path,
        example: "$PWD/target/release/libOpenCL.so",
        usage: "the interposer library the integration tests preload",
        doc: "Unset: the newer of `target/debug/libOpenCL.so` and `target/release/libOpenCL.so` \
(`tests/common`). Tests remove every other `CLPRISM_*` variable from their children's \
environment.",
    }
    exit_runs: Option<String> {
        name: "CLPRISM_EXIT_RUNS",
        reader: Tests,
        values: "N",
        default: "200" => |_| None,
        parse: raw,
        example: "20",
        usage: "runs of the quick-exit test in tests/exit.rs",
        doc: "How many times `tests/exit.rs` runs `tests/c/quick_exit.c` under CPU load.",
    }
    exit_cold_runs: Option<String> {
        name: "CLPRISM_EXIT_COLD_RUNS",
        reader: Tests,
        values: "N",
        default: "12" => |_| None,
        parse: raw,
        example: "30",
        usage: "runs of the cold-cache quick-exit test in tests/exit.rs",
        doc: "How many times `tests/exit.rs` runs `tests/c/quick_exit.c` on empty clprism and PoCL caches (each run pays PoCL's first compile).",
    }
    bless: Option<String> {
        name: "CLPRISM_BLESS",
        reader: Tests,
        values: "1",
        default: "unset" => |_| None,
        parse: raw,
        example: "1",
        usage: "regenerate docs/controls.md instead of checking it (cargo test --test docs)",
        doc: "With it, `tests/docs.rs` writes the generated `docs/controls.md` in place of \
failing when the file differs from the table.",
    }
}

/// `docs/controls.md`, generated from [`CONTROLS`].
pub fn markdown() -> String {
    let mut s = String::new();
    s.push_str("# `CLPRISM_*` environment variables\n\n");
    s.push_str(
        "<!-- Generated from the table in src/config/controls.rs; do not edit. Regenerate with\n     \
         cargo run --bin clprism -- controls --markdown > docs/controls.md\n     \
         (or CLPRISM_BLESS=1 cargo test --test docs). -->\n\n",
    );
    s.push_str(
        "The interposer reads its variables once, at the application's first OpenCL call \
         (`CLPRISM_MODE` and `CLPRISM_TRACE` are also read, silently, when the library is \
         loaded). A malformed value gives exactly one line\n\
         `clprism: warning: VAR='value' is not valid (expected ...); using DEFAULT`\n\
         and never stops the application; an empty value counts as unset. \
         `clprism run --help` prints the same list in short, and `clprism controls` prints it.\n\n",
    );
    s.push_str("| variable | values | default | read by | what it does |\n|---|---|---|---|---|\n");
    for c in CONTROLS {
        s.push_str(&format!(
            "| [`{}`](#{}) | `{}` | `{}` | {} | {} |\n",
            c.name,
            c.name.to_ascii_lowercase(),
            c.values.replace('|', "\\|"),
            c.default,
            c.reader.as_str(),
            c.usage.replace('|', "\\|"),
        ));
    }
    s.push_str(
        "\nNot clprism's own, but used with it: `OPENCL_LAYERS=$PWD/target/release/libOpenCL.so` \
         (ocl-icd 2.3) loads clprism as a loader layer instead of `LD_PRELOAD` \
         ([usage.md](usage.md)).\n",
    );
    for c in CONTROLS {
        s.push_str(&format!("\n## {}\n\n", c.name));
        s.push_str(&format!(
            "`{}={}` (default `{}`; read by {}; example: `{}={}`)\n\n",
            c.name,
            c.values,
            c.default,
            c.reader.as_str(),
            c.name,
            c.example
        ));
        s.push_str(&format!("{}.\n\n{}\n", capitalize(c.usage), c.doc));
    }
    s
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The man-page style lines for `clprism run --help`: for each variable read by `reader`,
/// `  NAME=VALUES  [default: D]` and, indented below it, its usage line.
pub fn usage_lines(reader: Reader) -> String {
    let mut s = String::new();
    for c in CONTROLS.iter().filter(|c| c.reader == reader) {
        s.push_str(&format!(
            "  {}={}  [default: {}]\n        {}\n",
            c.name, c.values, c.default, c.usage
        ));
    }
    s
}
