/*
 * Run a harness once over each file given, or each file in each folder
 * given: the corpus and the reproducers of past crashes, under ASan and
 * UBSan, without libFuzzer (so `make test` needs no clang). A crash or a
 * sanitizer report ends the run; else it prints how many inputs it ran.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	unsigned char *data;
	long len;

	if (!f || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		fprintf(stderr, "replay: '%s': cannot read\n", path);
		if (f)
			fclose(f);
		return -1;
	}
	data = malloc((size_t)len + 1);
	if (!data || fread(data, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "replay: '%s': cannot read\n", path);
		fclose(f);
		free(data);
		return -1;
	}
	fclose(f);
	/* a copy of exactly len bytes, so reading past the input is caught as libFuzzer would */
	{
		unsigned char *exact = malloc(len ? (size_t)len : 1);

		memcpy(exact, data, (size_t)len);
		free(data);
		LLVMFuzzerTestOneInput(exact, (size_t)len);
		free(exact);
	}
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int main(int argc, char **argv)
{
	size_t ran = 0;
	int bad = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;
		struct dirent **names;
		int n;

		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "replay: '%s': not found\n", argv[i]);
			bad = 1;
			continue;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i]) != 0;
			ran++;
			continue;
		}
		if ((n = scandir(argv[i], &names, NULL, by_name)) < 0) {
			fprintf(stderr, "replay: '%s': cannot list\n", argv[i]);
			bad = 1;
			continue;
		}
		for (int k = 0; k < n; k++) {
			char path[4096];

			snprintf(path, sizeof(path), "%s/%s", argv[i], names[k]->d_name);
			if (names[k]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				bad |= run_file(path) != 0;
				ran++;
			}
			free(names[k]);
		}
		free(names);
	}
	printf("replayed %zu inputs\n", ran);
	return bad;
}
