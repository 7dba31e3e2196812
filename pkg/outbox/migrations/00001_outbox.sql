-- +goose Up
CREATE TABLE outbox (
    id            uuid        PRIMARY KEY,
    subject       text        NOT NULL,
    type          text        NOT NULL,
    source        text        NOT NULL,
    data          jsonb       NOT NULL,
    trace_headers jsonb       NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    sent_at       timestamptz,
    attempts      integer     NOT NULL DEFAULT 0,
    last_error    text
);

-- The relay reads unsent rows oldest first; the retention purge reads sent rows by age.
CREATE INDEX outbox_unsent_idx ON outbox (created_at, id) WHERE sent_at IS NULL;
CREATE INDEX outbox_sent_at_idx ON outbox (sent_at) WHERE sent_at IS NOT NULL;

CREATE TABLE inbox (
    consumer     text        NOT NULL,
    event_id     text        NOT NULL,
    processed_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (consumer, event_id)
);

CREATE INDEX inbox_processed_at_idx ON inbox (processed_at);

-- +goose Down
DROP TABLE inbox;
DROP TABLE outbox;
