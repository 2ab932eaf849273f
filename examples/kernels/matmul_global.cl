/* Naive matrix multiply C = A * B (n x n, row-major), global memory only.
 * One work-item per element of C; models AMD APP SDK MatrixMultiplication
 * "gmem" variant (Panwar et al., Table II: MatMul (gmem)). */
__kernel void matmul_global(__global const float *A, __global const float *B,
                            __global float *C, const uint n)
{
    const uint col = get_global_id(0);
    const uint row = get_global_id(1);
    float acc = 0.0f;
    for (uint k = 0; k < n; k++)
        acc += A[row * n + k] * B[k * n + col];
    C[row * n + col] = acc;
}
