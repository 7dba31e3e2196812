-- +goose Up
CREATE TABLE api_keys (
    id             uuid PRIMARY KEY,
    tenant_id      uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    name           text        NOT NULL,
    environment    text        NOT NULL CHECK (environment IN ('Live', 'Test')),
    key_prefix     text        NOT NULL,
    last4          text        NOT NULL,
    -- Hex SHA-256 of the whole secret; the secret itself is never stored.
    key_hash       text        NOT NULL,
    scopes         jsonb       NOT NULL,
    allowed_ips    jsonb       NOT NULL DEFAULT '[]',
    rate_limit_rpm integer     NOT NULL CHECK (rate_limit_rpm > 0),
    is_active      boolean     NOT NULL DEFAULT true,
    expires_at     timestamptz,
    last_used_at   timestamptz,
    usage_count    bigint      NOT NULL DEFAULT 0,
    created_by     uuid,
    created_at     timestamptz NOT NULL DEFAULT now(),
    revoked_at     timestamptz,
    revoked_by     uuid,
    revoke_reason  text
);
-- The validation hot path finds a key by its hash.
CREATE UNIQUE INDEX api_keys_key_hash_key ON api_keys (key_hash);
CREATE INDEX api_keys_tenant_created_idx ON api_keys (tenant_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE api_keys;
