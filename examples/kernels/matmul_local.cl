/* Tiled matrix multiply C = A * B (n x n, row-major) through __local memory
 * with work-group barriers; models AMD APP SDK MatrixMultiplication "lmem"
 * (Panwar et al., Table II: MatMul (lmem)).  The A tile is a statically
 * sized __local array, the B tile a __local kernel argument (size set by the
 * host with clSetKernelArg(..., NULL)), so both kinds of local memory occur.
 * The work-group must be TILE x TILE. */
#ifndef TILE
#define TILE 16
#endif

__kernel void matmul_local(__global const float *A, __global const float *B,
                           __global float *C, const uint n,
                           __local float *Bs)
{
    __local float As[TILE][TILE];
    const uint lx = get_local_id(0), ly = get_local_id(1);
    const uint col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (uint t = 0; t < n / TILE; t++) {
        As[ly][lx] = A[row * n + t * TILE + lx];
        Bs[ly * TILE + lx] = B[(t * TILE + ly) * n + col];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < TILE; k++)
            acc += As[ly][k] * Bs[k * TILE + lx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    C[row * n + col] = acc;
}
