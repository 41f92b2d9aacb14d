/*
 * wire.h - fixed-width integers in byte buffers, and the comparison of
 * secrets, for every wire format hop writes: the bootstrap's (big-endian,
 * network order), the tcp provider's and the verbs connection hellos
 * (little-endian).
 */
#ifndef HOP_CORE_WIRE_H
#define HOP_CORE_WIRE_H

#include <stddef.h>
#include <stdint.h>

static inline void hop_put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void hop_put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t hop_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline uint64_t hop_get_le64(const uint8_t *p)
{
	return (uint64_t)hop_get_le32(p) | (uint64_t)hop_get_le32(p + 4) << 32;
}

static inline void hop_put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static inline uint32_t hop_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* Are the @n bytes at @a and @b equal? In time that does not depend on
 * where they differ: a peer guessing a secret learns nothing from how
 * fast it is turned away. */
static inline int hop_ct_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
	volatile uint8_t d = 0;

	for (size_t i = 0; i < n; i++)
		d |= (uint8_t)(a[i] ^ b[i]);
	return d == 0;
}

#endif
