#!/bin/sh
# restart.sh runs a service binary and restarts it whenever a Tilt live update rewrites the
# marker file (the Tiltfile's live_update syncs the new binary into /app, then writes the time
# and its shell's pid into /app/run/restart). It stands in for Tilt's restart_process
# extension, which needs the network to load and keeps its marker where the non-root user 65532
# cannot write (/) or where the chart's /tmp emptyDir hides it.
#
# The marker lives in /app/run, which deploy/tilt/Dockerfile.dev creates and gives to 65532 and
# over which the chart mounts nothing. When the command exits on its own the script exits with
# its status, so the migrate init container runs once and a crashing server restarts the
# container as usual. SIGTERM and SIGINT go to the command, so graceful shutdown still applies.
set -u

marker=${RESTART_MARKER:-/app/run/restart}
pidfile=$marker.pid

read_marker() { cat "$marker" 2>/dev/null || true; }

seen=$(read_marker)
stopping=

# The watcher stops the running command when the marker changes; the loop below starts it again.
# It ends with this script ($$ is the script's pid in the subshell too).
(
	last=$seen
	while sleep 1 && kill -0 $$ 2>/dev/null; do
		now=$(read_marker)
		if [ "$now" != "$last" ]; then
			last=$now
			kill -TERM "$(cat "$pidfile")" 2>/dev/null
		fi
	done
) &
watcher=$!

forward() {
	stopping=1
	kill "-$1" "$pid" 2>/dev/null
}
trap 'forward TERM' TERM
trap 'forward INT' INT

while :; do
	"$@" &
	pid=$!
	echo "$pid" >"$pidfile"
	status=0
	wait "$pid" || status=$?
	# wait returns early when a trapped signal arrives: wait for the command itself.
	while kill -0 "$pid" 2>/dev/null; do
		status=0
		wait "$pid" || status=$?
	done
	now=$(read_marker)
	if [ -n "$stopping" ] || [ "$now" = "$seen" ]; then
		kill "$watcher" 2>/dev/null
		exit "$status"
	fi
	seen=$now
	echo "restart.sh: $marker changed, restarting $1" >&2
done
