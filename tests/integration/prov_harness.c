/*
 * prov_harness.c - see prov_harness.h.
 */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "prov_harness.h"

void ph_fill(void *buf, size_t len, uint32_t seed)
{
	uint8_t *b = buf;

	for (size_t i = 0; i < len; i++)
		b[i] = ph_byte(seed, i);
}

long ph_verify(const void *buf, size_t len, uint32_t seed)
{
	const uint8_t *b = buf;

	for (size_t i = 0; i < len; i++)
		if (b[i] != ph_byte(seed, i))
			return (long)i;
	return -1;
}

static int ph_record(struct ph *ph, const struct hop_cqe *c)
{
	if (c->op == HOP_CQE_WRITE || c->op == HOP_CQE_SEND) {
		if (c->wr_id >= ph->done_cap) {
			size_t cap = ph->done_cap ? ph->done_cap : 1024;
			uint8_t *d;

			while (cap <= c->wr_id)
				cap *= 2;
			if (!(d = realloc(ph->done, cap)))
				return HOP_ERR_NO_MEMORY;
			memset(d + ph->done_cap, 0, cap - ph->done_cap);
			ph->done = d;
			ph->done_cap = cap;
		}
		if (ph->done[c->wr_id]) {
			fprintf(stderr, "[rank %d] wr_id %llu completed twice\n",
				ph->rank, (unsigned long long)c->wr_id);
			return HOP_ERR_INTERNAL;
		}
		if (c->status) {
			fprintf(stderr, "[rank %d] wr_id %llu status %d\n",
				ph->rank, (unsigned long long)c->wr_id,
				c->status);
			return HOP_ERR_INTERNAL;
		}
		ph->done[c->wr_id] = 1;
		ph->nlocal++;
		return 0;
	}
	if (ph->evn == ph->evcap) {
		size_t cap = ph->evcap ? 2 * ph->evcap : 256;
		struct hop_cqe *e = realloc(ph->ev, cap * sizeof(*e));

		if (!e)
			return HOP_ERR_NO_MEMORY;
		ph->ev = e;
		ph->evcap = cap;
	}
	ph->ev[ph->evn++] = *c;
	return 0;
}

int ph_pump(struct ph *ph)
{
	struct hop_cqe c[16];
	int n = ph->ops->poll(ph->prov, c, 16), ret;

	if (n < 0)
		return n;
	for (int i = 0; i < n; i++)
		if ((ret = ph_record(ph, &c[i])))
			return ret;
	/* spin first (latency), then let the provider block briefly */
	if (n == 0 && ++ph->idle > ph->spin)
		ph->ops->wait(ph->prov, 200);
	else if (n > 0)
		ph->idle = 0;
	return n;
}

static int ph_timeout(struct ph *ph, const char *what)
{
	fprintf(stderr, "[rank %d] timed out after %d ms waiting for %s\n",
		ph->rank, ph->wait_ms, what);
	return HOP_ERR_TIMEOUT;
}

int ph_write(struct ph *ph, int peer, struct hop_prov_mr *lmr,
	     const void *src, size_t len, uint64_t raddr, uint64_t rkey,
	     uint32_t imm, unsigned flags, uint64_t wr_id)
{
	uint64_t dl = hop_deadline_after(ph->wait_ms);
	int ret;

	while ((ret = ph->ops->post_write(ph->prov, peer, lmr, src, len, raddr,
					  rkey, imm, flags, wr_id)) ==
	       HOP_PROV_AGAIN) {
		if ((ret = ph_pump(ph)) < 0)
			return ret;
		if (hop_deadline_passed(dl))
			return ph_timeout(ph, "room to post a write");
	}
	return ret;
}

int ph_send(struct ph *ph, int peer, const void *buf, size_t len,
	    unsigned flags, uint64_t wr_id)
{
	uint64_t dl = hop_deadline_after(ph->wait_ms);
	int ret;

	while ((ret = ph->ops->post_send(ph->prov, peer, buf, len, flags,
					 wr_id)) == HOP_PROV_AGAIN) {
		if ((ret = ph_pump(ph)) < 0)
			return ret;
		if (hop_deadline_passed(dl))
			return ph_timeout(ph, "room to post a send");
	}
	return ret;
}

int ph_wait_local(struct ph *ph, uint64_t wr_id)
{
	uint64_t dl = hop_deadline_after(ph->wait_ms);
	int ret;

	while (wr_id >= ph->done_cap || !ph->done[wr_id]) {
		if ((ret = ph_pump(ph)) < 0)
			return ret;
		if (hop_deadline_passed(dl))
			return ph_timeout(ph, "a local completion");
	}
	return 0;
}

int ph_next_event(struct ph *ph, int peer, int op, struct hop_cqe *out)
{
	uint64_t dl = hop_deadline_after(ph->wait_ms);
	int ret;

	for (;;) {
		for (size_t i = 0; i < ph->evn; i++) {
			if (ph->ev[i].peer != peer || (op && ph->ev[i].op != op))
				continue;
			*out = ph->ev[i];
			memmove(&ph->ev[i], &ph->ev[i + 1],
				(ph->evn - i - 1) * sizeof(*ph->ev));
			ph->evn--;
			return 0;
		}
		if ((ret = ph_pump(ph)) < 0)
			return ret;
		if (hop_deadline_passed(dl))
			return ph_timeout(ph, "an event from a peer");
	}
}

int ph_wait_failure(struct ph *ph, int ms)
{
	uint64_t dl = hop_deadline_after(ms);
	int ret;

	while (!hop_deadline_passed(dl)) {
		ret = ph_pump(ph);
		if (ret < 0)
			return ret;
	}
	return 0;
}

int ph_barrier(struct ph *ph)
{
	return hop_bootstrap_barrier(ph->bs, hop_deadline_after(ph->wait_ms));
}

int ph_allgather(struct ph *ph, const void *mine, void *all, size_t len)
{
	return hop_bootstrap_allgather(ph->bs, mine, all, len,
				       hop_deadline_after(ph->wait_ms));
}

const char *ph_error(const struct ph *ph)
{
	return atomic_load(&ph->comm->failed) ? ph->comm->fail_msg
					       : ph->comm->last_error;
}

int ph_open(struct ph *ph)
{
	int ret;

	atomic_store(&ph->comm->failed, 0);
	ph->comm->fail_msg[0] = ph->comm->last_error[0] = '\0';
	ph->evn = 0;
	ph->nlocal = 0;
	if (ph->done)
		memset(ph->done, 0, ph->done_cap);
	hop_prov_ctx_init(ph->comm, ph->prov_name);
	ret = ph->ops->open(&ph->comm->prov_ctx, &ph->prov);
	if (ret) {
		fprintf(stderr, "[rank %d] %s open: %s: %s\n", ph->rank,
			ph->prov_name, hop_err_name(ret), ph_error(ph));
		return ret;
	}
	ph->comm->prov = ph->prov;
	if (!strcmp(ph->prov_name, "shm")) {
		/* every segment name is unlinked once open() returns */
		char pre[32];
		struct dirent *de;
		DIR *d = opendir("/dev/shm");

		snprintf(pre, sizeof(pre), "hop-%d-", (int)getpid());
		while (d && (de = readdir(d)))
			if (!strncmp(de->d_name, pre, strlen(pre))) {
				fprintf(stderr, "[rank %d] /dev/shm/%s still "
					"exists after open\n", ph->rank,
					de->d_name);
				ret = HOP_ERR_INTERNAL;
			}
		if (d)
			closedir(d);
	}
	return ret;
}

void ph_close(struct ph *ph)
{
	if (ph->prov)
		ph->ops->close(ph->prov);
	ph->prov = NULL;
	ph->comm->prov = NULL;
}

static int ph_child(const char *prov, int rank, int n,
		    const hop_unique_id_t *id, ph_fn fn, void *arg)
{
	struct ph ph = { .rank = rank, .n = n, .prov_name = prov,
			 .id = *id, .wait_ms = 20000 };
	char err[HOP_MSG_LEN];
	int ret;

	hop_log_init();
	hop_log_set_rank(rank);
	if (getenv("PH_PIN") && atoi(getenv("PH_PIN"))) {
		/* benchmarks: one CPU per rank, as far as there are CPUs */
		cpu_set_t set;
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		CPU_ZERO(&set);
		CPU_SET(rank % (ncpu > 0 ? ncpu : 1), &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	ph.comm = calloc(1, sizeof(*ph.comm));
	if (!ph.comm)
		return 1;
	ph.comm->magic = HOP_COMM_MAGIC;
	ph.comm->rank = rank;
	ph.comm->nranks = n;
	if (hop_config_load(&ph.comm->cfg, err, sizeof(err))) {
		fprintf(stderr, "[rank %d] config: %s\n", rank, err);
		free(ph.comm);
		return 1;
	}
	if (!getenv("HOP_TIMEOUT"))
		ph.comm->cfg.timeout_ms = 20000;
	ph.wait_ms = ph.comm->cfg.timeout_ms;
	ph.spin = ph.comm->cfg.spin_count < 0 ? 2000 : ph.comm->cfg.spin_count;
	ph.ops = hop_prov_find(prov);
	if (!ph.ops) {
		fprintf(stderr, "[rank %d] provider %s not built\n", rank, prov);
		free(ph.comm);
		return 1;
	}
	ret = hop_bootstrap_open(id, rank, n, &ph.comm->cfg,
				 hop_comm_deadline(ph.comm), &ph.bs, err,
				 sizeof(err));
	if (ret) {
		fprintf(stderr, "[rank %d] bootstrap: %s: %s\n", rank,
			hop_err_name(ret), err);
		free(ph.comm);
		return 1;
	}
	ph.comm->bs = ph.bs;
	ret = fn(&ph, arg);
	ph_close(&ph);
	hop_bootstrap_close(ph.bs);
	free(ph.ev);
	free(ph.done);
	free(ph.comm->host_of); /* from hop_prov_select() */
	free(ph.comm);
	return ret ? 1 : 0;
}

int ph_run(const char *prov, int n, ph_fn fn, void *arg, int killed,
	   int timeout_s)
{
	hop_unique_id_t id;
	pid_t pids[64];
	int ret, bad = 0, left;
	time_t end;

	if (n < 1 || n > 64)
		return -1;
	if ((ret = hop_get_unique_id(&id))) {
		fprintf(stderr, "hop_get_unique_id: %s\n", hop_err_name(ret));
		return -1;
	}
	fflush(NULL);
	for (int r = 0; r < n; r++) {
		pids[r] = fork();
		if (pids[r] < 0) {
			perror("fork");
			for (int k = 0; k < r; k++)
				kill(pids[k], SIGKILL);
			return -1;
		}
		if (pids[r] == 0)
			_exit(ph_child(prov, r, n, &id, fn, arg));
	}
	end = time(NULL) + timeout_s;
	left = n;
	while (left > 0) {
		int st;
		pid_t p = waitpid(-1, &st, WNOHANG);

		if (p < 0 && errno != EINTR)
			break;
		if (p <= 0) {
			if (time(NULL) > end) {
				fprintf(stderr, "%s: ranks still running "
					"after %d s: killing them\n", prov,
					timeout_s);
				for (int r = 0; r < n; r++)
					if (pids[r] > 0)
						kill(pids[r], SIGKILL);
				bad++;
				end = time(NULL) + 5;
			}
			usleep(2000);
			continue;
		}
		for (int r = 0; r < n; r++) {
			if (pids[r] != p)
				continue;
			pids[r] = 0;
			left--;
			if (r == killed) {
				if (!WIFSIGNALED(st) ||
				    WTERMSIG(st) != SIGKILL) {
					fprintf(stderr, "rank %d should have "
						"been killed\n", r);
					bad++;
				}
			} else if (!WIFEXITED(st) || WEXITSTATUS(st)) {
				fprintf(stderr, "rank %d failed (%s %d)\n", r,
					WIFEXITED(st) ? "exit" : "signal",
					WIFEXITED(st) ? WEXITSTATUS(st)
						      : WTERMSIG(st));
				bad++;
			}
		}
	}
	return bad ? -1 : 0;
}
