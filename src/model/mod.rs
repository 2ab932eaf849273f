//! Device profiles and the projection model (Panwar et al. §IV-B, §IV-D), with occupancy.
//! No OpenCL calls inside.
