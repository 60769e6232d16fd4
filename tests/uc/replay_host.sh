#!/bin/sh
# replay_host.sh SNR KERNEL TRACE_EDIT CHECK_HOST_TRACE: the host kernel (a
# system call, a copy loop, a blocked matmul) recorded through ptrace (50000
# instructions) and through gdbserver (20000: each step is a round trip)
# replays in unicorn with every pc and the end state matching, and
# check_trace_host (tests/rec) proves the ptrace trace complete and minimal. The ptrace
# trace without one captured data page fails naming the page; without the
# capture of xmm0 (kernels' argument) it fails naming the register.
set -u
SNR=$1 KERNEL=$2 EDIT=$3 CHECK=$4
T=$(mktemp -d)
GS_PID=
cleanup() { [ -n "$GS_PID" ] && kill "$GS_PID" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*"; [ -f "$T/out" ] && cat "$T/out"; exit 1; }

"$SNR" record --breakpoint kernels --count 50000 -o "$T/p.snrt" -- "$KERNEL" >"$T/out" 2>&1 ||
	fail "ptrace record"
"$SNR" replay "$T/p.snrt" >"$T/out" 2>&1 || fail "replay of the ptrace trace"
grep -q "end state matches" "$T/out" || fail "ptrace trace: no end-state match"
"$CHECK" "$T/p.snrt" >"$T/out" 2>&1 || fail "check_trace_host: $(cat "$T/out")"
"$SNR" replay --sim unicorn "$T/p.snrt" >"$T/out" 2>&1 || fail "--sim unicorn"
"$SNR" replay --cache-report=5 "$T/p.snrt" >"$T/out" 2>&1 || fail "--cache-report"
grep -q "L1 misses" "$T/out" && grep -q "matmul_blocked" "$T/out" || fail "no cache report naming the matmul"
echo '{"cache": {"l1": {"size": 1024, "assoc": 2}}}' >"$T/small.json"
"$SNR" replay --config "$T/small.json" --cache-report "$T/p.snrt" >"$T/out" 2>&1 || fail "small cache"
grep -q "L1 1024 B, 2-way" "$T/out" || fail "the config's cache was not used"
echo '{"cache": {"l1": {"size": 1000}}}' >"$T/bad.json"
"$SNR" replay --config "$T/bad.json" "$T/p.snrt" >"$T/out" 2>&1 && fail "a bad cache config was accepted"
grep -q "cache.l1" "$T/out" || fail "the bad cache config's message does not name the key"

if command -v gdbserver >/dev/null; then
	PORT=$((20000 + $$ % 20000))
	gdbserver "127.0.0.1:$PORT" "$KERNEL" >"$T/gs.log" 2>&1 &
	GS_PID=$!
	i=0
	while ! grep -q "Listening" "$T/gs.log" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
	"$SNR" record --target "tcp:127.0.0.1:$PORT" --elf "$KERNEL" --breakpoint kernels --count 20000 \
		-o "$T/g.snrt" >"$T/out" 2>&1 || fail "gdbserver record"
	wait "$GS_PID" 2>/dev/null
	GS_PID=
	"$SNR" replay "$T/g.snrt" >"$T/out" 2>&1 || fail "replay of the gdbserver trace"
	grep -q "end state matches" "$T/out" || fail "gdbserver trace: no end-state match"
else
	echo "gdbserver not installed: its half skipped"
fi

PAGE=$("$EDIT" drop-page "$T/p.snrt" "$T/bad.snrt") || fail "trace_edit drop-page"
"$SNR" replay "$T/bad.snrt" >"$T/out" 2>&1 && fail "a trace missing page $PAGE replayed"
grep -q "did not capture" "$T/out" || fail "no poisoned-read report"
grep -q "at ${PAGE%???}" "$T/out" || fail "the report does not name page $PAGE"
AT=$("$EDIT" drop-reg "$T/p.snrt" "$T/noreg.snrt" xmm0) || fail "trace_edit drop-reg"
"$SNR" replay "$T/noreg.snrt" >"$T/out" 2>&1 && fail "a trace without xmm0 replayed"
grep -q "instruction $AT (.*) reads register xmm0, which the trace neither captured" "$T/out" ||
	fail "the report does not name xmm0 at instruction $AT"
echo "ok"
