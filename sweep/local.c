/*
 * local.c: the local engine. Each task is a process of this snr, `snr sweep
 * --task-index T DIR`, the same command a Slurm array task or a Kubernetes
 * Indexed Job runs; at most `jobs` at once. A process per task keeps one
 * task's memory and crash to itself, and keeps the results independent of
 * -j: a point's files depend only on its config and windows.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/snr_util.h"
#include "sweep/sweep.h"

extern char **environ;

static pid_t spawn_task(const struct sweep_plan *p, size_t task)
{
	char idx[32], logp[4096];
	snprintf(idx, sizeof(idx), "%zu", task);
	snprintf(logp, sizeof(logp), "%s/logs/task-%zu.log", p->dir, task);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, logp, O_WRONLY | O_CREAT | O_TRUNC, 0666);
	posix_spawn_file_actions_adddup2(&fa, 1, 2);
	char *argv[] = {"snr", "sweep", "--task-index", idx, p->dir, NULL};
	pid_t pid;
	int e = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (e) {
		snr_err("sweep: task %zu: cannot start: %s", task, strerror(e));
		return -1;
	}
	return pid;
}

size_t sweep_run_local(const struct sweep_plan *p, const size_t *tasks, size_t ntasks, unsigned jobs)
{
	if (jobs == 0)
		jobs = 1;
	pid_t *pids = snr_xcalloc(jobs, sizeof(*pids));
	size_t *which = snr_xcalloc(jobs, sizeof(*which));
	size_t next = 0, running = 0, failed = 0;
	while (next < ntasks || running) {
		while (next < ntasks && running < jobs) {
			unsigned slot = 0;
			while (pids[slot])
				slot++;
			pid_t pid = spawn_task(p, tasks[next]);
			if (pid < 0) {
				failed++;
				next++;
				continue;
			}
			pids[slot] = pid;
			which[slot] = tasks[next++];
			running++;
		}
		if (!running)
			break;
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (unsigned s = 0; s < jobs; s++) {
			if (pids[s] != pid)
				continue;
			pids[s] = 0;
			running--;
			if (!WIFEXITED(status) || WEXITSTATUS(status)) {
				char how[64];
				if (WIFSIGNALED(status))
					snprintf(how, sizeof(how), "killed by signal %d", WTERMSIG(status));
				else
					snprintf(how, sizeof(how), "exit status %d", WEXITSTATUS(status));
				snr_err("sweep: task %zu failed (%s); its log is %s/logs/task-%zu.log", which[s], how,
					p->dir, which[s]);
				failed++;
			}
		}
	}
	free(pids);
	free(which);
	return failed;
}
