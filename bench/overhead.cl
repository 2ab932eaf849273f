/* Empty kernel for the launch-overhead micro-benchmark (bench/overhead.c).
 * The argument exists so clSetKernelArg has something to set. */
__kernel void empty(__global uint *unused, const uint x)
{
    (void)unused;
    (void)x;
}
