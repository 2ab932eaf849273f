/* Tiny tagging kernel for the multi-threaded launch test: work-item g of
 * launch `iter` issued by host thread `tid` writes a value that identifies
 * all three into its own slot, so a lost, duplicated or misrouted launch is
 * visible in the output. */
__kernel void tag(__global uint *out, const uint tid, const uint iter,
                  const uint base)
{
    const uint g = get_global_id(0);
    out[base + g] = (tid << 24) ^ (iter << 8) ^ g ^ 0x5a5a5a5au;
}
