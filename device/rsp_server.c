/* rsp_server.c: placeholder until the protocol server lands; refuses --gdb. */
#include "rsp_server.h"

#include "lib/snr_util.h"

int rsp_serve_machine(struct ta1_machine *m, const struct snr_elf *elf, const char *endpoint, bool halt)
{
	(void)m; (void)elf; (void)halt;
	snr_err("device: --gdb %s: the GDB server is not built yet", endpoint);
	return 1;
}
