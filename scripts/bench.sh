#!/usr/bin/env bash
# bench.sh prints throughput and latency percentiles measured with vegeta (.bin/vegeta, from
# make tools) on 127.0.0.1. Timings are printed, never compared: they gate nothing.
#
# First the ceiling: e2e/cmd/benchserver, a trivial echo handler, so service numbers can be read
# against what this machine and framework manage at all.
#
#   BENCH_DURATION  how long each attack lasts (default 10s)
#   BENCH_RATE      requests per second; 0 means as fast as BENCH_WORKERS allow (default 0)
#   BENCH_WORKERS   concurrent workers when BENCH_RATE is 0 (default 64)
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VEGETA="$REPO/.bin/vegeta"
OUT="$REPO/.state/bench"
DURATION="${BENCH_DURATION:-10s}"
RATE="${BENCH_RATE:-0}"
WORKERS="${BENCH_WORKERS:-64}"
ADDR="127.0.0.1:18090"

log() { printf 'bench: %s\n' "$*" >&2; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

[[ -x "$VEGETA" ]] || die "$VEGETA is missing; run make tools"
mkdir -p "$OUT"

# attack NAME TARGET... runs vegeta against the targets and prints one summary line.
attack() {
	local name="$1"
	shift
	local results="$OUT/$name.bin" workers=()
	if [[ "$RATE" == 0 ]]; then
		workers=(-max-workers="$WORKERS")
	fi
	log "$name: ${DURATION} at rate ${RATE} ($*)"
	printf '%s\n' "$@" | "$VEGETA" attack -rate="$RATE" "${workers[@]}" -duration="$DURATION" -timeout=10s >"$results"
	"$VEGETA" report -type=text "$results" >"$OUT/$name.txt"
	"$VEGETA" report -type=json "$results" >"$OUT/$name.json"
	# Latencies in the JSON report are nanoseconds.
	awk -v name="$name" '
		match($0, /"throughput":[0-9.e+-]+/) { tp = substr($0, RSTART + 13, RLENGTH - 13) }
		match($0, /"50th":[0-9]+/) { p50 = substr($0, RSTART + 7, RLENGTH - 7) }
		match($0, /"99th":[0-9]+/) { p99 = substr($0, RSTART + 7, RLENGTH - 7) }
		match($0, /"success":[0-9.e+-]+/) { ok = substr($0, RSTART + 10, RLENGTH - 10) }
		END { printf "%-24s %10.0f req/s   p50 %8.3f ms   p99 %8.3f ms   success %.2f%%\n", name, tp, p50 / 1e6, p99 / 1e6, ok * 100 }
	' "$OUT/$name.json"
}

server_pid=""
# shellcheck disable=SC2329 # invoked by the trap
cleanup() {
	if [[ -n "$server_pid" ]]; then
		kill -TERM "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
}
trap cleanup EXIT

log "building e2e/cmd/benchserver"
(cd "$REPO" && go build -o "$OUT/benchserver" ./e2e/cmd/benchserver)
"$OUT/benchserver" -addr "$ADDR" >"$OUT/benchserver.log" 2>&1 &
server_pid=$!
deadline=$((SECONDS + 30))
until curl -fs -o /dev/null "http://$ADDR/ping"; do
	kill -0 "$server_pid" 2>/dev/null || die "benchserver exited: $(cat "$OUT/benchserver.log")"
	((SECONDS < deadline)) || die "benchserver did not answer within 30s"
	sleep 0.2
done

echo "benchmark                     throughput      latency (reports in .state/bench)"
attack ceiling-echo-get "GET http://$ADDR/ping"
