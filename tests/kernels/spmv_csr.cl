// @kernel spmv
// @global 256
// @local 64
// @group 2
// @arg buf:1028:fill=random
// @arg buf:4096:fill=random
// @arg buf:4096:fill=randf
// @arg buf:1024:fill=randf
// @arg buf:1024
// Row pointers are built from random bytes: row r has (rp[r] & 15) nonzeros.
kernel void spmv(global const uint* rp, global const uint* col, global const float* val, global const float* x, global float* y) {
  int r = get_global_id(0);
  uint len = rp[r] & 15u;
  uint start = (r * 4u) % 1000u;
  float acc = 0.0f;
  for (uint k = start; k < start + len; k++) acc += val[k] * x[col[k] & 255u];
  y[r] = acc;
}
