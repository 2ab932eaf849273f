/* One butterfly stage of the in-place fast Walsh(-Hadamard) transform:
 * work-item t combines elements pair = 2*step*(t/step) + t%step and
 * pair + step. The host launches log2(N) stages (step = 1, 2, 4, ...), each
 * dependent on the previous one. Models AMD APP SDK FastWalshTransform
 * (Panwar et al., Table II). */
__kernel void fwt_stage(__global float *a, const uint step)
{
    const uint t = get_global_id(0);
    const uint group = t % step;
    const uint pair = 2 * step * (t / step) + group;
    const uint match = pair + step;
    const float x = a[pair], y = a[match];
    a[pair] = x + y;
    a[match] = x - y;
}
