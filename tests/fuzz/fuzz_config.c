/*
 * fuzz_config.c - the HOP_* environment parser (src/core/config.c) on
 * arbitrary values: the first input byte picks a variable, the rest is its
 * value. hop_config_load() must accept it (the field then holds a value in
 * the documented range) or fail with HOP_ERR_CONFIG and a message naming
 * the variable. hop_parse_int()/hop_parse_size() get the same string.
 */
#include <hop/common.h>

#include "core/config.h"
#include "fuzz_common.h"

static const char *const vars[] = {
	"HOP_TIMEOUT", "HOP_TRANSPORT", "HOP_SOCKET_IFNAME", "HOP_SPIN",
	"HOP_YIELD_US",
	"HOP_EAGER_SIZE", "HOP_EAGER_SLOTS", "HOP_RNDV_CHUNK", "HOP_ALGO",
	"HOP_CHUNK_SIZE", "HOP_PIPELINE_DEPTH", "HOP_PIPELINE_CHUNKS",
	"HOP_PROFILE", "HOP_TOPO", "HOP_IB_DEVICE", "HOP_IB_PORT",
	"HOP_IB_GID_INDEX", "HOP_IB_TIMEOUT", "HOP_IB_RETRY_CNT", "HOP_IB_MTU",
	"HOP_IB_CM", "HOP_IB_SIGNAL_EVERY",
};
#define NVARS (sizeof(vars) / sizeof(vars[0]))

static void check_ranges(const struct hop_config *c)
{
	FUZZ_CHECK(c->timeout_ms >= 1, "timeout %d", c->timeout_ms);
	/* 0: auto, resolved when the communicator has its provider */
	FUZZ_CHECK(c->eager_size == 0 ||
		   (c->eager_size >= 64 && c->eager_size <= (1u << 20)),
		   "eager_size %zu", c->eager_size);
	FUZZ_CHECK(c->eager_slots >= 1 && c->eager_slots <= 1024,
		   "eager_slots %d", c->eager_slots);
	FUZZ_CHECK(c->rndv_chunk >= 4096, "rndv_chunk %zu", c->rndv_chunk);
	FUZZ_CHECK(c->spin_count >= -1, "spin %d", c->spin_count);
	FUZZ_CHECK(c->yield_us >= -1, "yield %d", c->yield_us);
	FUZZ_CHECK(memchr(c->transport, '\0', sizeof(c->transport)) &&
		   memchr(c->algo, '\0', sizeof(c->algo)) &&
		   memchr(c->socket_ifname, '\0', sizeof(c->socket_ifname)) &&
		   memchr(c->profile, '\0', sizeof(c->profile)) &&
		   memchr(c->topo, '\0', sizeof(c->topo)) &&
		   memchr(c->ib_device, '\0', sizeof(c->ib_device)) &&
		   memchr(c->ib_cm, '\0', sizeof(c->ib_cm)),
		   "unterminated string field");
	/* any provider name (plugins too) or per-class form, up to 47
	 * characters; selection and the loader judge its parts */
	FUZZ_CHECK(strlen(c->transport) <= 47, "transport '%s'", c->transport);
	FUZZ_CHECK(c->ib_mtu == 0 || c->ib_mtu == 256 || c->ib_mtu == 512 ||
		   c->ib_mtu == 1024 || c->ib_mtu == 2048 || c->ib_mtu == 4096,
		   "ib_mtu %d", c->ib_mtu);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct hop_config cfg;
	const char *name;
	char err[512], *val;
	long l;
	size_t s;
	int ret;

	if (size < 1)
		return 0;
	name = vars[data[0] % NVARS];
	val = fuzz_strdup(data + 1, size - 1);
	if (setenv(name, val, 1) == 0) {
		err[0] = '\0';
		ret = hop_config_load(&cfg, err, sizeof(err));
		FUZZ_CHECK(ret == 0 || ret == HOP_ERR_CONFIG, "code %d", ret);
		fuzz_check_reason(err, sizeof(err), ret);
		if (ret)
			FUZZ_CHECK(strstr(err, name) != NULL, "message '%s' does "
				   "not name %s", err, name);
		else
			check_ranges(&cfg);
		unsetenv(name);
	}
	err[0] = '\0';
	ret = hop_parse_int("HOP_X", val, -5, 1000000, &l, err, sizeof(err));
	FUZZ_CHECK(ret == 0 ? (l >= -5 && l <= 1000000) : ret == HOP_ERR_CONFIG,
		   "parse_int %d -> %ld", ret, l);
	fuzz_check_reason(err, sizeof(err), ret);
	err[0] = '\0';
	ret = hop_parse_size("HOP_X", val, 64, (size_t)1 << 40, &s, err,
			     sizeof(err));
	FUZZ_CHECK(ret == 0 ? (s >= 64 && s <= (size_t)1 << 40)
			    : ret == HOP_ERR_CONFIG, "parse_size %d -> %zu",
		   ret, s);
	fuzz_check_reason(err, sizeof(err), ret);
	free(val);
	return 0;
}
