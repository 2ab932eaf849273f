/* One step of a periodic 1-D three-point stencil (bench/launches.c): the launch-heavy app of
 * the log-mode overhead benchmark (issue 21), a few µs per launch on a GPU. */
__kernel void stencil(__global const float *in, __global float *out, const uint n)
{
    const uint i = get_global_id(0);
    if (i >= n)
        return;
    const float l = in[i == 0 ? n - 1 : i - 1];
    const float r = in[i + 1 == n ? 0 : i + 1];
    out[i] = 0.25f * l + 0.5f * in[i] + 0.25f * r;
}
