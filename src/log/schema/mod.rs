//! The typed schema of the per-kernel log (DESIGN.md §4, §9 "one typed schema"): one JSON
//! object per kernel launch ([`Launch`]), with the optional `emulation` ([`Emulation`]),
//! `projection` ([`Projection`]) and `schedule` ([`Schedule`], its `chunks` [`Chunk`])
//! objects. Writers and readers use these types; `docs/log-schema.md` is generated from
//! [`FIELDS`] ([`markdown`]; regenerate with `clprism schema --markdown > docs/log-schema.md`
//! or `CLPRISM_BLESS=1 cargo test --lib log::schema`).
//!
//! Compatibility rules:
//! * Every field has a serde default, so older or hand-written logs still parse (readers
//!   that need a field check it themselves, e.g. a launch without `kernel` is malformed).
//! * Fields a writer only sometimes emits are `Option` with `skip_serializing_if`; fields a
//!   writer always emits, possibly as `null`, are written as `null` (`Option` without skip),
//!   or, when another writer of the same object leaves them out, [`Nullable`]
//!   (`None`: absent, `Some(None)`: `null`). Re-serializing a record the interposer wrote
//!   gives the same JSON value ([`round_trip`]; `tests/log_schema.rs` checks real runs).
//! * Closed sets of strings are enums with an `Other(String)` escape that keeps unknown
//!   values verbatim ([`LaunchStatus`], [`Mode`], [`EmulationStatus`], [`Merge`],
//!   [`BestBy`]); [`FallbackReason`] names the fixed reasons and keeps the rest as text.
//! * Key order inside an object follows the struct declaration (JSON objects are unordered;
//!   the `json!` records written before this module had alphabetical order).

mod anchored;
mod check;
mod device_def;
mod fields;
mod labels;
mod schedule_devices;

use crate::emu::stats::WorkGroupStats;
use crate::model::{LaunchShape, ProjectionSet};
pub use crate::sched::split::SplitDecision;
pub use schedule_devices::{ExcludedDevice, ProbeLog, ScheduleDevice};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// Value of the record's `schema` field: the version of the launch record; bumped on
/// incompatible changes (same as [`crate::log::SCHEMA`]). Version 2 (compact project-mode
/// logs): the statistics and the device-independent projection of an emulation key are
/// written once, in an [`EmulationDef`] line (`"record": "emulation"`), and launch records
/// refer to it by `emulation.key` / `projection.key` ([`Definitions::resolve`]).
pub const SCHEMA_VERSION: &str = "clprism.launch/2";

/// Prefix shared by every version of the launch record's `schema` value; readers accept the
/// versions of [`SCHEMA_READ`] ([`schema_readable`]).
pub const SCHEMA_PREFIX: &str = "clprism.launch/";

/// The `schema` versions this build reads (any minor revision of each): version 1 (every
/// launch record self-contained) and version 2 (references to [`EmulationDef`] lines).
pub const SCHEMA_READ: &[&str] = &["clprism.launch/1", "clprism.launch/2"];

/// Whether a `schema` value is one this build reads.
pub fn schema_readable(s: &str) -> bool {
    SCHEMA_READ.iter().any(|v| {
        s.strip_prefix(v)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
    })
}

/// Value of the `record` field of an [`EmulationDef`] line.
pub const RECORD_EMULATION: &str = "emulation";

/// Value of the `record` field of a [`DeviceDef`] line.
pub const RECORD_DEVICE: &str = "device";

/// Top-level key of the [`Emulation`] object.
pub const KEY_EMULATION: &str = "emulation";
/// Top-level key of the [`Projection`] object.
pub const KEY_PROJECTION: &str = "projection";
/// Top-level key of the [`Schedule`] object.
pub const KEY_SCHEDULE: &str = "schedule";

/// A field that one writer always emits (possibly `null`) and another leaves out:
/// `None` = absent, `Some(None)` = `null`, `Some(Some(v))` = `v`. Use with
/// `#[serde(default, deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]`.
pub type Nullable<T> = Option<Option<T>>;

/// Deserializes a present field (also `null`) of a [`Nullable`] as `Some(..)`.
fn nullable<'de, D, T>(d: D) -> Result<Nullable<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A closed set of strings as an enum, with `Other(String)` for values this build does not
/// know; (de)serialized as the plain string.
macro_rules! string_enum {
    ($(#[$m:meta])* $name:ident, default $def:expr, { $($(#[$vm:meta])* $v:ident = $s:literal),* $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vm])* $v,)*
            /// A value this build does not know, kept verbatim.
            Other(String),
        }
        impl $name {
            /// Every known value, as written.
            pub const KNOWN: &'static [&'static str] = &[$($s),*];
            /// The value as written in the log.
            pub fn as_str(&self) -> &str {
                match self {
                    $($name::$v => $s,)*
                    $name::Other(s) => s,
                }
            }
            /// The variant for a logged string (unknown ones as `Other`).
            pub fn parse(s: &str) -> $name {
                match s {
                    $($s => $name::$v,)*
                    o => $name::Other(o.to_string()),
                }
            }
        }
        impl Default for $name {
            fn default() -> $name {
                $def
            }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$name, D::Error> {
                let s: Cow<'de, str> = Deserialize::deserialize(d)?;
                Ok($name::parse(&s))
            }
        }
        impl PartialEq<&str> for $name {
            fn eq(&self, o: &&str) -> bool {
                self.as_str() == *o
            }
        }
    };
}

string_enum!(
    /// `CLPRISM_MODE` in effect for a launch (`mode`; absent in a record: `log`).
    Mode, default Mode::Log, {
        /// Pure forwarding (no records are written in this mode).
        Off = "off",
        /// Per-kernel log only.
        Log = "log",
        /// Emulation and projection (`emulation`, `projection`).
        Project = "project",
        /// Split across devices (`schedule`).
        Balance = "balance",
    }
);

string_enum!(
    /// What became of a launch (`status`; absent in a record: `unknown`).
    LaunchStatus, default LaunchStatus::Other("unknown".into()), {
        /// The command completed and its profiling times were read.
        Complete = "complete",
        /// The command ended with a negative execution status (`error_code`).
        Failed = "failed",
        /// The driver rejected the enqueue (`error_code`).
        EnqueueFailed = "enqueue_failed",
        /// No completion was seen before the process exited.
        Incomplete = "incomplete",
        /// The command completed but the device gave no profiling timestamps.
        NoProfiling = "no_profiling",
        /// Not timed (`CLPRISM_DEVICE_TIMING`): final at enqueue.
        Untimed = "untimed",
    }
);

string_enum!(
    /// Outcome of the mini-emulation of a launch (`emulation.status`).
    EmulationStatus, default EmulationStatus::Other(String::new()), {
        /// Emulated now; `stats` present.
        Ok = "ok",
        /// Statistics of an earlier launch of the same key; `stats` present.
        Reused = "reused",
        /// Not emulated (no toolchain, unsupported feature, snapshot too large, ...): `reason`.
        Unavailable = "unavailable",
        /// The emulation failed: `reason`.
        Error = "error",
    }
);

string_enum!(
    /// How the emulated program was compiled to SPIR-V (`emulation.compile_path`;
    /// `emu::frontend::CompilePath`): clang's `-O2` unless llvm-spirv 15 rejected its output.
    CompilePath, default CompilePath::O2, {
        /// `clang -O2`, translated as it is.
        O2 = "O2",
        /// llvm-spirv rejected `-O2`: `clang -O0` cleaned up by LLVM's `opt` with -O2's
        /// scalar passes.
        O0Opt = "O0+opt",
        /// llvm-spirv rejected `-O2` and there is no `opt` (or its output was rejected too):
        /// `-O2` without the vectorizers,
        /// the intrinsics llvm-spirv rejects (`llvm.uadd.sat`, `llvm.vector.reduce.*`, ...)
        /// and `freeze` lowered to plain instructions.
        O2Lowered = "O2-lowered",
        /// Neither of the above accepted: plain `-O0` (private variables stay
        /// in memory, so their loads and stores are counted).
        O0 = "O0",
    }
);

impl From<crate::emu::CompilePath> for CompilePath {
    fn from(p: crate::emu::CompilePath) -> CompilePath {
        CompilePath::parse(p.as_str())
    }
}

string_enum!(
    /// How the results of a balanced launch were merged (`schedule.merge`).
    Merge, default Merge::None, {
        /// Each device's written ranges from the footprint model were copied back.
        Footprint = "footprint",
        /// The devices' buffers were compared with the pre-launch snapshot.
        Diff = "diff",
        /// Nothing was copied back: each device's written ranges stay on it, and the buffer
        /// directory gathers them when the app needs them (`CLPRISM_BALANCE_GATHER=lazy`).
        Resident = "resident",
        /// No merge: the launch was forwarded (`fallback`).
        None = "none",
    }
);

string_enum!(
    /// How the `best` scheduler picked its device (`schedule.best.by`).
    BestBy, default BestBy::Other(String::new()), {
        /// The projected-fastest device.
        Projection = "projection",
        /// The fastest measured device.
        Measured = "measured",
        /// No figure yet: a device not tried before.
        FirstTry = "first-try",
    }
);

/// Why a launch in balance mode was forwarded to the driver unsplit (`schedule.fallback`).
/// Serialized as the exact text; the fixed texts are variants, the rest keeps its words.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum FallbackReason {
    /// `kept whole on the app's device: <why>` (the split decision, `exec::decide`,
    /// `sched::split`, or one work-group).
    KeptWhole(String),
    /// The program was created from IL, whose NDRange queries cannot be rewritten.
    ProgramFromIl,
    /// The program was linked or built-in.
    UnknownProgramOrigin,
    /// The global size is not a multiple of the local size.
    GlobalNotMultipleOfLocal,
    /// Every balance device is busy with abandoned straggler chunks.
    AllDevicesBusy,
    /// Any other reason, in words (atomics, images, printf, unset arguments, errors, ...).
    Other(String),
}

impl FallbackReason {
    /// Prefix of [`FallbackReason::KeptWhole`].
    pub const KEPT_WHOLE: &'static str = "kept whole on the app's device: ";
    const FIXED: [(&'static str, FallbackReason); 4] = [
        (
            "program created from IL: NDRange queries cannot be rewritten",
            FallbackReason::ProgramFromIl,
        ),
        (
            "program origin unknown to clprism (linked or built-in)",
            FallbackReason::UnknownProgramOrigin,
        ),
        (
            "global size is not a multiple of the local size",
            FallbackReason::GlobalNotMultipleOfLocal,
        ),
        (
            "every balance device is busy with abandoned work",
            FallbackReason::AllDevicesBusy,
        ),
    ];

    /// The reason for a logged text.
    pub fn parse(s: &str) -> FallbackReason {
        if let Some(w) = s.strip_prefix(Self::KEPT_WHOLE) {
            return FallbackReason::KeptWhole(w.to_string());
        }
        for (t, r) in Self::FIXED {
            if s == t {
                return r;
            }
        }
        FallbackReason::Other(s.to_string())
    }

    /// The text as written in the log.
    pub fn text(&self) -> Cow<'_, str> {
        match self {
            FallbackReason::KeptWhole(w) => Cow::Owned(format!("{}{w}", Self::KEPT_WHOLE)),
            FallbackReason::Other(s) => Cow::Borrowed(s),
            r => Cow::Borrowed(
                Self::FIXED
                    .iter()
                    .find(|(_, v)| v == r)
                    .map_or("", |(t, _)| t),
            ),
        }
    }

    /// True for [`FallbackReason::KeptWhole`]: clprism chose not to split (not a refusal).
    pub fn is_kept_whole(&self) -> bool {
        matches!(self, FallbackReason::KeptWhole(_))
    }
}

impl fmt::Display for FallbackReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl From<String> for FallbackReason {
    fn from(s: String) -> FallbackReason {
        FallbackReason::parse(&s)
    }
}

impl Serialize for FallbackReason {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.text())
    }
}

impl<'de> Deserialize<'de> for FallbackReason {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<FallbackReason, D::Error> {
        let s: Cow<'de, str> = Deserialize::deserialize(d)?;
        Ok(FallbackReason::parse(&s))
    }
}

/// The device of a launch's command queue (`device`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Device {
    /// `platform:device` indices as `clGetPlatformIDs`/`clGetDeviceIDs(ALL)` enumerate them
    /// (the form `CLPRISM_DEVICES` accepts); `"?"` for sub-devices.
    pub index: String,
    /// `CL_DEVICE_NAME`.
    pub name: String,
    /// `gpu`, `cpu`, `accelerator` or `other`.
    #[serde(rename = "type")]
    pub kind: String,
    /// What else identifies the device for matching it to a profile
    /// ([`crate::model::find_profile`]): not part of the launch record; the log writer
    /// puts it once per device and process in a [`DeviceDef`] line and readers resolve it
    /// ([`Definitions::resolve`]). `None` when unknown (older logs, hand-written records).
    #[serde(skip)]
    pub identity: Option<std::sync::Arc<crate::model::DeviceIdentity>>,
}

/// One launch record: one line of the log (written by `intercept::hooks` through
/// [`crate::log::LaunchRecord`], which holds the same top-level fields).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Launch {
    /// [`SCHEMA_VERSION`].
    pub schema: String,
    /// Launch sequence number in the process, from 0, in enqueue order.
    pub seq: u64,
    /// Wall-clock time of the enqueue, ns since the Unix epoch.
    pub time_ns: u64,
    /// Process id.
    pub pid: u32,
    /// OS thread id of the enqueuing thread.
    pub thread: u64,
    /// `CLPRISM_MODE` in effect.
    pub mode: Mode,
    /// Kernel function name.
    pub kernel: String,
    /// 16 hex digits identifying the program: content and build options ([`FIELDS`]).
    pub program: String,
    /// Number of NDRange dimensions (1..3).
    pub work_dim: u32,
    /// Global size per dimension, work-items.
    pub global: Vec<u64>,
    /// Local (work-group) size per dimension, work-items; `null` when the app let the driver
    /// choose.
    pub local: Option<Vec<u64>>,
    /// Global offset per dimension, work-items; `null` when none was given.
    pub offset: Option<Vec<u64>>,
    /// The device of the command queue.
    pub device: Device,
    /// What became of the launch.
    pub status: LaunchStatus,
    /// The driver's error code for `enqueue_failed` / `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<i32>,
    /// Device execution time, ns (`CL_PROFILING_COMMAND_END − START`; for a balanced launch
    /// the makespan of its chunks).
    pub device_ns: Option<u64>,
    /// Time from submission to start on the device, ns (`START − SUBMIT`).
    pub queued_ns: Option<u64>,
    /// The probability with which this timed launch was chosen to be timed, when below 1
    /// (`CLPRISM_DEVICE_TIMING=adaptive` or `sample:N`): weight it by `1/timing_p` to
    /// estimate totals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timing_p: Option<f64>,
    /// Project mode: the mini-emulation of one work-group.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulation: Option<Emulation>,
    /// Project mode: the projected time on every profiled device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection: Option<Projection>,
    /// Balance mode: how the launch was split, or why it was not (`fallback`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
}

/// The `emulation` object (project mode, `intercept::project`; Panwar et al. §IV-C).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Emulation {
    /// Compact logs (version 2): the emulation key whose [`EmulationDef`] line holds the
    /// rest of this object (`stats`, `reason`, `local_assumed`); absent once resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<u64>,
    /// Outcome.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<EmulationStatus>,
    /// Why the launch was not emulated (absent when `ok` / `reused`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The statistics (or the failure) are an earlier launch's of the same key.
    pub reused: bool,
    /// Statistics of the emulated work-group (`emu::stats::WorkGroupStats`; its
    /// `emulation_ns` is the emulation's wall time, ns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<WorkGroupStats>,
    /// The local size project mode assumed when the app gave none, work-items per dimension.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_assumed: Option<Vec<u64>>,
    /// How the program was compiled to SPIR-V for the emulation (absent: from IL, or a
    /// cache entry of a version that did not record it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compile_path: Option<CompilePath>,
    /// Compact logs: the definition's `stats.footprints` are widened to whole sectors of
    /// this many bytes and merged (written when the exact ranges were too many; the
    /// cache-reuse model reads them per sector, so its figures do not change).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub footprint_sector: Option<u32>,
    /// Bytes of the device-side snapshot copies taken at the launch (the buffer arguments
    /// the kernel may write, copied whole; bounded by `CLPRISM_EMU_SNAPSHOT_MAX`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_bytes: Option<u64>,
    /// Bytes of the buffer arguments the kernel only reads, not copied at the launch: the
    /// emulation read them from the app's buffers (copy on write, `intercept::project`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_deferred_bytes: Option<u64>,
    /// Bytes of those deferred buffers copied later, because the app was about to write
    /// them before the emulation ended (counted under the same cap).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_later_bytes: Option<u64>,
    /// Bytes of deferred buffers the app wrote before the emulation ended whose copy did
    /// not fit under the cap (skipped: a page still needed then fails the emulation).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_lost_bytes: Option<u64>,
    /// Nanoseconds the app's thread waited for room under `CLPRISM_EMU_SNAPSHOT_MAX` for this
    /// launch's snapshot copies (eager, or later copies of its deferred buffers), bounded by
    /// project mode's snapshot budget; absent when it never waited.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_wait_ns: Option<u64>,
    /// Nanoseconds app commands writing this launch's deferred buffers were held back on the
    /// device (a barrier before them) until the emulation was done with the buffer, because
    /// a copy did not fit under `CLPRISM_EMU_SNAPSHOT_MAX` (bounded: 10 s a command, 10 s +
    /// 10 % of the run in all); absent when none was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_held_ns: Option<u64>,
    /// The key whose statistics this key took because its own snapshot could not be taken
    /// (another NDRange shape of the same kernel and work-group size, project mode's
    /// backlog); absent when emulated itself.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reused_from: Option<u64>,
    /// Bytes of those snapshots read back to the host: small buffers whole, large ones
    /// only the pages the emulated work-group touched (`emu::paged::PAGE` bytes each).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub snapshot_bytes_read: Option<u64>,
    /// Start of the emulation, ns since the Unix epoch (read by the trace; not written by
    /// this version, which reconstructs it).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_unix_ns: Option<u64>,
    /// Read only (older logs): the launch shape, now under `projection.launch_shape`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_shape: Option<LaunchShape>,
    /// Read only (older and hand-written logs): emulation wall time, ns, at the top level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulation_ns: Option<u64>,
    /// Read only (older logs): the budget ran out and the counts were extrapolated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_exhausted: Option<bool>,
    /// Read only (older logs): why the emulation failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Emulation {
    /// A record without statistics (`unavailable` / `error`, with the reason).
    pub fn failed(status: EmulationStatus, reason: impl Into<String>, reused: bool) -> Emulation {
        Emulation {
            status: Some(status),
            reason: Some(reason.into()),
            reused,
            ..Default::default()
        }
    }

    /// A record with statistics (`ok`, or `reused` when `reused`).
    pub fn with_stats(stats: WorkGroupStats, reused: bool) -> Emulation {
        Emulation {
            status: Some(if reused {
                EmulationStatus::Reused
            } else {
                EmulationStatus::Ok
            }),
            reused,
            stats: Some(stats),
            ..Default::default()
        }
    }

    /// Emulation wall time, ns: `stats.emulation_ns` (or the older top-level field); `None`
    /// for a reused result (it cost nothing) or a failure.
    pub fn wall_ns(&self) -> Option<u64> {
        if self.reused {
            return self.emulation_ns;
        }
        self.emulation_ns
            .or_else(|| self.stats.as_ref().map(|s| s.emulation_ns))
    }

    /// The budget ran out and the counts were extrapolated.
    pub fn budget_exhausted(&self) -> bool {
        self.budget_exhausted
            .or_else(|| self.stats.as_ref().map(|s| s.budget_exhausted))
            .unwrap_or(false)
    }

    /// Why the emulation failed, when it did (`unavailable` / `error` with their reason, or
    /// an older log's `error`).
    pub fn failure(&self) -> Option<String> {
        if let Some(e) = &self.error {
            return Some(e.clone());
        }
        match &self.status {
            Some(EmulationStatus::Unavailable) | Some(EmulationStatus::Error) => Some(
                self.reason
                    .clone()
                    .unwrap_or_else(|| "unavailable".to_string()),
            ),
            _ => None,
        }
    }
}

/// The `projection` object (project mode, `intercept::project`; Panwar et al. §IV-D): a
/// [`ProjectionSet`] (`options`, `devices`, `skipped`) and where it came from. Its
/// `projected_ns` are the pure model's; the anchored times (the launch's measured
/// `device_ns` scaled by the model's ratio between devices, Habitat) are derived by readers
/// with [`Projection::anchored`], not written (see that module for why).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Projection {
    /// Compact logs (version 2): the emulation key whose [`EmulationDef`] line holds the
    /// rest of this object (`options`, `devices`, `skipped`, `launch_shape`, `error`);
    /// absent once resolved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<u64>,
    /// Projected times per profiled device, ranked; the devices skipped; the model options
    /// (not written when empty: a reference, or a projection that failed).
    #[serde(flatten, skip_serializing_if = "set_is_empty")]
    pub set: ProjectionSet,
    /// The launch shape the projection used (work-groups, work-group size, local memory,
    /// read set), so `clprism accuracy` re-projects the same launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_shape: Option<LaunchShape>,
    /// Profile name of the launch's own device; `null` when no profile matches it.
    pub launch_device_profile: Option<String>,
    /// Why no device could be projected (no profiles, bad launch shape, model error).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Profile name of the fastest device: written in the references of compact logs
    /// (dropped once resolved), read from hand-written logs; see [`Projection::best_device`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub best: Option<String>,
    /// Compact logs: projected time on the launch's own device (`launch_device_profile`),
    /// ns (dropped once resolved: the same as that device's `projected_ns`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_device_ns: Option<f64>,
    /// Compact logs: rank of the launch's own device (dropped once resolved).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_device_rank: Option<u32>,
}

fn set_is_empty(s: &ProjectionSet) -> bool {
    *s == ProjectionSet::default()
}

impl Projection {
    /// Profile name of the projected-fastest device: `best`, else the rank-1 device.
    pub fn best_device(&self) -> Option<String> {
        self.best
            .clone()
            .or_else(|| self.set.best().map(|p| p.device.clone()))
    }
}

/// A line of a compact log (version 2) that is not a launch: the result of one emulation
/// key, written once, before the first launch record that refers to it by `key`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct EmulationDef {
    /// [`SCHEMA_VERSION`].
    pub schema: String,
    /// [`RECORD_EMULATION`].
    pub record: String,
    /// The key's id, unique within the process (`pid`).
    pub key: u64,
    /// Process id of the launches referring to it.
    pub pid: u32,
    /// Kernel function name.
    pub kernel: String,
    /// Program identifier (16 hex digits).
    pub program: String,
    /// The `emulation` object as first written (`status` `ok`, `unavailable` or `error`,
    /// `reason`, `stats`, `local_assumed`), without `reused`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub emulation: Option<Emulation>,
    /// The device-independent `projection` (`options`, `devices`, `skipped`,
    /// `launch_shape`, `error`); absent when the emulation gave no statistics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub projection: Option<Projection>,
}

/// One line of a launch log.
#[derive(Debug, Clone, PartialEq)]
pub enum LogLine {
    /// A launch record and how many of its `emulation` / `projection` / `schedule` objects
    /// were unreadable (dropped).
    Launch(Box<Launch>, usize),
    /// An emulation definition (compact logs).
    Definition(Box<EmulationDef>),
    /// A device definition (the identity of a device the launches name).
    Device(Box<DeviceDef>),
}

/// Reads one log line leniently ([`parse_lenient`] for launches): `Ok(None)` for a line of
/// another schema or record kind.
///
/// Errors: not JSON, not an object, or the fields do not fit [`Launch`] / [`EmulationDef`].
pub fn parse_line(line: &str) -> Result<Option<LogLine>, String> {
    let v: Value = serde_json::from_str(line).map_err(|e| format!("invalid JSON: {e}"))?;
    parse_value(v)
}

fn parse_value(v: Value) -> Result<Option<LogLine>, String> {
    let Value::Object(mut o) = v else {
        return Err("not a JSON object".into());
    };
    if let Some(s) = o.get("schema") {
        if !s.as_str().is_some_and(schema_readable) {
            return Ok(None);
        }
    }
    match o.get("record").map(|r| r.as_str()) {
        None => {}
        Some(Some(RECORD_EMULATION)) => {
            return serde_json::from_value(Value::Object(o))
                .map(|d| Some(LogLine::Definition(Box::new(d))))
                .map_err(|e| format!("emulation definition: {e}"))
        }
        Some(Some(RECORD_DEVICE)) => {
            return serde_json::from_value(Value::Object(o))
                .map(|d| Some(LogLine::Device(Box::new(d))))
                .map_err(|e| format!("device definition: {e}"))
        }
        Some(_) => return Ok(None),
    }
    let mut bad = 0;
    let mut take = |k: &str| o.remove(k).filter(|v| !v.is_null());
    let (e, p, s) = (
        take(KEY_EMULATION),
        take(KEY_PROJECTION),
        take(KEY_SCHEDULE),
    );
    let mut launch: Launch =
        serde_json::from_value(Value::Object(o)).map_err(|e| format!("launch record: {e}"))?;
    fn part<T: serde::de::DeserializeOwned>(v: Option<Value>, bad: &mut usize) -> Option<T> {
        let r = serde_json::from_value(v?).ok();
        *bad += r.is_none() as usize;
        r
    }
    launch.emulation = part(e, &mut bad);
    launch.projection = part(p, &mut bad);
    launch.schedule = part(s, &mut bad);
    Ok(Some(LogLine::Launch(Box::new(launch), bad)))
}

/// The [`EmulationDef`] lines of a log, by (`pid`, `key`), to resolve the references of its
/// launch records, and its [`DeviceDef`] lines, by (`pid`, `device.index`, `device.name`).
#[derive(Debug, Clone, Default)]
pub struct Definitions {
    defs: std::collections::HashMap<(u32, u64), EmulationDef>,
    devices: std::collections::HashMap<(u32, String, String), DeviceIdentityRef>,
}

/// A shared device identity.
type DeviceIdentityRef = std::sync::Arc<crate::model::DeviceIdentity>;

impl Definitions {
    /// Keeps a definition (a later one of the same process and key replaces it).
    pub fn add(&mut self, d: EmulationDef) {
        self.defs.insert((d.pid, d.key), d);
    }

    /// Keeps a device definition (a later one of the same process and device replaces it).
    pub fn add_device(&mut self, d: &DeviceDef) {
        self.devices.insert(
            (d.pid, d.device.index.clone(), d.device.name.clone()),
            std::sync::Arc::new(d.identity()),
        );
    }

    /// Number of definitions kept.
    pub fn len(&self) -> usize {
        self.defs.len()
    }

    /// Whether no definition was kept.
    pub fn is_empty(&self) -> bool {
        self.defs.is_empty()
    }

    /// Replaces the references of `l` (`emulation.key`, `projection.key`) by the full
    /// objects, as a version 1 record would hold them. `false` when a reference names a key
    /// without a definition (the reference is then kept as it is: `status`, `best`,
    /// `launch_device_ns`, `launch_device_rank` still tell the essentials).
    /// The launch's `device.identity` is set from its process's [`DeviceDef`] line, when
    /// there is one.
    pub fn resolve(&self, l: &mut Launch) -> bool {
        if l.device.identity.is_none() {
            let k = (l.pid, l.device.index.clone(), l.device.name.clone());
            l.device.identity = self.devices.get(&k).cloned();
        }
        let key = l
            .emulation
            .as_ref()
            .and_then(|e| e.key)
            .or_else(|| l.projection.as_ref().and_then(|p| p.key));
        let Some(key) = key else { return true };
        let Some(d) = self.defs.get(&(l.pid, key)) else {
            return false;
        };
        if let Some(e) = l.emulation.as_mut().filter(|e| e.key.is_some()) {
            let mut full = d.emulation.clone().unwrap_or_default();
            full.key = None;
            full.status = e.status.take().or(full.status);
            full.reused = e.reused;
            *e = full;
        }
        if let Some(p) = l.projection.as_mut().filter(|p| p.key.is_some()) {
            let mut full = d.projection.clone().unwrap_or_default();
            full.key = None;
            full.launch_device_profile = p.launch_device_profile.take();
            *p = full;
        }
        true
    }
}

/// What one non-empty line of a log text held ([`read_text`]).
#[derive(Debug, Clone, PartialEq)]
pub enum TextLine {
    /// A launch record (references resolved) and how many of its objects were unreadable.
    Launch(Box<Launch>, usize),
    /// An emulation definition line (kept to resolve the references).
    Definition,
    /// A line of another schema or record kind.
    Other,
    /// A line that could not be read, and why.
    Bad(String),
}

/// Reads a whole log text, every non-empty line with its 1-based number, the references of
/// its launch records resolved ([`Definitions`], wherever the definitions are in the
/// text). Also returns the number of launches whose references named no definition.
pub fn read_text(text: &str) -> (Vec<(usize, TextLine)>, usize) {
    let mut defs = Definitions::default();
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let t = match parse_line(line) {
            Ok(Some(LogLine::Launch(l, bad))) => TextLine::Launch(l, bad),
            Ok(Some(LogLine::Definition(d))) => {
                defs.add(*d);
                TextLine::Definition
            }
            Ok(Some(LogLine::Device(d))) => {
                defs.add_device(&d);
                TextLine::Definition
            }
            Ok(None) => TextLine::Other,
            Err(e) => TextLine::Bad(e),
        };
        out.push((i + 1, t));
    }
    let mut unresolved = 0;
    for (_, t) in out.iter_mut() {
        if let TextLine::Launch(l, _) = t {
            unresolved += !defs.resolve(l) as usize;
        }
    }
    (out, unresolved)
}

/// `clprism schema --expand LOG`: the log with every reference resolved and without the
/// emulation definition lines, one launch record per line as version 1 wrote them (the
/// `schema` field keeps the log's version). Device definition lines ([`DeviceDef`], self
/// contained) and unreadable lines are copied as they are.
pub fn expand(text: &str) -> String {
    let mut defs = Definitions::default();
    let mut lines: Vec<Result<Launch, &str>> = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str::<Value>(line).map_err(|e| e.to_string()) {
            Ok(v) if v.get("record").and_then(Value::as_str) == Some(RECORD_DEVICE) => {
                lines.push(Err(line))
            }
            Ok(v) if v.get("record").is_some() => {
                if let Ok(Some(LogLine::Definition(d))) = parse_value(v) {
                    defs.add(*d);
                }
            }
            Ok(v) => match serde_json::from_value::<Launch>(v) {
                Ok(l) => lines.push(Ok(l)),
                Err(_) => lines.push(Err(line)),
            },
            Err(_) => lines.push(Err(line)),
        }
    }
    let mut out = String::new();
    for l in lines {
        match l {
            Ok(mut l) => {
                defs.resolve(&mut l);
                out.push_str(&serde_json::to_string(&l).unwrap_or_default());
            }
            Err(line) => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

/// One chunk of whole work-groups given to one device (`schedule.chunks[]`; Boyer ch. 4,
/// Figure 4.4). Times are ns since the start of the balanced launch (host clock).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Chunk {
    /// Position of the device in `schedule.devices`.
    pub device: usize,
    /// First unit of the chunk along the split dimension (units of `wgs_per_unit`
    /// work-groups).
    pub first_wg: u64,
    /// Units in the chunk.
    pub count: u64,
    /// Work-groups in the chunk (`count × wgs_per_unit`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_groups: Option<u64>,
    /// Host time of the enqueue, ns since the launch's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enqueue_ns: Option<u64>,
    /// The driver's error code when the enqueue failed (its work was reassigned).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed: Option<i32>,
    /// The chunk was abandoned as a straggler (its work-groups were given to another
    /// device); written only when true.
    #[serde(skip_serializing_if = "is_false")]
    pub abandoned: bool,
    /// Host time the completion was seen, ns since the launch's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_ns: Option<u64>,
    /// Device execution time of the chunk, ns (profiling `END − START`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_ns: Option<u64>,
    /// `end_ns − device_ns`: the estimated start on the device, ns since the launch's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<u64>,
}

impl Chunk {
    /// A chunk just enqueued: `count` units of `wgs_per_unit` work-groups from unit
    /// `first_wg` on device position `device`, enqueued `enqueue_ns` after the launch's start.
    pub fn enqueued(
        device: usize,
        first_wg: u64,
        count: u64,
        wgs_per_unit: u64,
        enqueue_ns: u64,
    ) -> Chunk {
        Chunk {
            device,
            first_wg,
            count,
            work_groups: Some(count * wgs_per_unit),
            enqueue_ns: Some(enqueue_ns),
            ..Default::default()
        }
    }

    /// Records the completion seen at `end_ns` (since the launch's start) and the chunk's
    /// device time (ns), when profiling gave one: `start_ns = end_ns − device_ns`.
    pub fn completed(&mut self, end_ns: u64, device_ns: Option<u64>) {
        self.end_ns = Some(end_ns);
        if let Some(dn) = device_ns {
            self.device_ns = Some(dn);
            self.start_ns = Some(end_ns.saturating_sub(dn));
        }
    }

    /// The chunk's work did not count on its device (abandoned as a straggler, or its
    /// enqueue failed).
    pub fn lost(&self) -> bool {
        self.abandoned || self.failed.is_some()
    }
}

/// A host phase of a balanced launch (`schedule.phases[]`): ns since the launch's start.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Phase {
    /// `build`, `footprint`, `snapshot`, `chunks`, `read_back`, `write_back`, ...
    pub name: String,
    /// Start, ns since the launch's start.
    pub start_ns: u64,
    /// End, ns since the launch's start.
    pub end_ns: u64,
}

/// A transfer of a balanced launch (`schedule.transfers[]`; read by the trace, not written
/// by this version).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Transfer {
    /// Position of the device in `schedule.devices`; absent: host work.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<usize>,
    /// What was moved (`upload`, `read_back`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// Bytes moved.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Start, ns since the launch's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_ns: Option<u64>,
    /// End, ns since the launch's start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub end_ns: Option<u64>,
}

/// The split decision of `CLPRISM_SPLIT=auto` (`schedule.split_decision`, `sched::split`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SplitDecisionLog {
    /// The verdict and its estimates (`split`, `reason`, `est_home_ns`, `est_split_ns`,
    /// `est_transfer_ns`; ns).
    #[serde(flatten)]
    pub decision: SplitDecision,
    /// Bytes the other devices would need uploaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_bytes: Option<u64>,
    /// The host transfer rate was measured (else the default was assumed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_rate_measured: Option<bool>,
}

/// How the footprint model (the written ranges per work-group) was obtained
/// (`schedule.footprint`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct FootprintLog {
    /// Time to derive it by emulating sampled work-groups, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub derived_ms: Option<f64>,
    /// Work-groups emulated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampled_groups: Option<u64>,
    /// Write-free loops jumped over while emulating.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skipped_loops: Option<u64>,
    /// Read from the on-disk cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_cache: Option<bool>,
    /// Why there is no usable model (the merge then compares buffers: `merge: diff`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// The `best` scheduler's choice (`schedule.best`, `exec::best`). Lists are per entry of
/// `schedule.devices`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BestChoice {
    /// What decided.
    pub by: BestBy,
    /// Position of the chosen device in the balance devices.
    pub device: usize,
    /// Projected time per device, ns (`null` per device without a projection; `null` when
    /// there is no projection at all).
    pub projected_ns: Option<Vec<Option<f64>>>,
    /// Device profile name per device (`null`: no profile matched).
    pub profiles: Vec<Option<String>>,
    /// Measured ns per work-group per device (`null`: not measured yet).
    pub measured_ns_per_wg: Vec<Option<f64>>,
    /// The projection came from the per-shape cache.
    pub cached: bool,
    /// Time to choose, ms.
    pub choose_ms: f64,
    /// `zero-filled`: the projection emulated on zero-filled buffers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inputs: Option<String>,
    /// Why the projection was not used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// `CLPRISM_VERIFY`'s comparison of a balanced launch with a native run
/// (`schedule.verify`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Verify {
    /// Bytes of the written buffers that differ from the native run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub differing_bytes: Option<u64>,
    /// Why the native run could not be compared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Verify {
    /// The comparison ran: `n` bytes differ.
    pub fn differing(n: u64) -> Verify {
        Verify {
            differing_bytes: Some(n),
            error: None,
        }
    }

    /// The comparison could not run.
    pub fn failed(e: impl Into<String>) -> Verify {
        Verify {
            differing_bytes: None,
            error: Some(e.into()),
        }
    }
}

/// The `schedule` object (balance mode). Two shapes: a launch forwarded unsplit has
/// `merge: none`, `fallback`, `decision_ns` and empty `devices`/`chunks` (written by
/// `intercept::hooks`); a launch that went through the balanced path has the rest
/// (`exec::launch`, with `wall_ns`, `one_device_reason` from `exec::launch::run` and
/// `devices_ready_ms` from `intercept::balance`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Schedule {
    /// `CLPRISM_SCHEDULER` in effect (`boyer`, `static`, `css`, `gss`, `tss`, `single:N`,
    /// `best`, ...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    /// The scheduler started from the previous launch's measured speeds (Boyer's warm start).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warm_start: Option<bool>,
    /// `CLPRISM_SPLIT=auto`'s decision (`null`: not consulted).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub split_decision: Nullable<SplitDecisionLog>,
    /// Balance devices that sat this launch out, with why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub devices_excluded: Option<Vec<ExcludedDevice>>,
    /// Devices taking part (chunks refer to them by position).
    pub devices: Vec<ScheduleDevice>,
    /// The NDRange dimension split (0-based).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split_dim: Option<u32>,
    /// Units along the split dimension (each `wgs_per_unit` work-groups).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_groups: Option<u64>,
    /// Work-groups per unit (the product of the other dimensions' work-group counts).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wgs_per_unit: Option<u64>,
    /// Work-groups one wave of each device holds (occupancy), per device.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wave_work_groups: Option<Vec<u64>>,
    /// Registers per work-item reported by each device's build (`null`: unknown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub registers_per_work_item: Option<Vec<Option<u32>>>,
    /// Chunks in enqueue order.
    pub chunks: Vec<Chunk>,
    /// Fraction of the work-groups each device ran (same order as `devices`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub share: Option<Vec<f64>>,
    /// Time between the first and the last device finishing, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idle_tail_ns: Option<u64>,
    /// From the first enqueue to the last chunk's completion, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub makespan_ns: Option<u64>,
    /// How the results were merged.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge: Option<Merge>,
    /// Bytes copied into the app's buffers by the merge.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merged_bytes: Option<u64>,
    /// Bytes the buffer directory copied onto the devices before their chunks ran (ranges
    /// a chunk reads that were stale on its device; halos of an iterative kernel).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fetched_bytes: Option<u64>,
    /// Bytes of the launch's buffers that only devices hold after it (the app's buffer is
    /// brought up to date when the app needs them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resident_bytes: Option<u64>,
    /// Chunks whose results were read back while others still ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub early_read_chunks: Option<u64>,
    /// Pinned host staging memory held by clprism, bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned_staging_bytes: Option<u64>,
    /// How the footprint model was obtained (`null`: not needed).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub footprint: Nullable<FootprintLog>,
    /// The app's device ran its chunks directly on the app's buffers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_device_direct: Option<bool>,
    /// Host phases of the launch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phases: Option<Vec<Phase>>,
    /// The app gave no local size and clprism chose one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub local_chosen: Option<bool>,
    /// Why the launch was forwarded unsplit; `null` when it went through the balanced path.
    pub fallback: Option<FallbackReason>,
    /// The `best` scheduler's choice (`null`: another scheduler).
    #[serde(deserialize_with = "nullable", skip_serializing_if = "Option::is_none")]
    pub best: Nullable<BestChoice>,
    /// `CLPRISM_VERIFY`: comparison with a native run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<Verify>,
    /// Wall time of the whole balanced launch on the thread that ran it, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ns: Option<u64>,
    /// When the launch thread began the launch, ns after the app's enqueue (`time_ns`): with
    /// `wall_ns`, where the time between two launches goes (the hand-off here; the rest is
    /// the app's, after the launch's event completed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub started_ns: Option<u64>,
    /// Why a launch that went through the balanced path ran on one device only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub one_device_reason: Option<String>,
    /// When the balance devices became ready, ms since the first OpenCL call (once per
    /// process; on every record, forwarded or split, once they are open).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub devices_ready_ms: Option<f64>,
    /// Time clprism spent on the app's thread before forwarding, ns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision_ns: Option<u64>,
    /// The probe chunk a kernel's first launch ran on the app's device before this record's
    /// balanced rest (`exec::early`; the chunks and `makespan_ns` are the rest's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub probe: Option<ProbeLog>,
    /// The launch ran on clprism's launch thread while the app's enqueue returned at once
    /// (`exec::pipeline`, `CLPRISM_BALANCE_ASYNC`); only written when true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub launch_thread: Option<bool>,
    /// The launch was planned and its chunks enqueued while the app's previous launch was
    /// still running, behind that launch's chunks on each device (`CLPRISM_BALANCE_PIPELINE`);
    /// its chunks' and phases' times count from that issue, its `wall_ns` from the previous
    /// launch's end. Only written when true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_ahead: Option<bool>,
    /// For a launch issued ahead (`issued_ahead`): when the launch thread took it up, ns
    /// after the app's enqueue (`time_ns`); its chunks' and phases' times count from then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issued_ns: Option<u64>,
    /// Halo bytes copied behind this launch's chunks for the launch that followed it last
    /// time (`CLPRISM_BALANCE_PUSH`, `exec::launch::forecast`), so that launch, when it
    /// comes, finds them in place. Only written when some were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pushed_bytes: Option<u64>,
    /// Start of the launch, ns since the Unix epoch (read by the trace; not written by this
    /// version).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub t0_unix_ns: Option<u64>,
    /// Transfers (read by the trace; not written by this version).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transfers: Option<Vec<Transfer>>,
}

impl Schedule {
    /// The record of a launch forwarded unsplit: `merge: none`, the reason, the time spent
    /// deciding (ns), no devices or chunks.
    pub fn forwarded(reason: impl Into<String>, decision_ns: u64) -> Schedule {
        Schedule {
            merge: Some(Merge::None),
            fallback: Some(FallbackReason::parse(&reason.into())),
            decision_ns: Some(decision_ns),
            ..Default::default()
        }
    }

    /// Went through the balanced path with chunks (not forwarded).
    pub fn is_balanced(&self) -> bool {
        self.fallback.is_none() && !self.chunks.is_empty()
    }

    /// Distinct devices whose chunks ran.
    pub fn devices_used(&self) -> usize {
        let mut d: Vec<usize> = self.chunks.iter().map(|c| c.device).collect();
        d.sort_unstable();
        d.dedup();
        d.len()
    }

    /// End of the named phase, ns since the launch's start.
    pub fn phase_end(&self, name: &str) -> Option<u64> {
        self.phases
            .as_ref()?
            .iter()
            .find(|p| p.name == name)
            .map(|p| p.end_ns)
    }

    /// The split decision, when one was made.
    pub fn split_decision(&self) -> Option<&SplitDecisionLog> {
        self.split_decision.as_ref()?.as_ref()
    }

    /// Serializes to a JSON value (for `LaunchRecord::extra`; never fails for these types).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

pub use anchored::*;
pub use check::*;
pub use device_def::*;
pub use fields::*;
pub use labels::*;

#[cfg(test)]
mod tests;
