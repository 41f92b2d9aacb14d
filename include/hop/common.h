/*
 * hop/common.h - result codes, datatypes and reduction operators shared by
 * every hop header.
 *
 * Every hop call returns 0 (HOP_SUCCESS) or a negative HOP_ERR_* code. Calls
 * that take a communicator also leave a message naming what was wrong (which
 * argument, rank, peer or size) in hop_comm_last_error().
 */
#ifndef HOP_COMMON_H
#define HOP_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define HOP_EXPORT __attribute__((visibility("default")))
#else
#define HOP_EXPORT
#endif

/*
 * One table drives the enum, hop_strerror() and hop_err_name(), so the three
 * can never disagree. Values are negated in the enum.
 * X(NAME, value, description)
 */
#define HOP_ERRNO_MAP(X)                                                        \
	X(INVALID_ARG, 1, "invalid argument")                                   \
	X(NO_MEMORY, 2, "out of memory")                                        \
	X(TIMEOUT, 3, "deadline (HOP_TIMEOUT) expired")                         \
	X(COMM_FAILED, 4, "communicator has failed")                            \
	X(MISMATCH, 5, "ranks called mismatched operations")                    \
	X(PEER_FAILED, 6, "peer rank failed or disconnected")                   \
	X(TRANSPORT, 7, "transport (provider) error")                           \
	X(BOOTSTRAP, 8, "bootstrap (rendezvous) error")                         \
	X(AUTH, 9, "peer presented a wrong secret")                             \
	X(TRUNCATED, 10, "message larger than the receive buffer")              \
	X(NOT_SUPPORTED, 11, "operation not supported")                         \
	X(ABORTED, 12, "communicator aborted")                                  \
	X(INVALID_HANDLE, 13, "invalid or destroyed handle")                    \
	X(OUT_OF_BOUNDS, 14, "access outside a registered region")              \
	X(NO_DEVICE, 15, "no usable device for the requested transport")        \
	X(CONFIG, 16, "invalid HOP_* configuration value")                      \
	X(PROTOCOL, 17, "malformed message received")                           \
	X(SYSTEM, 18, "system call failed")                                     \
	X(PARSE, 19, "malformed input file")                                    \
	X(INTERNAL, 20, "internal error")

/** enum hop_result - return codes of every hop call (0 or negative). */
typedef enum hop_result {
	HOP_SUCCESS = 0,
#define HOP_X_ENUM(name, val, desc) HOP_ERR_##name = -(val),
	HOP_ERRNO_MAP(HOP_X_ENUM)
#undef HOP_X_ENUM
} hop_result_t;

/**
 * hop_strerror() - Describe a result code.
 * @code: a value returned by a hop call.
 * Return: a static string; "unknown error" for codes hop never returns.
 */
HOP_EXPORT const char *hop_strerror(int code);

/**
 * hop_err_name() - The symbolic name of a result code.
 * @code: a value returned by a hop call.
 * Return: a static string such as "HOP_ERR_TIMEOUT"; "HOP_ERR_UNKNOWN" for
 * codes hop never returns.
 */
HOP_EXPORT const char *hop_err_name(int code);

/** enum hop_dtype - element types of collectives. */
typedef enum hop_dtype {
	HOP_INT8 = 0,
	HOP_UINT8,
	HOP_INT32,
	HOP_UINT32,
	HOP_INT64,
	HOP_UINT64,
	HOP_FLOAT16,  /* IEEE binary16, reduced through float */
	HOP_BFLOAT16, /* bfloat16, reduced through float */
	HOP_FLOAT32,
	HOP_FLOAT64,
	HOP_DTYPE_COUNT
} hop_dtype_t;

/** enum hop_op - reduction operators. HOP_AVG is a sum divided by N. */
typedef enum hop_op {
	HOP_SUM = 0,
	HOP_PROD,
	HOP_MIN,
	HOP_MAX,
	HOP_AVG,
	HOP_OP_COUNT
} hop_op_t;

/**
 * hop_dtype_size() - Size in bytes of one element of @dtype.
 * @dtype: element type.
 * Return: 1, 2, 4 or 8; 0 for an invalid @dtype.
 */
HOP_EXPORT size_t hop_dtype_size(hop_dtype_t dtype);

/**
 * hop_dtype_name() - Name of @dtype ("f32", "bf16", ...).
 * Return: a static string; "invalid" for an invalid @dtype.
 */
HOP_EXPORT const char *hop_dtype_name(hop_dtype_t dtype);

/**
 * hop_op_name() - Name of @op ("sum", "max", ...).
 * Return: a static string; "invalid" for an invalid @op.
 */
HOP_EXPORT const char *hop_op_name(hop_op_t op);

/**
 * hop_version() - The library's version string, e.g. "0.1.0".
 */
HOP_EXPORT const char *hop_version(void);

#ifdef __cplusplus
}
#endif
#endif /* HOP_COMMON_H */
