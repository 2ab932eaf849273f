//! clprism: a transparent OpenCL interposer.
//!
//! Built as `libOpenCL.so`, it sits in front of an unmodified OpenCL application (through
//! `LD_PRELOAD`, as `libOpenCL.so.1` on `LD_LIBRARY_PATH`, or as an ocl-icd layer), forwards
//! every call to the real ICD loader, and on the side logs every kernel launch, projects its
//! runtime on every known device (Panwar et al. mini-emulation) or balances it across all
//! devices (Boyer's dynamic chunk scheduler). See `DESIGN.md` for the architecture.
//!
//! Layers (dependencies point down only):
//! `api` → `intercept` → {`exec`, `sched`, `emu`, `model`} → `log` (+ its `log::trace` timeline) →
//! `loader` → `cache` (the cache directory on disk) → `config`.
//! `sched`, `emu` and `model` make no OpenCL calls.
#![allow(non_snake_case)]

pub mod accuracy;
pub mod api;
pub mod cache;
pub mod characterize;
pub mod config;
pub mod emu;
pub mod exec;
pub mod intercept;
pub mod launcher;
pub mod loader;
pub mod log;
pub mod model;
pub mod registry;
pub mod report;
pub mod sched;
