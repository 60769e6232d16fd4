#!/usr/bin/env bash
# Every region `snr analyze suggest` names is free for the moved data's whole
# lifetime: on the planted unsafe move of tests/analyze/rowsum_reuse.c (VMEM
# 512 KiB; the tile's DMA cannot move onto its own buffer, and the one other
# region not in use while it would be in flight, V_F, takes the row sums
# after the tile arrives but before its last read), the move is refused with
# that reason, and no suggestion names V_F.
# usage: suggest_safety.sh SNR
set -u
SNR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
CFG="$HERE/../../workloads/vmem-512k.json"
"$SNR" cc -O2 -g "$HERE/rowsum_reuse.c" -o "$T/rr.elf" 2>"$T/cc.err" || fail "snr cc: $(cat "$T/cc.err")"
. "$HERE/../gdb_device.sh"
gdb_device "$SNR" "$T" "$T/rr.elf" --config "$CFG"
"$SNR" record --target tcp:127.0.0.1:"$PORT" --elf "$T/rr.elf" --breakpoint tile --count 100000 --until-return \
  --config "$CFG" -o "$T/rr.snrt" --kill 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
wait "$DEV"; DEV=""
"$SNR" analyze suggest "$T/rr.snrt" --verify --dmas >"$T/sug.txt" 2>&1 || fail "suggest: $(cat "$T/sug.txt")"
"$SNR" analyze suggest "$T/rr.snrt" --verify --json >"$T/sug.json" 2>"$T/sug.err" || fail "suggest --json: $(cat "$T/sug.err")"
LINE=$(grep -n 'ta_dma(V_A, ta_addr(tiles\[1\])' "$HERE/rowsum_reuse.c" | cut -d: -f1)
grep -qF "at rowsum_reuse.c:$LINE (tile) (pc 0x" "$T/sug.txt" || fail "the DMA at line $LINE is not listed: $(cat "$T/sug.txt")"
python3 - "$T/sug.json" "$LINE" <<'PY' || fail "the unsafe move: $(cat "$T/sug.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
line = int(sys.argv[2])
V_F = (0x20010000, 0x20020000)
late = [s for s in d["stalled_dmas"] if s["dma"].get("source", {}).get("line") == line]
assert len(late) == 1, d["stalled_dmas"]
s = late[0]
assert not s["suggested"], ("the move onto the row sums' region is suggested", s)
assert "free from the earlier point to the moved data's last read" in s["reason"], s
for x in d["stalled_dmas"]:
    f = x.get("vmem_free")
    if x["suggested"] and f:
        assert f["hi"] <= V_F[0] or f["lo"] >= V_F[1], ("a suggestion names the row sums' region", x)
print(f"refused: {s['reason']}")
PY
echo ok
