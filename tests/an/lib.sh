# Shared by the analysis tests: build tests/an/an_prog.c, record window()
# from `snr device --gdb`, replay it into a metrics file.
# usage: . lib.sh; record_an_prog SNR DIR   (makes DIR/p.elf, DIR/a.snrt, DIR/a.snrm)
fail() { echo "FAIL: $*" >&2; exit 1; }
record_an_prog() {
  local snr=$1 dir=$2 port="" dev
  "$snr" cc -O1 "$(dirname "${BASH_SOURCE[0]}")/an_prog.c" -o "$dir/p.elf" || fail "snr cc"
  rm -f "$dir/dev.err"  # the device writes its port here; no stale port from an earlier run
  "$snr" device "$dir/p.elf" --gdb tcp:127.0.0.1:0 --halt 2>"$dir/dev.err" >"$dir/dev.out" &
  dev=$!
  for _ in $(seq 100); do
    port=$(grep -o '127.0.0.1:[0-9]*' "$dir/dev.err" 2>/dev/null | head -1 | cut -d: -f2)
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || { kill $dev; fail "device did not start: $(cat "$dir/dev.err")"; }
  "$snr" record --target tcp:127.0.0.1:$port --elf "$dir/p.elf" --breakpoint window --count 1400 \
    -o "$dir/a.snrt" 2>"$dir/rec.err" || { kill $dev; fail "record: $(cat "$dir/rec.err")"; }
  wait $dev
  "$snr" replay "$dir/a.snrt" -o "$dir/a.snrm" >"$dir/replay.txt" 2>&1 || fail "replay: $(cat "$dir/replay.txt")"
}
