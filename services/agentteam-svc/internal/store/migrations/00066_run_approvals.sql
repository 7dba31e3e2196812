-- +goose Up
-- A run resumes from its transcript and waits for a person's decision on the tool calls its
-- agent's autonomy does not cover (ADR 0170, 0171).
--
-- answer is what a model step answered ({"text", "toolCalls": [{"id", "name", "arguments"}]}),
-- so that a resumed attempt replays the assistant message exactly.
ALTER TABLE run_steps ADD COLUMN answer jsonb;
-- The calls waiting for a person, oldest first (GET /api/assembler/approvals).
CREATE INDEX run_steps_waiting_idx ON run_steps (created_at, run_id, seq) WHERE status = 'AwaitingApproval';

-- AwaitingApproval is an active run whose job is Parked: no lease, no worker, no sweeper.
ALTER TABLE agent_runs DROP CONSTRAINT agent_runs_status_check;
ALTER TABLE agent_runs ADD CONSTRAINT agent_runs_status_check
    CHECK (status IN ('Queued', 'Running', 'AwaitingApproval', 'Completed', 'Failed', 'Cancelled'));
-- resumes counts the claims that followed a person's decision, which are not retries.
ALTER TABLE agent_runs ADD COLUMN resumes int NOT NULL DEFAULT 0;
DROP INDEX agent_runs_active_key;
CREATE UNIQUE INDEX agent_runs_active_key ON agent_runs (work_item_id, seat_id) WHERE status IN ('Queued', 'Running', 'AwaitingApproval');

ALTER TABLE jobs DROP CONSTRAINT jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check CHECK (status IN ('Pending', 'Processing', 'Parked', 'Done', 'Failed'));

-- +goose Down
ALTER TABLE jobs DROP CONSTRAINT jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check CHECK (status IN ('Pending', 'Processing', 'Done', 'Failed'));
DROP INDEX agent_runs_active_key;
CREATE UNIQUE INDEX agent_runs_active_key ON agent_runs (work_item_id, seat_id) WHERE status IN ('Queued', 'Running');
ALTER TABLE agent_runs DROP COLUMN resumes;
ALTER TABLE agent_runs DROP CONSTRAINT agent_runs_status_check;
ALTER TABLE agent_runs ADD CONSTRAINT agent_runs_status_check
    CHECK (status IN ('Queued', 'Running', 'Completed', 'Failed', 'Cancelled'));
DROP INDEX run_steps_waiting_idx;
ALTER TABLE run_steps DROP COLUMN answer;
