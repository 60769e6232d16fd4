#!/bin/sh
# replay_aarch64.sh SNR KERNEL TRACE_EDIT CHECK_HOST_TRACE: the host kernel
# (tests/uc/uc_kernel.c built for aarch64: an svc, a copy loop, a blocked
# matmul) runs under qemu-aarch64 -g and is recorded through the RSP client
# (40000 instructions from kernels(), --isa aarch64; QEMU's default CPU has
# SVE, so its vector registers come as z0-z31); the trace replays in unicorn
# with every pc and the end state matching, `snr analyze util` and `deps`
# run on it, and check_trace_host (tests/rec) proves it complete and minimal. A window of matmul_blocked recorded from a CPU
# without SVE (v0-v31 in target.xml) replays too. A window that runs into
# glibc's LSE atomics draws the recorder's warning and fails to replay there.
# Damaged copies fail the way they must: without the page of src[] (an
# uncaptured read naming it), without the capture of fpcr (the first FP
# instruction names the register), with a range captured twice
# (check_trace_host (tests/rec) refuses it). Fails when qemu-aarch64 or the cross
# compiler is missing: scripts/install-deps installs both.
set -u
SNR=$1 KERNEL=$2 EDIT=$3 CHECK=$4
fail() { echo "FAIL: $*"; [ -f "$T/out" ] && cat "$T/out"; exit 1; }
T=$(mktemp -d)
QEMU=
cleanup() { [ -n "$QEMU" ] && kill "$QEMU" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
command -v qemu-aarch64 >/dev/null || fail "qemu-aarch64 is not installed (scripts/install-deps: qemu-user)"
[ -n "$KERNEL" ] && [ -f "$KERNEL" ] ||
	fail "no aarch64 kernel: aarch64-linux-gnu-gcc was missing at meson setup (scripts/install-deps)"

# record_window NAME COUNT BREAKPOINT SKIP [QEMU ARGS...]: qemu-aarch64 -g
# on a free port, snr record until it connects, then the program runs to its
# end.
record_window() {
	name=$1 count=$2 bp=$3 skip=$4
	shift 4
	PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	qemu-aarch64 "$@" -g "$PORT" "$KERNEL" >"$T/$name.qemu" 2>&1 &
	QEMU=$!
	ok=
	for _ in $(seq 100); do
		"$SNR" record --target "tcp:127.0.0.1:$PORT" --elf "$KERNEL" --breakpoint "$bp" --skip "$skip" \
			--count "$count" --isa aarch64 -o "$T/$name.snrt" >"$T/rec.out" 2>&1 && { ok=1; break; }
		grep -q "refused" "$T/rec.out" || break
		sleep 0.05
	done
	cp "$T/rec.out" "$T/out"
	[ -n "$ok" ] || fail "record $name"
	grep -q "recorded $count instructions" "$T/out" || fail "$name: summary"
	wait "$QEMU"
	QEMU=
	grep -q " 8 1$" "$T/$name.qemu" || fail "$name: the program did not finish after the detach: $(cat "$T/$name.qemu")"
}

record_window k 40000 kernels 0
"$SNR" trace verify "$T/k.snrt" >"$T/out" 2>&1 || fail "verify"
"$SNR" trace info "$T/k.snrt" >"$T/out" 2>&1
grep -q "^isa *aarch64" "$T/out" && grep -q "^debugger *rsp" "$T/out" || fail "trace info"
"$SNR" trace dump "$T/k.snrt" >"$T/dump" 2>&1 || fail "dump"
grep -q "svc #0" "$T/dump" && grep -q "after:x0=" "$T/dump" || fail "no svc with its recorded result in the window"
grep -q "matmul_blocked.*fmul d" "$T/dump" || fail "the window does not reach the matmul"
# the instruction after the svc is in the trace (QEMU's step runs it along)
grep -A1 "svc #0" "$T/dump" | grep -q "raw_getpid+0x8 *ret" || fail "the ret after the svc is missing"
# kernels(1.5): v0 is read first and captured, from the low bytes of QEMU's z0
grep -q "v0=0x[0-9a-f]*3ff8000000000000 " "$T/dump" || fail "v0 (1.5) not captured"

"$SNR" replay "$T/k.snrt" >"$T/out" 2>&1 || fail "replay"
grep -q "every pc matched; end state matches the recording" "$T/out" || fail "no end-state match"
grep -q "^instructions  40000" "$T/out" || fail "replayed count"
"$SNR" replay --sim unicorn "$T/k.snrt" >"$T/out" 2>&1 || fail "--sim unicorn"
"$SNR" replay --cache-report=3 "$T/k.snrt" >"$T/out" 2>&1 || fail "--cache-report"
grep -q "matmul_blocked" "$T/out" || fail "no cache report naming the matmul"
# the analyses run on host code: the core's busy fraction, the dependencies
"$SNR" analyze util "$T/k.snrt" >"$T/out" 2>&1 || fail "analyze util"
awk '$1 ~ /^[0-9]+$/ && $2 > 0 { busy = 1 } END { exit !busy }' "$T/out" || fail "util: the scalar unit is never busy"
"$SNR" analyze deps "$T/k.snrt" >"$T/out" 2>&1 || fail "analyze deps"
grep -q "^edges: [1-9][0-9]* register, [1-9][0-9]* memory" "$T/out" || fail "deps: no register and memory edges"
"$CHECK" "$T/k.snrt" >"$T/out" 2>&1 || fail "check_trace_host: $(cat "$T/out")"
grep -q "40000 instructions (aarch64).* minimal and complete" "$T/out" || fail "check_trace_host summary: $(cat "$T/out")"

# no SVE: QEMU's target.xml has aarch64-fpu.xml (v0-v31, fpsr, fpcr)
record_window n 3000 matmul_blocked 0 -cpu cortex-a57
"$SNR" replay "$T/n.snrt" >"$T/out" 2>&1 || fail "replay of the cortex-a57 window"
grep -q "end state matches" "$T/out" || fail "cortex-a57 window: no end-state match"

# past kernels(), printf reaches glibc's LSE atomics (QEMU's max CPU has LSE),
# which capstone 4 cannot decode: the recorder warns, the replay fails there
record_window w 4000 copy_loop 1
# --skip 1: the second call, copy_loop(dst + 1, src, 511) (QEMU reports a hit
# again when continued at the breakpoint; the recorder steps off it first)
"$SNR" trace dump "$T/w.snrt" --limit 1 | grep -q "x2=0x00000000000001ff" || fail "--skip 1 did not reach the second call"
grep -q "^warning: the ISA plugin could not model .*not a valid instruction" "$T/rec.out" ||
	fail "no warning about the instructions the plugin could not model"
"$SNR" replay "$T/w.snrt" >"$T/out" 2>&1 && fail "a window with an undecodable instruction replayed"
grep -q "(bad)) reads .* that the trace did not capture" "$T/out" || fail "no uncaptured read at the (bad) instruction"

SRC=$(aarch64-linux-gnu-nm "$KERNEL" 2>/dev/null | awk '$3=="src"{print "0x"$1}')
[ -n "$SRC" ] || SRC=$(nm "$KERNEL" | awk '$3=="src"{print "0x"$1}')
PAGE=$("$EDIT" drop-page "$T/k.snrt" "$T/nopage.snrt" "$SRC") || fail "trace_edit drop-page"
"$SNR" replay "$T/nopage.snrt" >"$T/out" 2>&1 && fail "a trace missing page $PAGE replayed"
grep -q "did not capture" "$T/out" || fail "no poisoned-read report"
grep -q "at ${PAGE%???}" "$T/out" || fail "the report does not name page $PAGE"

AT=$("$EDIT" drop-reg "$T/k.snrt" "$T/noreg.snrt" fpcr) || fail "trace_edit drop-reg"
"$SNR" replay "$T/noreg.snrt" >"$T/out" 2>&1 && fail "a trace without fpcr replayed"
grep -q "instruction $AT (pc 0x[0-9a-f]*: f[a-z]* d[0-9, d]*) reads register fpcr, which the trace neither captured" "$T/out" ||
	fail "the report does not name fpcr at instruction $AT"

"$EDIT" recapture "$T/k.snrt" "$T/twice.snrt" >/dev/null || fail "trace_edit recapture"
"$CHECK" "$T/twice.snrt" >"$T/out" 2>&1 && fail "check_trace_host accepted a range captured twice"
grep -q "captured a second time: not minimal" "$T/out" || fail "check_trace_host: no 'captured a second time': $(cat "$T/out")"
echo "ok"
