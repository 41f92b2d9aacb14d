/*
 * hash.h - FNV-1a 64, the one hash of hop's identities: the unique id's
 * checksum (id.c), the host identity (transport/provider.c) and the job
 * secret (comm_env.c). Not cryptographic: it detects corruption and tells
 * hosts and jobs apart, and every rank must compute the same value.
 */
#ifndef HOP_CORE_HASH_H
#define HOP_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HOP_FNV1A64_INIT 0xcbf29ce484222325ull

/* Hash @n bytes at @p into the running hash @h (HOP_FNV1A64_INIT to start). */
static inline uint64_t hop_fnv1a64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif /* HOP_CORE_HASH_H */
