/*
 * hop-run - start N ranks of a hop program on this host.
 *
 * hop-run makes the rendezvous itself: it binds the listener, builds the
 * unique id and passes it to every rank (HOP_UNIQUE_ID), and hands the
 * listening socket to rank 0 (HOP_BOOTSTRAP_FD), so ranks can connect
 * before rank 0 runs. Every output line of a rank is prefixed "[rank] ".
 * The first rank that fails takes the job down: the others get SIGTERM,
 * then SIGKILL 2 s later, and hop-run exits with the failed rank's status.
 * With --hosts each rank starts inside its emulated host's namespaces
 * (scripts/hop-cluster) and the rendezvous listens on host 0's address.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <hop/hop.h>

#include "core/config.h"
#include "core/core_int.h"
#include "core/timer.h"
#include "hop-run-hosts.h"

#define EXIT_TIMEOUT 124   /* as timeout(1) */
#define EXIT_HOPRUN 125    /* hop-run itself failed (usage, system) */
#define TERM_GRACE_MS 2000 /* SIGTERM -> SIGKILL */
#define KILL_WAIT_MS 5000  /* SIGKILL -> give up waiting */
#define DRAIN_MS 1000      /* output of grandchildren after the last exit */
#define LINE_MAX_BYTES 65536

struct stream {
	int fd;                 /* read end, -1 at EOF */
	int out;                /* 1 or 2 */
	size_t len;
	char *buf;              /* LINE_MAX_BYTES, allocated on first use */
};

struct child {
	pid_t pid;              /* 0 once reaped */
	struct stream s[2];     /* stdout, stderr */
};

/* The signals on_signal() handles: each rank gets them back at their
 * default, and spawn() holds them back across the fork until then. */
static const int handled_sigs[] = { SIGCHLD, SIGINT, SIGTERM, SIGHUP };
#define N_HANDLED_SIGS (sizeof(handled_sigs) / sizeof(handled_sigs[0]))

static struct child *kids;
static int nkids, alive, sig_pipe[2] = { -1, -1 };
static int out_broken[3];
static struct run_hosts hosts;

static void on_signal(int sig)
{
	unsigned char c = (unsigned char)sig;
	int e = errno;

	if (write(sig_pipe[1], &c, 1) < 0) {
		/* pipe full: a wakeup is pending anyway */
	}
	errno = e;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: hop-run -n N [--transport auto|verbs|tcp|shm|PLUGIN] [--timeout S] [--] prog [args...]\n"
"       hop-run --hosts H --host-pids P0,... [--ppn R | --map block|cyclic|FILE] [-n N] ...\n"
"\n"
"Start N ranks of prog on this host, connected through a hop rendezvous.\n"
"\n"
"  -n, --np N          number of ranks, 1..65536\n"
"  --hosts H           spread the ranks over H emulated hosts (scripts/hop-cluster):\n"
"                      each starts in the network, UTS and mount namespaces of\n"
"                      its host's process in --host-pids; the rendezvous listens\n"
"                      in host 0's network\n"
"  --ppn R             R ranks per host, in blocks (-n defaults to H x R)\n"
"  --map M             block (default), cyclic (rank r on host r mod H), or a\n"
"                      file with the host number (0-based) of each rank per line\n"
"  --transport X       set HOP_TRANSPORT=X for every rank\n"
"  --timeout S         kill the job after S seconds (fractions allowed) and\n"
"                      exit 124; also HOP_TIMEOUT=S for the ranks unless\n"
"                      HOP_TIMEOUT is already set\n"
"  -h, --help          this help\n"
"  --version           print hop's version\n"
"\n"
"Each rank gets HOP_RANK, HOP_SIZE and HOP_UNIQUE_ID; rank 0 also gets\n"
"HOP_BOOTSTRAP_FD. Output lines are prefixed \"[rank] \". The rendezvous\n"
"listens on 127.0.0.1, or on the address of HOP_SOCKET_IFNAME when set.\n"
"\n"
"Exit status: 0 when every rank exits 0; the status of the first rank that\n"
"fails (128+N when killed by signal N); 124 on --timeout; 125 when hop-run\n"
"itself fails; 128+N when hop-run is interrupted by signal N.\n");
}

/* Seconds as HOP_TIMEOUT accepts them: digits with an optional fraction. */
static int parse_secs(const char *s, double *out)
{
	int digits = 0, dot = 0;

	for (const char *p = s; *p; p++) {
		if (*p >= '0' && *p <= '9')
			digits++;
		else if (*p == '.' && !dot)
			dot = 1;
		else
			return -1;
	}
	if (!digits)
		return -1;
	*out = strtod(s, NULL);
	return *out > 0 && *out <= 2000000 ? 0 : -1;
}

static void write_all(int fd, const char *p, size_t n)
{
	while (n > 0 && !out_broken[fd]) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EAGAIN) {
			struct pollfd pfd = { .fd = fd, .events = POLLOUT };

			poll(&pfd, 1, 1000);
			continue;
		}
		if (w <= 0) {
			out_broken[fd] = 1; /* reader went away: drop output */
			return;
		}
		p += w;
		n -= (size_t)w;
	}
}

static void emit(int rank, struct stream *s, const char *line, size_t n)
{
	char pre[24];
	int pl = snprintf(pre, sizeof(pre), "[%d] ", rank);
	char *tmp = malloc((size_t)pl + n + 1);

	if (!tmp) {
		write_all(s->out, pre, (size_t)pl);
		write_all(s->out, line, n);
		write_all(s->out, "\n", 1);
		return;
	}
	memcpy(tmp, pre, (size_t)pl);
	memcpy(tmp + pl, line, n);
	tmp[(size_t)pl + n] = '\n';
	write_all(s->out, tmp, (size_t)pl + n + 1); /* one write per line */
	free(tmp);
}

/* Read what is there; emit complete lines; at EOF the partial one too. */
static void drain(int rank, struct stream *s)
{
	char chunk[16384];
	ssize_t n = read(s->fd, chunk, sizeof(chunk));

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (!s->buf && !(s->buf = malloc(LINE_MAX_BYTES)))
		n = -1;
	for (ssize_t i = 0; i < n; i++) {
		if (chunk[i] == '\n') {
			emit(rank, s, s->buf, s->len);
			s->len = 0;
			continue;
		}
		if (s->len == LINE_MAX_BYTES) { /* very long line: break it */
			emit(rank, s, s->buf, s->len);
			s->len = 0;
		}
		s->buf[s->len++] = chunk[i];
	}
	if (n <= 0) {
		if (s->len)
			emit(rank, s, s->buf, s->len);
		s->len = 0;
		close(s->fd);
		s->fd = -1;
		free(s->buf);
		s->buf = NULL;
	}
}

static void kill_all(int sig)
{
	for (int r = 0; r < nkids; r++)
		if (kids[r].pid > 0)
			kill(-kids[r].pid, sig); /* its process group */
}

static void child_exec(int rank, int lfd, const char *idstr, const char *transport,
		       const char *timeout, char **argv, int fds[2][2],
		       const sigset_t *saved_mask)
{
	char buf[256];
	pid_t parent = getppid();

	setpgid(0, 0);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(EXIT_HOPRUN);
	signal(SIGPIPE, SIG_DFL);
	for (size_t i = 0; i < N_HANDLED_SIGS; i++)
		signal(handled_sigs[i], SIG_DFL);
	/* a SIGTERM sent since the fork was held back (spawn() blocked it):
	 * it arrives now, with the default action, and ends this rank */
	sigprocmask(SIG_SETMASK, saved_mask, NULL);
	if (hosts.nhosts && run_hosts_enter(hosts.pids[hosts.host_of[rank]],
					    CLONE_NEWNET | CLONE_NEWUTS | CLONE_NEWNS,
					    buf, sizeof(buf))) {
		fprintf(stderr, "hop-run: rank %d: %s\n", rank, buf);
		_exit(EXIT_HOPRUN);
	}
	if (dup2(fds[0][1], 1) < 0 || dup2(fds[1][1], 2) < 0)
		_exit(EXIT_HOPRUN);
	/* stdin: rank 0 keeps a pipe or file; a terminal would stop it */
	if (rank != 0 || isatty(0)) {
		int nul = open("/dev/null", O_RDONLY);

		if (nul >= 0 && nul != 0) {
			dup2(nul, 0);
			close(nul);
		}
	}
	snprintf(buf, sizeof(buf), "%d", rank);
	setenv("HOP_RANK", buf, 1);
	snprintf(buf, sizeof(buf), "%d", nkids);
	setenv("HOP_SIZE", buf, 1);
	setenv("HOP_UNIQUE_ID", idstr, 1);
	if (transport)
		setenv("HOP_TRANSPORT", transport, 1);
	if (timeout && !getenv("HOP_TIMEOUT"))
		setenv("HOP_TIMEOUT", timeout, 1);
	if (rank == 0) {
		fcntl(lfd, F_SETFD, 0); /* inherited across exec */
		snprintf(buf, sizeof(buf), "%d", lfd);
		setenv("HOP_BOOTSTRAP_FD", buf, 1);
	} else {
		close(lfd);
		unsetenv("HOP_BOOTSTRAP_FD");
	}
	execvp(argv[0], argv);
	fprintf(stderr, "hop-run: cannot run '%s': %s\n", argv[0],
		strerror(errno));
	_exit(errno == ENOENT ? 127 : 126);
}

static int spawn(int rank, int lfd, const char *idstr, const char *transport,
		 const char *timeout, char **argv)
{
	int fds[2][2];
	sigset_t block, saved;
	pid_t pid;
	int e;

	if (pipe2(fds[0], O_CLOEXEC) < 0)
		return -1;
	if (pipe2(fds[1], O_CLOEXEC) < 0) {
		e = errno;
		close(fds[0][0]);
		close(fds[0][1]);
		errno = e;
		return -1;
	}
	fflush(NULL);
	/* Until the child has reset its handlers it still runs hop-run's
	 * on_signal(), which would swallow a SIGTERM from kill_all() and leave
	 * the rank to SIGKILL TERM_GRACE_MS later: hold the signals back. */
	sigemptyset(&block);
	for (size_t i = 0; i < N_HANDLED_SIGS; i++)
		sigaddset(&block, handled_sigs[i]);
	sigprocmask(SIG_BLOCK, &block, &saved);
	pid = fork();
	if (pid == 0)
		child_exec(rank, lfd, idstr, transport, timeout, argv, fds, &saved);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	if (pid < 0) {
		e = errno;
		for (int i = 0; i < 2; i++) {
			close(fds[i][0]);
			close(fds[i][1]);
		}
		errno = e;
		return -1;
	}
	setpgid(pid, pid); /* also in the child: whichever runs first */
	for (int i = 0; i < 2; i++) {
		close(fds[i][1]);
		fcntl(fds[i][0], F_SETFL, O_NONBLOCK);
		kids[rank].s[i] = (struct stream){ .fd = fds[i][0], .out = i + 1 };
	}
	kids[rank].pid = pid;
	alive++;
	return 0;
}

static const char *ranks(int n)
{
	return n == 1 ? "rank" : "ranks";
}

static void describe(int st, char *buf, size_t len)
{
	if (WIFSIGNALED(st))
		snprintf(buf, len, "was killed by signal %d (%s)", WTERMSIG(st),
			 strsignal(WTERMSIG(st)));
	else
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(st));
}

static int fd_limit(int n)
{
	rlim_t need = (rlim_t)n * 2 + 32;
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur >= need)
		return 0;
	rl.rlim_cur = rl.rlim_max < need ? rl.rlim_max : need;
	setrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur >= need)
		return 0;
	fprintf(stderr, "hop-run: -n %d needs %lu file descriptors; the limit is "
		"%lu (ulimit -n)\n", n, (unsigned long)need,
		(unsigned long)rl.rlim_max);
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "np", required_argument, NULL, 'n' },
		{ "transport", required_argument, NULL, 't' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "hosts", required_argument, NULL, 'H' },
		{ "ppn", required_argument, NULL, 'P' },
		{ "map", required_argument, NULL, 'M' },
		{ "host-pids", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *transport = NULL, *timeout = NULL, *map = NULL, *pids = NULL;
	char err[512], idstr[2 * HOP_UNIQUE_ID_BYTES + 1];
	double timeout_s = 0;
	long n = 0, nhosts = 0, ppn = 0;
	struct hop_id_info info;
	hop_unique_id_t id;
	struct sigaction sa;
	uint64_t job_deadline = 0, kill_at = 0, give_up_at = 0, drain_until = 0;
	int lfd, opt, status = 0, first_failed = -1, ended_by = 0;

	while ((opt = getopt_long(argc, argv, "+n:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (hop_parse_int("-n", optarg, 1, 65536, &n, err,
					  sizeof(err))) {
				fprintf(stderr, "hop-run: %s\n", err);
				return EXIT_HOPRUN;
			}
			break;
		case 't':
			/* plugins too (libhop-provider-NAME.so): the
			 * ranks judge the name, as HOP_TRANSPORT's rules */
			if (!*optarg || strlen(optarg) > 15 ||
			    strspn(optarg, "abcdefghijklmnopqrstuvwxyz0123456789_-") !=
				    strlen(optarg)) {
				fprintf(stderr, "hop-run: --transport '%s': not a "
					"provider name (auto, verbs, tcp, shm or a "
					"plugin's: up to 15 of a-z 0-9 _ -)\n", optarg);
				return EXIT_HOPRUN;
			}
			transport = optarg;
			break;
		case 'T':
			if (parse_secs(optarg, &timeout_s)) {
				fprintf(stderr, "hop-run: --timeout '%s': not a "
					"number of seconds in (0, 2000000]\n",
					optarg);
				return EXIT_HOPRUN;
			}
			timeout = optarg;
			break;
		case 'H':
		case 'P':
			if (hop_parse_int(opt == 'H' ? "--hosts" : "--ppn", optarg,
					  1, 65536, opt == 'H' ? &nhosts : &ppn,
					  err, sizeof(err))) {
				fprintf(stderr, "hop-run: %s\n", err);
				return EXIT_HOPRUN;
			}
			break;
		case 'M':
			map = optarg;
			break;
		case 'I':
			pids = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("hop-run (hop) %s\n", hop_version());
			return 0;
		default:
			usage(stderr);
			return EXIT_HOPRUN;
		}
	}
	if (run_hosts_setup(&hosts, nhosts, ppn, map, pids, &n, err,
			    sizeof(err))) {
		fprintf(stderr, "hop-run: %s\n", err);
		return EXIT_HOPRUN;
	}
	if (n == 0 || optind >= argc) {
		fprintf(stderr, "hop-run: %s\n", n == 0 ? "-n N is required" :
			"no program to run");
		usage(stderr);
		return EXIT_HOPRUN;
	}
	nkids = (int)n;
	if (fd_limit(nkids))
		return EXIT_HOPRUN;
	if (hop_id_listen(getenv("HOP_SOCKET_IFNAME"), !hosts.nhosts, &info, &lfd, err,
			  sizeof(err))) {
		fprintf(stderr, "hop-run: %s\n", err);
		return EXIT_HOPRUN;
	}
	hop_id_encode(&info, &id);
	hop_unique_id_to_string(&id, idstr, sizeof(idstr));

	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK) < 0 ||
	    !(kids = calloc((size_t)nkids, sizeof(*kids)))) {
		fprintf(stderr, "hop-run: %s\n", strerror(errno));
		return EXIT_HOPRUN;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
	for (size_t i = 0; i < N_HANDLED_SIGS; i++)
		sigaction(handled_sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	for (int r = 0; r < nkids; r++) {
		if (spawn(r, lfd, idstr, transport, timeout, argv + optind)) {
			fprintf(stderr, "hop-run: starting rank %d: %s; "
				"terminating the job\n", r, strerror(errno));
			status = EXIT_HOPRUN;
			ended_by = -1;
			kill_all(SIGTERM);
			kill_at = hop_deadline_after(TERM_GRACE_MS);
			break;
		}
	}
	close(lfd); /* rank 0 has its own copy */
	if (timeout)
		job_deadline = hop_deadline_after((int64_t)(timeout_s * 1000 + 0.5));

	struct pollfd *pfd = calloc((size_t)nkids * 2 + 1, sizeof(*pfd));
	int *who = calloc((size_t)nkids * 2 + 1, sizeof(*who));

	if (!pfd || !who) {
		fprintf(stderr, "hop-run: out of memory\n");
		kill_all(SIGKILL);
		return EXIT_HOPRUN;
	}
	for (;;) {
		int np = 1, open_streams = 0, wait_ms = -1;
		uint64_t next = 0;

		pfd[0] = (struct pollfd){ .fd = sig_pipe[0], .events = POLLIN };
		for (int r = 0; r < nkids; r++)
			for (int i = 0; i < 2; i++)
				if (kids[r].s[i].fd >= 0) {
					who[np] = r * 2 + i;
					pfd[np++] = (struct pollfd){
						.fd = kids[r].s[i].fd, .events = POLLIN };
					open_streams++;
				}
		if (alive == 0 && open_streams == 0)
			break;
		if (alive == 0 && !drain_until)
			drain_until = hop_deadline_after(DRAIN_MS);
		if (drain_until && hop_deadline_passed(drain_until))
			break; /* a grandchild holds the pipes open */
		next = job_deadline;
		if (kill_at && (!next || kill_at < next))
			next = kill_at;
		if (give_up_at && (!next || give_up_at < next))
			next = give_up_at;
		if (drain_until && (!next || drain_until < next))
			next = drain_until;
		if (next)
			wait_ms = hop_deadline_ms_left(next);
		if (poll(pfd, (nfds_t)np, wait_ms) < 0 && errno != EINTR) {
			fprintf(stderr, "hop-run: poll: %s\n", strerror(errno));
			kill_all(SIGKILL);
			return EXIT_HOPRUN;
		}
		for (int k = 1; k < np; k++)
			if (pfd[k].revents)
				drain(who[k] / 2, &kids[who[k] / 2].s[who[k] % 2]);
		if (pfd[0].revents & POLLIN) {
			unsigned char sigs[64];
			ssize_t got = read(sig_pipe[0], sigs, sizeof(sigs));

			for (ssize_t i = 0; i < got; i++) {
				if (sigs[i] == SIGCHLD || ended_by)
					continue;
				fprintf(stderr, "hop-run: received signal %d (%s); "
					"terminating %d %s\n", sigs[i],
					strsignal(sigs[i]), alive, ranks(alive));
				ended_by = sigs[i];
				status = 128 + sigs[i];
				kill_all(SIGTERM);
				kill_at = hop_deadline_after(TERM_GRACE_MS);
			}
		}
		for (;;) { /* reap */
			int st, r;
			pid_t pid = waitpid(-1, &st, WNOHANG);

			if (pid <= 0)
				break;
			for (r = 0; r < nkids && kids[r].pid != pid; r++)
				;
			if (r == nkids)
				continue;
			kids[r].pid = 0;
			alive--;
			if (ended_by || (WIFEXITED(st) && WEXITSTATUS(st) == 0))
				continue;
			describe(st, err, sizeof(err));
			fprintf(stderr, "hop-run: rank %d %s; terminating the "
				"other %d %s\n", r, err, alive, ranks(alive));
			first_failed = r;
			ended_by = -1;
			status = WIFSIGNALED(st) ? 128 + WTERMSIG(st)
						 : WEXITSTATUS(st);
			kill_all(SIGTERM);
			kill_at = hop_deadline_after(TERM_GRACE_MS);
		}
		if (job_deadline && !ended_by && alive &&
		    hop_deadline_passed(job_deadline)) {
			fprintf(stderr, "hop-run: job timed out after %s s "
				"(--timeout); terminating %d %s\n", timeout,
				alive, ranks(alive));
			ended_by = -1;
			status = EXIT_TIMEOUT;
			kill_all(SIGTERM);
			kill_at = hop_deadline_after(TERM_GRACE_MS);
		}
		if (kill_at && alive && hop_deadline_passed(kill_at)) {
			for (int r = 0; r < nkids; r++)
				if (kids[r].pid > 0)
					fprintf(stderr, "hop-run: rank %d still "
						"running %d s after SIGTERM; "
						"sending SIGKILL\n", r,
						TERM_GRACE_MS / 1000);
			kill_all(SIGKILL);
			kill_at = 0;
			give_up_at = hop_deadline_after(KILL_WAIT_MS);
		}
		if (give_up_at && alive && hop_deadline_passed(give_up_at)) {
			fprintf(stderr, "hop-run: %d %s did not die after "
				"SIGKILL; giving up\n", alive, ranks(alive));
			break;
		}
	}
	if (first_failed >= 0)
		fprintf(stderr, "hop-run: job failed: rank %d was the first to "
			"fail (exit status %d)\n", first_failed, status);
	for (int r = 0; r < nkids; r++)
		for (int i = 0; i < 2; i++) {
			if (kids[r].s[i].fd >= 0)
				close(kids[r].s[i].fd);
			free(kids[r].s[i].buf);
		}
	free(pfd);
	free(who);
	free(kids);
	run_hosts_free(&hosts);
	return status;
}
