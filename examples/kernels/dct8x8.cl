/* 8x8 block discrete cosine transform Y = D X D^T (inverse: X = D^T Y D),
 * one work-group of 8x8 work-items per block, the intermediate product kept
 * in __local memory between two barriers. Models AMD APP SDK DCT (Boyer
 * ch. 4, Table 4.3). `dct` is the 8x8 orthonormal DCT-II matrix D,
 * row-major; the image is `width` floats wide. */
#define BS 8

__kernel void dct8x8(__global float *out, __global const float *in,
                     __global const float *dct, __local float *inter,
                     const uint width, const uint inverse)
{
    const uint lx = get_local_id(0), ly = get_local_id(1);
    const uint bx = get_group_id(0) * BS, by = get_group_id(1) * BS;
    float acc = 0.0f;
    /* inter = D X (forward) or D^T X (inverse) */
    for (uint k = 0; k < BS; k++) {
        const float d = inverse ? dct[k * BS + ly] : dct[ly * BS + k];
        acc += d * in[(by + k) * width + bx + lx];
    }
    inter[ly * BS + lx] = acc;
    barrier(CLK_LOCAL_MEM_FENCE);
    /* out = inter D^T (forward) or inter D (inverse) */
    acc = 0.0f;
    for (uint k = 0; k < BS; k++) {
        const float d = inverse ? dct[k * BS + lx] : dct[lx * BS + k];
        acc += inter[ly * BS + k] * d;
    }
    out[(by + ly) * width + bx + lx] = acc;
}
