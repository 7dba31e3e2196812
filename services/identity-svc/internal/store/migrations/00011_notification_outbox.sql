-- +goose Up
-- notification_outbox keeps a copy of every message the development notifier "sends", so that
-- developers and tests can read verification codes and reset links.
CREATE TABLE notification_outbox (
    id         uuid PRIMARY KEY,
    channel    text        NOT NULL CHECK (channel IN ('email', 'sms')),
    recipient  text        NOT NULL,
    kind       text        NOT NULL,
    subject    text        NOT NULL DEFAULT '',
    body       text        NOT NULL,
    data       jsonb       NOT NULL DEFAULT '{}',
    tenant_id  uuid,
    user_id    uuid,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX notification_outbox_recipient_idx ON notification_outbox (recipient, created_at DESC);

-- +goose Down
DROP TABLE notification_outbox;
