#!/usr/bin/env bash
# A recorded file's strings reach no output raw: a trace whose META holds
# escape sequences (ESC ] title BEL, ESC [31m, ESC [2J) in its target,
# breakpoint and recorder strings (chunk_forge setkey, valid checksums), is read
# by trace info, trace dump and replay; nothing they print holds an ESC or
# BEL byte, and the strings show as \xHH. The replay's metrics file keeps
# the escaped META, and `snr analyze util` on it prints none either.
# usage: meta_escape.sh SNR CHUNK_FORGE TRACE
set -u
SNR=$1; FORGE=$2; IN=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# three META strings spliced in as JSON text (\u escapes: the bytes they stand for)
"$FORGE" "$IN" "$T/b1.snrt" setkey 0 target '"tcp:\u001b]0;pwned\u0007\u001b[31mred"' || fail "chunk_forge target"
"$FORGE" "$T/b1.snrt" "$T/b2.snrt" setkey 0 breakpoint '"win\u001b[2Jdow"' || fail "chunk_forge breakpoint"
"$FORGE" "$T/b2.snrt" "$T/bad.snrt" setkey 0 recorder '"snr\u001b[5mblink\u007f"' || fail "chunk_forge recorder"
raw() { LC_ALL=C grep -c $'[\x1b\x07\x7f]' "$1"; }
"$SNR" trace info "$T/bad.snrt" >"$T/info.txt" 2>&1 || fail "trace info: $(cat "$T/info.txt")"
[ "$(raw "$T/info.txt")" = 0 ] || fail "trace info printed control bytes: $(od -c "$T/info.txt" | head)"
grep -qF 'target tcp:\x1b]0;pwned\x07\x1b[31mred' "$T/info.txt" || fail "the target is not shown escaped: $(cat "$T/info.txt")"
grep -qF 'win\x1b[2Jdow' "$T/info.txt" || fail "the breakpoint is not shown escaped: $(cat "$T/info.txt")"
grep -qF 'snr\x1b[5mblink\x7f' "$T/info.txt" || fail "the recorder is not shown escaped: $(cat "$T/info.txt")"
"$SNR" trace dump "$T/bad.snrt" --limit 5 >"$T/dump.txt" 2>&1 || fail "trace dump: $(cat "$T/dump.txt")"
[ "$(raw "$T/dump.txt")" = 0 ] || fail "trace dump printed control bytes"
"$SNR" replay "$T/bad.snrt" -o "$T/bad.snrm" >"$T/replay.txt" 2>&1 || fail "replay: $(cat "$T/replay.txt")"
[ "$(raw "$T/replay.txt")" = 0 ] || fail "replay printed control bytes"
"$SNR" analyze util "$T/bad.snrm" >"$T/util.txt" 2>&1 || fail "analyze util: $(cat "$T/util.txt")"
[ "$(raw "$T/util.txt")" = 0 ] || fail "analyze util printed control bytes"
echo "ok: META strings are escaped in every text output"
