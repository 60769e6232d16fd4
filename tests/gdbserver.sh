# Sourced by the scripts that record through gdbserver.
#
# gdbserver_start DIR PROG [ARGS...]: starts `gdbserver --once
# 127.0.0.1:0 PROG ARGS` in the background (its output in DIR/gs.out) and
# waits for the port it announces; sets GS (its pid) and PORT. Exits 1
# naming what gdbserver said if it does not come up.
gdbserver_start() {
  local dir=$1
  shift
  rm -f "$dir/gs.out" # no stale port from an earlier launch (the background redirect may come late)
  gdbserver --once 127.0.0.1:0 "$@" >"$dir/gs.out" 2>&1 &
  GS=$!
  PORT=""
  for _ in $(seq 100); do
    PORT=$(sed -n 's/^Listening on port \([0-9]*\)/\1/p' "$dir/gs.out" 2>/dev/null)
    [ -n "$PORT" ] && return 0
    sleep 0.05
  done
  echo "FAIL: gdbserver did not start: $(cat "$dir/gs.out")" >&2
  kill "$GS" 2>/dev/null
  exit 1
}
