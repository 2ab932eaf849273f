// @kernel matmul
// @global 32,32
// @local 8,8
// @group 1,2
// @arg buf:4096:fill=randf
// @arg buf:4096:fill=randf
// @arg buf:4096
// @arg int:32
kernel void matmul(global const float* A, global const float* B, global float* C, int n) {
  int c = get_global_id(0), r = get_global_id(1);
  float acc = 0.0f;
  for (int k = 0; k < n; k++) acc += A[r * n + k] * B[k * n + c];
  C[r * n + c] = acc;
}
