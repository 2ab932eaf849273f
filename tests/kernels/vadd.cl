// @kernel vadd
// @global 1024
// @local 128
// @group 3
// @arg buf:4096:fill=randf
// @arg buf:4096:fill=randf
// @arg buf:4096
// @arg int:1000
kernel void vadd(global const float* a, global const float* b, global float* c, int n) {
  int i = get_global_id(0);
  if (i < n) c[i] = a[i] + b[i];
}
