-- +goose Up
-- The CloudEvents attributes an event carries besides id, type, source and time: the URI of its
-- payload's schema and the tenant or organization it concerns. Rows written before this
-- migration keep them empty and are published without them.
ALTER TABLE outbox
    ADD COLUMN data_schema     text NOT NULL DEFAULT '',
    ADD COLUMN tenant_id       text NOT NULL DEFAULT '',
    ADD COLUMN organization_id text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE outbox
    DROP COLUMN organization_id,
    DROP COLUMN tenant_id,
    DROP COLUMN data_schema;
