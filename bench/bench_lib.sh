# bench_lib.sh: the preamble the analysis benchmarks share (sourced, after
# SNR and CACHE are set): a temporary folder T removed at exit together with
# a device started into DEV, fail(), the check for /usr/bin/time (each step is
# timed with it), the cache folder, and the load line every figure needs.
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -x /usr/bin/time ] || fail "/usr/bin/time is missing: install the package 'time' (scripts/install-deps)"
mkdir -p "$CACHE" || fail "cannot create $CACHE"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
