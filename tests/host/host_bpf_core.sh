#!/usr/bin/env bash
# The recorder's BPF objects and the kernel's BTF: libbpf reads and parses
# /sys/kernel/btf/vmlinux (5.5 MB) for each object that has CO-RE
# relocations, so only offcpu (task_struct, sched_entity) may have them;
# oncpu, buckets and progress read registers through host_bpf.h's fixed
# struct snrh_pt_regs and must relocate nothing. `bpftool gen min_core_btf`
# keeps, of the kernel's BTF, the types an object's relocations name: none
# for those three, task_struct for offcpu (which shows the check can see
# relocations at all). Exits 77 (skip) without kernel BTF.
# usage: host_bpf_core.sh BPFTOOL ONCPU.bpf.o BUCKETS.bpf.o PROGRESS.bpf.o OFFCPU.bpf.o
set -u
BPFTOOL=$1
VMLINUX=/sys/kernel/btf/vmlinux
[ -r "$VMLINUX" ] || { echo "SKIP: no kernel BTF ($VMLINUX)"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# types OBJ: the struct and union names its CO-RE relocations need, one a line
types() {
  "$BPFTOOL" gen min_core_btf "$VMLINUX" "$T/min.btf" "$1" >"$T/log" 2>&1 ||
    { echo "FAIL: bpftool gen min_core_btf $1: $(tail -3 "$T/log")"; exit 1; }
  "$BPFTOOL" btf dump file "$T/min.btf" | sed -n "s/^\[[0-9]*\] \(STRUCT\|UNION\) '\([^']*\)'.*/\2/p"
}
for obj in "$2" "$3" "$4"; do
  t=$(types "$obj")
  [ -z "$t" ] || { echo "FAIL: $(basename "$obj") has CO-RE relocations on: $(echo $t); libbpf would parse the kernel's BTF for it"; exit 1; }
  echo "$(basename "$obj"): no CO-RE relocation"
done
types "$5" | grep -qx task_struct || { echo "FAIL: $(basename "$5"): no relocation on task_struct found: $(types "$5" | tr '\n' ' ')"; exit 1; }
echo "$(basename "$5"): relocates $(types "$5" | tr '\n' ' ')"
