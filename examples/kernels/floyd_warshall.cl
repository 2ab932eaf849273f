/* One pass k of Floyd-Warshall all-pairs shortest paths: work-item (x, y)
 * relaxes dist[y][x] through node k and records k in path[y][x]. The host
 * launches N passes (pass index k as a kernel argument), each dependent on
 * the previous one. Models AMD APP SDK FloydWarshall (Panwar et al.,
 * Table II and s V: "a series of converging kernels").
 * Race-free within a pass: row k and column k are not changed by pass k
 * because dist[k][k] = 0. */
__kernel void floyd_pass(__global uint *dist, __global uint *path,
                         const uint n, const uint k)
{
    const uint x = get_global_id(0);
    const uint y = get_global_id(1);
    const uint old = dist[y * n + x];
    const uint via = dist[y * n + k] + dist[k * n + x];
    if (via < old) {
        dist[y * n + x] = via;
        path[y * n + x] = k;
    }
}
