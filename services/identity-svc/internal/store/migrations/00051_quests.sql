-- +goose Up
CREATE TABLE gifts (
    id          uuid PRIMARY KEY,
    tenant_id   uuid        NOT NULL REFERENCES tenants (id),
    name        text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    prize_type  text        NOT NULL CHECK (prize_type IN ('Balance', 'DailyRenders', 'RenderSeconds')),
    unit        text        NOT NULL DEFAULT '',
    value       bigint      NOT NULL CHECK (value > 0),
    valid_for   interval,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE quests (
    id           uuid PRIMARY KEY,
    tenant_id    uuid        NOT NULL REFERENCES tenants (id),
    title        text        NOT NULL,
    challenge    text        NOT NULL DEFAULT '',
    why          text        NOT NULL DEFAULT '',
    hint         text        NOT NULL DEFAULT '',
    icon         text        NOT NULL DEFAULT '',
    quest_type   text        NOT NULL CHECK (quest_type IN ('OneTime', 'Daily', 'Weekly', 'Onboarding', 'Milestone')),
    trigger      text        NOT NULL,
    target_count integer     NOT NULL CHECK (target_count > 0),
    prize_type   text        NOT NULL CHECK (prize_type IN ('Balance', 'Gift')),
    prize_amount bigint      NOT NULL DEFAULT 0 CHECK (prize_amount >= 0),
    gift_id      uuid REFERENCES gifts (id),
    is_active    boolean     NOT NULL DEFAULT true,
    sort_order   integer     NOT NULL DEFAULT 0,
    expires_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CONSTRAINT quests_gift_prize CHECK (prize_type <> 'Gift' OR gift_id IS NOT NULL)
);
CREATE INDEX quests_tenant_trigger_idx ON quests (tenant_id, trigger) WHERE is_active;
CREATE INDEX quests_tenant_order_idx ON quests (tenant_id, sort_order, created_at) WHERE is_active;

CREATE TABLE quest_progress (
    quest_id      uuid        NOT NULL REFERENCES quests (id),
    user_id       uuid        NOT NULL REFERENCES users (id),
    period_key    text        NOT NULL,
    current_count integer     NOT NULL DEFAULT 0,
    completed_at  timestamptz,
    claimed_at    timestamptz,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (quest_id, user_id, period_key)
);
CREATE INDEX quest_progress_user_idx ON quest_progress (user_id, quest_id);

CREATE TABLE earned_gifts (
    id         uuid PRIMARY KEY,
    gift_id    uuid        NOT NULL REFERENCES gifts (id),
    tenant_id  uuid        NOT NULL,
    user_id    uuid        NOT NULL REFERENCES users (id),
    quest_id   uuid REFERENCES quests (id),
    earned_at  timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz,
    used_at    timestamptz
);
CREATE INDEX earned_gifts_user_unused_idx ON earned_gifts (user_id, earned_at DESC) WHERE used_at IS NULL;

-- +goose Down
DROP TABLE earned_gifts;
DROP TABLE quest_progress;
DROP TABLE quests;
DROP TABLE gifts;
