#!/usr/bin/env bash
# --help tells the truth: every command `snr --help` lists runs and has
# its own --help (host record and host report each theirs); an unknown
# command is an error; a missing required option or input is named first.
. "$(dirname "$0")/lib.sh"
run "$SNR" --help
expect_rc 0
cmds=$(awk '/^commands:/{f=1;next} f&&/^  [a-z]/{print $1} f&&/^$/{f=0}' "$T/out")
[ -n "$cmds" ] || fail "snr --help lists no commands"
for c in $cmds; do
  run "$SNR" "$c" --help
  expect_rc 0; expect_out "usage: snr $c"
done
# subcommands with their own --help: each its own text
run "$SNR" host record --help
expect_rc 0; expect_out "usage: snr host record"
cp "$T/out" "$T/host_record.txt"
run "$SNR" host report --help
expect_rc 0; expect_out "usage: snr host report"
cmp -s "$T/out" "$T/host_record.txt" && fail "snr host record --help and snr host report --help print the same text"
grep -q "usage: snr host report" "$T/host_record.txt" && fail "snr host record --help describes host report"
grep -q "usage: snr host record" "$T/out" && fail "snr host report --help describes host record"
# a missing required option or input names itself first (the first line of stderr), exit 2
expect_first() { # WANT CMD...
  local want=$1
  shift
  run "$@"
  expect_rc 2
  head -1 "$T/err" | grep -qF -- "$want" || fail "$*: the first line does not say '$want': $(head -3 "$T/err")"
}
expect_first "snr: report: -o OUT.html is required" "$SNR" report x.snrm
expect_first "snr: export: -o OUT is required" "$SNR" export perfetto x.snrm
expect_first "snr: export: give a format: perfetto" "$SNR" export
expect_first "snr: record: -o T.snrt is required" "$SNR" record --target tcp:127.0.0.1:1 --breakpoint main --count 9
expect_first "snr: record: --count N is required" "$SNR" record --target tcp:127.0.0.1:1 --breakpoint main -o t.snrt
expect_first "snr: host record: -o H.snrh is required" "$SNR" host record -- /bin/true
expect_first "snr: host report: give a host trace" "$SNR" host report
expect_first "snr: host: give a subcommand: record, report or causal" "$SNR" host
expect_first "snr: trace: give a subcommand: info, dump, verify or finish" "$SNR" trace
expect_first "snr: trace info: give a trace" "$SNR" trace info
expect_first "snr: check: give the folder" "$SNR" check
expect_first "snr: analyze: give an analysis" "$SNR" analyze
expect_first "snr: analyze dma: give a trace or metrics file" "$SNR" analyze dma --json
expect_first "snr: annotate: give a trace or metrics file" "$SNR" annotate
expect_first "snr: replay: give a trace" "$SNR" replay
expect_first "snr: cc: no output file (-o PROG.elf)" "$SNR" cc x.c
run "$SNR" frobnicate
expect_rc 2; expect_err "unknown command 'frobnicate'"
run "$SNR"
expect_rc 2
echo ok
