// A column walk that accumulates into global memory, as PolyBench-ACC's atax/bicg/mvt
// kernel 2 (`y[j] += A[i][j] * x[i]`): each work-item reads one column of A, one row per
// iteration, and stores its sum every iteration. Used by tests/model_refine.rs
// (`streaming_latency`) as well as the differential corpus (integers: bit-exact sums).
// @kernel column_accumulate
// @global 512
// @local 128
// @arg buf:1048576:fill=random
// @arg buf:2048:fill=random
// @arg buf:2048
// @arg uint:512
__kernel void column_accumulate(__global const uint *A, __global const uint *x,
                                __global uint *y, const uint n)
{
    const uint j = get_global_id(0);
    if (j < n)
        for (uint i = 0; i < n; i++)
            y[j] += A[i * n + j] * x[i];
}
