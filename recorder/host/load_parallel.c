/*
 * load_parallel.c: BPF skeletons loaded from one thread each
 * (load_parallel.h). libbpf allows concurrent use of distinct objects.
 */
#include "load_parallel.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <unistd.h>

#include "lib/snr_util.h"

struct one {
	struct bpf_object_skeleton *skel;
	pthread_t thread;
	bool started;
	int err; /* errno, 0 when loaded */
};

static void *load_one(void *arg)
{
	struct one *o = arg;
	o->err = bpf_object__load_skeleton(o->skel) ? (errno ? errno : EINVAL) : 0;
	return NULL;
}

int snrh_load_parallel(struct bpf_object_skeleton **skels, int n)
{
	struct one *v = snr_xcalloc((size_t)n + 1, sizeof(*v));
	/* the first in this thread, the others beside it */
	for (int i = 1; i < n; i++) {
		v[i].skel = skels[i];
		v[i].started = pthread_create(&v[i].thread, NULL, load_one, &v[i]) == 0;
	}
	v[0].skel = skels[0];
	if (n > 0)
		load_one(&v[0]);
	for (int i = 1; i < n; i++) {
		if (v[i].started)
			pthread_join(v[i].thread, NULL);
		else /* no thread to spare: in turn */
			load_one(&v[i]);
	}
	int err = 0;
	for (int i = 0; i < n && !err; i++)
		err = v[i].err;
	free(v);
	if (err) {
		errno = err;
		return -1;
	}
	return 0;
}

int snrh_share_map(struct bpf_map *m, struct bpf_map **others, int n)
{
	LIBBPF_OPTS(bpf_map_create_opts, mo, .map_flags = bpf_map__map_flags(m));
	int fd = bpf_map_create(bpf_map__type(m), bpf_map__name(m), bpf_map__key_size(m), bpf_map__value_size(m),
				bpf_map__max_entries(m), &mo);
	if (fd < 0)
		return -1;
	int rc = bpf_map__reuse_fd(m, fd);
	for (int i = 0; i < n && !rc; i++)
		rc = bpf_map__reuse_fd(others[i], fd);
	int e = errno;
	close(fd); /* each map holds its own duplicate */
	errno = e;
	return rc ? -1 : 0;
}
