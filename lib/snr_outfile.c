/*
 * snr_outfile.c: see snr_outfile.h. The temporary file gets the mode an
 * ordinary open(O_CREAT, 0644) would have given (0666 less the umask's
 * bits, as 0644 under the usual 022), not mkstemp's 0600.
 *
 * The temporary is ".NAME.PID.XXXXXX": the pid of the process writing it.
 * SIGINT and SIGTERM (where the process left them to their default action)
 * remove every temporary still open before the process dies; after a
 * SIGKILL, the next write of the same output removes the temporaries of it
 * whose process no longer exists.
 */
#include "snr_outfile.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snr_output.h"
#include "snr_util.h"

#define OUT_BUF (64u << 10)

static mode_t file_mode(void)
{
	mode_t mask = umask(0);
	umask(mask);
	return 0644 & ~mask;
}

/* ---- the temporaries a signal removes ------------------------------------ */

/* Slots hold the paths of the temporaries open now; the handler reads them
 * (a path is complete before it is stored). Threads (a pod replay's metrics
 * files, replayer/pod_threads.h) take and free slots with atomic exchanges,
 * so two never take the same one. */
#define LIVE_MAX 64
static char *live[LIVE_MAX];
static volatile sig_atomic_t handlers_set;

static void on_fatal_signal(int sig)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		char *t = __atomic_load_n(&live[i], __ATOMIC_ACQUIRE);
		if (t)
			unlink(t);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* SIGINT and SIGTERM get the handler only where nothing else handles
 * them (snr record's own handler ends a window cleanly: it is kept). */
static void set_handlers(void)
{
	if (handlers_set)
		return;
	handlers_set = 1;
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction old;
		if (sigaction(sigs[i], NULL, &old) || old.sa_handler != SIG_DFL || (old.sa_flags & SA_SIGINFO))
			continue;
		struct sigaction sa = {.sa_handler = on_fatal_signal};
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

static void live_add(char *tmp)
{
	set_handlers();
	for (int i = 0; i < LIVE_MAX; i++) {
		char *none = NULL;
		if (__atomic_compare_exchange_n(&live[i], &none, tmp, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			return;
	}
	/* more open at once than slots: this one is not removed on a signal */
}

static void live_remove(const char *tmp)
{
	for (int i = 0; i < LIVE_MAX; i++) {
		char *t = (char *)tmp;
		__atomic_compare_exchange_n(&live[i], &t, NULL, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
	}
}

/* Removes dir's ".BASE.PID.XXXXXX" whose PID is not a running process:
 * the temporaries of this output that a killed snr left. */
static void remove_stale(const char *dir, const char *base)
{
	DIR *d = opendir(*dir ? dir : ".");
	if (!d)
		return;
	size_t blen = strlen(base);
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *n = e->d_name;
		if (n[0] != '.' || strncmp(n + 1, base, blen) || n[1 + blen] != '.')
			continue;
		const char *p = n + 2 + blen;
		char *end;
		errno = 0;
		long pid = strtol(p, &end, 10);
		if (errno || end == p || *end != '.' || strlen(end + 1) != 6 || pid <= 0 || pid == (long)getpid())
			continue;
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue; /* alive (or not ours to ask about) */
		size_t n2 = strlen(dir) + strlen(n) + 1;
		char *full = snr_xmalloc(n2);
		snprintf(full, n2, "%s%s", dir, n);
		unlink(full);
		free(full);
	}
	closedir(d);
}

static int open_checked(struct snr_outfile *o, const char *path, bool replace, char *err, size_t errlen)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (snr_output_check(path, replace, err, errlen))
		return -1;
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
	char *dir = snr_xmalloc(dirlen + 1);
	memcpy(dir, path, dirlen);
	dir[dirlen] = 0;
	remove_stale(dir, base);
	free(dir);
	size_t n = strlen(path) + 40;
	o->tmp = snr_xmalloc(n);
	snprintf(o->tmp, n, "%.*s.%s.%ld.XXXXXX", (int)dirlen, path, base, (long)getpid());
	o->fd = mkostemp(o->tmp, O_CLOEXEC);
	if (o->fd < 0) {
		snr_fmt(err, errlen, "%s: cannot create a file in its folder: %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	live_add(o->tmp);
	if (fchmod(o->fd, file_mode()) < 0) {
		snr_fmt(err, errlen, "%s: %s", o->tmp, strerror(errno));
		snr_outfile_discard(o);
		return -1;
	}
	o->path = snr_xstrdup(path);
	return 0;
}

int snr_outfile_open(struct snr_outfile *o, const char *path, char *err, size_t errlen)
{
	return open_checked(o, path, false, err, errlen);
}

int snr_outfile_open_part(struct snr_outfile *o, const char *path, char *err, size_t errlen)
{
	return open_checked(o, path, true, err, errlen);
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
	if (o->tmp)
		live_remove(o->tmp);
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
}

int snr_outfile_commit(struct snr_outfile *o, char *err, size_t errlen)
{
	int rc = close_file(o, true);
	const char *in;
	if (rc)
		snr_fmt(err, errlen, "%s: writing failed: %s", o->path, strerror(errno));
	else if (o->tmp && (in = snr_output_is_input(o->path))) {
		/* an input read since the open: still never replaced */
		snr_fmt(err, errlen, "%s is the input %s: writing the output there would destroy it (refused even "
				     "with --force); choose another output path", o->path, in);
		rc = -1;
	} else if (o->tmp && rename(o->tmp, o->path) < 0) {
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

static FILE *fopen_checked(struct snr_outfile *o, const char *path, bool replace, char *err, size_t errlen)
{
	if (open_checked(o, path, replace, err, errlen))
		return NULL;
	FILE *f = snr_outfile_stdio(o);
	if (!f) {
		snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
		snr_outfile_discard(o);
	}
	return f;
}

FILE *snr_outfile_fopen(struct snr_outfile *o, const char *path, char *err, size_t errlen)
{
	return fopen_checked(o, path, false, err, errlen);
}

FILE *snr_outfile_fopen_part(struct snr_outfile *o, const char *path, char *err, size_t errlen)
{
	return fopen_checked(o, path, true, err, errlen);
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

static int write_text(const char *path, bool replace, const char *text, size_t len, char *err, size_t errlen)
{
	struct snr_outfile o;
	if (open_checked(&o, path, replace, err, errlen))
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

int snr_outfile_write_text(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
	return write_text(path, false, text, len, err, errlen);
}

int snr_outfile_write_text_part(const char *path, const char *text, size_t len, char *err, size_t errlen)
{
	return write_text(path, true, text, len, err, errlen);
}
