// @kernel scale_rows
// @global 256
// @local 64
// @group 2
// @arg buf:16384:fill=randf
// @arg buf:1024:fill=zero
// A plain `inline` function (as CLBlast's INLINE_FUNC) that the compiler does not inline:
// with C99 inline semantics clang emits only its declaration, and the emulator met a call to
// an undefined function; compiled with GNU89 semantics it has a definition.
__attribute__((noinline)) inline float row_sum(__global const float *a, int row) {
    float s = 0.0f;
    for (int k = 0; k < 16; k++) s += a[row * 16 + k] * (float)(k + 1);
    return s;
}

__kernel void scale_rows(__global const float *a, __global float *out) {
    int i = get_global_id(0);
    out[i] = row_sum(a, i) * 0.5f;
}
