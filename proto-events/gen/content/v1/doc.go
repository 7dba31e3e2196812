// Package contentv1 holds the Go types generated from the
// motionstudio.content.v1 schemas: the events content-svc publishes and the
// jobs it queues. Regenerate with scripts/gen-proto.sh; only this file is
// written by hand.
package contentv1
