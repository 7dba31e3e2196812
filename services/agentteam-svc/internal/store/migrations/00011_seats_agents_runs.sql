-- +goose Up
CREATE TABLE seats (
    id         uuid PRIMARY KEY,
    team_id    uuid        NOT NULL REFERENCES teams (id),
    role_name  text        NOT NULL,
    state      text        NOT NULL CHECK (state IN ('Open', 'Human', 'AI')),
    member_id  uuid,
    agent_id   uuid,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX seats_team_idx ON seats (team_id, created_at, id);

CREATE TABLE agents (
    id                     uuid PRIMARY KEY,
    seat_id                uuid        NOT NULL UNIQUE REFERENCES seats (id),
    organization_id        uuid        NOT NULL REFERENCES organizations (id),
    team_id                uuid        NOT NULL REFERENCES teams (id),
    name                   text        NOT NULL,
    monogram               text        NOT NULL DEFAULT '',
    autonomy               text        NOT NULL DEFAULT '',
    api_config_id          uuid        NOT NULL,
    fallback_api_config_id uuid,
    skill_keys             text[]      NOT NULL DEFAULT '{}',
    docs                   text[]      NOT NULL DEFAULT '{}',
    persona                text        NOT NULL DEFAULT '',
    mcp_server_ids         uuid[]      NOT NULL DEFAULT '{}',
    agent_profile_key      text,
    agent_profile_version  text,
    monthly_token_budget   bigint,
    created_at             timestamptz NOT NULL DEFAULT now(),
    updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX agents_organization_idx ON agents (organization_id, created_at, id);

CREATE TABLE agent_runs (
    id                  uuid PRIMARY KEY,
    organization_id     uuid        NOT NULL REFERENCES organizations (id),
    team_id             uuid        NOT NULL REFERENCES teams (id),
    seat_id             uuid        NOT NULL REFERENCES seats (id),
    work_item_id        uuid        NOT NULL REFERENCES work_items (id),
    agent_id            uuid,
    status              text        NOT NULL CHECK (status IN ('Queued', 'Running', 'Completed', 'Failed', 'Cancelled')),
    action_type         text        NOT NULL DEFAULT '',
    action_risk         text        NOT NULL DEFAULT '',
    prompt              text        NOT NULL DEFAULT '',
    output              text        NOT NULL DEFAULT '',
    error               text        NOT NULL DEFAULT '',
    error_code          text        NOT NULL DEFAULT '',
    attempts            int         NOT NULL DEFAULT 0,
    connection_id       uuid,
    prompt_tokens       int         NOT NULL DEFAULT 0,
    completion_tokens   int         NOT NULL DEFAULT 0,
    skipped_mcp_servers jsonb       NOT NULL DEFAULT '[]',
    created_at          timestamptz NOT NULL DEFAULT now(),
    started_at          timestamptz,
    finished_at         timestamptz,
    updated_at          timestamptz NOT NULL DEFAULT now()
);
-- At most one active run per (work item, seat).
CREATE UNIQUE INDEX agent_runs_active_key ON agent_runs (work_item_id, seat_id) WHERE status IN ('Queued', 'Running');
CREATE INDEX agent_runs_work_item_idx ON agent_runs (work_item_id, created_at DESC, id DESC);
CREATE INDEX agent_runs_seat_idx ON agent_runs (seat_id, created_at DESC, id DESC);
CREATE INDEX agent_runs_agent_idx ON agent_runs (agent_id, created_at);
CREATE INDEX agent_runs_organization_idx ON agent_runs (organization_id, created_at);

CREATE TABLE jobs (
    id          uuid PRIMARY KEY,
    kind        text        NOT NULL CHECK (kind IN ('agent.run')),
    run_id      uuid        NOT NULL UNIQUE REFERENCES agent_runs (id),
    status      text        NOT NULL CHECK (status IN ('Pending', 'Processing', 'Done', 'Failed')),
    attempts    int         NOT NULL DEFAULT 0,
    lease_owner text        NOT NULL DEFAULT '',
    lease_until timestamptz,
    last_error  text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_pending_idx ON jobs (created_at, id) WHERE status = 'Pending';
CREATE INDEX jobs_lease_idx ON jobs (lease_until) WHERE status = 'Processing';

-- +goose Down
DROP TABLE jobs;
DROP TABLE agent_runs;
DROP TABLE agents;
DROP TABLE seats;
