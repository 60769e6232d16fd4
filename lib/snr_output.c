/*
 * snr_output.c: see snr_output.h. The inputs are a short list (a command
 * reads a handful of files), searched linearly.
 */
#include "snr_output.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snr_util.h"

struct input {
	char *name;     /* as the reader named it */
	char *resolved; /* realpath, or the resolved folder + name when it does not exist */
	bool exists;
	dev_t dev;
	ino_t ino;
};

static struct input *inputs;
static size_t ninputs;
static bool keep_existing, guard_inputs;

void snr_output_guard_inputs(bool on) { guard_inputs = on; }

void snr_output_keep_existing(bool keep) { keep_existing = keep; }

bool snr_output_keeps_existing(void) { return keep_existing; }

/* The absolute path of path with every symbolic link and "..", also when
 * the file itself does not exist (its folder resolved, its name added);
 * NULL when not even the folder resolves. */
static char *resolve(const char *path)
{
	char *r = realpath(path, NULL);
	if (r)
		return r;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char *dir = slash ? snr_xstrdup(path) : snr_xstrdup(".");
	if (slash)
		dir[slash == path ? 1 : slash - path] = 0;
	char *rd = realpath(dir, NULL);
	free(dir);
	if (!rd || !*base) {
		free(rd);
		return NULL;
	}
	size_t n = strlen(rd) + strlen(base) + 2;
	char *out = snr_xmalloc(n);
	snprintf(out, n, "%s%s%s", rd, strcmp(rd, "/") ? "/" : "", base);
	free(rd);
	return out;
}

int snr_output_preflight(const char *who, const char *out, char *const *files, int nfiles,
			 const char *const *named, size_t nnamed)
{
	for (int i = 0; i < nfiles; i++)
		snr_output_input(files[i]);
	for (size_t i = 0; i < nnamed; i++)
		snr_output_input(named[i]);
	char err[1024];
	if (!out || !snr_output_check(out, false, err, sizeof(err)))
		return 0;
	snr_err("%s: -o: %s", who, err);
	return -1;
}

void snr_output_input(const char *path)
{
	if (!path || !*path || !strcmp(path, "-"))
		return;
	struct stat st;
	bool exists = stat(path, &st) == 0;
	for (size_t i = 0; i < ninputs; i++)
		if (exists ? inputs[i].exists && inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino
			   : !strcmp(inputs[i].name, path))
			return;
	inputs = snr_xrealloc(inputs, (ninputs + 1) * sizeof(*inputs));
	struct input *in = &inputs[ninputs++];
	in->name = snr_xstrdup(path);
	in->resolved = resolve(path);
	in->exists = exists;
	in->dev = exists ? st.st_dev : 0;
	in->ino = exists ? st.st_ino : 0;
}

void snr_output_input_program(const char *argv0)
{
	if (!argv0 || !*argv0)
		return;
	if (strchr(argv0, '/')) {
		snr_output_input(argv0);
		return;
	}
	const char *path = getenv("PATH");
	if (!path)
		path = "/bin:/usr/bin";
	while (*path) {
		const char *colon = strchr(path, ':');
		size_t dlen = colon ? (size_t)(colon - path) : strlen(path);
		size_t n = dlen + strlen(argv0) + 3;
		char *p = snr_xmalloc(n);
		snprintf(p, n, "%.*s/%s", (int)dlen, dlen ? path : ".", argv0);
		if (!dlen)
			snprintf(p, n, "./%s", argv0);
		bool found = access(p, X_OK) == 0;
		if (found)
			snr_output_input(p);
		free(p);
		if (found || !colon)
			return;
		path = colon + 1;
	}
}

/* An input read and since removed (a recording's journal) freed its inode,
 * which a new file may get: it is the input only while the input's own
 * path still leads to that inode. */
static bool still_there(const struct input *in)
{
	struct stat st;
	const char *p = in->resolved ? in->resolved : in->name;
	return stat(p, &st) == 0 && st.st_dev == in->dev && st.st_ino == in->ino;
}

const char *snr_output_is_input(const char *path)
{
	if (!guard_inputs)
		return NULL;
	struct stat st;
	bool exists = stat(path, &st) == 0;
	char *resolved = NULL;
	const char *hit = NULL;
	for (size_t i = 0; i < ninputs && !hit; i++) {
		if (exists && inputs[i].exists) {
			if (inputs[i].dev == st.st_dev && inputs[i].ino == st.st_ino && still_there(&inputs[i]))
				hit = inputs[i].name;
			continue;
		}
		/* one side does not exist (now): compare where they resolve */
		if (!resolved)
			resolved = resolve(path);
		if (!strcmp(inputs[i].name, path) ||
		    (resolved && inputs[i].resolved && !strcmp(inputs[i].resolved, resolved)))
			hit = inputs[i].name;
	}
	free(resolved);
	return hit;
}

int snr_output_check(const char *path, bool replace, char *err, size_t errlen)
{
	if (!strcmp(path, "-"))
		return 0;
	struct stat st;
	bool exists = stat(path, &st) == 0;
	if (exists && !S_ISREG(st.st_mode))
		return 0; /* /dev/stdout, a FIFO: written directly, nothing replaced */
	const char *in = snr_output_is_input(path);
	if (in) {
		if (!strcmp(in, path))
			snr_fmt(err, errlen, "%s is an input of this command: writing the output there would destroy it "
					     "(refused even with --force); choose another output path", path);
		else
			snr_fmt(err, errlen, "%s is the input %s (the same file): writing the output there would destroy "
					     "it (refused even with --force); choose another output path", path, in);
		return -1;
	}
	if (exists && keep_existing && !replace) {
		snr_fmt(err, errlen, "%s exists: snr does not replace a file unless given --force", path);
		return -1;
	}
	return 0;
}

void snr_output_reset(void)
{
	for (size_t i = 0; i < ninputs; i++) {
		free(inputs[i].name);
		free(inputs[i].resolved);
	}
	free(inputs);
	inputs = NULL;
	ninputs = 0;
}
