/*
 * test_core_id - the unique id: encode/decode round trip, every single
 * flipped bit rejected, version/magic/reserved checks, hex strings,
 * hop_get_unique_id() and the listener hand-over table, address choice.
 */
#include <arpa/inet.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "core/core.h"
#include "core/core_int.h"

static void sample(struct hop_id_info *info)
{
	memset(info, 0, sizeof(*info));
	info->version = HOP_ID_VERSION;
	info->addr.sin_family = AF_INET;
	info->addr.sin_addr.s_addr = htonl(0x0a000102); /* 10.0.1.2 */
	info->addr.sin_port = htons(40123);
	for (int i = 0; i < HOP_SECRET_BYTES; i++)
		info->secret[i] = (uint8_t)(0xa0 + i);
}

static void test_round_trip(void **state)
{
	struct hop_id_info in, out;
	hop_unique_id_t id;

	(void)state;
	sample(&in);
	hop_id_encode(&in, &id);
	assert_int_equal(hop_id_decode(&id, &out), 0);
	assert_int_equal(out.version, HOP_ID_VERSION);
	assert_int_equal(out.addr.sin_family, AF_INET);
	assert_int_equal(out.addr.sin_addr.s_addr, htonl(0x0a000102));
	assert_int_equal(ntohs(out.addr.sin_port), 40123);
	assert_memory_equal(out.secret, in.secret, HOP_SECRET_BYTES);
	/* the layout starts with the magic "HOPI" */
	assert_memory_equal(id.internal, "HOPI", 4);
}

static void test_every_bit_flip_rejected(void **state)
{
	struct hop_id_info in, out;
	hop_unique_id_t id, bad;

	(void)state;
	sample(&in);
	hop_id_encode(&in, &id);
	for (int bit = 0; bit < HOP_UNIQUE_ID_BYTES * 8; bit++) {
		char err[128] = "";

		bad = id;
		bad.internal[bit / 8] ^= (char)(1 << (bit % 8));
		if (hop_id_decode_msg(&bad, &out, err, sizeof(err)) !=
		    HOP_ERR_INVALID_ARG)
			fail_msg("flipped bit %d accepted", bit);
		assert_true(err[0] != '\0');
	}
	/* and every byte value change of the secret too */
	for (int v = 1; v < 256; v++) {
		bad = id;
		bad.internal[20] ^= (char)v;
		assert_int_equal(hop_id_decode(&bad, &out), HOP_ERR_INVALID_ARG);
	}
}

/* FNV-1a 64 as the format documents it, to forge ids with a valid sum. */
static void reseal(hop_unique_id_t *id)
{
	uint8_t *b = (uint8_t *)id->internal;
	uint64_t h = 0xcbf29ce484222325ull;

	for (int i = 0; i < 120; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	for (int i = 7; i >= 0; i--, h >>= 8)
		b[120 + i] = (uint8_t)h;
}

static void test_decode_reasons(void **state)
{
	struct hop_id_info in, out;
	hop_unique_id_t id, bad;
	char err[128];

	(void)state;
	sample(&in);
	hop_id_encode(&in, &id);

	bad = id;
	bad.internal[0] = 'X';
	reseal(&bad);
	assert_int_equal(hop_id_decode_msg(&bad, &out, err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "magic"));

	bad = id;
	bad.internal[5] = 2; /* version 2 */
	reseal(&bad);
	assert_int_equal(hop_id_decode_msg(&bad, &out, err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "version 2"));

	bad = id;
	bad.internal[60] = 1; /* reserved */
	reseal(&bad);
	assert_int_equal(hop_id_decode_msg(&bad, &out, err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "reserved"));

	bad = id;
	bad.internal[12] = bad.internal[13] = 0; /* port 0 */
	reseal(&bad);
	assert_int_equal(hop_id_decode_msg(&bad, &out, err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "port"));

	bad = id;
	bad.internal[100] ^= 4;
	assert_int_equal(hop_id_decode_msg(&bad, &out, err, sizeof(err)),
			 HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(err, "checksum"));

	memset(&bad, 0, sizeof(bad));
	assert_int_equal(hop_id_decode(&bad, &out), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_id_decode(NULL, &out), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_id_decode(&id, NULL), HOP_ERR_INVALID_ARG);
}

static void test_strings(void **state)
{
	struct hop_id_info in;
	hop_unique_id_t id, back, untouched;
	char s[2 * HOP_UNIQUE_ID_BYTES + 1], t[2 * HOP_UNIQUE_ID_BYTES + 1];

	(void)state;
	sample(&in);
	hop_id_encode(&in, &id);
	assert_int_equal(hop_unique_id_to_string(&id, s, sizeof(s)), 0);
	assert_int_equal(strlen(s), 256);
	assert_int_equal(strspn(s, "0123456789abcdef"), 256);
	assert_memory_equal(s, "484f5049", 8); /* "HOPI" */
	assert_int_equal(hop_unique_id_from_string(s, &back), 0);
	assert_memory_equal(&back, &id, sizeof(id));

	/* upper case is accepted */
	for (int i = 0; i < 256; i++)
		t[i] = (char)((s[i] >= 'a') ? s[i] - 32 : s[i]);
	t[256] = '\0';
	assert_int_equal(hop_unique_id_from_string(t, &back), 0);
	assert_memory_equal(&back, &id, sizeof(id));

	/* failures leave the output untouched */
	memset(&untouched, 0x5a, sizeof(untouched));
	back = untouched;
	strcpy(t, s);
	t[77] = 'g';
	assert_int_equal(hop_unique_id_from_string(t, &back), HOP_ERR_INVALID_ARG);
	strcpy(t, s);
	t[10] = ' ';
	assert_int_equal(hop_unique_id_from_string(t, &back), HOP_ERR_INVALID_ARG);
	strcpy(t, s);
	t[255] = '\0'; /* 255 digits */
	assert_int_equal(hop_unique_id_from_string(t, &back), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_unique_id_from_string("", &back), HOP_ERR_INVALID_ARG);
	strcpy(t, s);
	t[200] = t[200] == '0' ? '1' : '0'; /* valid hex, bad checksum */
	assert_int_equal(hop_unique_id_from_string(t, &back), HOP_ERR_INVALID_ARG);
	assert_memory_equal(&back, &untouched, sizeof(back));
	assert_int_equal(hop_unique_id_from_string(NULL, &back), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_unique_id_from_string(s, NULL), HOP_ERR_INVALID_ARG);

	/* to_string needs room for 256 digits and the NUL */
	assert_int_equal(hop_unique_id_to_string(&id, t, 256), HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_unique_id_to_string(NULL, t, sizeof(t)),
			 HOP_ERR_INVALID_ARG);
	assert_int_equal(hop_unique_id_to_string(&id, NULL, 300),
			 HOP_ERR_INVALID_ARG);
}

static void test_get_unique_id(void **state)
{
	hop_unique_id_t id1, id2;
	struct hop_id_info i1, i2;
	struct sockaddr_in sa;
	socklen_t slen = sizeof(sa);
	int fd;

	(void)state;
	unsetenv("HOP_SOCKET_IFNAME");
	assert_int_equal(hop_get_unique_id(&id1), 0);
	assert_int_equal(hop_get_unique_id(&id2), 0);
	assert_int_equal(hop_id_decode(&id1, &i1), 0);
	assert_int_equal(hop_id_decode(&id2, &i2), 0);
	assert_true(i1.addr.sin_port != 0);
	assert_true(i1.addr.sin_port != i2.addr.sin_port);
	/* fresh random secrets */
	assert_memory_not_equal(i1.secret, i2.secret, HOP_SECRET_BYTES);

	/* the listener is handed over once, by secret */
	fd = hop_id_take_listener(i1.secret);
	assert_true(fd >= 0);
	assert_int_equal(hop_id_take_listener(i1.secret), -1);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &slen), 0);
	assert_int_equal(sa.sin_port, i1.addr.sin_port);
	assert_int_equal(sa.sin_addr.s_addr, i1.addr.sin_addr.s_addr);
	close(fd);
	fd = hop_id_take_listener(i2.secret);
	assert_true(fd >= 0);
	close(fd);

	assert_int_equal(hop_get_unique_id(NULL), HOP_ERR_INVALID_ARG);
	assert_non_null(strstr(hop_last_init_error(), "NULL"));
}

static void test_ifname(void **state)
{
	hop_unique_id_t id, before;
	struct hop_id_info info;
	struct in_addr a;
	char err[256];

	(void)state;
	setenv("HOP_SOCKET_IFNAME", "lo", 1);
	assert_int_equal(hop_get_unique_id(&id), 0);
	assert_int_equal(hop_id_decode(&id, &info), 0);
	assert_int_equal(info.addr.sin_addr.s_addr, htonl(INADDR_LOOPBACK));
	close(hop_id_take_listener(info.secret));

	setenv("HOP_SOCKET_IFNAME", "nosuch9", 1);
	before = id;
	assert_int_equal(hop_get_unique_id(&id), HOP_ERR_CONFIG);
	assert_memory_equal(&id, &before, sizeof(id)); /* unchanged */
	assert_non_null(strstr(hop_last_init_error(), "HOP_SOCKET_IFNAME='nosuch9'"));
	assert_non_null(strstr(hop_last_init_error(), "lo")); /* lists what exists */

	setenv("HOP_SOCKET_IFNAME", "", 1); /* set but empty: strict */
	assert_int_equal(hop_get_unique_id(&id), HOP_ERR_CONFIG);
	unsetenv("HOP_SOCKET_IFNAME");

	/* address choice: loopback preferred only when asked */
	assert_int_equal(hop_pick_ipv4(NULL, 1, &a, err, sizeof(err)), 0);
	assert_int_equal(a.s_addr, htonl(INADDR_LOOPBACK));
	assert_int_equal(hop_pick_ipv4("", 0, &a, err, sizeof(err)), 0);
	assert_true(a.s_addr != 0);
	assert_int_equal(hop_pick_ipv4("lo", 0, &a, err, sizeof(err)), 0);
	assert_int_equal(a.s_addr, htonl(INADDR_LOOPBACK));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_every_bit_flip_rejected),
		cmocka_unit_test(test_decode_reasons),
		cmocka_unit_test(test_strings),
		cmocka_unit_test(test_get_unique_id),
		cmocka_unit_test(test_ifname),
	};

	setenv("HOP_DEBUG", "none", 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
