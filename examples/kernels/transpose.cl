/* Matrix transpose through a padded __local tile (TILE x (TILE+1) floats,
 * the +1 column avoids local-memory bank conflicts on the column read).
 * Models AMD APP SDK MatrixTranspose (Panwar et al., Table II).
 * in: height x width (row-major), out: width x height. Work-group TILE x TILE. */
#ifndef TILE
#define TILE 16
#endif

__kernel void transpose(__global float *out, __global const float *in,
                        __local float *block, const uint width,
                        const uint height)
{
    const uint lx = get_local_id(0), ly = get_local_id(1);
    const uint gx = get_group_id(0), gy = get_group_id(1);
    block[ly * (TILE + 1) + lx] = in[(gy * TILE + ly) * width + gx * TILE + lx];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[(gx * TILE + ly) * height + gy * TILE + lx] = block[lx * (TILE + 1) + ly];
}
