/* Output digest for the multi-GPU benchmark (bench/multi_gpu_build.sh force-includes this into
 * PolyBench-ACC's apps and puts mgpu_digest(...) where the app would print its output array
 * under POLYBENCH_DUMP_ARRAYS). Printing 2^28 floats as text and piping them through sha256sum
 * would take minutes; this hashes the array's bytes in the process (about 1 s per GiB) and
 * prints one line, "digest: <32 hex digits> bytes <n>", so that runs in different modes can be
 * compared for byte identity. Two 64-bit lanes of FNV-1a over 8-byte words (each step is a
 * bijection of the lane's state, so one differing word always changes the digest), finished
 * with murmur3's fmix64. Not cryptographic; it only has to tell runs apart. */
#ifndef MGPU_DIGEST_H
#define MGPU_DIGEST_H
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint64_t mgpu_fmix64(uint64_t k)
{
	k ^= k >> 33; k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33; k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return k;
}

static void mgpu_digest(const void *data, size_t n)
{
	const unsigned char *p = (const unsigned char *)data;
	uint64_t h0 = 0xcbf29ce484222325ULL, h1 = 0x84222325cbf29ce4ULL, w;
	const uint64_t prime = 0x100000001b3ULL;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		memcpy(&w, p + i, 8); h0 = (h0 ^ w) * prime;
		memcpy(&w, p + i + 8, 8); h1 = (h1 ^ w) * prime;
	}
	for (; i < n; i++) h0 = (h0 ^ p[i]) * prime;
	h0 = mgpu_fmix64(h0 ^ n);
	h1 = mgpu_fmix64(h1 ^ h0);
	printf("digest: %016llx%016llx bytes %zu\n", (unsigned long long)h0, (unsigned long long)h1, n);
	fflush(stdout);
}
#endif
