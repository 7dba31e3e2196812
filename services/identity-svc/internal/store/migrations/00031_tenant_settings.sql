-- +goose Up
ALTER TABLE tenants
    ADD COLUMN billing_email   text  NOT NULL DEFAULT '',
    ADD COLUMN allowed_origins jsonb NOT NULL DEFAULT '[]';
-- The admin tenant list pages newest first.
CREATE INDEX tenants_created_at_idx ON tenants (created_at DESC, id DESC);

-- One branding document per tenant, validated by the service; absent means defaults.
CREATE TABLE tenant_branding (
    tenant_id  uuid PRIMARY KEY REFERENCES tenants (id) ON DELETE CASCADE,
    branding   jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tenant_domain_verifications (
    id              uuid PRIMARY KEY,
    tenant_id       uuid        NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    domain          text        NOT NULL,
    method          text        NOT NULL CHECK (method IN ('DNS_TXT', 'HTTP_FILE')),
    token           text        NOT NULL,
    status          text        NOT NULL CHECK (status IN ('Pending', 'Verified')),
    expires_at      timestamptz NOT NULL,
    verified_at     timestamptz,
    last_checked_at timestamptz,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tenant_domain_verifications_lookup_idx ON tenant_domain_verifications (tenant_id, domain, method, created_at DESC);
-- The periodic check walks pending, unexpired challenges.
CREATE INDEX tenant_domain_verifications_pending_idx ON tenant_domain_verifications (expires_at) WHERE status = 'Pending';

-- Usage per tenant and day; counters are added to by the service's usage recorders.
CREATE TABLE tenant_usage_days (
    tenant_id           uuid    NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    usage_date          date    NOT NULL,
    renders_completed   integer NOT NULL DEFAULT 0,
    render_seconds      bigint  NOT NULL DEFAULT 0,
    storage_bytes       bigint  NOT NULL DEFAULT 0,
    api_calls           bigint  NOT NULL DEFAULT 0,
    active_users        integer NOT NULL DEFAULT 0,
    amount_billed_minor bigint  NOT NULL DEFAULT 0,
    billing_currency    text    NOT NULL DEFAULT '',
    billing_status      text    NOT NULL DEFAULT 'Unbilled',
    PRIMARY KEY (tenant_id, usage_date)
);

-- +goose Down
DROP TABLE tenant_usage_days;
DROP TABLE tenant_domain_verifications;
DROP TABLE tenant_branding;
DROP INDEX tenants_created_at_idx;
ALTER TABLE tenants DROP COLUMN billing_email, DROP COLUMN allowed_origins;
