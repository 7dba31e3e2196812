-- +goose Up
-- Each team's memory version, bumped in the transaction of every insert and delete, so an
-- in-memory index can tell it is behind and read only what changed.
CREATE TABLE memory_team_versions (
    team_id uuid PRIMARY KEY REFERENCES teams (id),
    version bigint NOT NULL
);

CREATE TABLE memory_entries (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    team_id         uuid        NOT NULL REFERENCES teams (id),
    kind            text        NOT NULL CHECK (kind IN ('Approval', 'Correction', 'Note')),
    content         text        NOT NULL,
    run_id          uuid REFERENCES agent_runs (id),
    agent_id        uuid,
    edit_distance   int CHECK (edit_distance >= 0),
    created_by      uuid,
    -- embedder names the embedder and model that made vector (a float32 little-endian array);
    -- vectors of two embedders are never compared.
    embedder        text        NOT NULL,
    vector          bytea,
    version         bigint      NOT NULL,
    created_at      timestamptz NOT NULL,
    -- A deleted entry keeps its row (content and vector erased) so replicas learn of the
    -- deletion from deleted_version, and analytics still count the review.
    deleted_version bigint,
    deleted_at      timestamptz
);
CREATE INDEX memory_entries_list_idx ON memory_entries (team_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX memory_entries_version_idx ON memory_entries (team_id, version);
CREATE INDEX memory_entries_deleted_idx ON memory_entries (team_id, deleted_version) WHERE deleted_version IS NOT NULL;
CREATE INDEX memory_entries_review_idx ON memory_entries (organization_id, agent_id, created_at) WHERE kind IN ('Approval', 'Correction');
-- A run is approved at most once.
CREATE UNIQUE INDEX memory_entries_run_key ON memory_entries (run_id) WHERE run_id IS NOT NULL;

-- +goose Down
DROP TABLE memory_entries;
DROP TABLE memory_team_versions;
