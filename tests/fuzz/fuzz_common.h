/*
 * fuzz_common.h - helpers shared by the libFuzzer harnesses of tests/fuzz.
 *
 * A harness checks more than "did not crash": every parser's contract
 * (accepted values are in range, rejections leave a NUL-terminated reason,
 * encode(decode(x)) == x where the format is canonical) is asserted with
 * FUZZ_CHECK, which aborts so that libFuzzer records the input as a crash.
 */
#ifndef HOP_FUZZ_COMMON_H
#define HOP_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_CHECK(cond, ...)                                                 \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: check failed: %s: ",          \
				__FILE__, __LINE__, #cond);                   \
			fprintf(stderr, __VA_ARGS__);                         \
			fputc('\n', stderr);                                  \
			abort();                                              \
		}                                                             \
	} while (0)

/* A reason buffer must hold a NUL within its size and some text. */
static inline void fuzz_check_reason(const char *buf, size_t size, int ret)
{
	if (ret == 0)
		return;
	FUZZ_CHECK(memchr(buf, '\0', size) != NULL, "reason not terminated");
	FUZZ_CHECK(buf[0] != '\0', "rejected (%d) with an empty reason", ret);
}

/* Little helpers to read the fuzzer's bytes as parameters. */
struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint32_t fuzz_take32(struct fuzz_in *in)
{
	uint32_t v = 0;

	for (int i = 0; i < 4 && in->n; i++, in->p++, in->n--)
		v = v << 8 | in->p[0];
	return v;
}

/* A heap copy of exactly @n bytes (so ASan sees any overread). */
static inline uint8_t *fuzz_dup(const uint8_t *p, size_t n)
{
	uint8_t *d = malloc(n ? n : 1);

	if (!d)
		abort();
	if (n)
		memcpy(d, p, n);
	return d;
}

/* A heap NUL-terminated copy. */
static inline char *fuzz_strdup(const uint8_t *p, size_t n)
{
	char *d = malloc(n + 1);

	if (!d)
		abort();
	if (n)
		memcpy(d, p, n);
	d[n] = '\0';
	return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif /* HOP_FUZZ_COMMON_H */
