/*
 * sweep.h: `snr sweep`, a grid of machine configurations replayed over the
 * same windows, and the engine-independent pieces that let any engine run it
 * (docs/sweep.md).
 *
 * A sweep is a folder DIR:
 *
 *   DIR/sweep.json           the plan: the windows, the axes, the base config,
 *                            the number of points and of tasks
 *   DIR/configs/pNNNN.json   point NNNN's whole machine config, as
 *                            `snr replay --config` reads it
 *   DIR/points/pNNNN-wK.json window K of point NNNN: what `snr replay
 *                            --config configs/pNNNN.json WINDOW --json` prints
 *   DIR/points/pNNNN.json    point NNNN's figures over its windows; written
 *                            last, so its presence is what "finished" means
 *   DIR/results.json, results.csv, report.html, results.txt   the gather
 *
 * Every file is written to a temporary name and renamed (lib/snr_outfile.h),
 * so a killed task leaves whole points or none. Tasks are numbered 0..T-1,
 * task t holding points [t*P, (t+1)*P): one index in, result files out,
 * whatever runs it (local processes, a Slurm array, a Kubernetes Indexed Job,
 * GNU parallel). The gather reads whatever points exist and says which are
 * missing. Nothing here schedules anything.
 */
#ifndef SNR_SWEEP_H
#define SNR_SWEEP_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* One axis of the grid: a machine-config key (dotted, as in
 * docs/machine-config.md) and its values in the order given, or the list of
 * whole config files (key "config", values their paths). */
struct sweep_axis {
	char *key;
	json_t *values; /* array of JSON scalars, or of paths for "config" */
	bool is_config_list;
};

/* ---- the grid (sweep/grid.c) ---- */

/* Parses "KEY=V1,V2,..." where each value is a JSON scalar or an integer
 * range START:END:STEP (END included). Appends to *axes. 0, or -1 with err
 * naming the argument. */
int sweep_axis_parse(const char *arg, struct sweep_axis **axes, size_t *naxes, char *err, size_t errlen);
/* "A.json,B.json,...": an axis "config" of whole config files. */
int sweep_axis_configs(const char *arg, struct sweep_axis **axes, size_t *naxes, char *err, size_t errlen);
void sweep_axes_free(struct sweep_axis *axes, size_t naxes);
/* The number of points (the product of the axes' lengths), 0 if it would
 * exceed SWEEP_MAX_POINTS. */
#define SWEEP_MAX_POINTS 1000000
size_t sweep_npoints(const struct sweep_axis *axes, size_t naxes);
/* Point i's index along each axis: the last axis varies fastest. */
void sweep_point_coords(const struct sweep_axis *axes, size_t naxes, size_t i, size_t *coord);
/* Point i's {"KEY": value, ...}, a new reference. */
json_t *sweep_point_params(const struct sweep_axis *axes, size_t naxes, size_t i);
/* Point i's whole machine config as text (malloc'd), from base_json (a
 * config object's text) or the point's config file, with every key set;
 * checked by the one validator (lib/snr_config.h). NULL with err naming
 * the point and the key. */
char *sweep_point_config(const char *base_json, const struct sweep_axis *axes, size_t naxes, size_t i, char *err,
			 size_t errlen);

/* ---- the folder (sweep/store.c) ---- */

struct sweep_plan {
	char *dir;
	json_t *plan;        /* sweep.json */
	char **windows;      /* absolute paths, in order */
	size_t nwindows;
	struct sweep_axis *axes;
	size_t naxes;
	size_t npoints, per_task, ntasks;
};

/* Writes a new sweep folder (refused if DIR exists: nothing the user has is
 * replaced): the plan and every point's config. 0, or -1 with err. */
int sweep_plan_create(const char *dir, char **windows, size_t nwindows, const char *base_json,
		      struct sweep_axis *axes, size_t naxes, size_t per_task, char *err, size_t errlen);
/* Reads DIR/sweep.json. 0, or -1 with err naming the file. */
int sweep_plan_open(struct sweep_plan *p, const char *dir, char *err, size_t errlen);
void sweep_plan_free(struct sweep_plan *p);
/* DIR/configs/pNNNN.json, DIR/points/pNNNN.json, DIR/points/pNNNN-wK.json
 * (malloc'd). */
char *sweep_config_path(const struct sweep_plan *p, size_t point);
char *sweep_point_path(const struct sweep_plan *p, size_t point);
char *sweep_window_path(const struct sweep_plan *p, size_t point, size_t window);
bool sweep_point_done(const struct sweep_plan *p, size_t point);
/* Task t's points: [*first, *end). */
void sweep_task_points(const struct sweep_plan *p, size_t task, size_t *first, size_t *end);
/* The tasks with a point not finished, ascending; returns how many (*out
 * malloc'd, NULL when none). */
size_t sweep_unfinished_tasks(const struct sweep_plan *p, size_t **out);

/* ---- one task (sweep/task.c) ---- */

/* Replays every unfinished point of task t, each window through
 * snr_replay() with the point's config file, as `snr replay --config` does;
 * writes each point's files. log: a line per point. 0, or -1 with err (a
 * point that could not be replayed; the points before it stay written). */
int sweep_run_task(const struct sweep_plan *p, size_t task, FILE *log, char *err, size_t errlen);

/* ---- the engines (sweep/local.c, sweep/slurm.c) ---- */

/* Runs the given tasks as up to jobs processes of this snr (`snr sweep
 * --task-index T DIR`), each's output in DIR/logs/task-T.log. Returns the
 * number of tasks that failed, each named on stderr. */
size_t sweep_run_local(const struct sweep_plan *p, const size_t *tasks, size_t ntasks, unsigned jobs);

struct sweep_slurm_opts {
	const char *partition; /* or NULL */
	unsigned array_limit;  /* %K: at most K tasks at once; 0 none */
	const char *time_limit;/* --time, or NULL */
	char **sbatch_args;    /* extra sbatch arguments */
	size_t nsbatch_args;
	bool wait;             /* poll until the jobs leave the queue */
};
/* Submits the given tasks as Slurm array jobs (chunked under the cluster's
 * MaxArraySize) and a gather job depending on them (afterok); records the
 * job ids in DIR/slurm.json. With o->wait, polls squeue until they are done.
 * 0, or -1 with err. */
int sweep_run_slurm(const struct sweep_plan *p, const size_t *tasks, size_t ntasks, const struct sweep_slurm_opts *o,
		    char *err, size_t errlen);
/* The Slurm name of task t from DIR/slurm.json ("JOB_INDEX"), or NULL. */
char *sweep_slurm_task_name(const struct sweep_plan *p, size_t task);
/* Cancels a gather job left pending by an earlier submission (its
 * dependency can no longer be met once a task failed). */
void sweep_slurm_cancel_stale(const struct sweep_plan *p);

/* ---- the gather (sweep/gather.c, sweep/report.c) ---- */

/* Every point's figures, the missing points and their tasks, the
 * elasticities and the best points: results.json's object (new ref). */
json_t *sweep_gather(const struct sweep_plan *p);
void sweep_print_text(FILE *f, json_t *res);
int sweep_write_csv(const char *path, json_t *res, char *err, size_t errlen);
int sweep_write_report(const char *path, json_t *res, char *err, size_t errlen);

#endif
