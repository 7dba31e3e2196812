#!/usr/bin/env bash
# bench.sh prints throughput and latency percentiles measured with vegeta (.bin/vegeta, from
# make tools) on 127.0.0.1, each beside its share of the trivial-handler ceiling measured in the
# same run. Timings are printed, never compared: they gate nothing.
#
#   scripts/bench.sh [PART...]   parts: content identity agentteam (default: all); the ceiling always runs
#
# Each part is one bench_<part> function, so a service's block is added as one more function.
# Every server the script starts must bind its own port: a port that already answers before the
# start, or a server that exits, fails the run (so a stale process never takes the requests).
#
# ceiling: e2e/cmd/benchserver, a trivial echo handler, so service numbers can be read against
# what this machine and framework manage at all.
#
# content: content-svc, the real binary on 127.0.0.1:18082 with its own database (content_bench,
# dropped and created again, kept afterwards for inspection), NATS prefix (bench_content) and
# bucket (content-bench, removed at the end), trusting a JWKS served by e2e/cmd/benchcontent,
# which also mints the admin token: seeding BENCH_CONTAINERS published templates, the catalog
# (search, tags, category, aspect, premium, each sort — every attack cycles through thousands of
# queries with at least 1,000 distinct ones, drawn with a Zipf-like skew over the seeded words,
# categories and tags, pages 1-5), the related templates of 5,000 templates (templates-related),
# each listing line again under writes (a writer committing 20 catalog changes a second; the
# two runs of a line in parts, BENCH_WRITE_ROUNDS rounds of without, under, under, without; the
# table after them holds each line's share and p99 without and under writes, the changes'
# commit-to-visible freshness, the database's transactions a 1,000 listings, and PASS/MISS
# per goal), GET /v1/projects/{id}/full of a 50 scenes × 20 elements
# project (plain and with If-None-Match), the service's peak RSS, and a multipart AEP upload of
# BENCH_UPLOAD_BYTES (time of complete-upload, its MD5 throughput and the service's peak memory)
# beside md5sum of the same bytes.
#
# agentteam: agentteam-svc, the real binary on 127.0.0.1:18083 with its own database
# (agentteam_bench, dropped and created again) and NATS prefix (bench_agentteam), trusting a JWKS
# served by e2e/cmd/benchagentteam, which seeds a team with BENCH_TASKS tasks and mints the
# owner's token: the board read of that team, task moves (each changes the status), and agent
# runs through the queue (e2e/cmd/benchagentteam runs: BENCH_RUNS runs, a local model stub
# answering at once, so a run's queued-to-finished time is what the queue adds), team memory
# search (top 3) over BENCH_MEMORY_ENTRIES entries created through the API, the skill list of
# that organization with 2,000 own and 500 shared skills (services/agentteam-svc/cmd/skillbench
# seed), the indexing throughput of a 1,000-file Git source (skillbench index), and runs that
# call tools (e2e/cmd/benchagentteam tools: BENCH_TOOL_RUNS runs of three tool calls each, a
# scripted model stub and a local MCP server answering at once; runs per second, and what the
# platform adds per step).
#
# identity: scripts/bench-identity.sh: API-key validate over 10,000 keys, login beside the
# machine's argon2id limit, and token refresh.
#
#   BENCH_DURATION      how long each attack lasts (default 10s)
#   BENCH_RATE          requests per second; 0 means as fast as BENCH_WORKERS allow (default 0)
#   BENCH_WORKERS       concurrent workers when BENCH_RATE is 0 (default 64)
#   BENCH_CONTAINERS    templates to seed (default 100000; make bench-1m seeds 1,000,000)
#   BENCH_SEEDED_DB     a database an earlier content run seeded (createdb -T content_bench
#                       content_1m after one): the bench database is copied from it instead of
#                       seeded again (a 1,000,000-template seed takes some 15 minutes)
#   BENCH_UPLOAD_BYTES  size of the uploaded AEP file (default 1073741824, 1 GiB; 0 skips it)
#   BENCH_WRITE_RATE    catalog changes a second under the listing lines' writes (default 20;
#                       0 writes none: an A/A run, whose ratios are the machine's own spread)
#   BENCH_WRITE_ROUNDS  rounds of without, under, under, without per listing line (default 2)
#   BENCH_TASKS         tasks on the benchmarked board (default 5000)
#   BENCH_RUNS          agent runs queued through the worker (default 200)
#   BENCH_TOOL_RUNS     agent runs with three tool calls each queued at once (default 100)
#   BENCH_MEMORY_ENTRIES  team memory entries searched (default 10000)
#   BENCH_LATENCY_RATE  requests per second of the steady latency lines (default 200)
#   BENCH_GOMEMLIMIT    the services' soft memory limit (default 216MiB; see below)
#   BENCH_VEGETA        the vegeta binary (default .bin/vegeta, from make tools)
#   BENCH_PROFILE       1: take a CPU profile of the service during each of its attacks
#                       (.state/bench/<attack>.pprof, its top in <attack>.top)
#   BENCH_LINES         an extended regular expression: only the lines whose name matches run,
#                       with the ceiling and the seeding they need (default: every line; the
#                       identity part always runs its three). One line:
#                       BENCH_LINES='^agentteam-board-read$' scripts/bench.sh agentteam;
#                       the editor graph on a small catalog: BENCH_CONTAINERS=1000
#                       BENCH_UPLOAD_BYTES=0 BENCH_LINES='^projects-full' scripts/bench.sh content
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VEGETA="${BENCH_VEGETA:-$REPO/.bin/vegeta}"
OUT="$REPO/.state/bench"
DURATION="${BENCH_DURATION:-10s}"
WRITE_RATE="${BENCH_WRITE_RATE:-20}"
WRITE_ROUNDS="${BENCH_WRITE_ROUNDS:-2}"
RATE="${BENCH_RATE:-0}"
WORKERS="${BENCH_WORKERS:-64}"
CEILING_ADDR="127.0.0.1:18090"
# SERVICE_ENV runs a service as the Helm chart does, with a soft memory limit (GOMEMLIMIT, there
# the pod's limit): 216 MiB keeps content-svc's RSS under the bench's 256 MiB budget at
# 1,000,001 templates (peak 249 MiB through all of make bench-1m) and leaves the collector some
# 20 MB above the listing index's heap; at 200 MiB it ran back to back (ADR 0200).
SERVICE_GOMEMLIMIT="${BENCH_GOMEMLIMIT:-216MiB}"
SERVICE_ENV=(env "GOMEMLIMIT=$SERVICE_GOMEMLIMIT")
# CEILING is the trivial handler's throughput in this run (req/s); every line is read against it.
CEILING=0
# Extra vegeta attack flags, such as the Authorization header of the content attacks.
ATTACK_FLAGS=()

log() { printf 'bench: %s\n' "$*" >&2; }
# wanted NAME reports whether the line NAME runs (BENCH_LINES).
wanted() { [[ -z "${BENCH_LINES:-}" || "$1" =~ $BENCH_LINES ]]; }
die() { printf 'bench: error: %s\n' "$*" >&2; exit 1; }

# pids holds what this script started; cleanups run before they are stopped.
pids=()
cleanups=()
# shellcheck disable=SC2329 # invoked by the trap
cleanup() {
	local pid c
	for pid in "${pids[@]}"; do
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	done
	for c in "${cleanups[@]}"; do
		eval "$c" || true
	done
}
trap cleanup EXIT

# port_free ADDR fails the run when something already listens on ADDR.
port_free() {
	if (exec 3<>"/dev/tcp/${1%:*}/${1##*:}") 2>/dev/null; then
		die "$1 is already in use (a stale process?); stop it first"
	fi
}

# start NAME ADDR READY_URL CMD... starts CMD (logging to NAME.log) on the free ADDR and waits
# until READY_URL answers 2xx while it lives; its pid is left in STARTED.
STARTED=
start() {
	local name="$1" addr="$2" ready="$3"
	shift 3
	port_free "$addr"
	"$@" >"$OUT/$name.log" 2>&1 &
	STARTED=$!
	pids+=("$STARTED")
	local deadline=$((SECONDS + 60))
	until curl -fs -o /dev/null "$ready"; do
		kill -0 "$STARTED" 2>/dev/null || die "$name exited: $(tail -n 20 "$OUT/$name.log")"
		((SECONDS < deadline)) || die "$name did not answer $ready within 60s"
		sleep 0.2
	done
	kill -0 "$STARTED" 2>/dev/null || die "$name exited after $ready answered: $(tail -n 20 "$OUT/$name.log")"
}

# catalog_reload DSN ADDR makes content-svc's index read the whole catalog again, in place, and
# prints how long it took: 100 use counts committed with the change log pruned (a gap). The
# reload holds one index, not a second one beside it (ADR 0199): the content-svc peak RSS line
# covers it.
catalog_reload() {
	local dsn="$1" addr="$2" before started deadline=$((SECONDS + 300))
	reloads() { curl -fsS "http://$addr/metrics" | awk '$1 == "content_catalog_index_reloads_total" { print $2 }'; }
	before="$(reloads)"
	started="$(date +%s.%N)"
	# One transaction (one -c): the process cannot read the change before the log loses it.
	psql -qX "$dsn" -v ON_ERROR_STOP=1 -c "UPDATE containers SET use_count = use_count + 1 WHERE id IN
		(SELECT id FROM containers WHERE is_published AND deleted_at IS NULL ORDER BY use_count LIMIT 100);
		DELETE FROM catalog_changes"
	until [[ "$(reloads)" != "$before" ]]; do
		((SECONDS < deadline)) || die "catalog-reload: no reload in 300 s (reloads: $before before, $(reloads) now)"
		sleep 0.2
	done
	printf '%-40s %.1f s\n' "catalog-reload (a gap, read in place)" "$(echo "$(date +%s.%N) - $started" | bc -l)"
}

# peak_rss_mb PID prints the process's peak resident memory (VmHWM) in MiB.
peak_rss_mb() { awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$1/status"; }

# xacts DB prints the transactions committed and rolled back in database DB so far
# (pg_stat_database: a busy backend reports its own every second, an idle one its last ones
# up to 10 s later), read from another database so that the read is not one of them.
xacts() {
	psql -qXAt -h 127.0.0.1 -U postgres -d postgres -v ON_ERROR_STOP=1 \
		-c "SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = '$1'"
}

# PPROF is the profile address of the service under attack (HTTP_PPROF_ADDR), empty for none;
# profiling holds the background profile fetches.
PPROF=
profiling=()

# profile NAME SECONDS takes a CPU profile of the service at PPROF in the background when
# BENCH_PROFILE=1, writing NAME.pprof and its top 25 to NAME.top.
profile() {
	[[ "${BENCH_PROFILE:-0}" == 1 && -n "$PPROF" ]] || return 0
	(curl -fsS -o "$OUT/$1.pprof" "http://$PPROF/debug/pprof/profile?seconds=$2" &&
		go tool pprof -top -nodecount=25 "$OUT/$1.pprof" >"$OUT/$1.top" 2>/dev/null) &
	profiling+=($!)
}

# attack NAME [vegeta targets on stdin] runs vegeta for DURATION and prints one summary line with
# the share of the ceiling (the ceiling's own line, run before CEILING is known, is 100 %); with
# arguments, they are the targets.
attack() {
	if [[ "$1" != ceiling-echo-get ]] && ! wanted "$1"; then
		return 0
	fi
	fire "$1" "$DURATION" "${@:2}"
	report "$1"
}

# fire NAME DURATION [vegeta targets on stdin] runs vegeta for DURATION into NAME.bin and writes
# its reports, NAME.txt and NAME.json; with arguments, they are the targets.
fire() {
	local name="$1" duration="$2" workers=()
	shift 2
	if [[ "$RATE" == 0 ]]; then
		workers=(-max-workers="$WORKERS")
	fi
	log "$name: ${duration} at rate ${RATE}"
	profile "$name" "$(($(sed -E 's/s$//' <<<"$duration") - 1))"
	# -max-body=0: every response is still read to its end, but its body is not copied into
	# the results file; with the board's 28 KB and the editor graph's bodies, encoding them took
	# more of the 2 cores than the service under test did.
	if (($# > 0)); then printf '%s\n' "$@"; else cat; fi |
		"$VEGETA" attack -rate="$RATE" "${workers[@]}" "${ATTACK_FLAGS[@]}" -max-body=0 -duration="$duration" -timeout=10s >"$OUT/$name.bin"
	"$VEGETA" report -type=text "$OUT/$name.bin" >"$OUT/$name.txt"
	"$VEGETA" report -type=json "$OUT/$name.bin" >"$OUT/$name.json"
}

# merge NAME PART... writes NAME's reports from attacks PART... run apart: NAME.json with the
# latencies of all of their requests and, as throughput, their successes over their summed
# running times (vegeta's own would count the time between them too); NAME.txt holds theirs.
merge() {
	local name="$1" bins=() part tp
	shift
	for part in "$@"; do
		bins+=("$OUT/$part.bin")
	done
	tp="$(for part in "$@"; do cat "$OUT/$part.json"; echo; done | awk '
		function field(f) { return match($0, "\"" f "\":[0-9.e+-]+") ? substr($0, RSTART + length(f) + 3, RLENGTH - length(f) - 3) : 0 }
		{ ok += field("requests") * field("success"); ns += field("duration") + field("wait") }
		END { printf "%f", (ns > 0 ? ok * 1e9 / ns : 0) }')"
	for part in "$@"; do
		printf '%s\n' "$part" && cat "$OUT/$part.txt"
	done >"$OUT/$name.txt"
	"$VEGETA" report -type=json "${bins[@]}" | sed -E "s/\"throughput\":[0-9.e+-]+/\"throughput\":$tp/" >"$OUT/$name.json"
}

# report NAME prints NAME's summary line from NAME.json, its share of the ceiling beside it.
report() {
	# Latencies in the JSON report are nanoseconds.
	awk -v name="$1" -v ceiling="$CEILING" '
		match($0, /"throughput":[0-9.e+-]+/) { tp = substr($0, RSTART + 13, RLENGTH - 13) }
		match($0, /"50th":[0-9]+/) { p50 = substr($0, RSTART + 7, RLENGTH - 7) }
		match($0, /"99th":[0-9]+/) { p99 = substr($0, RSTART + 7, RLENGTH - 7) }
		match($0, /"success":[0-9.e+-]+/) { ok = substr($0, RSTART + 10, RLENGTH - 10) }
		END {
			share = ceiling > 0 ? sprintf("%5.1f%%", 100 * tp / ceiling) : "100.0%"
			printf "%-26s %9.0f req/s  %s of ceiling   p50 %8.3f ms   p99 %8.3f ms   success %.2f%%\n", name, tp, share, p50 / 1e6, p99 / 1e6, ok * 100
		}
	' "$OUT/$1.json"
}

bench_ceiling() {
	log "building e2e/cmd/benchserver"
	(cd "$REPO" && go build -o "$OUT/benchserver" ./e2e/cmd/benchserver)
	start benchserver "$CEILING_ADDR" "http://$CEILING_ADDR/ping" "$OUT/benchserver" -addr "$CEILING_ADDR"
	attack ceiling-echo-get "GET http://$CEILING_ADDR/ping"
	CEILING="$(awk 'match($0, /"throughput":[0-9.e+-]+/) { printf "%.0f", substr($0, RSTART + 13, RLENGTH - 13) }' "$OUT/ceiling-echo-get.json")"
}

bench_content() {
	local addr="127.0.0.1:18082" jwks="127.0.0.1:18181" db="content_bench" bucket="content-bench"
	local containers="${BENCH_CONTAINERS:-100000}" upload_bytes="${BENCH_UPLOAD_BYTES:-1073741824}"
	local dsn="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
	command -v psql >/dev/null || die "psql is missing"
	log "building content-svc and e2e/cmd/benchcontent"
	(cd "$REPO" && go build -o "$OUT/content-svc" ./services/content-svc/cmd/content-svc &&
		go build -o "$OUT/benchcontent" ./e2e/cmd/benchcontent)
	"$OUT/benchcontent" purge -bucket "$bucket"
	cleanups+=("'$OUT/benchcontent' purge -bucket '$bucket'; rm -f '$OUT/upload.aep'")
	local from="" seeded=()
	if [[ -n "${BENCH_SEEDED_DB:-}" ]]; then
		from="TEMPLATE ${BENCH_SEEDED_DB}" seeded=(-seeded)
	fi
	psql -qX -h 127.0.0.1 -U postgres -d postgres -v ON_ERROR_STOP=1 \
		-c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db $from"

	start jwks "$jwks" "http://$jwks/.well-known/jwks.json" "$OUT/benchcontent" token -addr "$jwks" -out "$OUT/token"
	local token
	token="$(cat "$OUT/token")"

	PPROF="127.0.0.1:18192"
	export HTTP_ADDR="$addr" DATABASE_URL="$dsn" NATS_SUBJECT_PREFIX="bench_content" \
		S3_BUCKET="$bucket" JWKS_URL="http://$jwks/.well-known/jwks.json" LOG_LEVEL=warn HTTP_PPROF_ADDR="$PPROF"
	"$OUT/content-svc" migrate >"$OUT/content-migrate.log" 2>&1 || die "migrate: $(tail -n 20 "$OUT/content-migrate.log")"
	log "seeding $containers templates${from:+ (copied from $BENCH_SEEDED_DB)}"
	local seed_vars
	seed_vars="$("$OUT/benchcontent" seed -dsn "$dsn" -containers "$containers" "${seeded[@]}")"
	eval "$seed_vars"
	# Ready means indexed: /readyz answers 200 only once the catalog is read into the listing
	# index, so the time to ready is the first read's (some 1 s at 100k templates, 20 s at 1M).
	local started=$SECONDS
	start content-svc "$addr" "http://$addr/readyz" "${SERVICE_ENV[@]}" "$OUT/content-svc" serve
	local content_pid="$STARTED"
	printf '%-40s %s s\n' "content-svc ready (catalog indexed) in" "$((SECONDS - started))"

	ATTACK_FLAGS=(-header "Authorization: Bearer $token")
	local kind kinds=()
	for kind in search tags category aspect premium sort-newest sort-popular sort-rate sort-az related; do
		if wanted "templates-$kind" || wanted "templates-$kind-under-writes"; then
			kinds+=("$kind")
		fi
	done
	# Listings under writes: each listing line again while a writer commits 20 catalog changes a
	# second (e2e/cmd/benchcontent writes: use counts, templates leaving and entering), each one
	# applied in place by the index; the writer measures how long each change took from its
	# commit to a listing showing it. A line's two runs are taken in parts DURATION long, in
	# rounds of without, under, under, without (the writer starts its changes before the first
	# part under writes and ends them before the last without), so that a drift of the machine
	# over a round's 40 s weighs on both runs alike and their ratio is what the writes cost: this
	# bench's ceiling has moved by up to 1.9x between runs an hour apart, and one line's two 5 s
	# parts without writes, 15 s apart, have differed by 39 %. Even so a line's ratio spreads
	# over 86-115 % in one round with no writes at all (BENCH_WRITE_RATE=0, an A/A run), so there
	# are BENCH_WRITE_ROUNDS rounds, two by default (ADR 0051).
	local written=()
	for kind in "${kinds[@]}"; do
		"$OUT/benchcontent" targets -dsn "$dsn" -base "http://$addr" -kind "$kind" -out "$OUT/targets-$kind.txt"
		if ! wanted "templates-$kind-under-writes"; then
			attack "templates-$kind" <"$OUT/targets-$kind.txt"
			continue
		fi
		local base="templates-$kind" writes="templates-$kind-under-writes" round writer parts=() wparts=() x
		: >"$OUT/writes-$kind.txt"
		for ((round = 1; round <= WRITE_ROUNDS; round++)); do
			# The database's transactions in the line's first part, which begins more than 10 s
			# after the previous line's writer ended (xacts: its last ones are reported by then).
			((round > 1)) || x="$(xacts "$db")"
			fire "$base.$round.1" "$DURATION" <"$OUT/targets-$kind.txt"
			((round > 1)) || echo "$(($(xacts "$db") - x))" >"$OUT/xacts-$kind.txt"
			"$OUT/benchcontent" writes -dsn "$dsn" -base "http://$addr" -token "$token" -rate "$WRITE_RATE" \
				-duration "$((2 * ${DURATION%s}))s" -name "$writes" >>"$OUT/writes-$kind.txt" 2>&1 &
			writer=$!
			until (($(grep -c '^writing' "$OUT/writes-$kind.txt") >= round)); do
				kill -0 "$writer" 2>/dev/null || die "writes: $(cat "$OUT/writes-$kind.txt")"
				sleep 0.1
			done
			fire "$writes.$round.1" "$DURATION" <"$OUT/targets-$kind.txt"
			fire "$writes.$round.2" "$DURATION" <"$OUT/targets-$kind.txt"
			wait "$writer" || die "writes: $(cat "$OUT/writes-$kind.txt")"
			fire "$base.$round.2" "$DURATION" <"$OUT/targets-$kind.txt"
			parts+=("$base.$round.1" "$base.$round.2")
			wparts+=("$writes.$round.1" "$writes.$round.2")
		done
		merge "$base" "${parts[@]}"
		merge "$writes" "${wparts[@]}"
		report "$base"
		report "$writes"
		written+=("$kind")
	done
	((${#written[@]} == 0)) || under_writes "${written[@]}"
	wanted catalog-reload && catalog_reload "$dsn" "$addr"
	local full="http://$addr/v1/projects/$FULL_PROJECT_ID/full" etag
	attack projects-full-50x20 "GET $full"
	etag="$(curl -fsS -o /dev/null -D - -H "Authorization: Bearer $token" "$full" | awk 'tolower($1) == "etag:" { sub(/\r$/, "", $2); print $2 }')"
	if [[ -n "$etag" ]]; then
		ATTACK_FLAGS+=(-header "If-None-Match: $etag")
		attack projects-full-50x20-304 "GET $full"
	fi
	ATTACK_FLAGS=()
	PPROF=
	((${#profiling[@]} == 0)) || wait "${profiling[@]}" || true
	printf '%-26s %s MiB\n' "content-svc peak RSS" "$(peak_rss_mb "$content_pid")"

	echo
	printf '%-40s %s s\n' "seed $containers templates (SQL + VACUUM ANALYZE)" "$SEED_SECONDS"
	((upload_bytes > 0)) && wanted upload || return 0
	log "multipart upload of $upload_bytes bytes"
	local upload_vars md5_start md5sum_hex md5_seconds
	upload_vars="$("$OUT/benchcontent" upload -base "http://$addr" -token-file "$OUT/token" \
		-project "$FULL_PROJECT_ID" -size "$upload_bytes" -file "$OUT/upload.aep" -pid "$content_pid")"
	eval "$upload_vars"
	md5_start="$(date +%s.%N)"
	md5sum_hex="$(md5sum "$OUT/upload.aep" | cut -d' ' -f1)"
	md5_seconds="$(echo "$(date +%s.%N) - $md5_start" | bc -l)"
	[[ "$md5sum_hex" == "$UPLOAD_MD5" ]] || die "md5sum $md5sum_hex differs from the service's $UPLOAD_MD5"
	printf '%-40s %s s\n' "upload: PUT $UPLOAD_PARTS parts to MinIO" "$UPLOAD_PUT_SECONDS"
	printf '%-40s %s s   %s MB/s   peak RSS %s MB (%s MB before)\n' "upload: complete-upload (assemble + MD5)" \
		"$UPLOAD_COMPLETE_SECONDS" "$UPLOAD_MD5_MBPS" "$UPLOAD_PEAK_RSS_MB" "$UPLOAD_RSS_BEFORE_MB"
	printf '%-40s %.2f s   %.0f MB/s\n' "md5sum of the same bytes" "$md5_seconds" "$(echo "$UPLOAD_SIZE / 1000000 / $md5_seconds" | bc -l)"
}

# line_of NAME prints an attack's throughput, p99 (ms) and requests from its JSON report.
line_of() {
	awk '
		match($0, /"throughput":[0-9.e+-]+/) { tp = substr($0, RSTART + 13, RLENGTH - 13) }
		match($0, /"99th":[0-9]+/) { p99 = substr($0, RSTART + 7, RLENGTH - 7) }
		match($0, /"requests":[0-9]+/) { n = substr($0, RSTART + 11, RLENGTH - 11) }
		END { printf "%f %f %d", tp, p99 / 1e6, n }
	' "$OUT/$1.json"
}

# under_writes KIND... prints, for each listing line, its share of the ceiling without and
# under writes, their ratio and p99s, the freshness of the changes committed meanwhile, the
# bench database's transactions a 1,000 listings in the line's first part (pg/1k), and PASS or
# MISS for each goal: share under writes at least 80 % of the share without, p99 under writes
# below twice the p99 without, freshness p99 below 1 s, and no listing reaching Postgres: fewer
# than 10 transactions a 1,000 listings, the service's background work (outbox, jobs, the
# catalog's poll: some 6 a second) with nothing of the listings', each of which would be 1.
under_writes() {
	echo
	echo "listings under writes ($WRITE_RATE changes/s; goals: share >= 80 % of its own without writes, p99 < 2x its own, freshness p99 < 1 s, pg/1k < 10: no listing reaches Postgres)"
	printf '%-14s %8s %8s %6s %4s  %9s %9s %4s  %9s %9s %4s  %6s %4s\n' line share w-share ratio ok \
		p99-ms w-p99-ms ok fresh-p50 fresh-p99 ok pg/1k ok
	local kind tp p99 n wtp wp99 f50 f99 pg missed=0
	for kind in "$@"; do
		read -r tp p99 _ <<<"$(line_of "templates-$kind")"
		read -r wtp wp99 _ <<<"$(line_of "templates-$kind-under-writes")"
		read -r _ _ n <<<"$(line_of "templates-$kind.1.1")"
		pg="$(cat "$OUT/xacts-$kind.txt")"
		# The writer's rounds each print their p50 and p99; the larger of each is shown.
		read -r f50 f99 <<<"$(awk '{ for (i = 1; i < NF; i++) { if ($i == "p50" && $(i + 1) > p50) p50 = $(i + 1); if ($i == "p99" && $(i + 1) > p99) p99 = $(i + 1) } } END { printf "%s %s", p50 + 0, p99 + 0 }' "$OUT/writes-$kind.txt")"
		awk -v k="$kind" -v c="$CEILING" -v rate="$WRITE_RATE" -v tp="$tp" -v p99="$p99" -v n="$n" -v wtp="$wtp" -v wp99="$wp99" -v f50="$f50" -v f99="$f99" -v pg="$pg" '
			function verdict(ok) { if (!ok) missed = 1; return ok ? "PASS" : "MISS" }
			BEGIN {
				ratio = tp > 0 ? wtp / tp : 0
				per1k = n > 0 ? 1000 * pg / n : 1000
				printf "%-14s %7.1f%% %7.1f%% %5.0f%% %4s  %9.2f %9.2f %4s  %9.2f %9.2f %4s  %6.1f %4s\n", k,
					100 * tp / c, 100 * wtp / c, 100 * ratio, verdict(ratio >= 0.8), p99, wp99, verdict(wp99 < 2 * p99),
					f50, f99, rate == 0 ? "n/a" : verdict(f99 > 0 && f99 < 1000), per1k, verdict(per1k < 10)
				exit missed
			}' || missed=1
	done
	((missed == 0)) && echo "listings under writes: every goal met" || echo "listings under writes: goals missed (MISS above)"
}

bench_agentteam() {
	local addr="127.0.0.1:18083" jwks="127.0.0.1:18183" db="agentteam_bench" tasks="${BENCH_TASKS:-5000}"
	local dsn="postgres://postgres@127.0.0.1:5432/$db?sslmode=disable"
	command -v psql >/dev/null || die "psql is missing"
	log "building agentteam-svc and e2e/cmd/benchagentteam"
	(cd "$REPO" && go build -o "$OUT/agentteam-svc" ./services/agentteam-svc/cmd/agentteam-svc &&
		go build -o "$OUT/benchagentteam" ./e2e/cmd/benchagentteam &&
		go build -o "$OUT/skillbench" ./services/agentteam-svc/cmd/skillbench)
	local from="" seeded=()
	if [[ -n "${BENCH_SEEDED_DB:-}" ]]; then
		from="TEMPLATE ${BENCH_SEEDED_DB}" seeded=(-seeded)
	fi
	psql -qX -h 127.0.0.1 -U postgres -d postgres -v ON_ERROR_STOP=1 \
		-c "DROP DATABASE IF EXISTS $db WITH (FORCE)" -c "CREATE DATABASE $db $from"

	# Its own profile address: the content block's service may still be listening on its own.
	PPROF="127.0.0.1:18194"
	# Every bench run is the one seeded organization's: its cap on concurrent runs is raised to the
	# worker's concurrency, so the run lines measure the platform rather than the cap.
	export RUN_ORG_CONCURRENCY="${RUN_WORKER_CONCURRENCY:-4}"
	export HTTP_ADDR="$addr" DATABASE_URL="$dsn" NATS_SUBJECT_PREFIX="bench_agentteam" \
		JWKS_URL="http://$jwks/.well-known/jwks.json" LOG_LEVEL=warn OUTBOUND_ALLOW_LOOPBACK=true HTTP_PPROF_ADDR="$PPROF"
	"$OUT/agentteam-svc" migrate >"$OUT/agentteam-migrate.log" 2>&1 || die "migrate: $(tail -n 20 "$OUT/agentteam-migrate.log")"
	log "seeding a board of $tasks tasks"
	local seed_vars
	seed_vars="$("$OUT/benchagentteam" seed -dsn "$dsn" -tasks "$tasks")"
	eval "$seed_vars"
	if wanted agentteam-skill-list; then
		log "seeding 2,000 own and 500 shared skills"
		"$OUT/skillbench" seed -dsn "$dsn" -org "$BOARD_ORG_ID" -member "$BOARD_MEMBER_ID" >"$OUT/skillbench-seed.log" 2>&1 ||
			die "skill seed: $(tail -n 20 "$OUT/skillbench-seed.log")"
		psql -qX -h 127.0.0.1 -U postgres -d "$db" -c "VACUUM ANALYZE library_items"
	fi
	start agentteam-jwks "$jwks" "http://$jwks/.well-known/jwks.json" \
		"$OUT/benchagentteam" token -addr "$jwks" -out "$OUT/agentteam.token" -subject "$BOARD_MEMBER_ID"
	start agentteam-svc "$addr" "http://$addr/readyz" "${SERVICE_ENV[@]}" "$OUT/agentteam-svc" serve

	echo
	echo "agentteam-svc (vegeta; its own database and NATS prefix; a board of $tasks tasks seeded in ${SEED_SECONDS}s)"
	# The targets carry the owner's Authorization header themselves.
	ATTACK_FLAGS=()
	local kind
	for kind in board moves; do
		"$OUT/benchagentteam" targets -base "http://$addr" -token-file "$OUT/agentteam.token" -team "$BOARD_TEAM_ID" \
			-kind "$kind" -dsn "$dsn" -out "$OUT/agentteam-$kind.targets"
	done
	attack agentteam-board-read <"$OUT/agentteam-board.targets"
	attack agentteam-task-moves <"$OUT/agentteam-moves.targets"
	ATTACK_FLAGS=(-header "Authorization: Bearer $(cat "$OUT/agentteam.token")")
	attack agentteam-skill-list "GET http://$addr/api/skills?organizationId=$BOARD_ORG_ID"
	ATTACK_FLAGS=()
	if wanted agentteam-skill-indexing; then
		echo "agentteam-skill-indexing: $("$OUT/skillbench" index -dsn "$dsn" -files 1000) (goal 200 files/s)"
	fi
	if wanted agentteam-runs; then
		"$OUT/benchagentteam" runs -base "http://$addr" -token-file "$OUT/agentteam.token" -org "$BOARD_ORG_ID" \
			-team "$BOARD_TEAM_ID" -n "${BENCH_RUNS:-200}"
	fi
	if wanted agentteam-tool-runs; then
		"$OUT/benchagentteam" tools -base "http://$addr" -token-file "$OUT/agentteam.token" -org "$BOARD_ORG_ID" \
			-team "$BOARD_TEAM_ID" -n "${BENCH_TOOL_RUNS:-100}"
	fi
	if ! wanted agentteam-memory-search && ! wanted agentteam-memory-search-steady; then
		PPROF=
		return 0
	fi
	log "seeding ${BENCH_MEMORY_ENTRIES:-10000} memory entries through the API"
	"$OUT/benchagentteam" memory -base "http://$addr" -token-file "$OUT/agentteam.token" -team "$BOARD_TEAM_ID" \
		-n "${BENCH_MEMORY_ENTRIES:-10000}" -out "$OUT/agentteam-memory.targets"
	attack agentteam-memory-search <"$OUT/agentteam-memory.targets"
	# The memory goal is a latency (p99 < 20 ms), which saturating workers turn into queueing, so
	# it is read at a steady rate the machine sustains, beside the saturated line above.
	RATE="${BENCH_LATENCY_RATE:-200}" attack agentteam-memory-search-steady <"$OUT/agentteam-memory.targets"
	PPROF=
}

bench_identity() {
	echo
	echo "identity-svc (vegeta; its own database, prefixes and rate limits raised out of the way)"
	BENCH_CEILING="$CEILING" SERVICE_GOMEMLIMIT="$SERVICE_GOMEMLIMIT" "$REPO/scripts/bench-identity.sh"
}

main() {
	[[ -x "$VEGETA" ]] || die "$VEGETA is missing; run make tools"
	mkdir -p "$OUT"
	local parts=("$@") part
	((${#parts[@]} > 0)) || parts=(content identity agentteam)
	for part in "${parts[@]}"; do
		declare -F "bench_$part" >/dev/null || die "unknown part $part"
	done
	echo "benchmark                  throughput   share of the ceiling      latency (reports in .state/bench)"
	bench_ceiling
	for part in "${parts[@]}"; do
		"bench_$part"
	done
}

main "$@"
