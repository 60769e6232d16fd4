/*
 * snr_crc.h: the two CRCs snr computes.
 *
 * CRC-32C (Castagnoli, reflected polynomial 0x82f63b78) guards every chunk
 * of a trace or metrics file (lib/snr_chunkfile.c). It is computed by the
 * CPU's own instruction where there is one -- SSE4.2's crc32 on x86-64,
 * ARMv8's CRC32C on aarch64, chosen once at run time -- and by an 8-table
 * slice otherwise; both give the same value for every input
 * (tests/test_crc.c compares them over random lengths and alignments).
 *
 * GDB's CRC-32 (polynomial 0x04c11db7, not reflected, initial value
 * 0xffffffff, no final inversion: gdb's xcrc32 and gdbserver's crc32) is
 * what a stub answers the qCRC:addr,length packet with; snr device serves
 * it and the recorder computes it over the simulation's bytes to check
 * memory on the target without reading it back.
 */
#ifndef SNR_CRC_H
#define SNR_CRC_H

#include <stddef.h>
#include <stdint.h>

/* CRC-32C of data, continuing from crc (0 to start). */
uint32_t snr_crc32c(uint32_t crc, const void *data, size_t len);
/* The same by the table alone, whatever the CPU has (for the tests). */
uint32_t snr_crc32c_sw(uint32_t crc, const void *data, size_t len);
/* Which way snr_crc32c computes: "sse4.2", "armv8-crc" or "table". */
const char *snr_crc32c_impl(void);

/* GDB's CRC-32 of data, continuing from crc (0xffffffff to start, as qCRC):
 * by folding with the carry-less multiply where the CPU has one (x86-64's
 * PCLMULQDQ, chosen once at run time), by the table otherwise. */
uint32_t snr_crc32_gdb(uint32_t crc, const void *data, size_t len);
/* The same by the table alone (for the tests). */
uint32_t snr_crc32_gdb_sw(uint32_t crc, const void *data, size_t len);
/* Which way snr_crc32_gdb computes: "pclmul" or "table". */
const char *snr_crc32_gdb_impl(void);

#endif
