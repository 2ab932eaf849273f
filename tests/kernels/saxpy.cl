// @kernel saxpy
// @global 512
// @local 64
// @group 5
// @arg float:2.5
// @arg buf:2048:fill=randf
// @arg buf:2048:fill=randf
kernel void saxpy(float a, global const float* x, global float* y) {
  size_t i = get_global_id(0);
  y[i] = a * x[i] + y[i];
}
