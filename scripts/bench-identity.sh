#!/usr/bin/env bash
# bench-identity.sh measures identity-svc on 127.0.0.1 (called by scripts/bench.sh): it builds the
# binary, runs it against its own database (identity_bench), NATS prefix and Redis prefix with
# rate limits raised out of the way, seeds a tenant admin through the operator CLI, and runs
# e2e/cmd/benchidentity (vegeta): API-key validate over 10,000 keys, login against the argon2id
# limit, refresh; then the service's peak RSS. It fails when its port is taken or the service
# exits.
#
#   BENCH_DURATION  length of each attack (default 10s)
#   BENCH_WORKERS   concurrent workers (default 64)
#   BENCH_CEILING   req/s of the trivial handler in the same run (scripts/bench.sh passes it)
#   SERVICE_GOMEMLIMIT  identity-svc's soft memory limit, as for every service (scripts/bench.sh)
#   BENCH_PROFILE   1: CPU profiles of each attack in .state/bench/identity-<attack>.pprof/.top
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
OUT="$REPO/.state/bench"
ADDR="127.0.0.1:18091"
DB=identity_bench
DURATION="${BENCH_DURATION:-10s}"
WORKERS="${BENCH_WORKERS:-64}"

log() { printf 'bench-identity: %s\n' "$*" >&2; }
die() { printf 'bench-identity: error: %s\n' "$*" >&2; exit 1; }

mkdir -p "$OUT"
log "building identity-svc and benchidentity"
(cd "$REPO" && go build -o "$OUT/identity-svc" ./services/identity-svc/cmd/identity-svc && go build -o "$OUT/benchidentity" ./e2e/cmd/benchidentity)

psql -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"

secret="bench-service-secret-$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')"
export HTTP_ADDR="$ADDR"
export DATABASE_URL="postgres://postgres@127.0.0.1:5432/$DB?sslmode=disable"
export NATS_SUBJECT_PREFIX="bench_identity."
export REDIS_KEY_PREFIX="bench_identity:"
export SIGNING_KEY="$(head -c 32 /dev/urandom | base64)"
export SIGNING_KEY_GENERATE=false
export SERVICE_CLIENTS="bench:$secret"
export LOG_LEVEL=warn
PPROF="127.0.0.1:18193"
export HTTP_PPROF_ADDR="$PPROF"
export TOKEN_RATE_LIMIT_PER_MIN=1000000
export LOGIN_RATE_LIMIT_IP_PER_MIN=100000000 LOGIN_RATE_LIMIT_ACCOUNT_PER_MIN=100000000 LOGIN_RATE_LIMIT_ACCOUNT_ALL_ADDRESSES_PER_MIN=100000000 LOGIN_RATE_LIMIT_TENANT_PER_MIN=100000000
export ACCESS_TOKEN_TTL=1h

if (exec 3<>"/dev/tcp/${ADDR%:*}/${ADDR##*:}") 2>/dev/null; then
	die "$ADDR is already in use (a stale process?); stop it first"
fi
GOMEMLIMIT="${SERVICE_GOMEMLIMIT:?scripts/bench.sh sets it}" "$OUT/identity-svc" serve >"$OUT/identity-svc.log" 2>&1 &
pid=$!
# shellcheck disable=SC2329 # invoked by the trap
cleanup() {
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	psql -q -h 127.0.0.1 -U postgres -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true
	redis-cli --scan --pattern 'bench_identity:*' | xargs -r redis-cli del >/dev/null || true
}
trap cleanup EXIT
deadline=$((SECONDS + 30))
until curl -fs -o /dev/null "http://$ADDR/readyz"; do
	kill -0 "$pid" 2>/dev/null || die "identity-svc exited: $(tail -5 "$OUT/identity-svc.log")"
	((SECONDS < deadline)) || die "identity-svc not ready within 30s"
	sleep 0.2
done

field() { sed -E "s/.*\"$1\":\"([^\"]+)\".*/\\1/"; }
tenant_id="$("$OUT/identity-svc" admin create-tenant -slug bench -name Bench -email ops@bench.test | field id)"
"$OUT/identity-svc" admin create-user -tenant bench -email admin@bench.test -password 'bench-password' -tenant-admin >/dev/null
admin_token="$("$OUT/identity-svc" admin token -tenant bench -email admin@bench.test -ttl 2h | field access_token)"
service_token="$(curl -fs -u "bench:$secret" -d grant_type=client_credentials "http://$ADDR/v1/oauth/token" | field access_token)"

"$OUT/benchidentity" -base "http://$ADDR" -admin-token "$admin_token" -service-token "$service_token" \
	-tenant-id "$tenant_id" -tenant-slug bench -email admin@bench.test -password 'bench-password' \
	-duration "$DURATION" -workers "$WORKERS" -dsn "$DATABASE_URL" -ceiling "${BENCH_CEILING:-0}" \
	$([[ "${BENCH_PROFILE:-0}" == 1 ]] && echo "-pprof $PPROF -out $OUT")
for p in "$OUT"/identity-*.pprof; do
	[[ -e "$p" ]] && go tool pprof -top -nodecount=25 "$p" >"${p%.pprof}.top" 2>/dev/null
done
kill -0 "$pid" 2>/dev/null || die "identity-svc exited during the run: $(tail -5 "$OUT/identity-svc.log")"
printf '%-26s %s MiB\n' "identity-svc peak RSS" "$(awk '/^VmHWM:/ { printf "%.0f", $2 / 1024 }' "/proc/$pid/status")"
