-- +goose Up
-- Every job table names the worker holding a job's lease (pkg/jobs/pgjobs); finishing a message
-- is refused to a worker whose lease was taken over.
ALTER TABLE webhook_messages ADD COLUMN lease_owner text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE webhook_messages DROP COLUMN lease_owner;
