// @kernel carg
// @global 256
// @local 64
// @group 2
// @arg buf:1024:fill=randf
// @arg buf:64:fill=iotaf
// @arg buf:1024
kernel void carg(global const float* a, constant float* c, global float* o) {
  int i = get_global_id(0);
  o[i] = a[i] * c[i & 15] + c[(i >> 4) & 15];
}
