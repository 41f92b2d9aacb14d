/*
 * errors.c - result code names and descriptions, from the one table in
 * hop/common.h; dtype and op names.
 */
#include <hop/common.h>

#include "hop_autoconf.h" /* PACKAGE_VERSION */

const char *hop_strerror(int code)
{
	switch (code) {
	case HOP_SUCCESS:
		return "success";
#define HOP_X_DESC(name, val, desc)                                           \
	case -(val):                                                          \
		return desc;
		HOP_ERRNO_MAP(HOP_X_DESC)
#undef HOP_X_DESC
	default:
		return "unknown error";
	}
}

const char *hop_err_name(int code)
{
	switch (code) {
	case HOP_SUCCESS:
		return "HOP_SUCCESS";
#define HOP_X_NAME(name, val, desc)                                           \
	case -(val):                                                          \
		return "HOP_ERR_" #name;
		HOP_ERRNO_MAP(HOP_X_NAME)
#undef HOP_X_NAME
	default:
		return "HOP_ERR_UNKNOWN";
	}
}

size_t hop_dtype_size(hop_dtype_t dtype)
{
	static const unsigned char sizes[HOP_DTYPE_COUNT] = {
		[HOP_INT8] = 1,    [HOP_UINT8] = 1,    [HOP_INT32] = 4,
		[HOP_UINT32] = 4,  [HOP_INT64] = 8,    [HOP_UINT64] = 8,
		[HOP_FLOAT16] = 2, [HOP_BFLOAT16] = 2, [HOP_FLOAT32] = 4,
		[HOP_FLOAT64] = 8,
	};

	if ((unsigned)dtype >= HOP_DTYPE_COUNT)
		return 0;
	return sizes[dtype];
}

const char *hop_dtype_name(hop_dtype_t dtype)
{
	static const char *const names[HOP_DTYPE_COUNT] = {
		[HOP_INT8] = "i8",     [HOP_UINT8] = "u8",
		[HOP_INT32] = "i32",   [HOP_UINT32] = "u32",
		[HOP_INT64] = "i64",   [HOP_UINT64] = "u64",
		[HOP_FLOAT16] = "f16", [HOP_BFLOAT16] = "bf16",
		[HOP_FLOAT32] = "f32", [HOP_FLOAT64] = "f64",
	};

	if ((unsigned)dtype >= HOP_DTYPE_COUNT)
		return "invalid";
	return names[dtype];
}

const char *hop_op_name(hop_op_t op)
{
	static const char *const names[HOP_OP_COUNT] = {
		[HOP_SUM] = "sum", [HOP_PROD] = "prod", [HOP_MIN] = "min",
		[HOP_MAX] = "max", [HOP_AVG] = "avg",
	};

	if ((unsigned)op >= HOP_OP_COUNT)
		return "invalid";
	return names[op];
}

const char *hop_version(void)
{
	return PACKAGE_VERSION;
}
