#!/usr/bin/env bash
# A trace and its metrics file answer in source lines after the program is
# rebuilt and its source deleted: workloads/attn.c built with -O2 -g in a
# temporary folder, attn() recorded from `snr device --gdb` and replayed to
# a metrics file; then the source is edited (every line moves down two),
# the program rebuilt (another build-id) and the source deleted. annotate
# (--asm, --json), report's source page, analyze suggest, deps and dma give, on the
# trace and on the metrics file, the same file:line rows and source text as
# before, from the LINES chunk (lib/snr_line_pack.c), with a note saying so.
# A pod's replay carries them too: every chip's metrics file of `snr replay
# POD -o` gets its trace's LINES chunk (workloads/allreduce.c on 2 chips,
# annotate of chip 1's metrics file byte-identical after the rebuild).
# Then a LINES chunk whose CRC is broken, or whose lengths are forged with
# good CRCs, is refused with exit 3 naming the file and chunk.
# usage: carried_lines.sh SNR SRCDIR CHUNK_FORGE
set -u
SNR=$(realpath "$1"); SRC=$(realpath "$2"); FORGE=$(realpath "$3")
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$SRC/tests/gdb_device.sh"
cd "$T" || exit 1
mkdir src && cp "$SRC/workloads/attn.c" src/ || fail "copy attn.c"
"$SNR" cc -O2 -g src/attn.c -o p.elf || fail "snr cc"
gdb_device "$SNR" "$T" "$T/p.elf"
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint attn --count 2000 -o a.snrt \
  2>rec.err || { kill $DEV; fail "record: $(cat rec.err)"; }
wait $DEV
"$SNR" replay a.snrt -o a.snrm >replay.txt 2>&1 || fail "replay: $(cat replay.txt)"

"$SNR" trace info a.snrt >info.txt || fail "trace info"
grep -q "^lines  *[0-9]* pcs' source lines and [0-9]* source files\\{0,1\\} carried ([0-9]* bytes)" info.txt ||
  fail "trace info does not say the lines are carried: $(grep lines info.txt)"

outputs() { # outputs TAG: every answer, on the trace and the metrics file
  for f in a.snrt a.snrm; do
    "$SNR" annotate $f --asm >"$1.$f.asm" 2>>"$1.err" || fail "$1: annotate $f --asm: $(cat "$1.err")"
    "$SNR" annotate $f --json >"$1.$f.json" 2>>"$1.err" || fail "$1: annotate $f --json"
    "$SNR" analyze suggest $f >"$1.$f.suggest" 2>>"$1.err" || fail "$1: suggest $f"
    "$SNR" analyze deps $f --json >"$1.$f.deps" 2>>"$1.err" || fail "$1: deps $f"
    "$SNR" analyze dma $f >"$1.$f.dma" 2>>"$1.err" || fail "$1: dma $f"
    "$SNR" report $f -o "$1.$f.html" 2>>"$1.err" || fail "$1: report $f: $(cat "$1.err")"
    # the page's source data: the rows and text of its source page
    python3 - "$1.$f.html" >"$1.$f.page" <<'PY' || fail "$1: no source page in the report of $f"
import re, sys
s = open(sys.argv[1], encoding='utf-8').read()
m = re.findall(r'"sources":\{.*?\}\}', s)
assert m, 'no "sources"'
print(m[0])
PY
  done
}
outputs before
grep -q 'src/attn.c:[0-9]* (attn)' before.a.snrt.asm || fail "no attn.c line rows: $(head -c 600 before.a.snrt.asm)"
grep -q 'ta_dma' before.a.snrt.asm || fail "no source text in annotate: $(head -c 600 before.a.snrt.asm)"
grep -q '"file":"[^"]*src/attn.c"' before.a.snrm.deps || fail "no attn.c lines in deps: $(head -c 600 before.a.snrm.deps)"
grep -q 'attn.c:[0-9]* (attn)' before.a.snrt.dma || fail "no attn.c lines in dma: $(head -c 600 before.a.snrt.dma)"

# rebuild with an edit (another build-id, lines moved), then delete the source
sed -i '1i /* edited after the recording */\nstatic int moved_down;' src/attn.c
cp p.elf old.elf
"$SNR" cc -O2 -g src/attn.c -o p.elf || fail "snr cc (the edit)"
cmp -s old.elf p.elf && fail "the rebuild made the same ELF"
rm -rf src old.elf
outputs after
for f in a.snrt a.snrm; do
  for k in asm json suggest deps dma page; do
    cmp -s "before.$f.$k" "after.$f.$k" ||
      fail "$f: the $k output changed after the rebuild: $(diff "before.$f.$k" "after.$f.$k" | head -20)"
  done
done
grep -q "note: lines from a.snrt: $T/p.elf has build-id" after.err || fail "no note on the rebuilt ELF: $(cat after.err)"
grep -q "note: src/attn.c is gone" after.err || fail "no note on the carried text: $(cat after.err)"
grep -q "warning" after.err && fail "a warning: $(cat after.err)"

# the ELF gone as well: the same again
rm p.elf
"$SNR" annotate a.snrm --asm >gone.asm 2>gone.err || fail "annotate without the ELF: $(cat gone.err)"
cmp -s before.a.snrm.asm gone.asm || fail "without the ELF: $(diff before.a.snrm.asm gone.asm | head)"

# a damaged LINES chunk: exit 3, naming the file and the chunk
chunk_of() { # chunk_of FILE TYPE: "index offset" of FILE's first chunk of TYPE
  python3 - "$1" "$2" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read(); o = 16; i = 0
while o + 28 <= len(d):
    t, c, seq, sl, rl = struct.unpack('<HHIII', d[o + 4:o + 20])
    if t == int(sys.argv[2]):
        print(i, o); break
    o += 28 + sl; i += 1
PY
}
for f in a.snrt:6 a.snrm:5; do
  file=${f%:*}; type=${f#*:}; ext=${file#a.}
  n=$(chunk_of "$file" "$type")
  [ -n "$n" ] || fail "$file has no LINES chunk (type $type)"
  idx=${n% *}; off=${n#* }
  cp "$file" "bad.$ext"
  printf '\x55' | dd of="bad.$ext" bs=1 seek=$((off + 28 + 5)) conv=notrunc 2>/dev/null
  "$SNR" annotate "bad.$ext" >/dev/null 2>bad.err; rc=$?
  [ $rc -eq 3 ] || fail "a flipped byte in $file's LINES: exit $rc, want 3: $(cat bad.err)"
  grep -q "bad.$ext: chunk $idx (offset $off): payload is corrupt" bad.err || fail "bad CRC in $file: $(cat bad.err)"
  # forged with good CRCs: the string count's byte flipped (a count past the payload), and a raw length
  # past the stored bytes
  for forge in "flip $idx 1" "rawlen $idx 99999"; do
    # shellcheck disable=SC2086
    "$FORGE" "$file" "forged.$ext" $forge || fail "chunk_forge $forge"
    "$SNR" annotate "forged.$ext" >/dev/null 2>forged.err; rc=$?
    [ $rc -eq 3 ] || fail "$file, LINES forged ($forge): exit $rc, want 3: $(cat forged.err)"
    grep -q "forged.$ext: chunk $idx (offset [0-9]*): " forged.err || fail "forged ($forge): $(cat forged.err)"
    rm -f "forged.$ext"
  done
done
# a pod: each chip's metrics file carries its trace's lines
mkdir -p pod/src && cp "$SRC/workloads/allreduce.c" pod/src/ || fail "copy allreduce.c"
cd pod || exit 1
"$SNR" cc -O2 -g -DELEMS=1024 src/allreduce.c -o ar.elf || fail "snr cc allreduce"
gdb_device "$SNR" "$T/pod" "$T/pod/ar.elf" --chips 2
"$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$T/pod/ar.elf" --breakpoint main --count 5000 \
  -o ar.snrs >/dev/null 2>rec.err || { kill $DEV; fail "record --pod: $(cat rec.err)"; }
wait $DEV
"$SNR" replay ar.snrs -o ar.snrm >replay.txt 2>&1 || fail "replay of the pod: $(cat replay.txt)"
"$SNR" annotate ar.snrm/window-1.snrm --asm >pod.before 2>pod.err || fail "annotate chip 1: $(cat pod.err)"
grep -q 'src/allreduce.c:[0-9]* (main)' pod.before || fail "chip 1: no allreduce.c rows: $(head -c 600 pod.before)"
sed -i '1i /* edited after the recording */\nstatic int moved_down;' src/allreduce.c
"$SNR" cc -O2 -g -DELEMS=1024 src/allreduce.c -o ar.elf || fail "snr cc allreduce (the edit)"
rm -rf src
"$SNR" annotate ar.snrm/window-1.snrm --asm >pod.after 2>pod.err || fail "annotate chip 1 after: $(cat pod.err)"
cmp -s pod.before pod.after ||
  fail "a pod chip's metrics file lost its lines after the rebuild: $(diff pod.before pod.after | head -20)"
grep -q "note: lines from ar.snrm/window-1.snrm: " pod.err || fail "no note on the carried lines: $(cat pod.err)"
cd "$T" || exit 1
echo "PASS carried_lines ($(stat -c %s a.snrt)-byte trace)"
