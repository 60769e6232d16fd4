# Sourced by the pod tests (after lib.sh): same_every_threads NAME CHIPS
# replays the pod recording T/NAME.snrs with --threads 1, 2, 3 and 8, each as
# the table, as --json and with -o MSET (the set always at one path, which
# --json names), and fails unless each is the same bytes as --threads 1's
# (every file of the set too). stderr must say that min(N, CHIPS) threads ran
# the chips' own parts and, with -o and N > 2, that min(N - 2, CHIPS) threads
# wrote the chips' metrics events while the timing simulation ran (with 2,
# none: the simulation's thread writes them)
# (replayer/pod_metrics_threads.h): a run that fell back to the simulation's
# thread fails.
same_every_threads() {
  local name=$1 n=$2 t want m
  for t in 1 2 3 8; do
    want=$((t < n ? t : n))
    m=$((t - 2 < n ? t - 2 : n))
    run "$SNR" replay "$T/$name.snrs" --threads "$t"
    expect_rc 0
    mv "$T/out" "$T/$name.t$t.txt"
    rm -rf "$T/same.mset"
    run "$SNR" replay "$T/$name.snrs" --threads "$t" --json -o "$T/same.mset"
    expect_rc 0
    grep -q "^snr: replay: $want threads\? ran the chips' own parts" "$T/err" ||
      fail "$name --threads $t: stderr does not say $want threads ran the chips' parts: $(cat "$T/err")"
    if [ "$m" -gt 0 ]; then
      grep -q "^snr: replay: $m threads\? wrote the chips' metrics events while the timing simulation ran" "$T/err" ||
        fail "$name --threads $t -o: stderr does not say $m threads wrote the metrics events: $(cat "$T/err")"
    elif grep -q "wrote the chips' metrics events" "$T/err"; then
      fail "$name --threads $t -o: the metrics events went to a thread of their own: $(cat "$T/err")"
    fi
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
