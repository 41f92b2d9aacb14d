/*
 * hop/log.h - where hop's log lines go.
 *
 * By default each line goes to stderr in one write, prefixed with the rank
 * ("[hop r3] warn: ..."), up to the level HOP_DEBUG names (none, warn,
 * info, trace; warn when unset). A program or framework with a logger of
 * its own (NCCL's, a Python logging bridge) installs a handler instead, and
 * every line that passes the level reaches the handler and nothing reaches
 * stderr.
 */
#ifndef HOP_LOG_H
#define HOP_LOG_H

#include <hop/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Severity of a log line; the same scale as HOP_DEBUG's names. */
typedef enum hop_log_severity {
	HOP_LOG_SEV_WARN = 1,  /* something failed or was refused */
	HOP_LOG_SEV_INFO = 2,  /* set-up decisions: transport, algorithms */
	HOP_LOG_SEV_TRACE = 3, /* per message; costly */
} hop_log_severity_t;

/**
 * hop_log_handler_t - Receives one log line.
 * @arg:  the pointer given to hop_log_set_handler().
 * @sev:  its severity.
 * @rank: the rank of the process in its most recent communicator, or -1
 *        before any.
 * @msg:  the text, without prefix or newline; valid during the call only.
 *
 * Called on whichever thread logs, possibly several at once, and from
 * inside hop's calls: it must not call hop, and should return quickly.
 */
typedef void (*hop_log_handler_t)(void *arg, hop_log_severity_t sev,
				  int rank, const char *msg);

/**
 * hop_log_set_handler() - Send hop's log lines to @fn instead of stderr.
 * @fn:    the handler; NULL restores stderr.
 * @arg:   passed to every call of @fn.
 * @level: the most verbose severity delivered while HOP_DEBUG is unset
 *         (HOP_DEBUG, when set, wins: the user's choice overrides the
 *         framework's). Ignored when @fn is NULL.
 *
 * Takes effect for lines logged after it returns, process-wide. A shared
 * object that installs a handler must restore stderr (@fn NULL) before it
 * is unloaded.
 * Return: 0, or HOP_ERR_INVALID_ARG when @level is not a hop_log_severity_t
 * and @fn is not NULL.
 */
HOP_EXPORT int hop_log_set_handler(hop_log_handler_t fn, void *arg,
				   hop_log_severity_t level);

#ifdef __cplusplus
}
#endif
#endif /* HOP_LOG_H */
