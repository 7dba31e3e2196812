#!/usr/bin/env bash
# bench.sh prints throughput and latency percentiles measured with vegeta (.bin/vegeta, from
# make tools) on 127.0.0.1. Timings are printed, never compared: they gate nothing.
#
# First the ceiling: e2e/cmd/benchserver, a trivial echo handler, so service numbers can be read
# against what this machine and framework manage at all.
#
# Then content-svc, the real binary on 127.0.0.1:18082 with its own database (content_bench,
# dropped and created again, kept afterwards for inspection), NATS prefix (bench_content) and
# bucket (content-bench, removed at the end), trusting a JWKS served by e2e/cmd/benchcontent,
# which also mints the admin token: seeding BENCH_CONTAINERS published templates, the catalog (a
# search, each filter, each sort), GET /v1/projects/{id}/full of a 50 scenes × 20 elements
# project, and a multipart AEP upload of BENCH_UPLOAD_BYTES (time of complete-upload, its MD5
# throughput and the service's peak memory) beside md5sum of the same bytes. EXPLAIN ANALYZE
# plans of the catalog queries go to .state/bench/plans.txt, with a one-line summary each.
#
#   BENCH_DURATION      how long each attack lasts (default 10s)
#   BENCH_RATE          requests per second; 0 means as fast as BENCH_WORKERS allow (default 0)
#   BENCH_WORKERS       concurrent workers when BENCH_RATE is 0 (default 64)
#   BENCH_CONTAINERS    templates to seed (default 100000)
#   BENCH_UPLOAD_BYTES  size of the uploaded AEP file (default 1073741824, 1 GiB)
# Last, identity-svc through scripts/bench-identity.sh: API-key validate, login beside the
# machine's argon2id limit, and token refresh.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VEGETA="$REPO/.bin/vegeta"
OUT="$REPO/.state/bench"
DURATION="${BENCH_DURATION:-10s}"
RATE="${BENCH_RATE:-0}"
WORKERS="${BENCH_WORKERS:-64}"
ADDR="127.0.0.1:18090"
CONTAINERS="${BENCH_CONTAINERS:-100000}"
UPLOAD_BYTES="${BENCH_UPLOAD_BYTES:-1073741824}"
CONTENT_ADDR="127.0.0.1:18082"
JWKS_ADDR="127.0.0.1:18181"
BENCH_DB="content_bench"
BENCH_DSN="postgres://postgres@127.0.0.1:5432/$BENCH_DB?sslmode=disable"
BENCH_BUCKET="content-bench"
# Extra vegeta attack flags, such as the Authorization header of the content attacks.
ATTACK_FLAGS=()

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
	printf '%s\n' "$@" | "$VEGETA" attack -rate="$RATE" "${workers[@]}" "${ATTACK_FLAGS[@]}" -duration="$DURATION" -timeout=10s >"$results"
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

# pids holds what this script started; cleanup stops them and removes the bench bucket.
pids=()
# shellcheck disable=SC2329 # invoked by the trap
cleanup() {
	local pid
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	if [[ -x "$OUT/benchcontent" ]]; then
		"$OUT/benchcontent" purge -bucket "$BENCH_BUCKET" || true
	fi
	rm -f "$OUT/upload.aep"
}
trap cleanup EXIT

# wait_for URL PID NAME waits until URL answers 2xx while PID lives.
wait_for() {
	local deadline=$((SECONDS + 60))
	until curl -fs -o /dev/null "$1"; do
		kill -0 "$2" 2>/dev/null || die "$3 exited: $(tail -n 20 "$OUT/$3.log")"
		((SECONDS < deadline)) || die "$3 did not answer $1 within 60s"
		sleep 0.2
	done
}

log "building e2e/cmd/benchserver"
(cd "$REPO" && go build -o "$OUT/benchserver" ./e2e/cmd/benchserver)
"$OUT/benchserver" -addr "$ADDR" >"$OUT/benchserver.log" 2>&1 &
pids+=($!)
wait_for "http://$ADDR/ping" "${pids[-1]}" benchserver

echo "benchmark                     throughput      latency (reports in .state/bench)"
attack ceiling-echo-get "GET http://$ADDR/ping"

# --- content-svc ---
command -v psql >/dev/null || die "psql is missing"
log "building content-svc and e2e/cmd/benchcontent"
(cd "$REPO" && go build -o "$OUT/content-svc" ./services/content-svc/cmd/content-svc &&
	go build -o "$OUT/benchcontent" ./e2e/cmd/benchcontent)
"$OUT/benchcontent" purge -bucket "$BENCH_BUCKET"
psql -qX -h 127.0.0.1 -U postgres -d postgres -v ON_ERROR_STOP=1 \
	-c "DROP DATABASE IF EXISTS $BENCH_DB WITH (FORCE)" -c "CREATE DATABASE $BENCH_DB"

"$OUT/benchcontent" token -addr "$JWKS_ADDR" -out "$OUT/token" >"$OUT/jwks.log" 2>&1 &
pids+=($!)
wait_for "http://$JWKS_ADDR/.well-known/jwks.json" "${pids[-1]}" jwks
TOKEN="$(cat "$OUT/token")"

export HTTP_ADDR="$CONTENT_ADDR" DATABASE_URL="$BENCH_DSN" NATS_SUBJECT_PREFIX="bench_content" \
	S3_BUCKET="$BENCH_BUCKET" JWKS_URL="http://$JWKS_ADDR/.well-known/jwks.json" LOG_LEVEL=warn
"$OUT/content-svc" migrate >"$OUT/content-migrate.log" 2>&1 || die "migrate: $(tail -n 20 "$OUT/content-migrate.log")"
log "seeding $CONTAINERS templates"
seed_vars="$("$OUT/benchcontent" seed -dsn "$BENCH_DSN" -containers "$CONTAINERS")"
eval "$seed_vars"
"$OUT/content-svc" serve >"$OUT/content-svc.log" 2>&1 &
pids+=($!)
content_pid="${pids[-1]}"
wait_for "http://$CONTENT_ADDR/readyz" "$content_pid" content-svc

ATTACK_FLAGS=(-header "Authorization: Bearer $TOKEN")
T="GET http://$CONTENT_ADDR/v1/templates"
attack templates-search "$T?q=$SEARCH"
attack templates-category "$T?category_id=$CATEGORY_ID"
attack templates-tags "$T?tag_ids=$TAG_A&tag_ids=$TAG_B"
attack templates-aspect "$T?aspect=9%3A16"
attack templates-premium "$T?is_premium=true"
for sort in newest popular rate az; do
	attack "templates-sort-$sort" "$T?sort=$sort"
done
attack projects-full-50x20 "GET http://$CONTENT_ADDR/v1/projects/$FULL_PROJECT_ID/full"
ATTACK_FLAGS=()

echo
echo "catalog query plans (EXPLAIN ANALYZE, full plans in .state/bench/plans.txt)"
"$OUT/benchcontent" plans -dsn "$BENCH_DSN" -out "$OUT/plans.txt" -search "$SEARCH" \
	-category "$CATEGORY_ID" -tag-a "$TAG_A" -tag-b "$TAG_B"

log "multipart upload of $UPLOAD_BYTES bytes"
upload_vars="$("$OUT/benchcontent" upload -base "http://$CONTENT_ADDR" -token-file "$OUT/token" \
	-project "$FULL_PROJECT_ID" -size "$UPLOAD_BYTES" -file "$OUT/upload.aep" -pid "$content_pid")"
eval "$upload_vars"
md5_start="$(date +%s.%N)"
md5sum_hex="$(md5sum "$OUT/upload.aep" | cut -d' ' -f1)"
md5_seconds="$(echo "$(date +%s.%N) - $md5_start" | bc -l)"
[[ "$md5sum_hex" == "$UPLOAD_MD5" ]] || die "md5sum $md5sum_hex differs from the service's $UPLOAD_MD5"

echo
printf '%-40s %s\n' "seed $CONTAINERS templates (SQL + VACUUM ANALYZE)" "$SEED_SECONDS s"
printf '%-40s %s\n' "upload: PUT $UPLOAD_PARTS parts to MinIO" "$UPLOAD_PUT_SECONDS s"
printf '%-40s %s s   %s MB/s   peak RSS %s MB (%s MB before)\n' "upload: complete-upload (assemble + MD5)" \
	"$UPLOAD_COMPLETE_SECONDS" "$UPLOAD_MD5_MBPS" "$UPLOAD_PEAK_RSS_MB" "$UPLOAD_RSS_BEFORE_MB"
printf '%-40s %.2f s   %.0f MB/s\n' "md5sum of the same bytes" "$md5_seconds" "$(echo "$UPLOAD_SIZE / 1000000 / $md5_seconds" | bc -l)"

# --- identity-svc: API-key validate, login against the argon2id limit, refresh ---
echo
echo "identity-svc (vegeta; its own database, prefixes and rate limits raised out of the way)"
"$REPO/scripts/bench-identity.sh"
