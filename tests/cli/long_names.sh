#!/usr/bin/env bash
# Text tables print a function's whole name: the stored decode window's pcs
# placed (--elf) in a function whose name is longer than a column.
# usage: long_names.sh SNR TRACES
. "$(dirname "$0")/lib.sh"
TRACES=${2:?usage: long_names.sh SNR TRACES}
name=a_kernel_function_with_a_name_long_enough_to_be_cut
cc_ta1 longname <<EOC
__attribute__((noinline, used)) void $name(void)
{
	__asm__ volatile(".skip 16384"); /* covers the window's pcs */
}
int main(void)
{
	$name();
	return 0;
}
EOC
"$SNR" cc -g -O1 "$T/longname.c" -o "$T/longname.elf" || fail "snr cc -g"
run "$SNR" analyze dma "$TRACES/ta1-decode-step.snrt" --elf "$T/longname.elf"
expect_rc 0
n=$(grep -c "      issue #" "$T/out")
[ "$n" -gt 0 ] || fail "analyze dma printed no issue lines: $(head -c 600 "$T/out")"
[ "$(grep "      issue #" "$T/out" | grep -c "($name)  wait #[0-9]* 0x[0-9a-f]* longname.c:[0-9]* ($name)$")" -eq "$n" ] ||
  fail "a name was cut: $(grep "      issue #" "$T/out" | head -2)"
echo ok
