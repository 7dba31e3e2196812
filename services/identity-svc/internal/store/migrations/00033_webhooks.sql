-- +goose Up
CREATE TABLE webhooks (
    id                   uuid PRIMARY KEY,
    tenant_id            uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name                 text        NOT NULL,
    url                  text        NOT NULL,
    events               jsonb       NOT NULL,
    -- The whsec_ signing secret, sealed with AES-256-GCM bound to the row id.
    secret_sealed        bytea       NOT NULL,
    is_active            boolean     NOT NULL DEFAULT true,
    disabled_reason      text,
    last_triggered_at    timestamptz,
    last_status_code     integer,
    consecutive_failures integer     NOT NULL DEFAULT 0,
    failing_since        timestamptz,
    created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhooks_tenant_idx ON webhooks (tenant_id, created_at DESC);

-- One row per event to deliver to one webhook: the job the delivery worker claims.
CREATE TABLE webhook_messages (
    id              uuid PRIMARY KEY,
    webhook_id      uuid        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    tenant_id       uuid        NOT NULL,
    event_id        text        NOT NULL,
    event_type      text        NOT NULL,
    body            bytea       NOT NULL,
    status          text        NOT NULL CHECK (status IN ('Queued', 'Processing', 'Scheduled', 'Succeeded', 'Failed', 'Cancelled')),
    attempt         integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz,
    queued_at       timestamptz,
    lease_until     timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (webhook_id, event_id)
);
-- The sweeper wakes scheduled retries and stale jobs.
CREATE INDEX webhook_messages_due_idx ON webhook_messages (status, next_attempt_at)
    WHERE status IN ('Queued', 'Processing', 'Scheduled');

-- One row per attempt to call a webhook.
CREATE TABLE webhook_deliveries (
    id              uuid PRIMARY KEY,
    message_id      uuid        NOT NULL REFERENCES webhook_messages (id) ON DELETE CASCADE,
    webhook_id      uuid        NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event_type      text        NOT NULL,
    request_url     text        NOT NULL,
    response_status integer,
    response_body   text,
    error_message   text,
    duration_ms     integer     NOT NULL,
    attempt         integer     NOT NULL,
    succeeded       boolean     NOT NULL,
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_deliveries_webhook_idx ON webhook_deliveries (webhook_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhook_messages;
DROP TABLE webhooks;
