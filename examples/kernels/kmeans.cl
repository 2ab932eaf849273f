/* K-means clustering, integer variant of Rodinia kmeans (Boyer ch. 4,
 * Table 4.3). Points are stored feature-major (points[d * npoints + i]) as
 * in Rodinia's swapped layout, for coalesced loads. Coordinates, centroids
 * and squared distances are unsigned integers so every device and the host
 * reference produce identical memberships and centroids.
 * DIMS (features per point) and WG (update work-group size, power of two)
 * are set with -D build options. */
#ifndef DIMS
#define DIMS 4
#endif
#ifndef WG
#define WG 64
#endif

/* One work-item per point: nearest centroid (lowest index on ties);
 * counts membership changes in *changed. */
__kernel void kmeans_assign(__global const uint *points,
                            __global const uint *centroids,
                            __global uint *membership,
                            __global uint *changed, const uint npoints,
                            const uint nclusters)
{
    const uint i = get_global_id(0);
    if (i >= npoints)
        return;
    uint best = 0, bestd = 0xffffffffu;
    for (uint c = 0; c < nclusters; c++) {
        uint d2 = 0;
        for (uint d = 0; d < DIMS; d++) {
            int diff = (int)points[d * npoints + i] - (int)centroids[c * DIMS + d];
            d2 += (uint)(diff * diff);
        }
        if (d2 < bestd) {
            bestd = d2;
            best = c;
        }
    }
    if (membership[i] != best) {
        membership[i] = best;
        atomic_inc(changed);
    }
}

/* One work-group of WG work-items per cluster: strided scan of the
 * membership, per-dimension sums and the count reduced in __local memory,
 * then centroid = floor(sum / count) (unchanged if the cluster is empty). */
__kernel void kmeans_update(__global const uint *points,
                            __global const uint *membership,
                            __global uint *centroids, const uint npoints)
{
    __local uint lsum[DIMS + 1][WG];
    const uint c = get_group_id(0);
    const uint lid = get_local_id(0);
    uint sum[DIMS + 1];
    for (uint d = 0; d <= DIMS; d++)
        sum[d] = 0;
    for (uint i = lid; i < npoints; i += WG)
        if (membership[i] == c) {
            for (uint d = 0; d < DIMS; d++)
                sum[d] += points[d * npoints + i];
            sum[DIMS] += 1;
        }
    for (uint d = 0; d <= DIMS; d++)
        lsum[d][lid] = sum[d];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = WG / 2; s > 0; s >>= 1) {
        if (lid < s)
            for (uint d = 0; d <= DIMS; d++)
                lsum[d][lid] += lsum[d][lid + s];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (lid == 0 && lsum[DIMS][0] > 0)
        for (uint d = 0; d < DIMS; d++)
            centroids[c * DIMS + d] = lsum[d][0] / lsum[DIMS][0];
}
