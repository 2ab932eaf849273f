// @kernel matmul_tiled
// @global 32,32
// @local 16,16
// @group 1,1
// @ulp 2
// @arg buf:4096:fill=randf
// @arg buf:4096:fill=randf
// @arg buf:4096
// @arg int:32
#define TS 16
kernel void matmul_tiled(global const float* A, global const float* B, global float* C, int n) {
  local float As[TS][TS], Bs[TS][TS];
  int lc = get_local_id(0), lr = get_local_id(1);
  int c = get_global_id(0), r = get_global_id(1);
  float acc = 0.0f;
  for (int t = 0; t < n / TS; t++) {
    As[lr][lc] = A[r * n + t * TS + lc];
    Bs[lr][lc] = B[(t * TS + lr) * n + c];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < TS; k++) acc += As[lr][k] * Bs[k][lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  C[r * n + c] = acc;
}
