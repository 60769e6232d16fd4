/*
 * test_host_sym.c: the host tracer's symbolizer (recorder/host/host_sym.c)
 * on this very process: a PLT stub is named SYMBOL@plt (the address taken
 * with a PLT-relative relocation, as a call instruction would reach it),
 * a function of this executable and one of libc by name, and an address
 * in no module is unnamed. x86-64 only (the PLT decoding is x86-64's).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../check.h"
#include "recorder/host/host_sym.h"

__attribute__((noinline)) int named_here(int x)
{
	return x * 3 + 1;
}

int main(void)
{
#if defined(__x86_64__)
	/* A call to getpid through the PLT, so the stub exists. */
	if (getpid() <= 0)
		return 1;
	uint64_t plt;
	__asm__("leaq getpid@PLT(%%rip), %0" : "=r"(plt));
	struct snrh_symbolizer *s = snrh_sym_new(getpid());
	CHECK(s, "snrh_sym_new");
	if (!s)
		return check_report("host_sym");
	CHECK(snrh_sym_snapshot(s) > 0, "no executable mappings read");

	const char *sym, *mod;
	uint64_t off;
	int rc = snrh_sym_user(s, plt, false, &sym, &mod, &off);
	CHECK(rc == 0 && sym && !strcmp(sym, "getpid@plt"), "PLT stub at %#llx named %s (rc %d), want getpid@plt",
	      (unsigned long long)plt, sym ? sym : "(none)", rc);
	CHECK(mod && strstr(mod, "test_host_sym"), "PLT stub's module %s", mod ? mod : "(none)");
	/* An address inside the stub: same name, offset from the stub. */
	rc = snrh_sym_user(s, plt + 4, false, &sym, &mod, &off);
	CHECK(rc == 0 && sym && !strcmp(sym, "getpid@plt") && off == 4, "stub+4 named %s+%llu",
	      sym ? sym : "(none)", (unsigned long long)off);

	rc = snrh_sym_user(s, (uint64_t)(uintptr_t)named_here + 2, false, &sym, &mod, &off);
	CHECK(rc == 0 && sym && !strcmp(sym, "named_here") && off == 2, "named_here+2 named %s+%llu",
	      sym ? sym : "(none)", (unsigned long long)off);
	rc = snrh_sym_user(s, (uint64_t)(uintptr_t)getpid, false, &sym, &mod, &off);
	/* libc's .dynsym has getpid and __getpid at one address: either. */
	CHECK(rc == 0 && sym && (!strcmp(sym, "getpid") || !strcmp(sym, "__getpid")) && mod && strstr(mod, "libc"), "libc's getpid named %s in %s",
	      sym ? sym : "(none)", mod ? mod : "(none)");

	void *anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CHECK(anon != MAP_FAILED, "mmap");
	if (anon != MAP_FAILED) {
		snrh_sym_snapshot(s);
		rc = snrh_sym_user(s, (uint64_t)(uintptr_t)anon + 16, false, &sym, &mod, &off);
		CHECK(rc == -1 && !sym, "an anonymous mapping named %s", sym ? sym : "(none)");
		munmap(anon, 4096);
	}
	snrh_sym_free(s);
#else
	printf("host_sym: x86-64 only\n");
#endif
	return check_report("host_sym");
}
