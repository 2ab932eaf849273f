//! Device profiles: the hardware side of the projection (Panwar et al. §IV-B, DESIGN.md §6).
//!
//! A profile is one JSON file per device (schema documented in `profiles/README.md`). Units
//! are fixed by the field names: throughputs in lane instructions per ns or bytes per ns
//! (1 byte/ns = 1 GB/s), times in ns, sizes in bytes, clocks in MHz. Memory throughputs
//! are functions of occupancy (Panwar §IV-B, Fig. 2), given as a table of
//! `[occupancy fraction, bytes/ns]` points and linearly interpolated ([`Curve`]).
//!
//! Every number carries its source in the `sources` map (spec sheet with a reference, an
//! estimate with its method, or `measured <date> by <command>`); [`Profile::validate`]
//! refuses a profile where a number has no source.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// Kind of device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// A GPU (or other accelerator with SIMT execution).
    Gpu,
    /// A CPU device (e.g. PoCL `pthread` / `basic`).
    Cpu,
}

/// Which emulator count is the global memory transaction (Panwar §IV-D: "we calculate the
/// number of transactions using device-specific formulas").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Granularity {
    /// Distinct 32-byte sectors per warp request, × `sector_bytes` (DRAM/L2 access
    /// granularity of NVIDIA GPUs since Fermi's L2, and of uncached accesses).
    #[default]
    Sector,
    /// Distinct 128-byte lines per warp request, × `line_bytes` (L1-cached loads on
    /// Fermi fetch whole 128-byte lines).
    Line,
}

/// Instruction throughput per class, in lane instructions per ns for the whole device
/// (= G lane-instructions/s). Classes are those of [`crate::emu::stats::InstructionMix`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassThroughput {
    /// Integer arithmetic / logic / compare.
    pub int: f64,
    /// Single-precision floating point (an FMA counts as one instruction).
    pub fp32: f64,
    /// Double-precision floating point.
    pub fp64: f64,
    /// Special functions (sin, exp, rsqrt, div, ...).
    pub special: f64,
    /// Type conversions.
    pub conversion: f64,
    /// Branches.
    pub branch: f64,
    /// Barriers (lane instructions; one per work-item reaching the barrier).
    pub barrier: f64,
    /// Atomics.
    pub atomic: f64,
    /// Load/store issue (the memory traffic itself is in `t_global` / `t_local`).
    pub memory: f64,
    /// Everything else.
    pub other: f64,
}

impl ClassThroughput {
    /// `(class name, throughput)` pairs in a fixed order.
    pub fn entries(&self) -> [(&'static str, f64); 10] {
        [
            ("int", self.int),
            ("fp32", self.fp32),
            ("fp64", self.fp64),
            ("special", self.special),
            ("conversion", self.conversion),
            ("branch", self.branch),
            ("barrier", self.barrier),
            ("atomic", self.atomic),
            ("memory", self.memory),
            ("other", self.other),
        ]
    }

    /// Every throughput multiplied by `factor` (used by tests and what-if studies).
    pub fn scaled(&self, factor: f64) -> Self {
        ClassThroughput {
            int: self.int * factor,
            fp32: self.fp32 * factor,
            fp64: self.fp64 * factor,
            special: self.special * factor,
            conversion: self.conversion * factor,
            branch: self.branch * factor,
            barrier: self.barrier * factor,
            atomic: self.atomic * factor,
            memory: self.memory * factor,
            other: self.other * factor,
        }
    }
}

/// A throughput as a function of occupancy (Panwar §IV-B): points
/// `[occupancy fraction in [0,1], bytes per ns]`, strictly increasing in occupancy,
/// linearly interpolated between points and held constant outside them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Curve(pub Vec<[f64; 2]>);

impl Curve {
    /// A curve with the same value at every occupancy.
    pub fn flat(bytes_per_ns: f64) -> Self {
        Curve(vec![[1.0, bytes_per_ns]])
    }

    /// Throughput (bytes/ns) at occupancy `occ` (fraction). Linear interpolation between
    /// the table points, constant extrapolation outside; 0 for an empty curve (which
    /// validation refuses).
    pub fn at(&self, occ: f64) -> f64 {
        let pts = &self.0;
        let Some(first) = pts.first() else {
            return 0.0;
        };
        if occ.is_nan() || occ <= first[0] {
            return first[1];
        }
        for w in pts.windows(2) {
            let (a, b) = (w[0], w[1]);
            if occ <= b[0] {
                let t = (occ - a[0]) / (b[0] - a[0]);
                return a[1] + t * (b[1] - a[1]);
            }
        }
        pts[pts.len() - 1][1]
    }

    /// Every throughput multiplied by `factor`.
    pub fn scaled(&self, factor: f64) -> Self {
        Curve(self.0.iter().map(|p| [p[0], p[1] * factor]).collect())
    }

    fn validate(&self, field: &str) -> Result<(), (String, String)> {
        if self.0.is_empty() {
            return Err((
                field.into(),
                "needs at least one [occupancy, bytes/ns] point".into(),
            ));
        }
        let mut prev: Option<f64> = None;
        for (i, p) in self.0.iter().enumerate() {
            let f = format!("{field}[{i}]");
            if !(p[0].is_finite() && (0.0..=1.0).contains(&p[0])) {
                return Err((f, format!("occupancy {} is not in [0, 1]", p[0])));
            }
            if !(p[1].is_finite() && p[1] > 0.0) {
                return Err((f, format!("throughput {} bytes/ns must be > 0", p[1])));
            }
            if let Some(q) = prev {
                if p[0] <= q {
                    return Err((f, "occupancies must be strictly increasing".into()));
                }
            }
            prev = Some(p[0]);
        }
        Ok(())
    }
}

/// Occupancy limits per compute unit (Quintanilla §2.3; CUDA occupancy calculator;
/// AMD APP programming guide).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OccupancyLimits {
    /// Resident work-groups per compute unit.
    pub max_work_groups_per_cu: u32,
    /// Resident warps (wavefronts) per compute unit.
    pub max_warps_per_cu: u32,
    /// 32-bit registers per compute unit; `null` when registers do not limit (CPUs).
    #[serde(default)]
    pub registers_per_cu: Option<u32>,
    /// Registers are allocated per warp in multiples of this many (NVIDIA: 256 since
    /// Kepler); default 1.
    #[serde(default)]
    pub register_allocation_unit: Option<u32>,
    /// Local memory per compute unit, bytes.
    pub local_mem_per_cu_bytes: u64,
    /// Local memory is allocated per work-group in multiples of this many bytes; default 1.
    #[serde(default)]
    pub local_mem_allocation_unit: Option<u64>,
    /// Largest work-group (work-items), CL_DEVICE_MAX_WORK_GROUP_SIZE.
    pub max_work_group_size: u32,
}

/// How an OpenCL device is recognised as this profile's device. Every given criterion must
/// hold; comparisons of strings are case-insensitive substring tests. Among matching
/// profiles the most specific (most criteria) wins, see [`find_profile`].
///
/// PoCL's `pthread` and `basic` devices report the same hardware; they are told apart by
/// CL_DEVICE_VERSION, which PoCL ends with `HSTR: pthread-<triple>-<cpu>` or
/// `HSTR: basic-<triple>-<cpu>` (PoCL 3.1 also prefixes CL_DEVICE_NAME with `pthread-` /
/// `basic-`, older versions do not). `max_compute_units` additionally pins a profile to a
/// core count, so that a profile measured on another host does not silently apply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeviceMatch {
    /// Substrings that must all occur in CL_DEVICE_NAME.
    #[serde(default)]
    pub name_contains: Vec<String>,
    /// Substring of CL_DEVICE_VENDOR.
    #[serde(default)]
    pub vendor_contains: Option<String>,
    /// Substring of CL_DEVICE_VERSION (PoCL: `HSTR: pthread`, `HSTR: basic`).
    #[serde(default)]
    pub version_contains: Option<String>,
    /// Substring of CL_DRIVER_VERSION.
    #[serde(default)]
    pub driver_contains: Option<String>,
    /// CL_DEVICE_MAX_COMPUTE_UNITS must equal this.
    #[serde(default)]
    pub max_compute_units: Option<u32>,
}

/// What the interposer knows about an OpenCL device, for matching it to a profile.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceIdentity {
    /// CL_DEVICE_NAME.
    pub name: String,
    /// CL_DEVICE_VENDOR.
    pub vendor: String,
    /// CL_DEVICE_VERSION.
    pub version: String,
    /// CL_DRIVER_VERSION.
    pub driver_version: String,
    /// CL_DEVICE_MAX_COMPUTE_UNITS.
    pub max_compute_units: u32,
}

fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.to_lowercase().contains(&needle.to_lowercase())
}

impl DeviceMatch {
    /// Number of criteria (each `name_contains` entry counts one).
    pub fn criteria(&self) -> usize {
        self.name_contains.len()
            + self.vendor_contains.is_some() as usize
            + self.version_contains.is_some() as usize
            + self.driver_contains.is_some() as usize
            + self.max_compute_units.is_some() as usize
    }

    /// True when every criterion holds for `dev` (and there is at least one criterion).
    pub fn matches(&self, dev: &DeviceIdentity) -> bool {
        self.criteria() > 0
            && self.name_contains.iter().all(|s| contains_ci(&dev.name, s))
            && self
                .vendor_contains
                .as_ref()
                .is_none_or(|s| contains_ci(&dev.vendor, s))
            && self
                .version_contains
                .as_ref()
                .is_none_or(|s| contains_ci(&dev.version, s))
            && self
                .driver_contains
                .as_ref()
                .is_none_or(|s| contains_ci(&dev.driver_version, s))
            && self
                .max_compute_units
                .is_none_or(|n| n == dev.max_compute_units)
    }
}

/// One device profile (DESIGN.md §6; schema in `profiles/README.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Unique profile name (used as the device name in projections).
    pub name: String,
    /// Vendor, free text.
    pub vendor: String,
    /// GPU or CPU.
    pub kind: DeviceKind,
    /// How to recognise the OpenCL device.
    #[serde(rename = "match")]
    pub device_match: DeviceMatch,
    /// Compute units (SMs, CUs, cores used by the OpenCL driver).
    pub compute_units: u32,
    /// Warp / wavefront width, lanes (CPU: the driver's work-item vector width).
    pub warp_width: u32,
    /// Clock, MHz.
    pub clock_mhz: f64,
    /// Lane instructions per ns per class, whole device.
    pub instruction_throughput: ClassThroughput,
    /// Coalesced global memory read throughput vs occupancy, bytes/ns.
    pub global_read: Curve,
    /// Coalesced global memory write throughput vs occupancy, bytes/ns.
    pub global_write: Curve,
    /// Local memory throughput vs occupancy without bank conflicts, bytes/ns, whole device.
    pub local: Curve,
    /// Sector size, bytes (32).
    pub sector_bytes: u32,
    /// Cache line size, bytes (128).
    pub line_bytes: u32,
    /// Transaction unit of global loads; default `sector`.
    #[serde(default)]
    pub global_load_granularity: Granularity,
    /// Transaction unit of global stores; default `sector`.
    #[serde(default)]
    pub global_store_granularity: Granularity,
    /// Local memory banks.
    pub local_banks: u32,
    /// Width of one bank, bytes.
    pub bank_bytes: u32,
    /// Last-level cache shared by all compute units (L2), bytes; 0 when none.
    pub l2_bytes: u64,
    /// Occupancy limits per compute unit.
    pub limits: OccupancyLimits,
    /// Fixed cost of one kernel launch, ns (enqueue to start of execution).
    pub launch_overhead_ns: f64,
    /// Shortest device time of a kernel, ns: `END − START` of profiling events of an
    /// empty one-work-item kernel (the median over many launches). No launch takes less on
    /// the device; used by `ModelOptions::kernel_floor`. Absent in older profiles: the
    /// model then falls back to `launch_overhead_ns` (which `clprism characterize`
    /// measures the same way). `clprism characterize --only floor`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_floor_ns: Option<f64>,
    /// Shortest device time of a kernel that waited behind other work on the device, ns:
    /// `END − START` of a near-empty kernel whose `START − SUBMIT` shows it queued behind
    /// an earlier command (median). The GPU's front end prepares such a launch while the
    /// launch ahead of it runs, so it is shorter than `kernel_floor_ns`; used by
    /// `ModelOptions::queued_floor`. Absent: the idle floor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_floor_queued_ns: Option<f64>,
    /// Latency of one dependent global load that misses every cache, ns (pointer chasing
    /// through a footprint far larger than the last-level cache, one work-item; Hong & Kim
    /// ISCA'09 `Mem_L`). Used by `ModelOptions::latency_bound`. Absent: estimated from the
    /// lowest point of `global_read` by Little's law (see `project::global_latency`).
    /// `clprism characterize --only latency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub global_latency_ns: Option<f64>,
    /// Latency of one dependent global load that hits the L2 (pointer chasing through a
    /// footprint larger than one compute unit's L1 and smaller than the L2), ns. Absent:
    /// half of the global latency (stated estimate). `clprism characterize --only latency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_latency_ns: Option<f64>,
    /// Latency of one dependent global load that hits the L1 of its compute unit
    /// (pointer chasing through 16 KiB), ns. Absent: 1/16 of the global latency (stated
    /// estimate: ~33 against ~500+ clocks in published Hopper microbenchmarks).
    /// `clprism characterize --only latency`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1_latency_ns: Option<f64>,
    /// Read throughput of the L2 for data resident in it, whole device at full occupancy,
    /// bytes/ns (grid-stride float4 reads of a buffer that fits in the L2, several passes).
    /// Used by `ModelOptions::cache_reuse`; absent: the L2 level is not modelled (stated in
    /// `project`'s docs). `clprism characterize --only l2`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l2_read_bytes_per_ns: Option<f64>,
    /// L1 data cache per compute unit available to global loads, bytes, before the local
    /// memory of the resident work-groups is taken from it (NVIDIA since Volta: one SRAM
    /// shared by L1 and shared memory). Used by `ModelOptions::cache_reuse`; absent: reuse
    /// within a work-group is credited to the L2 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub l1_bytes_per_cu: Option<u64>,
    /// Warp schedulers per compute unit: the processing blocks (partitions) an NVIDIA SM
    /// is divided into since Maxwell, each with its own scheduler and dispatch unit (one
    /// warp instruction per clock) and its own share of the SM's lanes; a warp is issued
    /// by one of them for its lifetime. Used by `ModelOptions::issue_partitions`; absent:
    /// no limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedulers_per_cu: Option<u32>,
    /// Host→device copy throughput, bytes/ns.
    pub host_to_device_bytes_per_ns: f64,
    /// Device→host copy throughput, bytes/ns.
    pub device_to_host_bytes_per_ns: f64,
    /// Source of every number: key = field path (`clock_mhz`, `instruction_throughput.fp32`,
    /// `limits.max_warps_per_cu`, ...) or a parent (`instruction_throughput`, `limits`)
    /// covering all its children.
    pub sources: BTreeMap<String, String>,
    /// Free-form remarks.
    #[serde(default)]
    pub notes: Option<String>,
    /// File the profile was loaded from (not part of the JSON).
    #[serde(skip)]
    pub path: Option<PathBuf>,
}

/// Error loading or validating a profile. `Display` names the file and the field.
#[derive(Debug, Clone, PartialEq)]
pub enum ProfileError {
    /// The file or directory could not be read.
    Io {
        /// File or directory.
        path: PathBuf,
        /// OS error text.
        message: String,
    },
    /// The file is not valid JSON for the schema (unknown field, wrong type, missing field).
    Parse {
        /// File.
        path: PathBuf,
        /// serde_json message (names the field and the line/column).
        message: String,
    },
    /// A field has a value outside its domain, or a number has no source.
    Invalid {
        /// File (or `<memory>`).
        path: PathBuf,
        /// Field path, e.g. `global_read[2]` or `sources`.
        field: String,
        /// What is wrong.
        message: String,
    },
    /// Two profiles with the same name.
    Duplicate {
        /// The name.
        name: String,
        /// The first file.
        first: PathBuf,
        /// The second file.
        second: PathBuf,
    },
}

impl fmt::Display for ProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProfileError::Io { path, message } => {
                write!(f, "{}: cannot read: {message}", path.display())
            }
            ProfileError::Parse { path, message } => {
                write!(f, "{}: invalid profile JSON: {message}", path.display())
            }
            ProfileError::Invalid {
                path,
                field,
                message,
            } => write!(f, "{}: field `{field}`: {message}", path.display()),
            ProfileError::Duplicate {
                name,
                first,
                second,
            } => write!(
                f,
                "profile name `{name}` used by both {} and {}",
                first.display(),
                second.display()
            ),
        }
    }
}

impl std::error::Error for ProfileError {}

/// Paths of numbers that must each have a source (directly or through a parent key).
const SOURCED_FIELDS: &[&str] = &[
    "compute_units",
    "warp_width",
    "clock_mhz",
    "instruction_throughput.int",
    "instruction_throughput.fp32",
    "instruction_throughput.fp64",
    "instruction_throughput.special",
    "instruction_throughput.conversion",
    "instruction_throughput.branch",
    "instruction_throughput.barrier",
    "instruction_throughput.atomic",
    "instruction_throughput.memory",
    "instruction_throughput.other",
    "global_read",
    "global_write",
    "local",
    "sector_bytes",
    "line_bytes",
    "local_banks",
    "bank_bytes",
    "l2_bytes",
    "limits.max_work_groups_per_cu",
    "limits.max_warps_per_cu",
    "limits.local_mem_per_cu_bytes",
    "limits.max_work_group_size",
    "launch_overhead_ns",
    "host_to_device_bytes_per_ns",
    "device_to_host_bytes_per_ns",
];

/// Optional fields that need a source only when present.
const OPTIONAL_SOURCED_FIELDS: &[&str] = &[
    "limits.registers_per_cu",
    "limits.register_allocation_unit",
    "limits.local_mem_allocation_unit",
    "global_load_granularity",
    "global_store_granularity",
    "kernel_floor_ns",
    "kernel_floor_queued_ns",
    "global_latency_ns",
    "l2_latency_ns",
    "l1_latency_ns",
    "l2_read_bytes_per_ns",
    "l1_bytes_per_cu",
    "schedulers_per_cu",
];

fn covered(sources: &BTreeMap<String, String>, field: &str) -> bool {
    sources
        .iter()
        .any(|(k, v)| !v.trim().is_empty() && (k == field || field.starts_with(&format!("{k}."))))
}

fn is_known_key(key: &str) -> bool {
    let all = SOURCED_FIELDS.iter().chain(OPTIONAL_SOURCED_FIELDS);
    [
        "instruction_throughput",
        "limits",
        "match",
        "name",
        "vendor",
        "kind",
    ]
    .contains(&key)
        || all.clone().any(|f| *f == key)
}

impl Profile {
    /// Parse and validate a profile from JSON text; `path` is only used in errors.
    pub fn from_json(text: &str, path: &Path) -> Result<Profile, ProfileError> {
        let mut p: Profile = serde_json::from_str(text).map_err(|e| ProfileError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })?;
        p.path = Some(path.to_path_buf());
        p.validate()?;
        Ok(p)
    }

    /// Check every field's domain and that every number has a source.
    ///
    /// Errors: [`ProfileError::Invalid`] naming the first offending field.
    pub fn validate(&self) -> Result<(), ProfileError> {
        let path = self
            .path
            .clone()
            .unwrap_or_else(|| PathBuf::from("<memory>"));
        let bad = |field: &str, message: String| ProfileError::Invalid {
            path: path.clone(),
            field: field.to_string(),
            message,
        };
        if self.name.trim().is_empty() {
            return Err(bad("name", "must not be empty".into()));
        }
        if self.device_match.criteria() == 0 {
            return Err(bad(
                "match",
                "needs at least one criterion (name_contains, vendor_contains, \
                 version_contains, driver_contains, max_compute_units)"
                    .into(),
            ));
        }
        let positive_ints: [(&str, u64); 10] = [
            ("compute_units", self.compute_units as u64),
            ("warp_width", self.warp_width as u64),
            ("sector_bytes", self.sector_bytes as u64),
            ("line_bytes", self.line_bytes as u64),
            ("local_banks", self.local_banks as u64),
            ("bank_bytes", self.bank_bytes as u64),
            (
                "limits.max_work_groups_per_cu",
                self.limits.max_work_groups_per_cu as u64,
            ),
            (
                "limits.max_warps_per_cu",
                self.limits.max_warps_per_cu as u64,
            ),
            (
                "limits.max_work_group_size",
                self.limits.max_work_group_size as u64,
            ),
            (
                "limits.local_mem_per_cu_bytes",
                self.limits.local_mem_per_cu_bytes,
            ),
        ];
        for (f, v) in positive_ints {
            if v == 0 {
                return Err(bad(f, "must be > 0".into()));
            }
        }
        for (f, v) in [
            ("limits.registers_per_cu", self.limits.registers_per_cu),
            (
                "limits.register_allocation_unit",
                self.limits.register_allocation_unit,
            ),
        ] {
            if v == Some(0) {
                return Err(bad(f, "must be > 0 (or null)".into()));
            }
        }
        if self.limits.local_mem_allocation_unit == Some(0) {
            return Err(bad(
                "limits.local_mem_allocation_unit",
                "must be > 0 (or null)".into(),
            ));
        }
        if !self.line_bytes.is_multiple_of(self.sector_bytes) {
            return Err(bad(
                "line_bytes",
                format!(
                    "{} is not a multiple of sector_bytes {}",
                    self.line_bytes, self.sector_bytes
                ),
            ));
        }
        let mut floats: Vec<(String, f64)> = vec![
            ("clock_mhz".into(), self.clock_mhz),
            (
                "host_to_device_bytes_per_ns".into(),
                self.host_to_device_bytes_per_ns,
            ),
            (
                "device_to_host_bytes_per_ns".into(),
                self.device_to_host_bytes_per_ns,
            ),
        ];
        for (c, v) in self.instruction_throughput.entries() {
            floats.push((format!("instruction_throughput.{c}"), v));
        }
        for (f, v) in floats {
            if !(v.is_finite() && v > 0.0) {
                return Err(bad(&f, format!("{v} must be a finite number > 0")));
            }
        }
        if !(self.launch_overhead_ns.is_finite() && self.launch_overhead_ns >= 0.0) {
            return Err(bad(
                "launch_overhead_ns",
                format!("{} must be a finite number >= 0", self.launch_overhead_ns),
            ));
        }
        for (f, v) in [
            ("kernel_floor_ns", self.kernel_floor_ns),
            ("kernel_floor_queued_ns", self.kernel_floor_queued_ns),
            ("global_latency_ns", self.global_latency_ns),
            ("l2_latency_ns", self.l2_latency_ns),
            ("l1_latency_ns", self.l1_latency_ns),
            ("l2_read_bytes_per_ns", self.l2_read_bytes_per_ns),
            ("l1_bytes_per_cu", self.l1_bytes_per_cu.map(|b| b as f64)),
            ("schedulers_per_cu", self.schedulers_per_cu.map(f64::from)),
        ] {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0) {
                    return Err(bad(
                        f,
                        format!("{v} must be a finite number > 0 (or absent)"),
                    ));
                }
            }
        }
        for (f, c) in [
            ("global_read", &self.global_read),
            ("global_write", &self.global_write),
            ("local", &self.local),
        ] {
            c.validate(f).map_err(|(f, m)| bad(&f, m))?;
        }
        // Sources: every number has one, and no key names a field that does not exist.
        for f in SOURCED_FIELDS {
            if !covered(&self.sources, f) {
                return Err(bad(
                    "sources",
                    format!(
                        "no source for `{f}` (spec reference, estimate method, or measurement)"
                    ),
                ));
            }
        }
        let present = [
            self.limits.registers_per_cu.is_some(),
            self.limits.register_allocation_unit.is_some(),
            self.limits.local_mem_allocation_unit.is_some(),
            self.global_load_granularity != Granularity::Sector,
            self.global_store_granularity != Granularity::Sector,
            self.kernel_floor_ns.is_some(),
            self.kernel_floor_queued_ns.is_some(),
            self.global_latency_ns.is_some(),
            self.l2_latency_ns.is_some(),
            self.l1_latency_ns.is_some(),
            self.l2_read_bytes_per_ns.is_some(),
            self.l1_bytes_per_cu.is_some(),
            self.schedulers_per_cu.is_some(),
        ];
        for (f, is_present) in OPTIONAL_SOURCED_FIELDS.iter().zip(present) {
            if is_present && !covered(&self.sources, f) {
                return Err(bad("sources", format!("no source for `{f}`")));
            }
        }
        for k in self.sources.keys() {
            if !is_known_key(k) {
                return Err(bad(
                    &format!("sources.{k}"),
                    "names no field of the profile".into(),
                ));
            }
        }
        Ok(())
    }

    /// Registers allocation unit (default 1).
    pub fn register_allocation_unit(&self) -> u32 {
        self.limits.register_allocation_unit.unwrap_or(1).max(1)
    }

    /// Local memory allocation unit in bytes (default 1).
    pub fn local_mem_allocation_unit(&self) -> u64 {
        self.limits.local_mem_allocation_unit.unwrap_or(1).max(1)
    }
}

/// The built-in profile folder: `profiles/` of the source tree this library was built
/// from (used when `CLPRISM_PROFILES` / `--profiles` name none).
pub fn builtin_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/profiles"))
}

/// Load and validate one profile file.
pub fn load_file(path: &Path) -> Result<Profile, ProfileError> {
    let text = std::fs::read_to_string(path).map_err(|e| ProfileError::Io {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    Profile::from_json(&text, path)
}

/// Load every `*.json` file of `dir` (not recursive), in file-name order, validating each.
///
/// Errors: the first unreadable / invalid file, or two profiles with the same `name`.
pub fn load_dir(dir: &Path) -> Result<Vec<Profile>, ProfileError> {
    let io = |e: std::io::Error| ProfileError::Io {
        path: dir.to_path_buf(),
        message: e.to_string(),
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(io)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    let mut out: Vec<Profile> = Vec::with_capacity(files.len());
    for f in files {
        let p = load_file(&f)?;
        if let Some(prev) = out.iter().find(|q| q.name == p.name) {
            return Err(ProfileError::Duplicate {
                name: p.name.clone(),
                first: prev.path.clone().unwrap_or_default(),
                second: f,
            });
        }
        out.push(p);
    }
    Ok(out)
}

/// The profile for an OpenCL device: among the profiles whose `match` holds, the one with
/// the most criteria; on a tie, the first in `profiles` (file-name order from [`load_dir`]).
pub fn find_profile<'a>(profiles: &'a [Profile], dev: &DeviceIdentity) -> Option<&'a Profile> {
    let mut best: Option<&Profile> = None;
    for p in profiles {
        if p.device_match.matches(dev)
            && best.is_none_or(|b| p.device_match.criteria() > b.device_match.criteria())
        {
            best = Some(p);
        }
    }
    best
}
