-- +goose Up
CREATE TABLE tenants (
    id               uuid PRIMARY KEY,
    slug             text        NOT NULL,
    name             text        NOT NULL,
    kind             text        NOT NULL CHECK (kind IN ('Internal', 'Reseller', 'Enterprise')),
    status           text        NOT NULL CHECK (status IN ('Active', 'Trial', 'Suspended', 'Cancelled')),
    custom_domain    text,
    domain_verified  boolean     NOT NULL DEFAULT false,
    contact_email    text        NOT NULL,
    contact_name     text        NOT NULL DEFAULT '',
    contact_phone    text        NOT NULL DEFAULT '',
    max_users        integer,
    max_storage_gb   integer,
    monthly_render_qty integer,
    trial_ends_at    timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tenants_slug_key ON tenants (slug);
CREATE UNIQUE INDEX tenants_custom_domain_key ON tenants (lower(custom_domain)) WHERE custom_domain IS NOT NULL;

CREATE TABLE users (
    id                          uuid PRIMARY KEY,
    tenant_id                   uuid        NOT NULL REFERENCES tenants (id),
    email                       text,
    email_verified              boolean     NOT NULL DEFAULT false,
    phone_number                text,
    phone_verified              boolean     NOT NULL DEFAULT false,
    full_name                   text,
    avatar_url                  text,
    is_admin                    boolean     NOT NULL DEFAULT false,
    is_tenant_admin             boolean     NOT NULL DEFAULT false,
    register_mode               text        NOT NULL,
    password_hash               text        NOT NULL,
    last_active_date            timestamptz NOT NULL DEFAULT now(),
    register_date               timestamptz NOT NULL DEFAULT now(),
    balance_minor               bigint      NOT NULL DEFAULT 0,
    affiliate_balance_minor     bigint      NOT NULL DEFAULT 0,
    loyalty_score               integer     NOT NULL DEFAULT 0,
    daily_remain_render_count   integer     NOT NULL DEFAULT 0,
    max_daily_render_count      integer     NOT NULL DEFAULT 0,
    parallel_rendering_ceiling  integer     NOT NULL DEFAULT 1,
    used_storage_bytes          bigint      NOT NULL DEFAULT 0,
    updated_at                  timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT users_balance_nonnegative CHECK (balance_minor >= 0)
);
CREATE UNIQUE INDEX users_tenant_email_key ON users (tenant_id, email) WHERE email IS NOT NULL;
CREATE UNIQUE INDEX users_tenant_phone_key ON users (tenant_id, phone_number) WHERE phone_number IS NOT NULL;

-- +goose Down
DROP TABLE users;
DROP TABLE tenants;
