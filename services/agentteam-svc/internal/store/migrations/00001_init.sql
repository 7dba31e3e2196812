-- +goose Up
CREATE TABLE organizations (
    id         uuid PRIMARY KEY,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE teams (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    name            text        NOT NULL,
    product_id      uuid,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX teams_organization_idx ON teams (organization_id, created_at, id);

CREATE TABLE work_items (
    id            uuid PRIMARY KEY,
    team_id       uuid        NOT NULL REFERENCES teams (id),
    title         text        NOT NULL,
    description   text        NOT NULL DEFAULT '',
    type          text        NOT NULL DEFAULT 'Task',
    status        text        NOT NULL DEFAULT 'Backlog',
    assignee_kind text,
    assignee_id   uuid,
    parent_id     uuid REFERENCES work_items (id),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX work_items_team_idx ON work_items (team_id, created_at, id);
CREATE INDEX work_items_assignee_idx ON work_items (assignee_kind, assignee_id, updated_at DESC, id);

-- +goose Down
DROP TABLE work_items;
DROP TABLE teams;
DROP TABLE organizations;
