/*
 * snr_outfile.c: see snr_outfile.h. The temporary file gets the mode an
 * ordinary open(O_CREAT, 0644) would have given (0666 less the umask's
 * bits, as 0644 under the usual 022), not mkstemp's 0600.
 */
#include "snr_outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snr_util.h"

#define OUT_BUF (64u << 10)

static mode_t file_mode(void)
{
	mode_t mask = umask(0);
	umask(mask);
	return 0644 & ~mask;
}

int snr_outfile_open(struct snr_outfile *o, const char *path, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	struct stat st;
	if (!strcmp(path, "-") || (stat(path, &st) == 0 && !S_ISREG(st.st_mode))) {
		o->fd = !strcmp(path, "-") ? dup(STDOUT_FILENO) : open(path, O_WRONLY | O_CLOEXEC);
		if (o->fd < 0) {
			snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
			return -1;
		}
		o->path = snr_xstrdup(path);
		return 0;
	}
	const char *slash = strrchr(path, '/');
	size_t dirlen = slash ? (size_t)(slash - path) + 1 : 0;
	const char *base = path + dirlen;
	if (!*base) {
		snr_fmt(err, errlen, "%s: is a folder, not a file name", path);
		return -1;
	}
	size_t n = strlen(path) + 16;
	o->tmp = snr_xmalloc(n);
	snprintf(o->tmp, n, "%.*s.%s.XXXXXX", (int)dirlen, path, base);
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		snr_fmt(err, errlen, "%s: cannot create a file in its folder: %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	if (fchmod(o->fd, file_mode()) < 0) {
		snr_fmt(err, errlen, "%s: %s", o->tmp, strerror(errno));
		snr_outfile_discard(o);
		return -1;
	}
	o->path = snr_xstrdup(path);
	return 0;
}

FILE *snr_outfile_stdio(struct snr_outfile *o)
{
	if (!o->fp) {
		o->fp = fdopen(o->fd, "w");
		if (o->fp) {
			o->fbuf = snr_setvbuf(o->fp, OUT_BUF);
		}
	}
	return o->fp;
}

static int close_file(struct snr_outfile *o, bool sync)
{
	int rc = 0;
	if (o->fp) {
		if (fflush(o->fp) || ferror(o->fp))
			rc = -1;
		if (!rc && sync && o->tmp && fsync(fileno(o->fp)) < 0)
			rc = -1;
		if (fclose(o->fp))
			rc = -1;
	} else if (o->fd >= 0) {
		if (sync && o->tmp && fsync(o->fd) < 0)
			rc = -1;
		if (close(o->fd) < 0)
			rc = -1;
	}
	o->fp = NULL;
	o->fd = -1;
	free(o->fbuf);
	o->fbuf = NULL;
	return rc;
}

static void release(struct snr_outfile *o)
{
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
}

int snr_outfile_commit(struct snr_outfile *o, char *err, size_t errlen)
{
	int rc = close_file(o, true);
	if (rc)
		snr_fmt(err, errlen, "%s: writing failed: %s", o->path, strerror(errno));
	else if (o->tmp && rename(o->tmp, o->path) < 0) {
		snr_fmt(err, errlen, "%s: renaming %s into place: %s", o->path, o->tmp, strerror(errno));
		rc = -1;
	}
	if (rc && o->tmp)
		unlink(o->tmp);
	release(o);
	return rc;
}

void snr_outfile_discard(struct snr_outfile *o)
{
	close_file(o, false);
	if (o->tmp)
		unlink(o->tmp);
	release(o);
}

FILE *snr_outfile_fopen(struct snr_outfile *o, const char *path, char *err, size_t errlen)
{
	if (snr_outfile_open(o, path, err, errlen))
		return NULL;
	FILE *f = snr_outfile_stdio(o);
	if (!f) {
		snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
		snr_outfile_discard(o);
	}
	return f;
}

int snr_outfile_close(struct snr_outfile *o, bool ok, char *err, size_t errlen)
{
	if (!ok) {
		snr_fmt(err, errlen, "%s was not written", o->path);
		snr_outfile_discard(o);
		return -1;
	}
	return snr_outfile_commit(o, err, errlen);
}

int snr_outfile_write_text(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
	struct snr_outfile o;
	if (snr_outfile_open(&o, path, err, errlen))
		return -1;
	const char *p = text;
	while (len) {
		ssize_t r = write(o.fd, p, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			snr_fmt(err, errlen, "%s: write failed: %s", path, r < 0 ? strerror(errno) : "no space");
			snr_outfile_discard(&o);
			return -1;
		}
		p += r;
		len -= (size_t)r;
	}
	return snr_outfile_commit(&o, err, errlen);
}
