#!/usr/bin/env bash
# infra.sh makes the local infrastructure answer on 127.0.0.1: PostgreSQL (5432), Redis (6379),
# NATS with JetStream (4222), MinIO (9000, console 9001) and MailHog, the SMTP catcher that keeps
# the development mail (SMTP 1025, web inbox and HTTP API 8025).
#
#   scripts/infra.sh up      reuse what already answers; install (apt-get, go install) and start the rest
#   scripts/infra.sh down    stop only what `up` started (recorded in .state/started)
#   scripts/infra.sh status  print each component: up/down, and whether infra.sh started it
#
# Data lives under <repo>/.state/<name>, logs under .state/logs. Everything is idempotent.
# Overrides (mostly for testing this script beside servers that already run):
#   INFRA_STATE_DIR, INFRA_PG_PORT, INFRA_REDIS_PORT, INFRA_NATS_PORT, INFRA_MINIO_PORT,
#   INFRA_MINIO_CONSOLE_PORT, INFRA_MAIL_SMTP_PORT, INFRA_MAIL_HTTP_PORT, INFRA_TIMEOUT (seconds
#   to wait for each server), MOTIONSTUDIO_CACHE, MINIO_ROOT_USER, MINIO_ROOT_PASSWORD.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${INFRA_STATE_DIR:-$REPO/.state}"
LOGS="$STATE/logs"
STARTED="$STATE/started"
CACHE="${MOTIONSTUDIO_CACHE:-$HOME/.cache/motionstudio}"
HOST=127.0.0.1
PG_PORT="${INFRA_PG_PORT:-5432}"
REDIS_PORT="${INFRA_REDIS_PORT:-6379}"
NATS_PORT="${INFRA_NATS_PORT:-4222}"
MINIO_PORT="${INFRA_MINIO_PORT:-9000}"
MINIO_CONSOLE_PORT="${INFRA_MINIO_CONSOLE_PORT:-9001}"
MAIL_SMTP_PORT="${INFRA_MAIL_SMTP_PORT:-1025}"
MAIL_HTTP_PORT="${INFRA_MAIL_HTTP_PORT:-8025}"
TIMEOUT="${INFRA_TIMEOUT:-90}"
MINIO_USER="${MINIO_ROOT_USER:-minioadmin}"
MINIO_PASSWORD="${MINIO_ROOT_PASSWORD:-minioadmin}"
DATABASES=(identity content agentteam)
BUCKETS=(content identity)
# PUBLIC_PREFIXES of the content bucket are readable by anyone (content-svc S3_PUBLIC_PREFIXES).
PUBLIC_PREFIXES=(svg-previews/ fonts/ images/)

APT_UPDATED=0

log() { printf 'infra: %s\n' "$*" >&2; }
die() { printf 'infra: error: %s\n' "$*" >&2; exit 1; }

# port_open reports whether something accepts TCP connections on HOST:$1.
port_open() {
	timeout 2 bash -c "exec 3<>/dev/tcp/$HOST/$1" 2>/dev/null
}

# wait_for polls the command "$2..." until it succeeds, failing with a message naming $1 after TIMEOUT.
wait_for() {
	local what="$1"
	shift
	local deadline=$((SECONDS + TIMEOUT))
	until "$@" >/dev/null 2>&1; do
		if ((SECONDS >= deadline)); then
			die "$what did not become ready within ${TIMEOUT}s (see $LOGS/ for logs)"
		fi
		sleep 0.5
	done
}

apt_install() {
	command -v apt-get >/dev/null || die "apt-get not found; install $* by hand"
	if ((APT_UPDATED == 0)); then
		log "apt-get update"
		DEBIAN_FRONTEND=noninteractive apt-get update -qq >"$LOGS/apt.log" 2>&1 9>&- || die "apt-get update failed (see $LOGS/apt.log)"
		APT_UPDATED=1
	fi
	log "apt-get install $*"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >>"$LOGS/apt.log" 2>&1 9>&- ||
		die "apt-get install $* failed (see $LOGS/apt.log)"
}

# record appends "<component> <kind> <args...>" to the list of things this script started.
record() {
	printf '%s\n' "$*" >>"$STARTED"
}

# started_entry prints the recorded line for component $1, if any.
started_entry() {
	[[ -f "$STARTED" ]] || return 0
	awk -v c="$1" '$1 == c { print; exit }' "$STARTED"
}

forget() {
	[[ -f "$STARTED" ]] || return 0
	awk -v c="$1" '$1 != c' "$STARTED" >"$STARTED.tmp"
	mv "$STARTED.tmp" "$STARTED"
}

# pid_alive reports whether pid $1 runs a program whose name contains $2 (guards against pid reuse).
pid_alive() {
	[[ -r "/proc/$1/cmdline" ]] && tr '\0' ' ' <"/proc/$1/cmdline" | grep -q -- "$2"
}

stop_pid() {
	local name="$1" pid="$2" match="$3"
	if ! pid_alive "$pid" "$match"; then
		log "$name (pid $pid) is no longer running"
		return 0
	fi
	log "stopping $name (pid $pid)"
	kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + 30))
	while pid_alive "$pid" "$match"; do
		if ((SECONDS >= deadline)); then
			log "$name (pid $pid) ignored SIGTERM; sending SIGKILL"
			kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
}

# spawn starts "$3..." detached in its own session with output to log $2, and prints its pid.
spawn() {
	local log_file="$1"
	shift
	setsid "$@" >>"$log_file" 2>&1 </dev/null 9>&- &
	echo $!
}

# ---------------------------------------------------------------- PostgreSQL

pg_ready() { pg_isready -q -h "$HOST" -p "$PG_PORT"; }

pg_bin_dir() {
	local dir
	dir="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)"
	[[ -n "$dir" ]] && echo "$dir"
}

# pg_debian_cluster prints "<version> <name> <status>" of the Debian cluster configured for PG_PORT.
pg_debian_cluster() {
	command -v pg_lsclusters >/dev/null || return 0
	pg_lsclusters -h 2>/dev/null | awk -v p="$PG_PORT" '$3 == p { print $1, $2, $4; exit }'
}

# pg_trust_loopback lets local TCP clients in without a password, as the platform's defaults expect.
# Only applied to a cluster this script has just installed.
pg_trust_loopback() {
	local hba="/etc/postgresql/$1/$2/pg_hba.conf"
	[[ -f "$hba" ]] || return 0
	if ! grep -Eq '^host[[:space:]]+all[[:space:]]+all[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$hba"; then
		log "allowing trust auth on loopback in $hba"
		{
			printf '# added by motionstudio scripts/infra.sh for local development\n'
			printf 'host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\n'
			cat "$hba"
		} >"$hba.new"
		chown --reference="$hba" "$hba.new"
		chmod --reference="$hba" "$hba.new"
		mv "$hba.new" "$hba"
	fi
}

as_postgres() {
	if ((EUID == 0)); then
		runuser -u postgres -- "$@"
	else
		"$@"
	fi
}

# pg_initdb_dir prints where a server of this script's own keeps its data.
pg_initdb_dir() {
	local dir="$STATE/postgres"
	if ((EUID == 0)) && ! runuser -u postgres -- test -x "$STATE" 2>/dev/null; then
		# The postgres user cannot reach the work tree (for example under /root): keep the data outside it.
		dir="/var/tmp/motionstudio-$(printf '%s' "$STATE" | md5sum | cut -c1-12)/postgres"
	fi
	echo "$dir"
}

pg_start_own() {
	local bin dir pglog
	bin="$(pg_bin_dir)"
	dir="$(pg_initdb_dir)"
	pglog="$(dirname "$dir")/logs/postgres.log"
	[[ "$dir" == "$STATE/postgres" ]] || pglog="$(dirname "$dir")/postgres.log"
	mkdir -p "$dir" "$(dirname "$pglog")"
	chmod 700 "$dir"
	touch "$pglog"
	if ((EUID == 0)); then
		id postgres >/dev/null 2>&1 || die "postgres: user postgres does not exist"
		chown -R postgres: "$dir"
		chown postgres: "$pglog"
	fi
	if [[ ! -f "$dir/PG_VERSION" ]]; then
		log "postgres: initdb in $dir"
		as_postgres "$bin/initdb" -D "$dir" -U postgres --auth=trust -E UTF8 --locale=C >>"$pglog" 2>&1 ||
			die "postgres: initdb failed (see $pglog)"
	fi
	log "postgres: starting in $dir"
	as_postgres "$bin/pg_ctl" -D "$dir" -l "$pglog" -w -t "$TIMEOUT" \
		-o "-c listen_addresses=$HOST -p $PG_PORT -c unix_socket_directories=$dir" start >/dev/null 9>&- ||
		die "postgres: failed to start (see $pglog)"
	record postgres pgctl "$bin/pg_ctl" "$dir"
}

pg_up() {
	if ! command -v psql >/dev/null || ! command -v pg_isready >/dev/null; then
		apt_install postgresql-client
	fi
	if pg_ready; then
		log "postgres: reusing the server on $HOST:$PG_PORT"
	else
		local installed=0 cluster ver name status
		if ! pg_bin_dir >/dev/null; then
			apt_install postgresql
			installed=1
		fi
		cluster="$(pg_debian_cluster)"
		if [[ -n "$cluster" ]]; then
			read -r ver name status <<<"$cluster"
			((installed == 1)) && pg_trust_loopback "$ver" "$name"
			if [[ "$status" == online* ]]; then
				((installed == 1)) && pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" reload 9>&-
			else
				log "postgres: starting Debian cluster $ver/$name"
				pg_ctlcluster --skip-systemctl-redirect "$ver" "$name" start 9>&- ||
					die "postgres: pg_ctlcluster $ver $name start failed"
				record postgres cluster "$ver" "$name"
			fi
		else
			pg_start_own
		fi
		wait_for "postgres on $HOST:$PG_PORT" pg_ready
	fi
	psql_q "select 1" >/dev/null 2>&1 ||
		die "postgres on $HOST:$PG_PORT does not let user postgres in without a password; allow trust auth for 127.0.0.1"
	local db
	for db in "${DATABASES[@]}"; do
		if [[ "$(psql_q "select 1 from pg_database where datname = '$db'")" != 1 ]]; then
			log "postgres: creating database $db"
			psql_q "create database \"$db\"" >/dev/null
		fi
	done
}

psql_q() {
	psql -X -q -v ON_ERROR_STOP=1 -h "$HOST" -p "$PG_PORT" -U postgres -d postgres -tAc "$1"
}

pg_down() {
	local entry kind
	entry="$(started_entry postgres)"
	[[ -n "$entry" ]] || return 0
	read -r _ kind a b <<<"$entry"
	case "$kind" in
	cluster)
		log "postgres: stopping Debian cluster $a/$b"
		pg_ctlcluster --skip-systemctl-redirect "$a" "$b" stop || true
		;;
	pgctl)
		log "postgres: stopping $b"
		as_postgres "$a" -D "$b" -m fast -w stop >/dev/null || true
		;;
	esac
	forget postgres
}

# ---------------------------------------------------------------- Redis

redis_ready() { [[ "$(redis-cli -h "$HOST" -p "$REDIS_PORT" ping 2>/dev/null)" == PONG ]]; }

redis_up() {
	command -v redis-cli >/dev/null || apt_install redis-tools
	if ! port_open "$REDIS_PORT" && ! command -v redis-server >/dev/null; then
		apt_install redis-server
	fi
	# Checked after installing: Debian's package starts a server of its own where it may.
	if port_open "$REDIS_PORT"; then
		log "redis: reusing the server on $HOST:$REDIS_PORT"
	else
		mkdir -p "$STATE/redis"
		log "redis: starting"
		redis-server --daemonize yes --bind "$HOST" --port "$REDIS_PORT" --save "" --appendonly no \
			--dir "$STATE/redis" --pidfile "$STATE/redis/redis.pid" --logfile "$LOGS/redis.log" 9>&- ||
			die "redis: failed to start (see $LOGS/redis.log)"
		local deadline=$((SECONDS + TIMEOUT))
		until [[ -s "$STATE/redis/redis.pid" ]]; do
			((SECONDS < deadline)) || die "redis: no pid file after ${TIMEOUT}s (see $LOGS/redis.log)"
			sleep 0.2
		done
		record redis pid "$(cat "$STATE/redis/redis.pid")"
	fi
	wait_for "redis on $HOST:$REDIS_PORT" redis_ready
}

redis_down() {
	local entry pid
	entry="$(started_entry redis)"
	[[ -n "$entry" ]] || return 0
	read -r _ _ pid <<<"$entry"
	stop_pid redis "$pid" redis-server
	forget redis
}

# ---------------------------------------------------------------- NATS

nats_up() {
	if port_open "$NATS_PORT"; then
		log "nats: reusing the server on $HOST:$NATS_PORT"
	else
		local bin
		bin="$(command -v nats-server || true)"
		if [[ -z "$bin" ]]; then
			apt_install nats-server
			bin="$(command -v nats-server)"
		fi
		mkdir -p "$STATE/nats"
		log "nats: starting"
		local pid
		pid="$(spawn "$LOGS/nats.log" "$bin" -a "$HOST" -p "$NATS_PORT" -js -sd "$STATE/nats")"
		record nats pid "$pid"
	fi
	wait_for "nats on $HOST:$NATS_PORT" port_open "$NATS_PORT"
}

nats_down() {
	local entry pid
	entry="$(started_entry nats)"
	[[ -n "$entry" ]] || return 0
	read -r _ _ pid <<<"$entry"
	stop_pid nats "$pid" nats-server
	forget nats
}

# ---------------------------------------------------------------- MinIO

minio_ready() { curl -fs -o /dev/null "http://$HOST:$MINIO_PORT/minio/health/ready"; }

minio_bin() {
	if [[ -x "$CACHE/bin/minio" ]]; then
		echo "$CACHE/bin/minio"
		return
	fi
	if command -v minio >/dev/null; then
		command -v minio
		return
	fi
	command -v go >/dev/null || die "minio: not installed and go is not on PATH to build it"
	log "minio: building with go install into $CACHE/bin (takes minutes the first time)"
	mkdir -p "$CACHE/bin"
	GOWORK=off GOFLAGS=-mod=mod GOBIN="$CACHE/bin" go install github.com/minio/minio@latest >>"$LOGS/minio-build.log" 2>&1 ||
		die "minio: go install failed (see $LOGS/minio-build.log)"
	echo "$CACHE/bin/minio"
}

minio_up() {
	command -v curl >/dev/null || apt_install curl ca-certificates
	if port_open "$MINIO_PORT"; then
		log "minio: reusing the server on $HOST:$MINIO_PORT"
	else
		local bin pid
		bin="$(minio_bin)"
		mkdir -p "$STATE/minio"
		log "minio: starting"
		pid="$(MINIO_ROOT_USER="$MINIO_USER" MINIO_ROOT_PASSWORD="$MINIO_PASSWORD" \
			spawn "$LOGS/minio.log" "$bin" server "$STATE/minio" --quiet \
			--address "$HOST:$MINIO_PORT" --console-address "$HOST:$MINIO_CONSOLE_PORT")"
		record minio pid "$pid"
	fi
	wait_for "minio on $HOST:$MINIO_PORT" minio_ready
	local bucket code
	for bucket in "${BUCKETS[@]}"; do
		code="$(curl -sS -o "$LOGS/minio-bucket.out" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" \
			--user "$MINIO_USER:$MINIO_PASSWORD" -X PUT "http://$HOST:$MINIO_PORT/$bucket")"
		case "$code" in
		200) log "minio: created bucket $bucket" ;;
		409) ;;
		*) die "minio: creating bucket $bucket answered HTTP $code: $(cat "$LOGS/minio-bucket.out")" ;;
		esac
	done
	minio_public_read content "${PUBLIC_PREFIXES[@]}"
}

# minio_public_read BUCKET PREFIX... lets anonymous clients read (GetObject, nothing else) the
# objects under each prefix of BUCKET: content-svc's previews, fonts and images, whose URLs
# browsers follow (S3_PUBLIC_BASE_URL). content-svc sets the same policy at start-up.
minio_public_read() {
	local bucket="$1" resources="" prefix policy code
	shift
	for prefix in "$@"; do
		resources+="${resources:+,}\"arn:aws:s3:::$bucket/$prefix*\""
	done
	policy='{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"AWS":["*"]},"Action":["s3:GetObject"],"Resource":['"$resources"']}]}'
	# curl signs a body only with its hash given, and a query key only in the form "policy=".
	code="$(curl -sS -o "$LOGS/minio-policy.out" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:s3" \
		--user "$MINIO_USER:$MINIO_PASSWORD" -H "x-amz-content-sha256: $(printf %s "$policy" | sha256sum | cut -d' ' -f1)" \
		-X PUT "http://$HOST:$MINIO_PORT/$bucket?policy=" --data-binary "$policy")"
	[[ "$code" == 204 || "$code" == 200 ]] ||
		die "minio: public read policy of $bucket answered HTTP $code: $(cat "$LOGS/minio-policy.out")"
}

minio_down() {
	local entry pid
	entry="$(started_entry minio)"
	[[ -n "$entry" ]] || return 0
	read -r _ _ pid <<<"$entry"
	stop_pid minio "$pid" minio
	forget minio
}

# ---------------------------------------------------------------- MailHog

# MAILHOG_VERSION is the MailHog release infra.sh builds (docs/adr/0080-mailhog-as-the-local-smtp-catcher.md).
MAILHOG_VERSION=v1.0.1

mail_ready() {
	port_open "$MAIL_SMTP_PORT" && curl -fs -o /dev/null "http://$HOST:$MAIL_HTTP_PORT/api/v2/messages?limit=1"
}

# mailhog_module prints the module that MailHog is built in. MailHog v1.0.1 predates Go modules,
# so `go install github.com/mailhog/MailHog@v1.0.1` would look up the newest version of each
# dependency, and the module proxy lists none of github.com/ian-kent/linkio; this pins every
# dependency to the version the build was checked with.
mailhog_module() {
	cat <<EOF
module motionstudio.local/mailhog

go 1.22

require (
	github.com/gorilla/context v1.1.2
	github.com/gorilla/mux v1.8.1
	github.com/gorilla/pat v1.0.2
	github.com/gorilla/websocket v1.5.3
	github.com/ian-kent/envconf v0.0.0-20141026121121-c19809918c02
	github.com/ian-kent/go-log v0.0.0-20160113211217-5731446c36ab
	github.com/ian-kent/goose v0.0.0-20141221090059-c3541ea826ad
	github.com/ian-kent/linkio v0.0.0-20170807205755-97566b872887
	github.com/mailhog/MailHog $MAILHOG_VERSION
	github.com/mailhog/MailHog-Server v1.0.1
	github.com/mailhog/MailHog-UI v1.0.1
	github.com/mailhog/data v1.0.1
	github.com/mailhog/http v1.0.1
	github.com/mailhog/mhsendmail v0.2.0
	github.com/mailhog/smtp v1.0.1
	github.com/mailhog/storage v1.0.1
	github.com/ogier/pflag v0.0.1
	github.com/philhofer/fwd v1.2.0
	github.com/t-k/fluent-logger-golang v1.0.0
	github.com/tinylib/msgp v1.6.5
	golang.org/x/crypto v0.59.0
	gopkg.in/mgo.v2 v2.0.0-20190816093944-a6b53ec6cb22
)
EOF
}

# mailhog_bin prints the cached MailHog binary, building it first when it is missing.
mailhog_bin() {
	local bin="$CACHE/bin/mailhog-$MAILHOG_VERSION" src="$CACHE/src/mailhog-$MAILHOG_VERSION"
	if [[ -x "$bin" ]]; then
		echo "$bin"
		return
	fi
	command -v go >/dev/null || die "mailhog: not installed and go is not on PATH to build it"
	log "mailhog: building $MAILHOG_VERSION with go install into $CACHE/bin"
	mkdir -p "$src" "$CACHE/bin"
	mailhog_module >"$src/go.mod"
	(cd "$src" && GOWORK=off GOFLAGS=-mod=mod GOBIN="$src/bin" go install github.com/mailhog/MailHog) \
		>>"$LOGS/mailhog-build.log" 2>&1 9>&- || die "mailhog: go install failed (see $LOGS/mailhog-build.log)"
	mv "$src/bin/MailHog" "$bin"
	echo "$bin"
}

mailhog_up() {
	command -v curl >/dev/null || apt_install curl ca-certificates
	if port_open "$MAIL_SMTP_PORT" || port_open "$MAIL_HTTP_PORT"; then
		log "mailhog: reusing the server on $HOST:$MAIL_SMTP_PORT (SMTP) and $HOST:$MAIL_HTTP_PORT (inbox)"
	else
		local bin pid
		bin="$(mailhog_bin)"
		log "mailhog: starting"
		pid="$(spawn "$LOGS/mailhog.log" "$bin" -smtp-bind-addr "$HOST:$MAIL_SMTP_PORT" \
			-api-bind-addr "$HOST:$MAIL_HTTP_PORT" -ui-bind-addr "$HOST:$MAIL_HTTP_PORT")"
		record mailhog pid "$pid"
	fi
	wait_for "mailhog on $HOST:$MAIL_SMTP_PORT (SMTP) and $HOST:$MAIL_HTTP_PORT (inbox)" mail_ready
}

mailhog_down() {
	local entry pid
	entry="$(started_entry mailhog)"
	[[ -n "$entry" ]] || return 0
	read -r _ _ pid <<<"$entry"
	stop_pid mailhog "$pid" mailhog
	forget mailhog
}

# ---------------------------------------------------------------- commands

status_line() {
	local name="$1" addr="$2" up="$3" entry
	entry="$(started_entry "$name")"
	printf '%-9s %-16s %-5s %s\n' "$name" "$addr" "$up" \
		"$([[ -n "$entry" ]] && echo "started by infra.sh (${entry#"$name" })" || echo "not started by infra.sh")"
}

cmd_status() {
	local s
	s=down && pg_ready && s=up
	status_line postgres "$HOST:$PG_PORT" "$s"
	s=down && redis_ready && s=up
	status_line redis "$HOST:$REDIS_PORT" "$s"
	s=down && port_open "$NATS_PORT" && s=up
	status_line nats "$HOST:$NATS_PORT" "$s"
	s=down && minio_ready && s=up
	status_line minio "$HOST:$MINIO_PORT" "$s"
	s=down && mail_ready && s=up
	status_line mailhog "$HOST:$MAIL_SMTP_PORT" "$s"
}

with_lock() {
	mkdir -p "$STATE" "$LOGS"
	exec 9>"$STATE/infra.lock"
	flock -w 600 9 || die "another infra.sh holds $STATE/infra.lock"
	"$@"
}

cmd_up() {
	pg_up
	redis_up
	nats_up
	minio_up
	mailhog_up
	log "ready: postgres $HOST:$PG_PORT, redis $HOST:$REDIS_PORT, nats $HOST:$NATS_PORT, minio $HOST:$MINIO_PORT," \
		"mailhog $HOST:$MAIL_SMTP_PORT (inbox http://$HOST:$MAIL_HTTP_PORT)"
}

cmd_down() {
	mailhog_down
	minio_down
	nats_down
	redis_down
	pg_down
	log "stopped everything infra.sh had started"
}

case "${1:-}" in
up) with_lock cmd_up ;;
down) with_lock cmd_down ;;
status) cmd_status ;;
*)
	echo "usage: $0 up|down|status" >&2
	exit 2
	;;
esac
