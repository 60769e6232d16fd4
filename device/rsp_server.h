/*
 * rsp_server.h: GDB's remote serial protocol in front of a TA1 machine.
 */
#ifndef SNR_RSP_SERVER_H
#define SNR_RSP_SERVER_H

#include <stdbool.h>

#include "device/ta1_machine.h"
#include "lib/snr_elf.h"

/* Serves the machine on endpoint (tcp:HOST:PORT or unix:PATH) until the
 * debugger kills or detaches and the program ends. Returns the exit status
 * for `snr device` (the program's exit code, 1 on a setup error). */
int rsp_serve_machine(struct ta1_machine *m, const struct snr_elf *elf, const char *endpoint, bool halt);

#endif
