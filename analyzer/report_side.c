/*
 * report_side.c: see report_side.h.
 */
#include "analyzer/report_side.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_util.h"

void an_side_files_add(struct an_side_files *s, const char *id)
{
	s->ids = snr_xrealloc(s->ids, (s->n + 1) * sizeof(*s->ids));
	s->ids[s->n++] = snr_xstrdup(id);
}

static bool kept(const struct an_side_files *s, const char *name, size_t stem)
{
	for (size_t i = 0; i < s->n; i++)
		if (strlen(s->ids[i]) == stem && !strncmp(s->ids[i], name, stem))
			return true;
	return false;
}

void an_side_files_prune(const struct an_side_files *s, const char *page)
{
	size_t n = strlen(page) + 3;
	char *dir = snr_xmalloc(n);
	snprintf(dir, n, "%s.d", page);
	DIR *d = opendir(dir);
	if (!d) {
		free(dir);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 3, ".js") || kept(s, e->d_name, len - 3))
			continue;
		size_t m = strlen(dir) + len + 2;
		char *p = snr_xmalloc(m);
		snprintf(p, m, "%s/%s", dir, e->d_name);
		unlink(p);
		free(p);
	}
	closedir(d);
	rmdir(dir); /* only when empty: anything else in it stays */
	free(dir);
}

void an_side_files_free(struct an_side_files *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->ids[i]);
	free(s->ids);
	s->ids = NULL;
	s->n = 0;
}
