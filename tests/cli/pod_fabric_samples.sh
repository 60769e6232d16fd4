#!/usr/bin/env bash
# A pod replay's fabric samples (docs/ta1-timing.md, "The pod: ports and
# links"): every port's and link's series in `snr replay POD -o MSET` holds
# the fabric's last sampling period, as `snr device --timing -o MSET` does.
# k chips (1, 2) pull 1 MiB each from chip 0's HBM port (100 B/cycle, so the
# transfers end inside a period, not on its boundary); recorded with `snr
# record --pod` from main on, replayed with -o (and the run's --config):
# `snr analyze pod` of the replay's set gives the port k MiB, busy k x 1 MiB
# / 100 cycles, and every resource the bytes, busy and contended cycles of
# the device's own set of the same run.
# usage: pod_fabric_samples.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"

cp "$(dirname "$0")/pull_port.c" "$T/pull.c"
echo '{"dma": {"hbm_bytes_per_cycle": 100, "ici_bytes_per_cycle": 1000}}' >"$T/port.json"
for k in 1 2; do
  "$SNR" cc -O2 "$T/pull.c" -DPULLERS=$k -o "$T/pull$k.elf" || fail "snr cc pull $k"
  run "$SNR" device "$T/pull$k.elf" --chips 4 --timing --config "$T/port.json" -o "$T/dev$k"
  expect_rc 0
  run "$SNR" analyze pod "$T/dev$k" --json
  expect_rc 0
  cp "$T/out" "$T/dev$k.json"
  gdb_device "$SNR" "$T" "$T/pull$k.elf" --chips 4 --config "$T/port.json"
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$T/pull$k.elf" --breakpoint main --count 100000 \
    -o "$T/pull$k.snrs"
  expect_rc 0
  wait "$DEV" || fail "$k pullers: the device exited $? after the recording: $(tail -3 "$T/dev.err")"
  run "$SNR" replay "$T/pull$k.snrs" --config "$T/port.json" -o "$T/rep$k"
  expect_rc 0
  run "$SNR" analyze pod "$T/rep$k" --json
  expect_rc 0
  python3 - "$T/out" "$T/dev$k.json" "$k" <<'PY' || fail "$k pullers: the replay's fabric samples"
import json, sys
rep, dev, k = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
res = {r["name"]: r for r in rep["resources"]}
port = res["chip 0 HBM port"]
# the whole MiB per puller: the last period's share too (1 MiB at 100 B/cycle ends 486 cycles into a period)
assert abs(port["bytes"] - k * 1048576) <= 1, ("port bytes", port["bytes"], k * 1048576)
assert abs(port["busy_cycles"] - k * 1048576 / 100) <= 2, ("port busy", port["busy_cycles"])
want = {r["name"]: r for r in dev["resources"]}
assert set(res) == set(want), (sorted(res), sorted(want))
for name, r in res.items():
    for key in ("bytes", "busy_cycles", "contended_cycles"):
        assert abs(r[key] - want[name][key]) <= 2, (name, key, r[key], want[name][key])
print("%d puller(s): port %.0f bytes, busy %.0f cycles, as the device's set" % (k, port["bytes"], port["busy_cycles"]))
PY
done
exit 0
