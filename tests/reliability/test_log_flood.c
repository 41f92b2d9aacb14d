/*
 * test_log_flood.c - a flood of bad connections does not flood the log:
 * 300 connections that send garbage to rank 0's rendezvous while it waits
 * for rank 1 give a handful of warning lines that count the rest
 * (HOP_WARN_LIMITED, src/core/log.h), and the job still forms.
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

#include "core/log.h"
#include "rel.h"

enum { FLOOD = 300 };

/* One rank of the 2-rank job of @id; stderr to @errpath. Exit 0 when it
 * joined and a barrier passed. */
static pid_t start_rank(const hop_unique_id_t *id, int rank,
			const char *errpath)
{
	pid_t pid;

	fflush(NULL);
	if ((pid = fork()) == 0) {
		hop_comm_t *c = NULL;
		int fd = open(errpath, O_WRONLY | O_CREAT | O_APPEND, 0600);

		if (fd >= 0) {
			dup2(fd, 2);
			close(fd);
		}
		if (rank)
			rel_drop_listener(id);
		if (hop_comm_init_rank(&c, 2, *id, rank) || hop_barrier(c))
			_exit(1);
		hop_comm_destroy(c);
		_exit(0);
	}
	return pid;
}

/* Connect to @sa, send bytes that are no bootstrap header, close. */
static int send_garbage(const struct sockaddr_in *sa)
{
	char junk[64];
	int fd = socket(AF_INET, SOCK_STREAM, 0), ok;

	memset(junk, 'x', sizeof(junk));
	ok = fd >= 0 && !connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) &&
	     send(fd, junk, sizeof(junk), MSG_NOSIGNAL) == (ssize_t)sizeof(junk);
	if (fd >= 0)
		close(fd);
	return ok;
}

static int count_lines(const char *path, const char *sub, int *suppressed)
{
	char line[2048];
	FILE *f = fopen(path, "r");
	int n = 0;

	*suppressed = 0;
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, sub))
			continue;
		n++;
		if (strstr(line, "more like this suppressed"))
			(*suppressed)++;
	}
	fclose(f);
	return n;
}

static void t_bad_connections(void **s)
{
	char errpath[64];
	hop_unique_id_t id;
	struct hop_id_info info;
	pid_t pids[2];
	int st[2], sent = 0, lines, suppressed;

	(void)s;
	snprintf(errpath, sizeof(errpath), "/tmp/hop-log-flood-%d.err",
		 (int)getpid());
	unlink(errpath);
	setenv("HOP_DEBUG", "warn", 1);
	setenv("HOP_TRANSPORT", "tcp", 1);
	assert_int_equal(hop_get_unique_id(&id), 0);
	assert_int_equal(hop_id_decode(&id, &info), 0);
	pids[0] = start_rank(&id, 0, errpath);
	rel_drop_listener(&id);
	for (int i = 0; i < FLOOD; i++)
		sent += send_garbage(&info.addr);
	usleep(300 * 1000);     /* rank 0 reads them all */
	pids[1] = start_rank(&id, 1, errpath);
	int hung = rel_wait(pids, 2, rel_now_ms() + 30000, st);

	setenv("HOP_DEBUG", "none", 1);
	unsetenv("HOP_TRANSPORT");
	lines = count_lines(errpath, "rendezvous: dropped a connection",
			    &suppressed);
	print_message("  %d bad connections sent: %d warning lines, %d "
		      "counting the suppressed\n", sent, lines, suppressed);
	unlink(errpath);
	assert_int_equal(hung, 0);
	assert_int_equal(st[0], 0);
	assert_int_equal(st[1], 0);
	assert_int_equal(sent, FLOOD);
	if (lines < 1 || lines > HOP_LOG_BURST + 3)
		fail_msg("%d warning lines for %d bad connections", lines,
			 FLOOD);
	assert_true(suppressed >= 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_bad_connections),
	};

	rel_test_env();
	return cmocka_run_group_tests_name("log flood", tests, NULL, NULL)
		       ? 1 : 0;
}
