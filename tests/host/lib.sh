# Helpers for the host tests: the CLI tests' helpers (tests/cli/lib.sh: $SNR,
# $T, run, expect_*) and a skip (exit 77 with the reason) where the host
# recorder cannot run here.
. "$(dirname "$0")/../cli/lib.sh"
skip() { echo "SKIP: $*"; exit 77; }
# Skips unless this machine can load the recorder's eBPF programs: root, a
# kernel with BTF, snr built with them, and a recording of /bin/true works.
need_host_record() {
  [ "$(id -u)" -eq 0 ] || skip "needs root to load eBPF programs"
  [ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
  run "$SNR" host record -o "$T/probe.snrh" -- /bin/true
  grep -q "built without eBPF" "$T/err" && skip "snr built without eBPF"
  [ "$rc" -eq 0 ] || skip "eBPF unavailable here: $(head -c 300 "$T/err")"
}
