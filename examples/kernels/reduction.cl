/* Work-group tree reduction in __local memory: each work-group sums
 * 2 * local_size consecutive uints (first add during the load) and writes
 * one partial sum per work-group. Models AMD APP SDK Reduction (Panwar et
 * al., Table II) and the partial reduction of Boyer s3 (per-block partial
 * sums). Sums are modulo 2^32, so results are exact and order independent.
 * Requires a power-of-two work-group size. */
__kernel void reduce(__global const uint *in, __global uint *partial,
                     __local uint *sdata, const uint n)
{
    const uint lid = get_local_id(0);
    const uint lsz = get_local_size(0);
    const uint i = get_group_id(0) * lsz * 2 + lid;
    uint v = 0;
    if (i < n)
        v = in[i];
    if (i + lsz < n)
        v += in[i + lsz];
    sdata[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = lsz / 2; s > 0; s >>= 1) {
        if (lid < s)
            sdata[lid] += sdata[lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0)
        partial[get_group_id(0)] = sdata[0];
}
