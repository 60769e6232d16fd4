/*
 * chunk_forge.c: rewrites a trace or metrics file chunk by chunk with valid
 * checksums, changing one thing, so that the checks behind the CRCs are
 * what a reader meets:
 *
 *   chunk_forge IN OUT flip K OFF    XOR 0xff into byte OFF of chunk K's payload
 *   chunk_forge IN OUT rawlen K N    chunk K's raw length field set to N
 *   chunk_forge IN OUT swap K L      chunks K and L exchanged (sequence numbers
 *                                    renumbered, so the order is what is wrong)
 *   chunk_forge IN OUT drop K        chunk K left out (renumbered)
 *   chunk_forge IN OUT delkey K NAME chunk K's payload, a JSON object, without
 *                                    its key NAME (a file an older snr wrote)
 *   chunk_forge IN OUT setkey K NAME TEXT  chunk K's JSON object with NAME set
 *                                    to TEXT, spliced in as it is (e.g. a META's
 *                                    config with duplicate keys)
 *
 * Payloads are written raw (codec 0) after decompression, except for rawlen,
 * which keeps the stored bytes and codec and forges the length.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "lib/snr_chunkfile.h"

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: chunk_forge IN OUT flip|rawlen|swap|drop|delkey|setkey K [ARG...]\n");
		return 2;
	}
	const char *in = argv[1], *out = argv[2], *op = argv[3];
	size_t k = strtoul(argv[4], NULL, 0);
	unsigned long long arg = argc > 5 && strcmp(op, "delkey") && strcmp(op, "setkey") ? strtoull(argv[5], NULL, 0) : 0;
	char magic[9] = {0}, err[700];
	FILE *f = fopen(in, "rb");
	if (!f || fread(magic, 1, 8, f) != 8) {
		fprintf(stderr, "chunk_forge: cannot read %s\n", in);
		return 1;
	}
	fclose(f);
	struct snr_chunk_file cf;
	if (snr_chunkf_open(&cf, in, magic, "file", 0, 0xffffffffu, 0xffff, err, sizeof(err))) {
		fprintf(stderr, "chunk_forge: %s\n", err);
		return 1;
	}
	if (k >= cf.nchunks || (!strcmp(op, "swap") && arg >= cf.nchunks)) {
		fprintf(stderr, "chunk_forge: %s has %zu chunks\n", in, cf.nchunks);
		return 1;
	}
	size_t *order = calloc(cf.nchunks, sizeof(*order)), n = 0;
	for (size_t i = 0; i < cf.nchunks; i++)
		if (strcmp(op, "drop") || i != k)
			order[n++] = i;
	if (!strcmp(op, "swap")) {
		order[k] = arg;
		order[arg] = k;
	}
	/* header: the input's version, its own CRC */
	struct snr_chunk_writer w;
	if (snr_chunkw_create(&w, out, magic, cf.version, err, sizeof(err))) {
		fprintf(stderr, "chunk_forge: %s\n", err);
		return 1;
	}
	for (size_t j = 0; j < n; j++) {
		const struct snr_chunk *c = &cf.chunks[order[j]];
		if (!strcmp(op, "rawlen") && order[j] == k) {
			/* the stored bytes as they are, under a forged raw length:
			 * written through a raw put of a recomputed header */
			struct snr_chunk forged = *c;
			forged.raw_len = (uint32_t)arg;
			if (snr_chunkw_put_stored(&w, forged.type, forged.codec, forged.stored, forged.stored_len,
						  forged.raw_len))
				break;
			continue;
		}
		long len = snr_chunkf_payload(&cf, c);
		if (len < 0) {
			fprintf(stderr, "chunk_forge: %s\n", cf.err);
			return 1;
		}
		if (!strcmp(op, "flip") && order[j] == k && arg < (unsigned long long)len)
			cf.raw[arg] ^= 0xff;
		bool set = !strcmp(op, "setkey") && argc > 6;
		if ((set || !strcmp(op, "delkey")) && order[j] == k && argc > 5) {
			json_t *o = json_loads((const char *)cf.raw, 0, NULL);
			/* the value goes in as text, as given (duplicate keys and all) */
			json_t *v = set ? json_string("@@SETKEY@@") : NULL;
			if (!json_is_object(o) || (set ? !v || json_object_set_new(o, argv[5], v)
						       : json_object_del(o, argv[5]))) {
				fprintf(stderr, "chunk_forge: chunk %zu is not a JSON object with \"%s\"\n", k, argv[5]);
				return 1;
			}
			char *js = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
			char *at = set ? strstr(js, "\"@@SETKEY@@\"") : NULL;
			if (at) {
				size_t head = (size_t)(at - js), vl = strlen(argv[6]);
				char *spliced = malloc(strlen(js) + vl + 1);
				memcpy(spliced, js, head);
				memcpy(spliced + head, argv[6], vl);
				strcpy(spliced + head + vl, at + 12);
				free(js);
				js = spliced;
			}
			int prc = snr_chunkw_put(&w, c->type, js, strlen(js), false);
			free(js);
			json_decref(o);
			if (prc)
				break;
			continue;
		}
		if (snr_chunkw_put(&w, c->type, cf.raw, (size_t)len, false))
			break;
	}
	int rc = snr_chunkw_close(&w);
	if (rc)
		fprintf(stderr, "chunk_forge: %s\n", w.err);
	snr_chunkf_close(&cf);
	free(order);
	return rc ? 1 : 0;
}
