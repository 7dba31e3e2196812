#!/usr/bin/env bash
# dev.sh runs the three services from bin/ against the local infrastructure (make dev|up|down
# call it after scripts/infra.sh up and make build).
#
#   scripts/dev.sh run     migrate, then run all three in the foreground with prefixed logs
#                          ("[identity] ..."); Ctrl-C stops them all, and so does any one exiting
#   scripts/dev.sh start   migrate, then start all three in the background (pids and logs under
#                          .state/run) and wait until each answers /healthz
#   scripts/dev.sh stop    stop what `start` started
#   scripts/dev.sh status  print each service: running or not, and its URL
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
RUN="$REPO/.state/run"
BIN="$REPO/bin"
SERVICES=(identity content agentteam)
declare -A PORT=([identity]=8081 [content]=8082 [agentteam]=8083)
TIMEOUT="${DEV_TIMEOUT:-60}"
# A local service client for the client-credentials grant (README: "Calling the services").
export SERVICE_CLIENTS="${SERVICE_CLIENTS:-dev-service:dev-service-secret-change-me}"
# Local development only: let webhooks and other outbound calls reach receivers on this machine
# (127.0.0.1); deployments keep the default, which refuses loopback and private addresses.
export OUTBOUND_ALLOW_LOOPBACK="${OUTBOUND_ALLOW_LOOPBACK:-true}"
# Local development only: the platform admin key of the shared skill library
# (X-Skills-Admin-Key on POST /api/skills/index and /sync), and the starter library it syncs at
# start-up so a new organization sees shared skills at once.
export SKILLS_ADMIN_KEY="${SKILLS_ADMIN_KEY:-dev-skills-admin-key}"
# Local development only: identity-svc keeps its messages in the log and notification_outbox
# (NOTIFY_MODE=dev) and also sends each email over plain SMTP to the MailHog that
# scripts/infra.sh starts, whose inbox is at http://127.0.0.1:8025.
export SMTP_ADDR="${SMTP_ADDR:-127.0.0.1:1025}"
if [[ -z "${SKILLS_SOURCE_GIT_URL:-}" ]]; then
	export SKILLS_SOURCE_DIR="${SKILLS_SOURCE_DIR:-$REPO/services/agentteam-svc/starter-skills}"
fi

log() { printf 'dev: %s\n' "$*" >&2; }
die() { printf 'dev: error: %s\n' "$*" >&2; exit 1; }

binary() { echo "$BIN/$1-svc"; }

require_binaries() {
	local s
	for s in "${SERVICES[@]}"; do
		[[ -x "$(binary "$s")" ]] || die "$(binary "$s") is missing; run make build"
	done
}

healthy() { curl -fs -o /dev/null "http://127.0.0.1:${PORT[$1]}/healthz"; }

pid_of() {
	local file="$RUN/$1.pid" pid
	[[ -f "$file" ]] || return 1
	pid="$(cat "$file")"
	[[ -r "/proc/$pid/cmdline" ]] && tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q -- "$1-svc" || return 1
	echo "$pid"
}

# migrate runs every service's migrations in order, so a failing one stops the rest early.
migrate() {
	local s
	for s in "${SERVICES[@]}"; do
		log "migrating $s"
		"$(binary "$s")" migrate 2>&1 | sed -u "s/^/[$s] /"
	done
}

cmd_run() {
	require_binaries
	migrate
	local pids=() s
	for s in "${SERVICES[@]}"; do
		# The prefixing sed ignores Ctrl-C so it outlives the service and prints its last words.
		"$(binary "$s")" serve > >(trap '' INT TERM && exec sed -u "s/^/[$s] /") 2>&1 &
		pids+=($!)
	done
	# shellcheck disable=SC2329 # invoked by the trap
	stop_all() {
		trap - INT TERM
		kill -TERM "${pids[@]}" 2>/dev/null || true
		wait "${pids[@]}" 2>/dev/null || true
	}
	trap 'log "stopping"; stop_all; exit 130' INT TERM
	log "identity http://127.0.0.1:8081  content http://127.0.0.1:8082  agentteam http://127.0.0.1:8083  mail http://127.0.0.1:8025 (Ctrl-C stops)"
	local status=0
	wait -n "${pids[@]}" || status=$?
	log "a service exited with status $status; stopping the others"
	stop_all
	exit "$status"
}

cmd_start() {
	require_binaries
	mkdir -p "$RUN"
	migrate
	local s pid
	for s in "${SERVICES[@]}"; do
		if pid="$(pid_of "$s")"; then
			log "$s is already running (pid $pid)"
			continue
		fi
		setsid "$(binary "$s")" serve >>"$RUN/$s.log" 2>&1 </dev/null &
		echo $! >"$RUN/$s.pid"
		log "started $s (pid $!, log .state/run/$s.log)"
	done
	local deadline=$((SECONDS + TIMEOUT))
	for s in "${SERVICES[@]}"; do
		until healthy "$s"; do
			if ! pid_of "$s" >/dev/null; then
				tail -n 20 "$RUN/$s.log" >&2 || true
				die "$s exited; see .state/run/$s.log"
			fi
			if ((SECONDS >= deadline)); then
				tail -n 20 "$RUN/$s.log" >&2 || true
				die "$s did not answer /healthz within ${TIMEOUT}s"
			fi
			sleep 0.3
		done
	done
	log "up: identity http://127.0.0.1:8081  content http://127.0.0.1:8082  agentteam http://127.0.0.1:8083  mail http://127.0.0.1:8025"
}

cmd_stop() {
	local s pid
	for s in "${SERVICES[@]}"; do
		if pid="$(pid_of "$s")"; then
			log "stopping $s (pid $pid)"
			kill -TERM "$pid" 2>/dev/null || true
			local deadline=$((SECONDS + 20))
			while pid_of "$s" >/dev/null; do
				if ((SECONDS >= deadline)); then
					log "$s ignored SIGTERM; sending SIGKILL"
					kill -KILL "$pid" 2>/dev/null || true
					break
				fi
				sleep 0.2
			done
		fi
		rm -f "$RUN/$s.pid"
	done
}

cmd_status() {
	local s pid
	for s in "${SERVICES[@]}"; do
		if pid="$(pid_of "$s")"; then
			printf '%-10s running (pid %s)  http://127.0.0.1:%s\n' "$s" "$pid" "${PORT[$s]}"
		else
			printf '%-10s not running\n' "$s"
		fi
	done
}

case "${1:-}" in
run) cmd_run ;;
start) cmd_start ;;
stop) cmd_stop ;;
status) cmd_status ;;
*)
	echo "usage: $0 run|start|stop|status" >&2
	exit 2
	;;
esac
