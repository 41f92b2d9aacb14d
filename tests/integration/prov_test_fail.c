/*
 * prov_test_fail.c - provider tests of what must fail, and how: transport
 * selection disagreements, writes outside a region (bounds, stale key,
 * missing access), impostors connecting to tcp listeners, a killed peer.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "prov_test.h"
#include "transport/tcp/tcp.h"

/* ------------------------------------------------------------------ */
/* oob / stale / access: rank 0 writes to rank 1 through a bad key or
 * range. shm rejects it on the writer (post returns HOP_ERR_OUT_OF_BOUNDS);
 * tcp on the target, which fails naming rank 0, tells the writer and drops
 * the connection, so the writer's poll fails with HOP_ERR_OUT_OF_BOUNDS
 * naming rank 1. Nothing lands in rank 1's memory. */

int t_bad(struct ph *ph, void *arg)
{
	enum bad_kind kind = *(enum bad_kind *)arg;
	static uint8_t a[8192], b[8192], s[256];
	struct hop_prov_mr *ma = NULL, *mb = NULL;
	struct rkey mine = { 0, 0 }, *all = calloc((size_t)ph->n, sizeof(*all));
	int ret = 0, code;

	PH_CHECK(ph, all, "oom");
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	memset(a, 0x11, sizeof(a));
	memset(b, 0x22, sizeof(b));
	memset(s, 0x99, sizeof(s));
	if (ph->rank == 1) {
		unsigned acc = kind == BAD_ACCESS ? HOP_PROV_REMOTE_READ
						  : HOP_PROV_REMOTE_WRITE;

		PH_CHECK(ph, ph->ops->mr_reg(ph->prov, a, sizeof(a), acc, &ma) == 0,
			 "reg");
		mine.addr = (uint64_t)(uintptr_t)a;
		mine.key = ma->key;
		if (kind == BAD_STALE) {
			/* retire the key; the slot is reused for b */
			PH_CHECK(ph, ph->ops->mr_dereg(ph->prov, ma) == 0, "dereg");
			ma = NULL;
			PH_CHECK(ph, ph->ops->mr_reg(ph->prov, b, sizeof(b),
						     HOP_PROV_REMOTE_WRITE,
						     &mb) == 0, "reg b");
			PH_CHECK(ph, (uint32_t)mb->key == (uint32_t)mine.key &&
					     mb->key != mine.key,
				 "slot reused with a new generation");
			mine.addr = (uint64_t)(uintptr_t)b;
		}
	}
	PH_CHECK(ph, ph_allgather(ph, &mine, all, sizeof(mine)) == 0, "ag");
	if (ph->rank == 0) {
		uint64_t raddr = all[1].addr + (kind == BAD_BOUNDS ? 8192 - 100 : 0);

		ret = ph->ops->post_write(ph->prov, 1, NULL, s, 200, raddr,
					  all[1].key, 7, HOP_WR_IMM, 0);
		if (is_tcp(ph)) {
			PH_CHECK(ph, ret == 0, "tcp post: %d", ret);
			code = ph_wait_failure(ph, 10000);
			PH_CHECK(ph, code == HOP_ERR_OUT_OF_BOUNDS,
				 "writer saw %s", hop_err_name(code));
			PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 1"),
				 "message: %s", ph->comm->fail_msg);
		} else {
			PH_CHECK(ph, ret == HOP_ERR_OUT_OF_BOUNDS,
				 "shm post returned %s", hop_err_name(ret));
			PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 1") &&
					     strstr(ph->comm->fail_msg,
						    kind == BAD_STALE ? "stale"
						    : kind == BAD_ACCESS
							    ? "access"
							    : "outside"),
				 "message: %s", ph->comm->fail_msg);
		}
		fprintf(stderr, "[rank 0] writer: %s\n", ph->comm->fail_msg);
	}
	if (ph->rank == 1 && is_tcp(ph)) {
		code = ph_wait_failure(ph, 10000);
		PH_CHECK(ph, code == HOP_ERR_OUT_OF_BOUNDS, "target saw %s",
			 hop_err_name(code));
		PH_CHECK(ph, strstr(ph->comm->fail_msg, "rank 0") &&
				     strstr(ph->comm->fail_msg,
					    kind == BAD_STALE ? "stale"
					    : kind == BAD_ACCESS ? "access"
								 : "outside"),
			 "message: %s", ph->comm->fail_msg);
		fprintf(stderr, "[rank 1] target: %s\n", ph->comm->fail_msg);
	}
	if (ph->rank == 1 && !is_tcp(ph)) {
		/* give a (buggy) delivery the chance to show up */
		for (int i = 0; i < 1000; i++)
			PH_CHECK(ph, ph_pump(ph) >= 0, "target poll");
		PH_CHECK(ph, ph->evn == 0, "target got an event");
	}
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	for (size_t i = 0; i < sizeof(a); i++)
		PH_CHECK(ph, a[i] == 0x11 && b[i] == 0x22,
			 "byte %zu of the target changed", i);
	if (ma)
		ph->ops->mr_dereg(ph->prov, ma);
	if (mb)
		ph->ops->mr_dereg(ph->prov, mb);
	ph_close(ph);
	free(all);
	return 0;
}

/* ------------------------------------------------------------------ */
/* kill: the last rank dies by SIGKILL; every survivor's poll fails with
 * HOP_ERR_PEER_FAILED naming it, well within the deadline. */

int t_kill(struct ph *ph, void *arg)
{
	int victim = ph->n - 1, code;
	char want[32];
	uint64_t t0;

	(void)arg;
	PH_CHECK(ph, ph_open(ph) == 0, "open");
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	if (ph->rank == victim) {
		raise(SIGKILL);
		pause();
	}
	t0 = hop_now_ns();
	/* wait on the victim as a posted receive from it does: with pairs
	 * connected on first use this connects it (no-op when eager) */
	(void)hop_prov_connect(ph->ops, ph->prov, victim);
	code = ph_wait_failure(ph, 10000);
	PH_CHECK(ph, code == HOP_ERR_PEER_FAILED, "got %s",
		 hop_err_name(code));
	snprintf(want, sizeof(want), "rank %d", victim);
	PH_CHECK(ph, strstr(ph->comm->fail_msg, want), "message: %s",
		 ph->comm->fail_msg);
	fprintf(stderr, "[rank %d] noticed in %.1f ms: %s\n", ph->rank,
		(double)(hop_now_ns() - t0) / 1e6, ph->comm->fail_msg);
	PH_CHECK(ph, hop_now_ns() - t0 < 5000000000ull, "took too long");
	/* later posts fail at once with the same code */
	PH_CHECK(ph, ph->ops->post_send(ph->prov, 0, "x", 1, 0, 0) ==
			     HOP_ERR_PEER_FAILED, "post after failure");
	ph_close(ph);
	return 0;
}

/* ------------------------------------------------------------------ */
/* select: hop_prov_select() agrees on every rank; explicit choices are
 * honoured; disagreement and unusable choices fail every rank. */

static int sel(struct ph *ph, const char *want, const char **got)
{
	const struct hop_prov_ops *ops = NULL;
	int ret;

	snprintf(ph->comm->cfg.transport, sizeof(ph->comm->cfg.transport),
		 "%s", want);
	ph->comm->last_error[0] = '\0';
	ret = hop_prov_select(ph->comm, ph->bs, &ops);
	*got = ret ? NULL : ops->name;
	return ret;
}

int t_select(struct ph *ph, void *arg)
{
	const struct hop_prov_ops *v = hop_prov_find("verbs");
	char why[128] = "";
	const char *got, *expect;
	char mine[16] = "", *all;
	int ret;

	(void)arg;
	PH_CHECK(ph, hop_prov_find("tcp") == &hop_prov_tcp &&
			     hop_prov_find("shm") == &hop_prov_shm &&
			     !hop_prov_find("nope") && !hop_prov_find(NULL),
		 "hop_prov_find");
	/* one host here: auto is verbs only if a device works, else shm */
	expect = v && v->usable(&ph->comm->prov_ctx, why, sizeof(why)) == 1 ? NULL : "shm";
	PH_CHECK(ph, sel(ph, "auto", &got) == 0, "auto: %s",
		 ph->comm->last_error);
	PH_CHECK(ph, !expect || !strcmp(got, expect), "auto chose %s", got);
	all = calloc((size_t)ph->n, sizeof(mine));
	PH_CHECK(ph, all, "oom");
	snprintf(mine, sizeof(mine), "%s", got);
	PH_CHECK(ph, ph_allgather(ph, mine, all, sizeof(mine)) == 0, "ag");
	for (int r = 0; r < ph->n; r++)
		PH_CHECK(ph, !strcmp(all + r * sizeof(mine), got),
			 "rank %d chose %s, I chose %s", r,
			 all + r * sizeof(mine), got);
	free(all);
	PH_CHECK(ph, sel(ph, "tcp", &got) == 0 && !strcmp(got, "tcp"), "tcp");
	PH_CHECK(ph, sel(ph, "shm", &got) == 0 && !strcmp(got, "shm"), "shm");
	if (!v) {
		ret = sel(ph, "verbs", &got);
		PH_CHECK(ph, ret == HOP_ERR_NO_DEVICE &&
				     strstr(ph->comm->last_error, "not built"),
			 "verbs unbuilt: %s: %s", hop_err_name(ret),
			 ph->comm->last_error);
	}
	if (ph->n > 1) {
		ret = sel(ph, ph->rank == ph->n - 1 ? "tcp" : "shm", &got);
		PH_CHECK(ph, ret == HOP_ERR_MISMATCH &&
				     strstr(ph->comm->last_error, "rank") &&
				     strstr(ph->comm->last_error, "tcp"),
			 "mismatch: %s: %s", hop_err_name(ret),
			 ph->comm->last_error);
	}
	ret = sel(ph, "carrier-pigeon", &got);
	PH_CHECK(ph, ret == HOP_ERR_CONFIG, "unknown: %s", hop_err_name(ret));
	return 0;
}

/* ------------------------------------------------------------------ */
/* impostor (tcp): while the ranks connect, a thread of rank 0 finds the
 * listening sockets of its sibling ranks (through /proc, so no other
 * process is touched) and sends them a hello with a wrong secret, garbage,
 * and a connection that closes at once. Each must be dropped while the
 * acceptor keeps waiting for the real ranks. */

struct imp {
	pid_t ppid, self;
	unsigned skip_port;     /* the bootstrap's (host order) */
	volatile int stop;
	int attacked;
};

/* Socket inodes held by process @pid. */
static size_t pid_sockets(pid_t pid, unsigned long *ino, size_t n, size_t max)
{
	char path[64];
	struct dirent *de;
	DIR *fds;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if (!(fds = opendir(path)))
		return n;
	while ((de = readdir(fds)) && n < max) {
		char lnk[600], tgt[64];
		ssize_t l;

		snprintf(lnk, sizeof(lnk), "%s/%s", path, de->d_name);
		l = readlink(lnk, tgt, sizeof(tgt) - 1);
		if (l > 0) {
			tgt[l] = '\0';
			if (sscanf(tgt, "socket:[%lu]", &ino[n]) == 1)
				n++;
		}
	}
	closedir(fds);
	return n;
}

/* Socket inodes of the siblings of @im->self (children of @im->ppid)
 * that @im->self does not hold too (the inherited bootstrap listener). */
static size_t sibling_sockets(struct imp *im, unsigned long *ino, size_t max)
{
	unsigned long mine[256];
	size_t nmine = pid_sockets(im->self, mine, 0, 256), n = 0, k = 0;
	DIR *proc = opendir("/proc");
	struct dirent *de;

	while (proc && (de = readdir(proc))) {
		char path[300], buf[512], *rp;
		pid_t pid = (pid_t)atoi(de->d_name);
		FILE *f;
		size_t got;

		if (pid <= 0 || pid == im->self)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
		if (!(f = fopen(path, "r")))
			continue;
		got = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[got] = '\0';
		rp = strrchr(buf, ')');
		if (!rp || atoi(rp + 4) != im->ppid) /* ") S ppid" */
			continue;
		n = pid_sockets(pid, ino, n, max);
	}
	if (proc)
		closedir(proc);
	for (size_t i = 0; i < n; i++) {
		int shared = 0;

		for (size_t j = 0; j < nmine; j++)
			shared |= ino[i] == mine[j];
		if (!shared)
			ino[k++] = ino[i];
	}
	return k;
}

static void attack(uint32_t ip, uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = port };
	uint8_t hello[TCP_HELLO_LEN], junk[TCP_HELLO_LEN];
	struct tcp_hello h = { .version = TCP_HELLO_VERSION, .rank = 0,
			       .nranks = 0 };

	sa.sin_addr.s_addr = ip;
	memset(h.secret, 0x42, sizeof(h.secret));
	for (int kind = 0; kind < 3; kind++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0)
			return;
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			if (kind == 0) {
				h.nranks = 1000;
				tcp_hello_pack(&h, hello);
				(void)!write(fd, hello, sizeof(hello));
			} else if (kind == 1) {
				memset(junk, 0xa7, sizeof(junk));
				(void)!write(fd, junk, sizeof(junk));
			}
			usleep(20000);
		}
		close(fd);
	}
}

static void *impostor(void *arg)
{
	struct imp *im = arg;
	uint32_t done_ports[64];
	int ndone = 0;

	while (!im->stop) {
		unsigned long ino[256];
		size_t n = sibling_sockets(im, ino, 256);
		FILE *f = fopen("/proc/net/tcp", "r");
		char line[512];

		while (f && fgets(line, sizeof(line), f)) {
			unsigned ip, port, st;
			unsigned long inode;
			int seen = 0;

			if (sscanf(line, " %*d: %x:%x %*x:%*x %x %*s %*s %*s %*d "
				   "%*d %lu", &ip, &port, &st, &inode) != 4 ||
			    st != 0x0a)
				continue;
			for (size_t i = 0; i < n; i++)
				seen |= ino[i] == inode;
			for (int i = 0; i < ndone; i++)
				seen &= done_ports[i] != port;
			seen &= port != im->skip_port;
			if (!seen || ndone == 64)
				continue;
			done_ports[ndone++] = port;
			attack(ip, htons((uint16_t)port));
			im->attacked++;
		}
		if (f)
			fclose(f);
		usleep(5000);
	}
	return NULL;
}

int t_impostor(struct ph *ph, void *arg)
{
	struct imp im = { .ppid = getppid(), .self = getpid() };
	struct hop_id_info info;
	pthread_t th;
	int right = (ph->rank + 1) % ph->n, left = (ph->rank + ph->n - 1) % ph->n;
	struct hop_cqe e;
	int r = ph->rank;

	(void)arg;
	PH_CHECK(ph, hop_id_decode(&ph->id, &info) == 0, "id");
	im.skip_port = ntohs(info.addr.sin_port);
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	if (ph->rank == 0) {
		PH_CHECK(ph, pthread_create(&th, NULL, impostor, &im) == 0,
			 "thread");
		/* the others' listeners wait for us meanwhile */
		for (int i = 0; i < 150 && im.attacked < ph->n - 1; i++)
			usleep(10000);
	}
	if (ph_open(ph)) {
		if (ph->rank == 0) {
			im.stop = 1;
			pthread_join(th, NULL);
		}
		return -1;
	}
	if (ph->rank == 0) {
		im.stop = 1;
		pthread_join(th, NULL);
		fprintf(stderr, "[rank 0] impostor attacked %d listener(s)\n",
			im.attacked);
		PH_CHECK(ph, im.attacked >= ph->n - 1,
			 "only %d listeners found", im.attacked);
	}
	/* the real links work; the send's completion is awaited before the
	 * barrier, which does not progress the provider: a pair connected on
	 * first use may still be connecting once the receive is done */
	PH_CHECK(ph, ph_send(ph, right, &r, sizeof(r), HOP_WR_SIGNALED, 0) == 0,
		 "send");
	PH_CHECK(ph, ph_next_event(ph, left, HOP_CQE_RECV, &e) == 0, "recv");
	PH_CHECK(ph, !memcmp(e.data, &left, sizeof(left)), "content");
	PH_CHECK(ph, ph_wait_local(ph, 0) == 0, "send completion");
	PH_CHECK(ph, ph_barrier(ph) == 0, "barrier");
	ph_close(ph);
	return 0;
}

