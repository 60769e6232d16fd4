#!/usr/bin/env bash
# Outputs never replace what a user has, and never land on an input:
#   - replay, report, export perfetto and host report refuse an output that
#     is one of their inputs (by the same name, ./name, dir/../name, a hard
#     link, a symbolic link; the trace a metrics file names), even with
#     --force, exit 1, naming both, the input unchanged;
#   - an output that exists is replaced only with --force (the message names
#     the file and --force);
#   - a temporary that a killed writer (SIGKILL) left is removed by the next
#     write of that output; a live writer's and an older one's stay;
#   - a report written again drops the side files (FILE.d/) it no longer needs.
# usage: safe_outputs.sh SNR TRACES HOST_CORPUS
. "$(dirname "$0")/lib.sh"
TRACES=${2:?usage: safe_outputs.sh SNR TRACES HOST_CORPUS}
HOST=${3:?usage: safe_outputs.sh SNR TRACES HOST_CORPUS}
SNR=$(cd "$(dirname "$SNR")" && pwd)/$(basename "$SNR")  # the cases run inside $T
cd "$T" || fail "cd $T"
cp "$TRACES/ta1-matmul-chain.snrt" t.snrt
cp "$TRACES/ta1-matmul-chain.snrt" keep.snrt
cp "$HOST/dwarf.snrh" h.snrh
cp h.snrh keep.snrh
mkdir d
ln t.snrt hard.snrt
ln -s t.snrt sym.snrt

# expect_input_refused WANT CMD...: exit 1, stderr names WANT and says --force does not help; t.snrt, h.snrh unchanged
expect_input_refused() {
  local want=$1
  shift
  run "$@"
  expect_rc 1
  expect_err "$want"
  expect_err "refused even with --force"
  cmp -s t.snrt keep.snrt || fail "$*: t.snrt changed"
  cmp -s h.snrh keep.snrh || fail "$*: h.snrh changed"
  ls -a | grep -q '^\.t\.snrt\.\|^\.h\.snrh\.' && fail "$*: a temporary stayed: $(ls -a)"
  return 0
}

# 1. the output is an input
for out in t.snrt ./t.snrt d/../t.snrt hard.snrt sym.snrt "$T/t.snrt"; do
  expect_input_refused "$out is" "$SNR" replay t.snrt -o "$out"
  expect_input_refused "$out is" "$SNR" replay t.snrt -o "$out" --force
  expect_input_refused "$out is" "$SNR" report t.snrt -o "$out" --force
  expect_input_refused "$out is" "$SNR" export perfetto t.snrt -o "$out" --force
done
expect_input_refused "sym.snrt is the input t.snrt (the same file)" "$SNR" replay t.snrt -o sym.snrt
run "$SNR" replay t.snrt -o m.snrm
expect_rc 0
cp m.snrm keep.snrm
expect_input_refused "m.snrm is an input" "$SNR" report m.snrm -o m.snrm --force
cmp -s m.snrm keep.snrm || fail "report -o on its metrics file changed it"
expect_input_refused "m.snrm is an input" "$SNR" export perfetto m.snrm -o m.snrm --force
cmp -s m.snrm keep.snrm || fail "export -o on its metrics file changed it"
# the trace a metrics file names is an input of what reads the metrics file
expect_input_refused "t.snrt is" "$SNR" report m.snrm -o t.snrt --force
expect_input_refused "t.snrt is" "$SNR" export perfetto m.snrm -o t.snrt --force
expect_input_refused "t.snrt is" "$SNR" analyze deps m.snrm --dot t.snrt --force
expect_input_refused "h.snrh is an input" "$SNR" export perfetto h.snrh -o h.snrh --force
expect_input_refused "h.snrh is an input" "$SNR" host report h.snrh --trace-events h.snrh --force
expect_input_refused "./h.snrh is the input h.snrh" "$SNR" host report h.snrh --trace-events ./h.snrh
ln -s h.snrh h.offcpu.folded
expect_input_refused "h.offcpu.folded is the input h.snrh" "$SNR" host report h.snrh --folded h --force

# 2. an output that exists: refused without --force, replaced with it
for w in "replay t.snrt -o" "report m.snrm -o" "export perfetto m.snrm -o" "analyze deps m.snrm --dot" \
         "host report h.snrh --trace-events"; do
  echo "user's file" >mine.txt
  run $SNR $w mine.txt
  expect_rc 1
  expect_err "mine.txt exists: snr does not replace a file unless given --force"
  grep -qx "user's file" mine.txt || fail "snr $w mine.txt (no --force) changed it"
  run $SNR $w mine.txt --force
  expect_rc 0
  grep -qx "user's file" mine.txt && fail "snr $w mine.txt --force did not replace it"
done
run "$SNR" replay t.snrt -o m.snrm
expect_rc 1; expect_err "m.snrm exists"
cmp -s m.snrm keep.snrm || fail "a refused replay changed m.snrm"
run "$SNR" replay t.snrt -o m.snrm --force
expect_rc 0

# 3. temporaries: a SIGKILLed writer's (pid 99999999 never runs) goes with the next write of that output;
# a live one's (this shell's), one without a pid and another output's stay
touch .m.snrm.99999999.AbCdEf .m.snrm.$$.AbCdEf .m.snrm.Z8JuAO .n.snrm.99999999.AbCdEf
run "$SNR" replay t.snrt -o m.snrm --force
expect_rc 0
[ -e .m.snrm.99999999.AbCdEf ] && fail "the dead writer's temporary stayed"
for f in .m.snrm.$$.AbCdEf .m.snrm.Z8JuAO .n.snrm.99999999.AbCdEf; do
  [ -e "$f" ] || fail "$f was removed"
done
rm -f .m.snrm.* .n.snrm.*

# 4. a report's side files: written with --inline-max 0, gone when the report no longer needs them
run "$SNR" report m.snrm -o r.html --inline-max 0
expect_rc 0
ls r.html.d/*.js >/dev/null 2>&1 || fail "--inline-max 0 wrote no side file"
touch r.html.d/notes.txt
run "$SNR" report m.snrm -o r.html --force
expect_rc 0
ls r.html.d/*.js >/dev/null 2>&1 && fail "stale side files stayed: $(ls r.html.d)"
[ -e r.html.d/notes.txt ] || fail "a file of the user's in r.html.d was removed"
rm r.html.d/notes.txt
run "$SNR" report m.snrm -o r.html --inline-max 0 --force
run "$SNR" report m.snrm -o r.html --force
[ -e r.html.d ] && fail "the emptied r.html.d stayed"
echo ok
