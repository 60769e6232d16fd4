#!/usr/bin/env bash
# snr host record's kernel stack map (recorder/host/stack_map.h): one map
# serves the off-CPU (scheduler) and on-CPU (sampling) programs, sized by
# --stack-map, and the stacks it could not keep are counted and reported.
# On tests/host/host_stacks.c built with frame pointers, --unwind fp (user
# stacks also go through the map):
#   - --stack-map outside 1..65536 or not a number: exit 2, named
#   - default: the off-CPU stacks (main;clock_nanosleep, user and kernel)
#     and the on-CPU ones (main;clock_gettime) both come out of the one map; its size
#     and the stacks it took are in the report's --json (stack_map)
#   - --stack-map 1: one bucket, so every stack but the first is lost; the
#     losses are counted (user and kernel), the report warns with the
#     counts its --json gives, and the run still succeeds
# Needs root and eBPF: exits 77 (skip) otherwise.
. "$(dirname "$0")/lib.sh"
FP=${2:?host_stacks_fp}

need_host_record

for bad in 0 65537 lots; do
  run "$SNR" host record --stack-map "$bad" -o "$T/x.snrh" -- /bin/true
  expect_rc 2; expect_err "--stack-map wants a number of stacks from 1 to 65536, not '$bad'"
done

# jq-less JSON reads: FIELD of stack_map.KIND in the report's --json
smap() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["stack_map"]; print(d[sys.argv[2]] if sys.argv[3] == "-" else d[sys.argv[2]][sys.argv[3]])' "$@"; }

run "$SNR" host record --force --unwind fp -F 997 -o "$T/d.snrh" -- "$FP" sleepspin 2
expect_rc 0
run "$SNR" host report "$T/d.snrh" --folded "$T/d" --force
expect_rc 0
# (a frame-pointer walk skips sleeper and spinner: libc's calls keep no frame)
grep -Eq ";main;clock_nanosleep;.*do_nanosleep_\[k\]" "$T/d.offcpu.folded" ||
  fail "no off-CPU user+kernel stack main;clock_nanosleep;...do_nanosleep: $(head -3 "$T/d.offcpu.folded")"
grep -q ";main;clock_gettime" "$T/d.oncpu.folded" || fail "no on-CPU stack under main;clock_gettime: $(head -3 "$T/d.oncpu.folded")"
"$SNR" host report --json "$T/d.snrh" >"$T/d.json" || fail "host report --json failed"
[ "$(smap "$T/d.json" entries - -)" = 16384 ] || fail "stack map entries: $(smap "$T/d.json" entries - -), want 16384"
for kind in kernel user; do
  [ "$(smap "$T/d.json" "$kind" taken)" -gt 0 ] || fail "no $kind stack taken: $(cat "$T/d.json")"
done
echo "default: $(smap "$T/d.json" kernel taken) kernel and $(smap "$T/d.json" user taken) user stack ids from one map"

run "$SNR" host record --force --unwind fp -F 997 --stack-map 1 -o "$T/one.snrh" -- "$FP" sleepspin 2
expect_rc 0
run "$SNR" host report "$T/one.snrh"
expect_rc 0
"$SNR" host report --json "$T/one.snrh" >"$T/one.json" || fail "host report --json failed"
[ "$(smap "$T/one.json" entries - -)" = 1 ] || fail "stack map entries: $(smap "$T/one.json" entries - -), want 1"
for kind in kernel user; do
  lost=$(smap "$T/one.json" "$kind" lost) taken=$(smap "$T/one.json" "$kind" taken)
  [ "$lost" -gt 0 ] || fail "--stack-map 1: no $kind stack lost: $(cat "$T/one.json")"
  expect_out "warning: $lost of $((lost + taken)) $kind stacks lost"
done
echo "--stack-map 1: $(smap "$T/one.json" kernel lost) kernel and $(smap "$T/one.json" user lost) user stacks lost, reported"
