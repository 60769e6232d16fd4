#!/usr/bin/env bash
# snr record --until-return through ptrace on an x86-64 program (host cc -O2):
# the window of work() ends at its own `ret` (the return address is the word
# on top of the stack at its entry); the window of the recursive rec() ends
# at the outermost call's `ret`, the nested calls and their calls to work()
# inside it; --count stays a ceiling; a breakpoint inside a function is
# refused; each window replays in unicorn. (TA1 is covered by
# suggest_cases.sh: one call of attend() from snr device.)
. "$(dirname "$0")/lib.sh"
CC=${CC:-cc}
command -v "$CC" >/dev/null || { echo "no host C compiler: skipped"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "not x86-64: skipped"; exit 77; }
cat >"$T/h.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) long work(long n) {
	long s = 0;
	for (long i = 0; i < n; i++)
		s += (i * 7) ^ (s >> 3);
	return s;
}
__attribute__((noinline)) long rec(long n) { return n ? rec(n - 1) + work(n) : 0; }
int main(int argc, char **argv) {
	long n = argc > 1 ? atol(argv[1]) : 100;
	printf("%ld\n", work(n) + rec(3));
	return 0;
}
C
"$CC" -O2 -o "$T/h" "$T/h.c" || fail "cc"
last() { "$SNR" trace dump "$1" | tail -1; }
steps() { "$SNR" trace info "$1" | awk '$1 == "instructions" {print $2}'; }

run "$SNR" record --breakpoint work --count 100000 --until-return -o "$T/w.snrt" -- "$T/h" 100
expect_rc 0; expect_err "ended by the function's return"
last "$T/w.snrt" | grep -qE ' work\+0x[0-9a-f]+ +ret ' || fail "work's window does not end at its ret: $(last "$T/w.snrt")"
# twice the iterations, about twice the instructions: the loop ran to its end
run "$SNR" record --breakpoint work --count 100000 --until-return -o "$T/w2.snrt" -- "$T/h" 200
expect_rc 0
a=$(steps "$T/w.snrt"); b=$(steps "$T/w2.snrt")
[ -n "$a" ] && [ -n "$b" ] && [ $((b - a)) -gt $((a / 2)) ] || fail "work(100): $a instructions, work(200): $b"

run "$SNR" record --breakpoint rec --count 100000 --until-return -o "$T/r.snrt" -- "$T/h" 100
expect_rc 0; expect_err "ended by the function's return"
last "$T/r.snrt" | grep -qE ' rec\+0x[0-9a-f]+ +ret ' || fail "rec's window does not end at its ret: $(last "$T/r.snrt")"
n_ret=$("$SNR" trace dump "$T/r.snrt" | grep -cE ' rec\+0x[0-9a-f]+ +ret ')
[ "$n_ret" -eq 4 ] || fail "rec(3) returns 4 times inside its window, counted $n_ret"
"$SNR" trace dump "$T/r.snrt" | grep -qE ' work ' || fail "rec's window lacks its calls to work"

# the ceiling, and a breakpoint that is no function's entry
run "$SNR" record --breakpoint work --count 50 --until-return -o "$T/c.snrt" -- "$T/h" 100
expect_rc 0; expect_err "ended by reaching --count"; expect_err "had not returned after --count 50"
run "$SNR" record --breakpoint work+4 --count 50 --until-return -o "$T/m.snrt" -- "$T/h" 100
expect_rc 1; expect_err "is not a function's entry"

for t in w r c; do
  run "$SNR" replay "$T/$t.snrt"
  expect_rc 0
done
echo ok
