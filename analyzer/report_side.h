/*
 * report_side.h: the files beside a report page. A page whose full data
 * is over --inline-max keeps the rest in PAGE.d/ID.js; when the page is
 * written again, the side files it no longer names (a smaller window, a
 * larger --inline-max) are removed, so that PAGE.d holds what the page
 * needs and nothing stale.
 */
#ifndef AN_REPORT_SIDE_H
#define AN_REPORT_SIDE_H

#include <stddef.h>

struct an_side_files {
	char **ids; /* the side files this page wrote, by ID */
	size_t n;
};

void an_side_files_add(struct an_side_files *s, const char *id);
/* After page was written: removes PAGE.d/ID.js for every ID not in s, and
 * PAGE.d itself when that leaves it empty (files of other names stay). */
void an_side_files_prune(const struct an_side_files *s, const char *page);
void an_side_files_free(struct an_side_files *s);

#endif
