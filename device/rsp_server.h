/*
 * rsp_server.h: GDB's remote serial protocol in front of a TA1 machine, on
 * a socket. The packet layer is device/rsp_packet.h, the conversation on
 * byte buffers device/rsp_session.h.
 */
#ifndef SNR_RSP_SERVER_H
#define SNR_RSP_SERVER_H

#include <stdbool.h>

#include "device/ta1_machine.h"
#include "lib/snr_elf.h"

/* Serves the machine on endpoint (tcp:HOST:PORT or unix:PATH), one debugger
 * at a time, until the program ends with no debugger attached or a debugger
 * kills it (rsp_server.c tells the whole life cycle; rsp_session.h the
 * protocol). halt: every chip waits at the entry for the first debugger.
 * Returns the exit status for `snr device`: chip 0's exit code, 3 after a
 * fault, an ebreak with no debugger or a kill, 1 on a setup error.
 * config_from: where the machine's config came from, told to a debugger
 * with the config (rsp_session_set_config_from; NULL: the built-in one). */
int rsp_serve_machine(struct ta1_machine *m, const struct snr_elf *elf, const char *endpoint, bool halt,
		      const char *config_from);

#endif
