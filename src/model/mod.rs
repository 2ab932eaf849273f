//! Device profiles and the projection model (Panwar et al. §IV-B, §IV-D), with occupancy.
//! No OpenCL calls inside.
//!
//! * [`profile`]: the JSON device profile (schema in `profiles/README.md`), loading and
//!   validation, and matching an OpenCL device to a profile.
//! * [`occupancy`](mod@occupancy): active work-groups and warps per compute unit, and the limiting factor
//!   (Quintanilla eq. 2.1–2.4).
//! * [`project`](mod@project): per-work-group statistics → projected kernel time per device, with the
//!   switchable refinements of DESIGN.md §6, and the ranking across devices.
//! * [`memory`]: the memory physics of the refinements (latency bound after Hong & Kim's
//!   MWP and Little's law, the cache hierarchy's traffic, the kernel floor).
//! * [`metrics`]: accuracy metrics of Panwar §V (relative-performance error, best-device
//!   penalty) and absolute percentage error / MAPE (Wang §V).

pub mod memory;
pub mod metrics;
pub mod occupancy;
pub mod profile;
pub mod project;

pub use metrics::{AccuracySummary, BestPick, KernelAccuracy, MetricsError};
pub use occupancy::{occupancy, KernelResources, Limiter, Occupancy, OccupancyError};
pub use profile::{
    find_profile, load_dir, load_file, ClassThroughput, Curve, DeviceIdentity, DeviceKind,
    DeviceMatch, Granularity, OccupancyLimits, Profile, ProfileError,
};
pub use project::{
    project, project_all, rank_projections, Bound, LaunchShape, ModelError, ModelOptions,
    Projection, ProjectionSet, Skipped,
};
