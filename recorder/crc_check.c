/*
 * crc_check.c: the target's CRCs of a stride's written ranges, asked
 * together (recorder/crc_check.h).
 *
 * At a checkpoint the recorder checks every range the stride wrote twice by
 * the target's CRC (qCRC): before the target runs to the checkpoint (the
 * undo log's bytes, for a restore) and after (the simulation's bytes). On
 * the 10M serving window that is about 16 ranges a checkpoint, each a round
 * trip of its own: a send, a wait for the reply and a receive on both ends,
 * the target's side woken for each. Over snr device's rsp connection the
 * requests are sent together and the replies read after
 * (snr_dbg_rsp_crc_many): one round trip for them all.
 */
#include "recorder/crc_check.h"

#include <stdlib.h>

#include "lib/snr_crc.h"
#include "lib/snr_util.h"

int crc_check(struct rec *r, const struct snr_trace_mem *m, size_t n, bool *same, const char *what, char *err,
	      size_t errlen)
{
	size_t nask = 0;
	for (size_t k = 0; k < n; k++)
		nask += same[k];
	if (!nask)
		return 0;
	uint64_t *addr = snr_xmalloc(nask * sizeof(*addr));
	size_t *len = snr_xmalloc(nask * sizeof(*len)), *which = snr_xmalloc(nask * sizeof(*which));
	uint32_t *crc = snr_xcalloc(nask, sizeof(*crc));
	int *status = snr_xcalloc(nask, sizeof(*status));
	size_t j = 0;
	for (size_t k = 0; k < n; k++)
		if (same[k]) {
			addr[j] = m[k].addr;
			len[j] = (size_t)m[k].len;
			which[j++] = k;
		}
	int rc = 0;
	r->requests += nask;
	if (r->dbg == &snr_dbg_rsp) {
		rc = snr_dbg_rsp_crc_many(r->d, nask, addr, len, crc, status);
	} else {
		for (j = 0; j < nask && rc == 0; j++)
			if ((status[j] = r->dbg->crc_mem(r->d, addr[j], len[j], &crc[j])) < 0)
				rc = -1;
	}
	if (rc)
		snr_fmt(err, errlen, "checking %s (%zu ranges, the first at 0x%llx, %zu bytes): %s", what, nask,
			(unsigned long long)addr[0], len[0], r->dbg->error(r->d));
	else
		for (j = 0; j < nask; j++)
			same[which[j]] = status[j] == 0 && crc[j] == snr_crc32_gdb(0xffffffffu, m[which[j]].data, len[j]);
	free(addr);
	free(len);
	free(which);
	free(crc);
	free(status);
	return rc;
}
