/*
 * core_int.h - internals shared by the files of src/core and tools/hop-run:
 * unique id details, the listener hand-over table, IPv4 address choice,
 * socket helpers and the thread-local init error. Not for other layers.
 */
#ifndef HOP_CORE_CORE_INT_H
#define HOP_CORE_CORE_INT_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "bootstrap.h"

#define HOP_ID_MAGIC 0x484f5049u   /* "HOPI" */
#define HOP_ID_VERSION 1u

/* hop_id_decode() with the reason ("bad checksum", ...) in @err. */
int hop_id_decode_msg(const hop_unique_id_t *id, struct hop_id_info *info,
		      char *err, size_t errlen);

/*
 * hop_pick_ipv4() - The address to listen on: the IPv4 address of
 * interface @ifname when not empty (HOP_ERR_CONFIG naming the interfaces
 * present when it has none), else 127.0.0.1 when @prefer_loopback, else
 * the first up non-loopback interface (virtual bridges last), else
 * 127.0.0.1.
 */
int hop_pick_ipv4(const char *ifname, int prefer_loopback,
		  struct in_addr *out, char *err, size_t errlen);

/*
 * hop_id_listen() - Create a rendezvous: pick the address as above, bind an
 * ephemeral port, listen, draw a random secret. @info receives address and
 * secret, @fd the listening socket (CLOEXEC, non-blocking).
 * Return: 0, HOP_ERR_CONFIG or HOP_ERR_SYSTEM with the reason in @err.
 */
int hop_id_listen(const char *ifname, int prefer_loopback,
		  struct hop_id_info *info, int *fd, char *err, size_t errlen);

/* Listener hand-over between hop_get_unique_id() and rank 0 in-process:
 * returns the fd registered for @secret (removing it) or -1. */
int hop_id_take_listener(const uint8_t secret[HOP_SECRET_BYTES]);

/* Fill @buf with @len random bytes (getrandom, else /dev/urandom). */
int hop_random_bytes(void *buf, size_t len);

/* "10.0.0.1:4000" */
void hop_sockaddr_str(const struct sockaddr_in *sa, char *buf, size_t len);

/* Set O_NONBLOCK and FD_CLOEXEC; 0 or -errno. */
int hop_fd_nonblock_cloexec(int fd);

struct hop_comm;

/* hop_comm_fail() for any thread (hop_comm_abort()): records the first
 * cause but leaves comm->last_error, which belongs to the owner thread. */
int hop_comm_fail_async(struct hop_comm *comm, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* What hop_comm_init_env() found in the environment. */
struct hop_env_job {
	int rank, nranks;
	const char *rank_var;           /* "HOP_RANK", "PMI_RANK", ... */
	hop_unique_id_t id;
};

/* Parse rank, size and rendezvous from the environment (comm.h documents
 * the variables). Return: 0 or HOP_ERR_CONFIG with the reason in @err. */
int hop_env_job_parse(struct hop_env_job *job, char *err, size_t errlen);

/* Thread-local message of the last failed init (hop_last_init_error()). */
void hop_set_init_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
void hop_clear_init_error(void);

#endif /* HOP_CORE_CORE_INT_H */
