-- +goose Up
-- Accepted password-reset requests, kept until a worker answers them (pkg/jobs/pgjobs), so that a
-- restart or a crash does not drop one. A row holds the normalized address asked for, never a
-- token: the worker creates the reset token when it runs, and deletes the row when done.
CREATE TABLE password_reset_jobs (
    id          uuid PRIMARY KEY,
    tenant_slug text        NOT NULL,
    email       text        NOT NULL DEFAULT '',
    phone       text        NOT NULL DEFAULT '',
    status      text        NOT NULL DEFAULT 'Queued',
    attempt     integer     NOT NULL DEFAULT 0,
    lease_owner text        NOT NULL DEFAULT '',
    lease_until timestamptz,
    touched_at  timestamptz NOT NULL DEFAULT now(),
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX password_reset_jobs_due_idx ON password_reset_jobs (status, touched_at)
    WHERE status IN ('Queued', 'Processing');

-- +goose Down
DROP TABLE password_reset_jobs;
