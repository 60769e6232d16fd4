/*
 * snr_chunkstream.h: a chunk file (lib/snr_chunkfile.h's format) read
 * front to back through a buffer, one chunk at a time, with the same checks
 * as snr_chunkf_open (magic, version, every header's and payload's CRC,
 * sequence numbers, types) as it goes. Its memory is the buffer and the
 * largest chunk, not the file: snr_trace_finish reads a recording's
 * journal back with it, which holds a chunk per instruction (a 100M
 * window's journal is gigabytes and 10^8 chunks, which snr_chunkf_open
 * would map and index whole).
 */
#ifndef SNR_CHUNKSTREAM_H
#define SNR_CHUNKSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snr_chunk_stream {
	int fd;
	char *path;
	uint8_t *buf; /* read buffer: bytes [pos, len) are the file's from offset off on */
	size_t cap, pos, len;
	uint64_t off;
	bool eof;
	uint32_t seq; /* the next chunk's */
	uint32_t version;
	uint8_t *raw; /* a compressed chunk's payload, decompressed */
	size_t raw_cap;
	bool truncated; /* the file ended inside a chunk (or right after its header) */
	char err[600];
};

/* Opens path and checks its header (magic, version min..max); `what` names
 * the kind of file in messages. 0, or -1 with err set. */
int snr_chunks_open(struct snr_chunk_stream *s, const char *path, const char magic[8], const char *what,
		    uint32_t min_version, uint32_t max_version, char *err, size_t errlen);
/* The next chunk: 1 with *type, *payload (valid until the next call) and
 * *len; 0 at the end of the file (s->truncated if it ended inside a
 * chunk); -1 on a corrupt chunk or a read error (s->err names the file,
 * the chunk and its offset). Types 1..max_type are accepted. */
int snr_chunks_next(struct snr_chunk_stream *s, unsigned max_type, uint16_t *type, const uint8_t **payload,
		    size_t *len);
void snr_chunks_close(struct snr_chunk_stream *s);

#endif
