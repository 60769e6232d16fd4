# Sourced by the scripts that record from `snr device --gdb`.
#
# gdb_device SNR DIR ELF [device args...]: starts `snr device ELF --gdb
# tcp:127.0.0.1:0 --halt` in the background (stdout in DIR/dev.out, stderr in
# DIR/dev.err) and waits for the port it announces; sets DEV (its pid) and
# PORT. Exits 1 naming what the device said if it does not come up.
gdb_device() {
  local snr=$1 dir=$2 elf=$3
  shift 3
  rm -f "$dir/dev.err" # the device writes its port here; no stale port from an earlier run
  "$snr" device "$elf" --gdb tcp:127.0.0.1:0 --halt "$@" 2>"$dir/dev.err" >"$dir/dev.out" &
  DEV=$!
  PORT=""
  for _ in $(seq 200); do
    PORT=$(grep -o '127.0.0.1:[0-9]*' "$dir/dev.err" 2>/dev/null | head -1 | cut -d: -f2)
    [ -n "$PORT" ] && return 0
    kill -0 "$DEV" 2>/dev/null || break
    sleep 0.05
  done
  echo "FAIL: the device did not start its GDB server: $(cat "$dir/dev.err")" >&2
  kill "$DEV" 2>/dev/null
  exit 1
}
