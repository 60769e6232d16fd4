/*
 * snr_partial.c: see snr_partial.h. Process-wide state: one command line,
 * one policy, set once by cli/snr.c before the command runs.
 */
#include "snr_partial.h"

#include "snr_util.h"

static bool allowed, seen, refused;

void snr_partial_allow(bool allow) { allowed = allow; }
bool snr_partial_allowed(void) { return allowed; }
bool snr_partial_seen(void) { return seen; }
bool snr_partial_refused(void) { return refused; }
void snr_partial_damaged(void) { refused = true; }

int snr_partial_unusable(const char *path, const char *what, char *err, size_t errlen)
{
	refused = true;
	snr_fmt(err, errlen, "%s is cut short: %s; no part of it can be used, even with --allow-truncated", path, what);
	return -1;
}

int snr_partial_check(const char *path, const char *what, char *err, size_t errlen)
{
	if (allowed) {
		if (!seen)
			snr_warn("%s is partial: it holds %s; used as it is (--allow-truncated)", path, what);
		seen = true;
		return 0;
	}
	refused = true;
	snr_fmt(err, errlen, "%s is partial: it holds %s; give --allow-truncated to use what it holds", path, what);
	return -1;
}
