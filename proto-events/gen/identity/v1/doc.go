// Package identityv1 holds the Go types generated from the
// motionstudio.identity.v1 schemas: the events identity-svc publishes and
// delivers to tenant webhooks, and the webhook delivery job. Regenerate with
// scripts/gen-proto.sh; only this file is written by hand.
package identityv1
