#!/usr/bin/env bash
# snr record stores the machine config snr device runs (qXfer:snr-config:read,
# docs/recording.md "The machine config"): a device started with --config
# HALF.json (HBM bandwidth halved), recorded without --config, replays with
# HALF.json's timing: its cycles are the device's --timing figure for the same
# window, by --method sim, step and --pod. A --config that differs from the
# device's is refused before the target runs, naming both and the first key
# that differs; the same values are taken. (A target that tells no config,
# gdbserver and QEMU's stubs: rec/record_gdbserver.sh, rec/record_qemu.sh.)
# usage: record_device_config.sh SNR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"

cc_ta1 copy <<'C'
#include <stdint.h>
#include <stdio.h>
#include "ta1.h"

/* 1 MiB from HBM to VMEM in 4 DMAs on flag 0: the HBM port's bandwidth sets the time */
__attribute__((noinline)) uint64_t copy_in(uint64_t bytes)
{
	uint64_t part = bytes / 4;
	for (uint64_t k = 0; k < 4; k++)
		ta_dma(TA_VMEM_BASE + k * part, TA_HBM_BASE + k * part, part, 0);
	ta_wait(0, 4);
	return bytes;
}

int main(void)
{
	uint64_t c0 = ta_cycles();
	uint64_t n = copy_in(1 << 20);
	uint64_t c1 = ta_cycles();
	printf("chip %llu copied %llu bytes in %llu cycles\n", (unsigned long long)ta_chip_id(),
	       (unsigned long long)n, (unsigned long long)(c1 - c0));
	return 0;
}
C
echo '{"dma": {"hbm_bytes_per_cycle": 600}}' >"$T/half.json"
echo '{"dma": {"hbm_bytes_per_cycle": 600, "base_latency_cycles": 500}}' >"$T/same.json"
echo '{"dma": {"hbm_bytes_per_cycle": 1200}}' >"$T/full.json"

# the device's own figures: the halved bandwidth is what its program measures
"$SNR" device "$T/copy.elf" --config "$T/half.json" --timing >"$T/half.timing" || fail "snr device --timing"
"$SNR" device "$T/copy.elf" --timing >"$T/default.timing" || fail "snr device --timing (default)"
dev=$(sed -n 's/^chip 0 copied [0-9]* bytes in \([0-9]*\) cycles$/\1/p' "$T/half.timing")
def=$(sed -n 's/^chip 0 copied [0-9]* bytes in \([0-9]*\) cycles$/\1/p' "$T/default.timing")
[ -n "$dev" ] && [ -n "$def" ] && [ "$dev" -gt "$def" ] || fail "device figures: half $dev, default $def"

cycles() { # trace or pod set -> the replay's cycles (chip 0's for a pod)
  "$SNR" replay "$1" --json >"$T/rep.json" 2>"$T/rep.err" || fail "snr replay $1: $(cat "$T/rep.err")"
  python3 -c "
import json, sys
j = json.load(open(sys.argv[1]))
assert j.get('verified', True), j
print(j['chips'][0]['cycles'] if 'chips' in j else j['cycles'])" "$T/rep.json" || fail "replay JSON of $1"
}
# The device's figure is ta_cycles() read around the call: it adds the caller's
# instructions outside the window (the read before the call to the call's jump,
# the return's landing to the read after it), as in pod_record.sh.
OUTSIDE=5

for method in sim step; do
  gdb_device "$SNR" "$T" "$T/copy.elf" --config "$T/half.json"
  run "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/copy.elf" --breakpoint copy_in --until-return \
    --count 1M --method $method --kill -o "$T/$method.snrt"
  expect_rc 0
  expect_err "machine config: the target's (its --config $T/half.json)"
  wait "$DEV" 2>/dev/null
  got=$(cycles "$T/$method.snrt")
  [ "$((dev - got))" -eq "$OUTSIDE" ] ||
    fail "--method $method: the replay took $got cycles; the device's --config run $dev (default machine: $def)"
  "$SNR" trace info "$T/$method.snrt" --json | grep -q '"hbm_bytes_per_cycle": *600' ||
    fail "--method $method: the trace's config lacks the device's bandwidth"
done

# a --config that differs from the device's: refused before the target runs,
# the device left halted for the next debugger
gdb_device "$SNR" "$T" "$T/copy.elf" --config "$T/half.json"
run "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/copy.elf" --config "$T/full.json" --breakpoint copy_in \
  --until-return --count 1M -o "$T/bad.snrt"
expect_rc 1
expect_err "--config $T/full.json differs from the target's machine config (its --config $T/half.json)"
expect_err "dma.hbm_bytes_per_cycle is 1200 in $T/full.json, 600 on the target"
[ ! -e "$T/bad.snrt" ] && [ ! -e "$T/bad.snrt.partial" ] || fail "the refused recording left a trace"
# the same values under another name: recorded, and said so
run "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/copy.elf" --config "$T/same.json" --breakpoint copy_in \
  --until-return --count 1M --kill -o "$T/same.snrt"
expect_rc 0
expect_err "machine config: --config $T/same.json, the same as the target's (its --config $T/half.json)"
wait "$DEV" 2>/dev/null
[ "$(cycles "$T/same.snrt")" -eq "$((dev - OUTSIDE))" ] || fail "the --config same.json recording's replay"

# a device with the built-in config tells so
gdb_device "$SNR" "$T" "$T/copy.elf"
run "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/copy.elf" --breakpoint copy_in --until-return \
  --count 1M --kill -o "$T/def.snrt"
expect_rc 0
expect_err "machine config: the target's (its built-in defaults)"
wait "$DEV" 2>/dev/null
[ "$(cycles "$T/def.snrt")" -eq "$((def - OUTSIDE))" ] || fail "the default device's replay"

# a pod: every chip's trace stores the device's config; a differing --config is
# refused before any chip runs
"$SNR" device "$T/copy.elf" --chips 2 --config "$T/half.json" --timing >"$T/pod.timing" || fail "snr device --chips 2 --timing"
pdev=$(sed -n 's/^chip 0 copied [0-9]* bytes in \([0-9]*\) cycles$/\1/p' "$T/pod.timing")
gdb_device "$SNR" "$T" "$T/copy.elf" --chips 2 --config "$T/half.json"
run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$T/copy.elf" --config "$T/full.json" \
  --breakpoint copy_in --until-return --count 1M -o "$T/bad.snrs"
expect_rc 1
expect_err "dma.hbm_bytes_per_cycle is 1200 in $T/full.json, 600 on the target"
[ ! -e "$T/bad.snrs" ] && [ ! -e "$T/bad.snrs.partial" ] || fail "the refused pod recording left a set"
run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$T/copy.elf" --breakpoint copy_in --until-return \
  --count 1M -o "$T/pod.snrs"
expect_rc 0
expect_err "machine config: the target's (its --config $T/half.json)"
wait "$DEV" 2>/dev/null
got=$(cycles "$T/pod.snrs")
[ -n "$pdev" ] && [ "$((pdev - got))" -eq "$OUTSIDE" ] || fail "--pod: the replay took $got cycles; the device $pdev"
echo ok
