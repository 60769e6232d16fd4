# Shared by the analysis tests: build tests/an/an_prog.c, record window()
# from `snr device --gdb`, replay it into a metrics file.
# usage: . lib.sh; record_an_prog SNR DIR   (makes DIR/p.elf, DIR/a.snrt, DIR/a.snrm)
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "${BASH_SOURCE[0]}")/../gdb_device.sh"
record_an_prog() {
  local snr=$1 dir=$2
  "$snr" cc -O1 "$(dirname "${BASH_SOURCE[0]}")/an_prog.c" -o "$dir/p.elf" || fail "snr cc"
  gdb_device "$snr" "$dir" "$dir/p.elf"
  "$snr" record --target tcp:127.0.0.1:$PORT --elf "$dir/p.elf" --breakpoint window --count 1400 \
    -o "$dir/a.snrt" 2>"$dir/rec.err" || { kill $DEV; fail "record: $(cat "$dir/rec.err")"; }
  wait $DEV
  "$snr" replay "$dir/a.snrt" -o "$dir/a.snrm" >"$dir/replay.txt" 2>&1 || fail "replay: $(cat "$dir/replay.txt")"
}
# usage: record_attn SNR SRCDIR DIR [CC-OPTIONS...]: builds workloads/attn.c
# (DIR/p.elf), records attn() from `snr device --gdb` (DIR/a.snrt), replays
# it into DIR/a.snrm (replay's output in DIR/replay.txt).
record_attn() {
  local snr=$1 src=$2 dir=$3
  shift 3
  "$snr" cc "$@" "$src/workloads/attn.c" -o "$dir/p.elf" || fail "snr cc attn.c"
  gdb_device "$snr" "$dir" "$dir/p.elf"
  "$snr" record --target tcp:127.0.0.1:$PORT --elf "$dir/p.elf" --breakpoint attn --count 100 \
    -o "$dir/a.snrt" 2>"$dir/rec.err" || { kill $DEV; fail "record: $(cat "$dir/rec.err")"; }
  wait $DEV
  "$snr" replay "$dir/a.snrt" -o "$dir/a.snrm" >"$dir/replay.txt" 2>&1 || fail "replay: $(cat "$dir/replay.txt")"
}
