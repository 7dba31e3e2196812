// Package agentteamv1 holds the Go types generated from the
// motionstudio.agentteam.v1 schemas: the jobs agentteam-svc queues.
// Regenerate with scripts/gen-proto.sh; only this file is written by hand.
package agentteamv1
