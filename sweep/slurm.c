/*
 * slurm.c: the Slurm engine. Slurm schedules; this file only submits, with
 * the cluster's own commands: the tasks as array jobs of the readable script
 * sweep/slurm_array.sh.in (embedded at build time, written into DIR/slurm/),
 * chunked so that no array index reaches the cluster's MaxArraySize (read
 * from `scontrol show config`), then the gather (sweep/slurm_gather.sh.in)
 * with --dependency=afterok on every chunk. DIR/slurm.json records each
 * submission's job ids, so that a missing task is named as Slurm knows it
 * (JOB_INDEX). With --wait, squeue is polled until the sweep's jobs have
 * left the queue; a gather whose dependency can never be met (a task failed
 * or was cancelled) is cancelled then, and the caller names the tasks.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/snr_outfile.h"
#include "lib/snr_util.h"
#include "sweep/sweep.h"

extern char **environ;
extern const char snr_slurm_array_sh[], snr_slurm_gather_sh[];
extern const unsigned long snr_slurm_array_sh_len, snr_slurm_gather_sh_len;

/* Runs argv (found on PATH), its stdout and stderr into out. The exit
 * status, or -1 when it could not start (out says why). */
static int run_capture(char *const *argv, char *out, size_t outlen)
{
	int pfd[2];
	out[0] = '\0';
	if (pipe(pfd)) {
		snr_fmt(out, outlen, "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
	posix_spawn_file_actions_addclose(&fa, pfd[0]);
	pid_t pid;
	int e = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(pfd[1]);
	if (e) {
		close(pfd[0]);
		snr_fmt(out, outlen, "%s: %s", argv[0], strerror(e));
		return -1;
	}
	size_t n = 0;
	for (;;) {
		char buf[4096];
		ssize_t r = read(pfd[0], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		size_t take = (size_t)r < outlen - 1 - n ? (size_t)r : outlen - 1 - n;
		memcpy(out + n, buf, take);
		n += take;
	}
	out[n] = '\0';
	close(pfd[0]);
	int status;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* 'text' with ' as '\'' : a path as one shell word */
static char *shell_quote(const char *s)
{
	size_t n = 3;
	for (const char *c = s; *c; c++)
		n += *c == '\'' ? 4 : 1;
	char *q = snr_xmalloc(n), *o = q;
	*o++ = '\'';
	for (const char *c = s; *c; c++) {
		if (*c == '\'') {
			memcpy(o, "'\\''", 4);
			o += 4;
		} else {
			*o++ = *c;
		}
	}
	*o++ = '\'';
	*o = '\0';
	return q;
}

/* The template with @SNR@ and @DIR@ replaced by shell words. */
static char *fill(const char *tpl, size_t len, const char *snr, const char *dir)
{
	char *qs = shell_quote(snr), *qd = shell_quote(dir);
	size_t cap = len + 16 * (strlen(qs) + strlen(qd)) + 1, n = 0;
	char *out = snr_xmalloc(cap);
	for (size_t i = 0; i < len;) {
		const char *rep = !strncmp(tpl + i, "@SNR@", 5) ? qs : !strncmp(tpl + i, "@DIR@", 5) ? qd : NULL;
		if (rep) {
			size_t rl = strlen(rep);
			if (n + rl + 1 > cap)
				out = snr_xrealloc(out, cap = 2 * (n + rl + 1));
			memcpy(out + n, rep, rl);
			n += rl;
			i += 5;
		} else {
			if (n + 2 > cap)
				out = snr_xrealloc(out, cap *= 2);
			out[n++] = tpl[i++];
		}
	}
	out[n] = '\0';
	free(qs);
	free(qd);
	return out;
}

static int write_script(const char *path, const char *text, char *err, size_t errlen)
{
	if (snr_outfile_write_text(path, text, strlen(text), err, errlen))
		return -1;
	if (chmod(path, 0755)) {
		snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

static unsigned max_array_size(void)
{
	char out[65536];
	char *argv[] = {"scontrol", "show", "config", NULL};
	if (run_capture(argv, out, sizeof(out)))
		return 1001; /* Slurm's default */
	const char *l = strstr(out, "MaxArraySize");
	unsigned v;
	if (l && sscanf(strchr(l, '=') ? strchr(l, '=') + 1 : "", "%u", &v) == 1 && v > 0)
		return v;
	return 1001;
}

/* sbatch ... SCRIPT [ARG]: the job id, or NULL with err. */
static char *sbatch(const struct sweep_slurm_opts *o, const char *array, const char *dependency,
		    const char *output, const char *script, const char *arg, char *err, size_t errlen)
{
	char *argv[32 + o->nsbatch_args];
	size_t n = 0;
	char arr[64], dep[4096], out[4096], part[600], tl[128];
	argv[n++] = "sbatch";
	argv[n++] = "--parsable";
	argv[n++] = "--job-name=snr-sweep";
	snprintf(out, sizeof(out), "--output=%s", output);
	argv[n++] = out;
	if (array) {
		if (o->array_limit)
			snprintf(arr, sizeof(arr), "--array=%s%%%u", array, o->array_limit);
		else
			snprintf(arr, sizeof(arr), "--array=%s", array);
		argv[n++] = arr;
	}
	if (dependency) {
		snprintf(dep, sizeof(dep), "--dependency=afterok:%s", dependency);
		argv[n++] = dep;
	}
	if (o->partition) {
		snprintf(part, sizeof(part), "--partition=%s", o->partition);
		argv[n++] = part;
	}
	if (o->time_limit) {
		snprintf(tl, sizeof(tl), "--time=%s", o->time_limit);
		argv[n++] = tl;
	}
	for (size_t i = 0; i < o->nsbatch_args; i++)
		argv[n++] = o->sbatch_args[i];
	argv[n++] = (char *)script;
	if (arg)
		argv[n++] = (char *)arg;
	argv[n] = NULL;
	char res[8192];
	int rc = run_capture(argv, res, sizeof(res));
	res[strcspn(res, "\n")] = '\0';
	if (rc < 0) {
		snr_fmt(err, errlen, "cannot run %s (is Slurm's client installed, and on PATH?)", res);
		return NULL;
	}
	if (rc) {
		snr_fmt(err, errlen, "sbatch failed (exit status %d): %s", rc, res);
		return NULL;
	}
	res[strcspn(res, ";")] = '\0'; /* "JOB;CLUSTER" */
	if (!res[0] || strspn(res, "0123456789") != strlen(res)) {
		snr_fmt(err, errlen, "sbatch gave no job id: '%s'", res);
		return NULL;
	}
	return snr_xstrdup(res);
}

static char *slurm_json_path(const struct sweep_plan *p)
{
	size_t n = strlen(p->dir) + 16;
	char *s = snr_xmalloc(n);
	snprintf(s, n, "%s/slurm.json", p->dir);
	return s;
}

char *sweep_slurm_task_name(const struct sweep_plan *p, size_t task)
{
	char *path = slurm_json_path(p);
	json_t *j = json_load_file(path, 0, NULL);
	free(path);
	char *name = NULL;
	json_t *subs = json_object_get(j, "submissions");
	for (size_t s = json_array_size(subs); s-- > 0 && !name;) {
		size_t c;
		json_t *ch;
		json_array_foreach(json_object_get(json_array_get(subs, s), "chunks"), c, ch) {
			size_t i;
			json_t *t;
			json_array_foreach(json_object_get(ch, "tasks"), i, t)
				if (json_integer_value(t) == (json_int_t)task && !name) {
					char b[128];
					snprintf(b, sizeof(b), "%s_%zu", json_string_value(json_object_get(ch, "job")), i);
					name = snr_xstrdup(b);
				}
		}
	}
	json_decref(j);
	return name;
}

void sweep_slurm_cancel_stale(const struct sweep_plan *p)
{
	char *path = slurm_json_path(p);
	json_t *j = json_load_file(path, 0, NULL);
	free(path);
	json_t *subs = json_object_get(j, "submissions");
	json_t *last = json_array_get(subs, json_array_size(subs) - 1);
	const char *g = json_string_value(json_object_get(last, "gather"));
	if (g) {
		char out[1024];
		char *argv[] = {"scancel", (char *)g, NULL};
		run_capture(argv, out, sizeof(out));
	}
	json_decref(j);
}

/* Polls squeue until none of the jobs is queued or running, except a gather
 * job pending on a dependency that can never be met: that one is cancelled. */
static int wait_jobs(json_t *sub, char *err, size_t errlen)
{
	const char *gather = json_string_value(json_object_get(sub, "gather"));
	unsigned gone = 0; /* polls in a row that found none of the jobs */
	for (unsigned polls = 0;; polls++) {
		char out[1 << 16];
		char *argv[] = {"squeue", "-h", "-o", "%F %i %T %r", NULL};
		int rc = run_capture(argv, out, sizeof(out));
		if (rc) {
			snr_fmt(err, errlen, "squeue failed (%d): %.300s", rc, out);
			return -1;
		}
		bool ours = false, stuck = false;
		for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
			char job[64], id[128], state[64], reason[256] = "";
			if (sscanf(line, "%63s %127s %63s %255s", job, id, state, reason) < 3)
				continue;
			size_t c;
			json_t *ch;
			json_array_foreach(json_object_get(sub, "chunks"), c, ch)
				ours |= !strcmp(job, json_string_value(json_object_get(ch, "job")));
			if (gather && !strcmp(job, gather)) {
				if (strstr(reason, "DependencyNeverSatisfied"))
					stuck = true;
				else
					ours = true;
			}
		}
		/* twice in a row: a job between states is never taken for gone */
		if (!ours && ++gone < 2) {
			struct timespec ts = {0, 200000000L};
			nanosleep(&ts, NULL);
			continue;
		}
		if (ours)
			gone = 0;
		if (!ours) {
			if (stuck) {
				char o2[1024];
				char *cargv[] = {"scancel", (char *)gather, NULL};
				run_capture(cargv, o2, sizeof(o2));
			}
			return 0;
		}
		struct timespec ts = {0, polls < 20 ? 100000000L : 500000000L};
		nanosleep(&ts, NULL);
	}
}

int sweep_run_slurm(const struct sweep_plan *p, const size_t *tasks, size_t ntasks, const struct sweep_slurm_opts *o,
		    char *err, size_t errlen)
{
	char self[4096];
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0) {
		snr_fmt(err, errlen, "cannot find this snr's path: %s", strerror(errno));
		return -1;
	}
	self[sl] = '\0';
	char *absdir = realpath(p->dir, NULL);
	if (!absdir) {
		snr_fmt(err, errlen, "%s: %s", p->dir, strerror(errno));
		return -1;
	}
	int rc = -1;
	char sdir[4096], arr_sh[4200], gat_sh[4200], logs[4200], glog[4200];
	snprintf(sdir, sizeof(sdir), "%s/slurm", absdir);
	if (mkdir(sdir, 0777) && errno != EEXIST) {
		snr_fmt(err, errlen, "%s: %s", sdir, strerror(errno));
		goto out;
	}
	snprintf(arr_sh, sizeof(arr_sh), "%s/array.sh", sdir);
	snprintf(gat_sh, sizeof(gat_sh), "%s/gather.sh", sdir);
	snprintf(logs, sizeof(logs), "%s/logs/slurm-%%A_%%a.log", absdir);
	snprintf(glog, sizeof(glog), "%s/logs/slurm-gather-%%j.log", absdir);
	char *a = fill(snr_slurm_array_sh, snr_slurm_array_sh_len, self, absdir);
	char *g = fill(snr_slurm_gather_sh, snr_slurm_gather_sh_len, self, absdir);
	int wrc = write_script(arr_sh, a, err, errlen) || write_script(gat_sh, g, err, errlen);
	free(a);
	free(g);
	if (wrc)
		goto out;

	char *sjp = slurm_json_path(p);
	json_t *sj = json_load_file(sjp, 0, NULL);
	if (!json_is_object(sj)) {
		json_decref(sj);
		sj = json_object();
		json_object_set_new(sj, "submissions", json_array());
	}
	json_t *subs = json_object_get(sj, "submissions");
	json_t *sub = json_object(), *chunks = json_array();
	json_object_set_new(sub, "chunks", chunks);
	unsigned maxarr = max_array_size();
	size_t nsub = json_array_size(subs);
	char deps[8192] = "";
	for (size_t c0 = 0, ci = 0; c0 < ntasks; c0 += maxarr, ci++) {
		size_t k = ntasks - c0 < maxarr ? ntasks - c0 : maxarr;
		char tf[4300];
		snprintf(tf, sizeof(tf), "%s/submit%zu-chunk%zu.tasks", sdir, nsub, ci);
		size_t cap = 24 * k + 1, used = 0;
		char *lines = snr_xmalloc(cap);
		json_t *tl = json_array();
		for (size_t i = 0; i < k; i++) {
			used += (size_t)snprintf(lines + used, cap - used, "%zu\n", tasks[c0 + i]);
			json_array_append_new(tl, json_integer((json_int_t)tasks[c0 + i]));
		}
		int trc = snr_outfile_write_text(tf, lines, used, err, errlen);
		free(lines);
		if (trc) {
			json_decref(tl);
			goto record;
		}
		char range[64];
		snprintf(range, sizeof(range), "0-%zu", k - 1);
		char *job = sbatch(o, range, NULL, logs, arr_sh, tf, err, errlen);
		if (!job) {
			json_decref(tl);
			goto record;
		}
		json_t *ch = json_object();
		json_object_set_new(ch, "job", json_string(job));
		json_object_set_new(ch, "tasks", tl);
		json_array_append_new(chunks, ch);
		size_t dl = strlen(deps);
		snprintf(deps + dl, sizeof(deps) - dl, "%s%s", dl ? ":" : "", job);
		printf("submitted Slurm array job %s: tasks", job);
		for (size_t i = 0; i < k; i++)
			printf(" %zu", tasks[c0 + i]);
		printf(" (array indices 0-%zu)\n", k - 1);
		free(job);
	}
	{
		char *job = sbatch(o, NULL, deps, glog, gat_sh, NULL, err, errlen);
		if (!job)
			goto record;
		json_object_set_new(sub, "gather", json_string(job));
		printf("submitted Slurm gather job %s (afterok:%s)\n", job, deps);
		free(job);
	}
	fflush(stdout);
	rc = 0;
record:
	json_array_append_new(subs, sub);
	{
		char *t = json_dumps(sj, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		char werr[600];
		if (snr_outfile_write_text(sjp, t, strlen(t), werr, sizeof(werr)) && !rc) {
			snr_fmt(err, errlen, "%s", werr);
			rc = -1;
		}
		free(t);
	}
	if (!rc && o->wait)
		rc = wait_jobs(sub, err, errlen);
	json_decref(sj);
	free(sjp);
out:
	free(absdir);
	return rc;
}
