-- +goose Up
CREATE TABLE plans (
    id                    uuid PRIMARY KEY,
    tenant_id             uuid        NOT NULL REFERENCES tenants (id),
    code                  text        NOT NULL,
    name                  text        NOT NULL,
    description           text        NOT NULL DEFAULT '',
    scope                 text        NOT NULL DEFAULT 'User' CHECK (scope IN ('User', 'Tenant')),
    currency              text        NOT NULL,
    billing_period        text        NOT NULL DEFAULT 'Monthly' CHECK (billing_period IN ('Monthly', 'Quarterly', 'Yearly')),
    max_resolution        text        NOT NULL DEFAULT '',
    icon                  text        NOT NULL DEFAULT '',
    price_minor           bigint      NOT NULL CHECK (price_minor >= 0),
    before_price_minor    bigint,
    seconds_charge        integer     NOT NULL DEFAULT 0,
    storage_gb            integer     NOT NULL DEFAULT 0,
    parallel_renders      integer     NOT NULL DEFAULT 1,
    monthly_renders_quota integer,
    render_speed_factor   double precision NOT NULL DEFAULT 1,
    is_featured           boolean     NOT NULL DEFAULT false,
    features              jsonb       NOT NULL DEFAULT '{}',
    is_active             boolean     NOT NULL DEFAULT true,
    created_at            timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX plans_tenant_code_key ON plans (tenant_id, code);
CREATE INDEX plans_tenant_scope_idx ON plans (tenant_id, scope, price_minor) WHERE is_active;

CREATE TABLE discounts (
    id                      uuid PRIMARY KEY,
    tenant_id               uuid        NOT NULL REFERENCES tenants (id),
    name                    text        NOT NULL,
    code                    text        NOT NULL,
    kind                    text        NOT NULL CHECK (kind IN ('Percentage', 'FixedAmount', 'FreeMonths', 'RenderCredits')),
    value                   double precision NOT NULL,
    owner_user_id           uuid,
    owner_profit_percentage double precision,
    max_use_count           integer,
    use_count               integer     NOT NULL DEFAULT 0,
    applies_to_plan_ids     jsonb       NOT NULL DEFAULT '[]',
    starts_at               timestamptz,
    expires_at              timestamptz,
    created_by              uuid        NOT NULL,
    created_at              timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT discounts_use_within_max CHECK (max_use_count IS NULL OR use_count <= max_use_count),
    CONSTRAINT discounts_use_nonnegative CHECK (use_count >= 0)
);
CREATE UNIQUE INDEX discounts_tenant_code_key ON discounts (tenant_id, code);
CREATE INDEX discounts_tenant_created_idx ON discounts (tenant_id, created_at DESC, id DESC);

CREATE TABLE payments (
    id             uuid PRIMARY KEY,
    tenant_id      uuid        NOT NULL REFERENCES tenants (id),
    user_id        uuid        NOT NULL REFERENCES users (id),
    plan_id        uuid REFERENCES plans (id),
    gateway        text        NOT NULL,
    status         text        NOT NULL CHECK (status IN ('Pending', 'Confirmed', 'Failed', 'PartiallyRefunded', 'Refunded')),
    action         text        NOT NULL,
    currency       text        NOT NULL,
    title          text        NOT NULL DEFAULT '',
    description    text        NOT NULL DEFAULT '',
    card_last4     text        NOT NULL DEFAULT '',
    amount_minor   bigint      NOT NULL CHECK (amount_minor >= 0),
    discount_minor bigint      NOT NULL DEFAULT 0,
    discount_id    uuid REFERENCES discounts (id),
    discount_code  text        NOT NULL DEFAULT '',
    bonus_seconds  integer     NOT NULL DEFAULT 0,
    refunded_minor bigint      NOT NULL DEFAULT 0,
    authority      text,
    gateway_ref    text        NOT NULL DEFAULT '',
    confirmed_at   timestamptz,
    failed_at      timestamptz,
    failure_reason text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT payments_refund_within_amount CHECK (refunded_minor >= 0 AND refunded_minor <= amount_minor)
);
CREATE UNIQUE INDEX payments_authority_key ON payments (authority) WHERE authority IS NOT NULL;
CREATE INDEX payments_user_created_idx ON payments (user_id, created_at DESC, id DESC);

CREATE TABLE refunds (
    id           uuid PRIMARY KEY,
    payment_id   uuid        NOT NULL REFERENCES payments (id),
    tenant_id    uuid        NOT NULL,
    user_id      uuid        NOT NULL,
    amount_minor bigint      NOT NULL CHECK (amount_minor > 0),
    currency     text        NOT NULL,
    refund_to    text        NOT NULL CHECK (refund_to IN ('Balance', 'OriginalMethod', 'Plan')),
    reason       text        NOT NULL,
    status       text        NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX refunds_payment_idx ON refunds (payment_id);

CREATE TABLE user_plans (
    id                     uuid PRIMARY KEY,
    tenant_id              uuid        NOT NULL REFERENCES tenants (id),
    user_id                uuid        NOT NULL REFERENCES users (id),
    plan_id                uuid        NOT NULL REFERENCES plans (id),
    plan_code              text        NOT NULL,
    plan_name              text        NOT NULL,
    payment_id             uuid REFERENCES payments (id),
    initial_seconds_charge integer     NOT NULL,
    remain_charge_sec      integer     NOT NULL,
    monthly_renders_used   integer     NOT NULL DEFAULT 0,
    starts_at              timestamptz NOT NULL,
    expires_at             timestamptz NOT NULL,
    cancelled_at           timestamptz,
    auto_renew             boolean     NOT NULL DEFAULT false,
    created_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_plans_user_current_idx ON user_plans (user_id, expires_at DESC) WHERE cancelled_at IS NULL;
CREATE UNIQUE INDEX user_plans_payment_key ON user_plans (payment_id) WHERE payment_id IS NOT NULL;

-- +goose Down
DROP TABLE user_plans;
DROP TABLE refunds;
DROP TABLE payments;
DROP TABLE discounts;
DROP TABLE plans;
