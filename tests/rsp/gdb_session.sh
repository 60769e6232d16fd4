#!/usr/bin/env bash
# gdb_session.sh SNR: real gdb-multiarch against `snr device --gdb`.
#
# Builds a small program with `snr cc -g`, stops at a function with a loop,
# single-steps 100 instructions, and checks what gdb shows against what the
# device says on its own:
#   - pc and instret after `stepi 100` equal the pc that a plain run with
#     `--limit` (instret at the breakpoint + 100) reports;
#   - the global array gdb reads (x/8xg) and the argument of report() equal
#     what the program prints itself;
#   - the device exits with the program's status after gdb detaches;
#   - with --chips 2, `info threads` lists two threads and thread 2 is chip 1.
set -uo pipefail
snr=$1
work=$(mktemp -d)
dev=
cleanup() {
  [ -n "$dev" ] && kill "$dev" 2>/dev/null && wait "$dev" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$work"/*.out "$work"/*.err; do [ -f "$f" ] && { echo "--- $f"; tail -40 "$f"; }; done; exit 1; }

cat > "$work/prog.c" <<'C'
#include <stdint.h>
#include <stdio.h>

uint64_t table[8];

__attribute__((noinline)) uint64_t accumulate(int n)
{
	uint64_t s = 0;
	for (int i = 0; i < n; i++) {
		table[i] = table[i] * 5 + (uint64_t)i * 3 + 1;
		s += table[i] * table[i];
	}
	return s;
}

__attribute__((noinline)) void report(uint64_t s)
{
	for (int i = 0; i < 8; i++)
		printf("table[%d] = 0x%016llx\n", i, (unsigned long long)table[i]);
	printf("result = %llu\n", (unsigned long long)s);
}

int main(void)
{
	uint64_t s = 0;
	for (int r = 0; r < 20; r++)
		s += accumulate(8);
	report(s);
	return (int)(s % 100);
}
C
"$snr" cc -g "$work/prog.c" -o "$work/prog.elf" || fail "snr cc"

# Starts snr device in the background; sets dev and port.
start_device() {
  : > "$work/dev.err"
  "$snr" device "$work/prog.elf" --gdb tcp:127.0.0.1:0 "$@" > "$work/dev.out" 2> "$work/dev.err" &
  dev=$!
  port=
  for _ in $(seq 100); do
    port=$(sed -n 's/.*waiting for gdb on tcp:127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/dev.err")
    [ -n "$port" ] && return 0
    sleep 0.05
  done
  fail "snr device did not start listening"
}

start_device --halt
cat > "$work/cmds.gdb" <<G
set architecture riscv:rv64
set pagination off
target remote 127.0.0.1:$port
break accumulate
continue
printf "BP-INSTRET %lu\n", \$instret
stepi 100
printf "STEP-PC %#lx\n", \$pc
printf "STEP-INSTRET %lu\n", \$instret
info registers
p \$pc
delete
break report
continue
printf "REPORT-ARG %lu\n", \$a0
x/8xg &table
G
timeout 60 gdb-multiarch -batch -nx -x "$work/cmds.gdb" "$work/prog.elf" > "$work/gdb.out" 2>&1 || fail "gdb exited with $?"
wait "$dev"; status=$?; dev=

grep -q '^Breakpoint 1, .*accumulate' "$work/gdb.out" || fail "gdb did not stop at accumulate"
bp=$(sed -n 's/^BP-INSTRET \([0-9]*\)$/\1/p' "$work/gdb.out")
step_pc=$(sed -n 's/^STEP-PC \(0x[0-9a-f]*\)$/\1/p' "$work/gdb.out")
step_n=$(sed -n 's/^STEP-INSTRET \([0-9]*\)$/\1/p' "$work/gdb.out")
[ -n "$bp" ] && [ -n "$step_pc" ] && [ -n "$step_n" ] || fail "gdb printed no pc or instret"
[ "$step_n" -eq $((bp + 100)) ] || fail "instret after stepi 100 is $step_n, expected $((bp + 100))"
# info registers lists the TA1 feature's registers too.
for r in ra sp a0 pc flag0 flag15 cycle instret chipid nchips; do
  grep -q "^$r  *0x" "$work/gdb.out" || fail "info registers has no $r"
done
grep -q '^nchips  *0x1[[:space:]]' "$work/gdb.out" || fail "nchips is not 1"
grep -q "^\$1 = .*$step_pc" "$work/gdb.out" || fail "p \$pc does not show $step_pc"

# The device on its own: stop after the same number of instructions.
"$snr" device "$work/prog.elf" --limit $((bp + 100)) > /dev/null 2> "$work/limit.err"
limit_pc=$(sed -n 's/.*reached --limit [0-9]* instructions at pc \(0x[0-9a-f]*\).*/\1/p' "$work/limit.err")
[ "$limit_pc" = "$step_pc" ] || fail "gdb's pc after stepi 100 is $step_pc, the device's at --limit is '$limit_pc'"

# The program's own report equals what gdb read.
gdb_table=$(grep '<table' "$work/gdb.out" | grep -o '0x[0-9a-f]\{16\}' | tr '\n' ' ')
prog_table=$(sed -n 's/^table\[[0-7]\] = \(0x[0-9a-f]*\)$/\1/p' "$work/dev.out" | tr '\n' ' ')
[ -n "$prog_table" ] && [ "$gdb_table" = "$prog_table" ] || fail "x/8xg gave '$gdb_table', the program printed '$prog_table'"
result=$(sed -n 's/^result = \([0-9]*\)$/\1/p' "$work/dev.out")
arg=$(sed -n 's/^REPORT-ARG \([0-9]*\)$/\1/p' "$work/gdb.out")
[ -n "$result" ] && [ "$arg" = "$result" ] || fail "report()'s argument in gdb is '$arg', the program printed '$result'"
want=$(python3 -c "print($result % 100)")  # past bash's signed 64 bits
[ "$status" -eq "$want" ] || fail "snr device exited $status, the program returns $want"

# Two chips: one thread each.
start_device --halt --chips 2
cat > "$work/threads.gdb" <<G
set architecture riscv:rv64
target remote 127.0.0.1:$port
info threads
thread 2
printf "CHIPID %lu\n", \$chipid
kill
G
timeout 60 gdb-multiarch -batch -nx -x "$work/threads.gdb" "$work/prog.elf" > "$work/gdb.out" 2>&1 || fail "gdb (2 chips) exited with $?"
wait "$dev"; status=$?; dev=
threads=$(grep -cE '^[* ] +[0-9]+ +Thread [0-9]+ \(chip [0-9]+\)' "$work/gdb.out")
[ "$threads" -eq 2 ] || fail "info threads shows $threads threads, expected 2"
grep -q '^CHIPID 1$' "$work/gdb.out" || fail "thread 2 is not chip 1"
[ "$status" -eq 3 ] || fail "snr device exited $status after kill, expected 3"
echo "gdb_session: ok (bp at instret $bp, pc $step_pc after stepi 100)"
