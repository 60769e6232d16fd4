#!/usr/bin/env bash
# second_debugger.sh SNR: one debugger at a time on `snr device --gdb`, and a
# second one is told so. Real gdb-multiarch sessions:
#   - gdb A attaches and stays (it waits for a file before going on);
#   - gdb B connects meanwhile: it shows the device's error reply ("another
#     debugger ... is attached") and fails at once, not waiting for A; the
#     device says so on stderr;
#   - A is unharmed: it single-steps after the refusal and detaches;
#   - a raw socket client's first packet gets the same error reply;
#   - after A detaches, B connects and reads the pc.
set -uo pipefail
snr=$1
command -v gdb-multiarch >/dev/null || { echo "skip: gdb-multiarch is not installed"; exit 77; }
T=$(mktemp -d); DEV=""; A=""
cleanup() { for p in $A $DEV; do kill "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; for f in "$T"/*.out "$T"/dev.err; do [ -f "$f" ] && { echo "--- $f" >&2; tail -20 "$f" >&2; }; done; exit 1; }
. "$(dirname "$0")/../gdb_device.sh"
cat >"$T/prog.c" <<'C'
#include <stdint.h>
volatile uint64_t sink;
int main(void) { for (uint64_t i = 0; i < 4000000000ull; i++) sink += i; return 0; }
C
"$snr" cc -O1 "$T/prog.c" -o "$T/p.elf" || fail "snr cc"
gdb_device "$snr" "$T" "$T/p.elf"
wait_for() { # FILE PATTERN: up to 60 s
  for _ in $(seq 600); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  return 1
}
# A: attach, stepi, wait for $T/go, stepi, wait for $T/go2, detach.
gdb-multiarch -q -nx -batch -ex "set architecture riscv:rv64" -ex "target remote 127.0.0.1:$PORT" \
  -ex "stepi" -ex 'printf "A-attached pc=%#lx\n", $pc' \
  -ex "shell while [ ! -e $T/go ]; do sleep 0.1; done" \
  -ex "stepi" -ex 'printf "A-after pc=%#lx\n", $pc' \
  -ex "shell while [ ! -e $T/go2 ]; do sleep 0.1; done" \
  -ex "detach" >"$T/a.out" 2>&1 &
A=$!
wait_for "$T/a.out" "A-attached" || fail "gdb A did not attach"
# B while A is attached and stopped: refused at once.
start=$(date +%s)
timeout 60 gdb-multiarch -q -nx -batch -ex "set architecture riscv:rv64" -ex "target remote 127.0.0.1:$PORT" \
  -ex 'printf "B-attached pc=%#lx\n", $pc' >"$T/b.out" 2>&1
took=$(( $(date +%s) - start ))
grep -q "Remote failure reply: E.snr device: another debugger (127.0.0.1 port [0-9]*) is attached" "$T/b.out" ||
  fail "gdb B was not told another debugger is attached"
grep -q "B-attached" "$T/b.out" && fail "gdb B attached while A was"
[ "$took" -lt 50 ] || fail "gdb B waited ${took}s (for A to leave?)"
grep -q "a second debugger connected (127.0.0.1 port [0-9]*) while one is attached" "$T/dev.err" ||
  fail "the device did not say on stderr that it refused a debugger"
# A raw client (no GDB) gets the same reply to its first packet.
python3 - "$PORT" >"$T/raw.out" 2>&1 <<'PY' || fail "raw client: $(cat "$T/raw.out")"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=30)
s.sendall(b"$qSupported#37")
data = b""
while True:
    chunk = s.recv(4096)
    if not chunk:
        break
    data += chunk
print(data.decode())
assert data.startswith(b"+$E.snr device: another debugger"), data
PY
touch "$T/go"
wait_for "$T/a.out" "A-after" || fail "gdb A could not step after the refusals"
a1=$(sed -n 's/A-attached pc=//p' "$T/a.out"); a2=$(sed -n 's/A-after pc=//p' "$T/a.out")
[ "$a1" != "$a2" ] || fail "A's stepi did not move the pc ($a1)"
touch "$T/go2"
wait "$A" || fail "gdb A failed"
A=""
grep -q "detached" "$T/a.out" || fail "gdb A did not detach"
# After A: B is welcome.
timeout 60 gdb-multiarch -q -nx -batch -ex "set architecture riscv:rv64" -ex "target remote 127.0.0.1:$PORT" \
  -ex 'printf "B-attached pc=%#lx\n", $pc' -ex "kill" >"$T/b2.out" 2>&1
grep -q "B-attached pc=0x" "$T/b2.out" || fail "gdb B could not attach after A left"
echo "ok: a second debugger is refused with a reply it shows, the first goes on, the next one is welcome"
