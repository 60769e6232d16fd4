#!/usr/bin/env bash
# snr device --gdb: tcp::PORT listens on loopback only, with a backlog of 8;
# a named non-loopback address is warned about; a debugger that sends
# requests and never reads the replies is dropped (after 10 s), and the
# next debugger is served instead of waiting behind it for ever.
. "$(dirname "$0")/lib.sh"
"$SNR" cc -O1 "$(dirname "$0")/../rec/rec_prog.c" -o "$T/p.elf" || fail "snr cc"
start() { # endpoint -> PORT, DEV
  "$SNR" device "$T/p.elf" --gdb "$1" --halt 2>"$T/dev.err" >/dev/null &
  DEV=$!
  for _ in $(seq 200); do
    PORT=$(sed -n 's/.*waiting for gdb on tcp:.*:\([0-9]*\)$/\1/p' "$T/dev.err" | head -1)
    [ -n "$PORT" ] && return 0
    sleep 0.05
  done
  fail "device did not start: $(cat "$T/dev.err")"
}
start tcp::0
grep -q "waiting for gdb on tcp:127.0.0.1:" "$T/dev.err" || fail "tcp::0 should listen on 127.0.0.1: $(cat "$T/dev.err")"
grep -q "warning" "$T/dev.err" && fail "a loopback listener was warned about: $(cat "$T/dev.err")"
if command -v ss >/dev/null; then
  backlog=$(ss -ltn "sport = :$PORT" | awk 'NR==2{print $3}')
  [ "$backlog" -ge 8 ] || fail "listen backlog $backlog, want at least 8"
fi
python3 - "$PORT" <<'PY' || fail "a second debugger was not served after the first stopped reading"
import socket, sys, time
port = int(sys.argv[1])
def pkt(body):
    return b"$" + body + b"#%02x" % (sum(body) & 0xff)
stalled = socket.create_connection(("127.0.0.1", port))
stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
stalled.settimeout(30)
req = pkt(b"m10000,800") * 64
sent = 0
try:
    while sent < 64 << 20:  # far more replies than any socket buffer holds
        stalled.sendall(req)
        sent += len(req)
except OSError:
    pass  # the server dropped us: what should happen
second = socket.create_connection(("127.0.0.1", port))
second.settimeout(120)  # generous: the server gives up on the first after 10 s
second.sendall(pkt(b"?"))
data = b""
while b"#" not in data:
    chunk = second.recv(4096)
    if not chunk:
        sys.exit("the second debugger's connection was closed")
    data += chunk
print("second debugger served:", data[:20])
PY
kill $DEV 2>/dev/null; wait $DEV 2>/dev/null
grep -q "read no reply for 10 s" "$T/dev.err" || fail "the drop was not said: $(cat "$T/dev.err")"
start tcp:0.0.0.0:0
kill $DEV 2>/dev/null; wait $DEV 2>/dev/null
grep -q "warning: device: --gdb tcp:0.0.0.0:0 listens beyond this machine" "$T/dev.err" ||
  fail "0.0.0.0 was not warned about: $(cat "$T/dev.err")"
echo ok
