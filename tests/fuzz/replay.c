/*
 * replay.c - a main() for the fuzz harnesses without libFuzzer: feeds every
 * file named on the command line (or found in a named folder) to
 * LLVMFuzzerTestOneInput() once. make check builds each harness with it and
 * replays the seed corpus (tests/fuzz/replay.sh), so the harnesses compile
 * under gcc -Werror and every seed keeps passing their checks; scripts/fuzz
 * does the fuzzing proper with clang.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz_common.h"

static int replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf = NULL;
	long n;

	if (!f) {
		perror(path);
		return -1;
	}
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto err_close;
	/* exactly n bytes on the heap, so an overread is caught by ASan */
	if (!(buf = malloc(n ? (size_t)n : 1)) ||
	    fread(buf, 1, (size_t)n, f) != (size_t)n)
		goto err_close;
	fclose(f);
	LLVMFuzzerTestOneInput(buf, (size_t)n);
	free(buf);
	return 1;
err_close:
	fprintf(stderr, "%s: cannot read\n", path);
	free(buf);
	fclose(f);
	return -1;
}

static int replay(const char *path)
{
	struct dirent **ents;
	struct stat st;
	int n, done = 0;

	if (stat(path, &st) < 0) {
		perror(path);
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return replay_file(path);
	if ((n = scandir(path, &ents, NULL, alphasort)) < 0) {
		perror(path);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char full[4096];

		if (ents[i]->d_name[0] != '.' && done >= 0) {
			snprintf(full, sizeof(full), "%s/%s", path,
				 ents[i]->d_name);
			int r = replay_file(full);

			done = r < 0 ? -1 : done + r;
		}
		free(ents[i]);
	}
	free(ents);
	return done;
}

int main(int argc, char **argv)
{
	int total = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		int r = replay(argv[i]);

		if (r < 0)
			return 1;
		total += r;
	}
	printf("%s: %d inputs replayed, all checks held\n", argv[0], total);
	return total > 0 ? 0 : 1;
}
