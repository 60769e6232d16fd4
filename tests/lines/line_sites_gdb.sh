#!/usr/bin/env bash
# `snr record --breakpoint FILE:LINE` against gdb's `break FILE:LINE`, on
# every line of two programs as users build them: TA1's softmax
# (tests/an/softmax.c, snr cc -O2 -g, gdb-multiarch) and a host program
# (sites_prog.c, cc -O2 -g -fomit-frame-pointer, libc; a static function
# inlined into two functions, gdb). Per line:
#   - gdb places it at that line: snr's address is gdb's (the first
#     location, when gdb has several);
#   - or snr's address is before the end of its function's prologue as gdb
#     sees it (where `break FUNCTION` stops) and gdb's is that end: gdb
#     moves a breakpoint out of the prologue (past the intrinsics inlined at
#     a TA1 kernel's start, too), snr starts the window at the line's first
#     statement so that it holds the line's code (docs/recording.md);
#   - or the line's row shares its address with the first row of code
#     inlined there (a TA1 intrinsic), which gdb keeps instead (the last row
#     at an address wins in gdb's line tables): gdb's address is later;
#   - gdb moves it to a later line, or has none: snr says the line has no
#     code, and the next line with code it names is not past gdb's.
# At least 8 lines of each program must agree exactly (not only the
# allowed differences).
# usage: line_sites_gdb.sh SNR LINE_SITES SRC_DIR
set -u
SNR=$1; SITES=$2; SRC=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# compare GDB ELF FILE NAME: every line of FILE
compare() {
  local gdb=$1 elf=$2 file=$3 name=$4 n exact=0 moved=0 prologue=0 inl=0
  n=$(wc -l <"$file")
  local cmds=() specs=()
  for i in $(seq 1 "$n"); do
    cmds+=(-ex "echo @$i\n" -ex "break $name:$i")
    specs+=("$name:$i")
  done
  "$gdb" -nx -batch "${cmds[@]}" "$elf" >"$T/gdb.txt" 2>&1 </dev/null
  "$SITES" "$elf" "${specs[@]}" >"$T/snr.txt" || fail "line_sites $elf"
  # gdb's answer per line: "LINE ADDR GDBLINE", or "LINE none"
  awk '/^@/ {at = substr($0, 2); next}
       /^No line/ && at {print at, "none"; at = ""}
       /^Breakpoint/ && at {a = $4; sub(":", "", a); l = $0
         if (l ~ /, line [0-9]+\.$/) sub(/.*, line /, "", l); else { sub(/\. \([0-9]+ locations\)$/, "", l); sub(/.*:/, "", l) }
         sub(/\.$/, "", l); print at, a, l; at = ""}' "$T/gdb.txt" >"$T/g.txt"
  # the end of each function's prologue as gdb sees it: where it puts the
  # first line whose code starts at the function's entry
  : >"$T/fn.txt"
  while read -r spec addr fn nsites entry own; do
    [ "$entry" = 1 ] || continue
    grep -q "^$fn " "$T/fn.txt" && continue
    echo "$fn $(awk -v l="${spec##*:}" '$1 == l {print $2}' "$T/g.txt")" >>"$T/fn.txt"
  done < <(awk 'NF == 6' "$T/snr.txt")
  for i in $(seq 1 "$n"); do
    local g s
    g=$(awk -v l="$i" '$1 == l' "$T/g.txt")
    s=$(grep "^$name:$i " "$T/snr.txt")
    [ -n "$s" ] || fail "$name:$i: line_sites printed nothing"
    set -- $s
    local gaddr gline
    read -r _ gaddr gline <<<"$g"
    if [ -z "$g" ]; then
      fail "$name:$i: gdb said nothing readable: $(cat "$T/gdb.txt")"
    elif [ "$gaddr" = none ]; then
      [ "$2" = none ] && [ "$4" = 0 ] || fail "$name:$i: gdb has no line here or after, snr says: $s"
      continue
    fi
    if [ "$2" = none ]; then
      # gdb moves the breakpoint to the next line with code: snr names it
      [ "$3" -lt "$i" ] && [ "$4" -gt "$i" ] || fail "$name:$i: snr names the lines around as $3 and $4"
      local next nfn nfend
      read -r _ next nfn _ <<<"$(grep "^$name:$4 " "$T/snr.txt")"
      nfend=$(awk -v f="$nfn" '$1 == f {print $2}' "$T/fn.txt")
      [ $((gaddr)) -eq $((next)) ] || { [ -n "$nfend" ] && [ $((gaddr)) -eq $((nfend)) ]; } ||
        fail "$name:$i: gdb moves it to $gaddr, snr names line $4 at $next as the next with code"
      moved=$((moved + 1))
    elif [ $(($2)) -eq $((gaddr)) ] && [ "$gline" = "$i" ]; then
      exact=$((exact + 1))
    elif fend=$(awk -v f="$3" '$1 == f {print $2}' "$T/fn.txt") && [ -n "$fend" ] &&
      [ $(($2)) -lt $((fend)) ] && [ $((gaddr)) -eq $((fend)) ]; then
      prologue=$((prologue + 1)) # snr in the prologue, gdb past it
    elif [ "$6" = 0 ] && [ $((gaddr)) -gt $(($2)) ]; then
      inl=$((inl + 1)) # gdb sees the inlined code's row at snr's address
    else
      fail "$name:$i: snr $s, gdb $g"
    fi
  done
  [ "$exact" -ge 8 ] || fail "$name: only $exact lines at gdb's address"
  echo "$name: $exact lines at gdb's address, $prologue in a prologue (gdb past it), $inl at inlined code's row (gdb later), $moved without code"
}

if command -v gdb-multiarch >/dev/null; then
  "$SNR" cc -O2 -g "$SRC/../an/softmax.c" -o "$T/softmax.elf" || fail "snr cc softmax.c"
  compare gdb-multiarch "$T/softmax.elf" "$SRC/../an/softmax.c" softmax.c
else
  echo "gdb-multiarch missing: TA1 part skipped"
fi
command -v gdb >/dev/null || { echo "gdb missing"; exit 77; }
${CC:-cc} -O2 -g -fomit-frame-pointer "$SRC/sites_prog.c" -o "$T/sites" || fail "cc sites_prog.c"
compare gdb "$T/sites" "$SRC/sites_prog.c" sites_prog.c
# a file no line table names
"$SITES" "$T/sites" nosuch.c:3 | grep -q "no line table names a file nosuch.c" || fail "an unknown file: $("$SITES" "$T/sites" nosuch.c:3)"
echo "ok: breakpoints by FILE:LINE where gdb puts them"
