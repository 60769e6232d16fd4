/*
 * test_sim_poison.c: every TA1 simulator (the GRM linked in, and each plugin
 * .so named on the command line) honours poisoning through the ABI alone:
 * a load from bytes the trace load never set, or an add reading a register
 * it never set, fails and the message names the instruction; once the bytes
 * or the register are loaded the same instruction runs. A plugin's tracker
 * sees issue and retire for the instruction that ran.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "isa/ta1/ta1_isa.h"
#include "sim/snr_sim.h"
#include "tests/check.h"

#define CODE TA1_CORE_BASE
#define DATA (TA1_CORE_BASE + 0x1000)

static unsigned retired;
static void on_retire(void *u, const struct snr_ev_insn *e)
{
	(void)u;
	CHECK(e->retire > e->issue, "retire %llu after issue %llu", (unsigned long long)e->retire,
	      (unsigned long long)e->issue);
	retired++;
}

static void set64(const struct snr_sim_ops *ops, struct snr_sim *s, unsigned reg, uint64_t v)
{
	uint8_t b[8];
	memcpy(b, &v, 8);
	CHECK(ops->set_reg(s, reg, b, 8) == 0, "%s: set_reg %u: %s", ops->name, reg, ops->error(s));
}

/* The ABI's promise (sim/snr_sim.h) that `snr record --method sim` takes
 * the pc from: after a step that did not exit, next_pc is what get_reg
 * reads from the pc register. */
static void check_next_pc(const struct snr_sim_ops *ops, struct snr_sim *s, const struct snr_sim_step *st)
{
	uint64_t pc = 0;
	CHECK(ops->get_reg(s, TA1_REG_PC, (uint8_t *)&pc, 8) == 0 && pc == st->next_pc,
	      "%s: next_pc 0x%llx, the pc register 0x%llx", ops->name, (unsigned long long)st->next_pc,
	      (unsigned long long)pc);
}

static void check_sim(const struct snr_sim_ops *ops)
{
	char err[256];
	struct snr_sim *s = ops->create(NULL, 0, 1, err, sizeof(err));
	CHECK(s != NULL, "%s: create: %s", ops->name, err);
	if (!s)
		return;
	struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION, .on_retire = on_retire};
	CHECK(ops->attach_tracker(s, &t) == 0, "%s: attach_tracker", ops->name);
	/* ld a0, 0(a1); add a0, a2, a3 */
	const uint32_t code[2] = {0x0005b503, 0x00d60533};
	CHECK(ops->load_code(s, CODE, (const uint8_t *)&code[0], 4) == 0, "%s: load_code", ops->name);
	CHECK(ops->load_code(s, CODE + 4, (const uint8_t *)&code[1], 4) == 0, "%s: load_code", ops->name);
	set64(ops, s, TA1_REG_PC, CODE);
	set64(ops, s, 11, DATA); /* a1 */
	struct snr_sim_step st;
	retired = 0;

	/* the 8 bytes at DATA were never loaded */
	CHECK(ops->step(s, 7, &st) != 0, "%s: a load of poisoned bytes succeeded", ops->name);
	const char *e = ops->error(s);
	CHECK(strstr(e, "instruction 7") && strstr(e, "ld") && strstr(e, "poisoned"),
	      "%s: the message should name instruction 7, its disassembly and the poison: %s", ops->name, e);
	uint64_t val = 0x1122334455667788ull;
	CHECK(ops->load_mem(s, TA1_SPACE_CORE, 0, DATA, &val, 8) == 0, "%s: load_mem", ops->name);
	CHECK(ops->step(s, 7, &st) == 0, "%s: the load after load_mem: %s", ops->name, ops->error(s));
	CHECK(st.pc == CODE && st.next_pc == CODE + 4, "%s: step reports pc 0x%llx -> 0x%llx", ops->name,
	      (unsigned long long)st.pc, (unsigned long long)st.next_pc);
	check_next_pc(ops, s, &st);
	uint8_t a0[8];
	CHECK(ops->get_reg(s, 10, a0, 8) == 0 && !memcmp(a0, &val, 8), "%s: a0 after the load", ops->name);

	/* a2 and a3 were never set */
	CHECK(ops->step(s, 8, &st) != 0, "%s: an add of poisoned registers succeeded", ops->name);
	e = ops->error(s);
	CHECK(strstr(e, "instruction 8") && strstr(e, "add") && strstr(e, "register 12"),
	      "%s: the message should name instruction 8 and register 12: %s", ops->name, e);
	set64(ops, s, 12, 1);
	set64(ops, s, 13, 2);
	CHECK(ops->step(s, 8, &st) == 0, "%s: the add after set_reg: %s", ops->name, ops->error(s));
	check_next_pc(ops, s, &st);
	CHECK(ops->get_reg(s, 10, a0, 8) == 0 && a0[0] == 3, "%s: a0 = 1 + 2", ops->name);
	CHECK(retired == 2, "%s: %u retire events, want 2", ops->name, retired);
	CHECK(ops->finish(s) >= 2, "%s: two instructions take at least 2 cycles", ops->name);
	ops->destroy(s);
}

int main(int argc, char **argv)
{
	check_sim(&snr_sim_ta1);
	for (int i = 1; i < argc; i++) {
		void *h = dlopen(argv[i], RTLD_NOW | RTLD_LOCAL);
		CHECK(h != NULL, "dlopen %s: %s", argv[i], dlerror());
		if (!h)
			continue;
		const struct snr_sim_ops *ops = dlsym(h, "snr_sim_plugin");
		CHECK(ops && ops->abi_version == SNR_SIM_ABI_VERSION, "%s: no snr_sim_plugin of this ABI", argv[i]);
		if (ops)
			check_sim(ops);
		dlclose(h);
	}
	return check_report("test_sim_poison");
}
