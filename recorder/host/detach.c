/*
 * detach.c: the uprobe links destroyed from one thread each (detach.h).
 */
#include "detach.h"

#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "lib/snr_util.h"

struct snrh_detach {
	int n;
	struct one {
		struct bpf_link *link;
		int fd; /* a link fd, when link is NULL */
		pthread_t thread;
		bool started;
	} *v;
};

static void *destroy_one(void *arg)
{
	struct one *o = arg;
	if (o->link)
		bpf_link__destroy(o->link);
	else
		close(o->fd);
	return NULL;
}

struct snrh_detach *snrh_detach_start(struct bpf_link **links, int nlinks, int *fds, int nfds)
{
	int n = (nlinks > 0 ? nlinks : 0) + (nfds > 0 ? nfds : 0);
	if (n <= 0)
		return NULL;
	struct snrh_detach *d = snr_xcalloc(1, sizeof(*d));
	d->n = n;
	d->v = snr_xcalloc((size_t)n, sizeof(*d->v));
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024); /* a close(2) and a free */
	for (int i = 0; i < n; i++) {
		struct one *o = &d->v[i];
		if (i < nlinks) {
			o->link = links[i];
			links[i] = NULL;
			if (!o->link)
				continue;
		} else {
			o->fd = fds[i - nlinks];
			fds[i - nlinks] = -1;
			if (o->fd < 0)
				continue;
		}
		o->started = pthread_create(&o->thread, &attr, destroy_one, o) == 0;
		if (!o->started) /* out of threads: this one in turn */
			destroy_one(o);
	}
	pthread_attr_destroy(&attr);
	return d;
}

void snrh_detach_wait(struct snrh_detach *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->n; i++)
		if (d->v[i].started)
			pthread_join(d->v[i].thread, NULL);
	free(d->v);
	free(d);
}
