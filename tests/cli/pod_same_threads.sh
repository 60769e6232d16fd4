# Sourced by the pod tests (after lib.sh): same_every_threads NAME CHIPS
# replays the pod recording T/NAME.snrs with --threads 1, 2, 3 and 8, each as
# the table, as --json and with -o MSET (the set always at one path, which
# --json names), and fails unless each is the same bytes as --threads 1's
# (every file of the set too). stderr must say that min(N, CHIPS) threads ran
# the chips' own parts, and that between 1 and that many ran the chips'
# private stretches of the timing simulation (which threads take which
# stretches varies from run to run; the bytes must not).
# sim_threads_said WHAT MAX: T/err says K threads ran the private stretches, 1 <= K <= MAX
sim_threads_said() {
  local k
  k=$(sed -n "s/^snr: replay: .*; \([0-9]*\) the chips' private stretches of the timing simulation.*/\1/p" "$T/err")
  [ -n "$k" ] && [ "$k" -ge 1 ] && [ "$k" -le "$2" ] ||
    fail "$1: stderr does not say between 1 and $2 threads ran the private stretches: $(cat "$T/err")"
}
same_every_threads() {
  local name=$1 n=$2 t want m
  for t in 1 2 3 8; do
    want=$((t < n ? t : n))
    run "$SNR" replay "$T/$name.snrs" --threads "$t"
    expect_rc 0
    mv "$T/out" "$T/$name.t$t.txt"
    rm -rf "$T/same.mset"
    run "$SNR" replay "$T/$name.snrs" --threads "$t" --json -o "$T/same.mset"
    expect_rc 0
    grep -q "^snr: replay: $want threads\? ran the chips' own parts" "$T/err" ||
      fail "$name --threads $t: stderr does not say $want threads ran the chips' parts: $(cat "$T/err")"
    sim_threads_said "$name --threads $t" "$want"
    mv "$T/out" "$T/$name.t$t.json"
    rm -rf "$T/$name.t$t.mset"
    mv "$T/same.mset" "$T/$name.t$t.mset"
    [ "$t" = 1 ] && continue
    cmp -s "$T/$name.t1.txt" "$T/$name.t$t.txt" ||
      fail "$name --threads $t: the table differs from --threads 1's: $(diff "$T/$name.t1.txt" "$T/$name.t$t.txt" | head -5)"
    cmp -s "$T/$name.t1.json" "$T/$name.t$t.json" ||
      fail "$name --threads $t: --json differs from --threads 1's: $(diff "$T/$name.t1.json" "$T/$name.t$t.json" | head -5)"
    diff -r "$T/$name.t1.mset" "$T/$name.t$t.mset" >/dev/null ||
      fail "$name --threads $t: -o MSET differs from --threads 1's: $(diff -rq "$T/$name.t1.mset" "$T/$name.t$t.mset" | head -3)"
  done
  [ "$(ls "$T/$name.t1.mset" | grep -c '^window-[0-9]*\.snrm$')" -eq "$n" ] ||
    fail "$name: the set has not $n metrics files: $(ls "$T/$name.t1.mset")"
}
