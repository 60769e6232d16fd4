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

# usage: render_report DIR HTML WIDTH,HEIGHT [BUDGET_MS]: opens HTML in
# headless Chromium (Debian's; installed when missing) with no virtual-time
# budget, so what is checked is what the page drew by its load; writes
# DIR/dom.html (the DOM after the scripts ran) and DIR/shot.png (a screenshot
# of that size) and fails on any console message. BUDGET_MS: a virtual-time
# budget, for pages that check what the report draws after its load (a zoom
# or a page decoded from the packed data, which is asynchronous).
render_report() {
  local dir=$1 page=$2 size=$3 budget=${4:-} sudo=""
  if ! command -v chromium >/dev/null; then
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    (export DEBIAN_FRONTEND=noninteractive; $sudo apt-get update -qq &&
      $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null) || fail "cannot install chromium"
  fi
  chrome() {
    timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
      --disable-component-update --no-first-run --user-data-dir="$(mktemp -d -p "$dir")" \
      --hide-scrollbars --window-size="$size" --enable-logging=stderr --v=0 \
      ${budget:+--virtual-time-budget="$budget"} "$@"
  }
  chrome --dump-dom "file://$page" >"$dir/dom.html" 2>"$dir/dom.err" ||
    fail "chromium --dump-dom: $(tail -5 "$dir/dom.err")"
  if grep -E 'CONSOLE|Uncaught' "$dir/dom.err" | grep -vi 'dbus' >"$dir/console.txt"; then
    fail "console messages: $(cat "$dir/console.txt")"
  fi
  chrome --screenshot="$dir/shot.png" "file://$page" >/dev/null 2>"$dir/shot.err" ||
    fail "chromium --screenshot: $(tail -5 "$dir/shot.err")"
}
