/* All-pairs N-body step with softening, positions staged through __local
 * memory one tile (= work-group size) at a time; models AMD APP SDK NBody
 * (Panwar et al., Table II). float4 = (x, y, z, mass) / (vx, vy, vz, 0).
 * Each launch reads (pos, vel) and writes (newPos, newVel): the host
 * ping-pongs the buffers, so consecutive launches are dependent. */
__kernel void nbody_step(__global const float4 *pos,
                         __global const float4 *vel,
                         __global float4 *newPos, __global float4 *newVel,
                         __local float4 *tile, const uint numBodies,
                         const float dt, const float epsSqr)
{
    const uint gid = get_global_id(0);
    const uint lid = get_local_id(0);
    const uint lsz = get_local_size(0);
    const float4 my = pos[gid];
    float3 acc = (float3)(0.0f, 0.0f, 0.0f);
    for (uint t = 0; t < numBodies / lsz; t++) {
        tile[lid] = pos[t * lsz + lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint j = 0; j < lsz; j++) {
            const float4 p = tile[j];
            const float3 r = p.xyz - my.xyz;
            const float d2 = r.x * r.x + r.y * r.y + r.z * r.z + epsSqr;
            const float inv = 1.0f / sqrt(d2);
            const float s = p.w * inv * inv * inv;
            acc += s * r;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const float4 v = vel[gid];
    float4 np, nv;
    np.xyz = my.xyz + v.xyz * dt + acc * (0.5f * dt * dt);
    np.w = my.w;
    nv.xyz = v.xyz + acc * dt;
    nv.w = v.w;
    newPos[gid] = np;
    newVel[gid] = nv;
}
