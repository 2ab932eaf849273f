//! Mini-emulator (Panwar et al. §IV-C): OpenCL C → SPIR-V, SPIR-V loader, warp-lockstep
//! interpreter of one work-group, and its hardware statistics. No OpenCL calls inside.

pub mod stats;
