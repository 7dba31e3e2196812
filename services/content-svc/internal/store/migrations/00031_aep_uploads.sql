-- +goose Up
CREATE TABLE aep_uploads (
    id               uuid PRIMARY KEY,
    upload_id        text        NOT NULL,
    project_id       uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    object_key       text        NOT NULL,
    filename         text        NOT NULL,
    total_size_bytes bigint      NOT NULL,
    part_size_bytes  bigint      NOT NULL,
    part_count       integer     NOT NULL,
    status           text        NOT NULL DEFAULT 'started' CHECK (status IN ('started', 'completing', 'completed', 'aborted')),
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX aep_uploads_upload_id_key ON aep_uploads (upload_id);
CREATE INDEX aep_uploads_project_idx ON aep_uploads (project_id, created_at);
-- The sweeper looks for old uploads still in progress.
CREATE INDEX aep_uploads_stale_idx ON aep_uploads (created_at) WHERE status = 'started';

-- +goose Down
DROP TABLE aep_uploads;
