-- +goose Up
-- run_events is the sequence of what happened to a run, as GET /runs/{id}/events streams it
-- (ADR 0175): each status change of the run (its status, errorCode and error then) and each
-- step as recorded or updated (the step's seq; the stream answers the step as it is when read).
-- Triggers write it in the writer's own transaction, so no writer can forget it, and allocate
-- seq (from 1, per run) under the run row's lock, which every writer of the run or its steps
-- then holds until it commits: seq order is commit order, and a reader that saw seq n never
-- later finds an event below n. Each event notifies 'r:<run id>:<kind>' on agentteam_changes,
-- which wakes the streams (any kind) and the worker (status) of that run on every replica
-- (internal/runwatch).
-- Whoever locks a run row and later updates one of its steps must lock the run row first
-- (lockRun): the trigger locks it after the step's row.
CREATE TABLE run_events (
    run_id     uuid        NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
    seq        bigint      NOT NULL,
    kind       text        NOT NULL CHECK (kind IN ('status', 'step')),
    status     text        NOT NULL DEFAULT '',
    error_code text        NOT NULL DEFAULT '',
    error      text        NOT NULL DEFAULT '',
    step_seq   integer,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);

-- +goose StatementBegin
-- add_run_event appends an event to the run's sequence under the run row's lock and notifies.
CREATE FUNCTION add_run_event(p_run uuid, p_kind text, p_status text, p_error_code text, p_error text, p_step_seq integer) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM agent_runs WHERE id = p_run FOR UPDATE;
    INSERT INTO run_events (run_id, seq, kind, status, error_code, error, step_seq)
    SELECT p_run, COALESCE(max(e.seq), 0) + 1, p_kind, p_status, p_error_code, p_error, p_step_seq FROM run_events e WHERE e.run_id = p_run;
    PERFORM pg_notify('agentteam_changes', 'r:' || p_run || ':' || p_kind);
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION run_status_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' OR OLD.status IS DISTINCT FROM NEW.status THEN
        PERFORM add_run_event(NEW.id, 'status', NEW.status, NEW.error_code, NEW.error, NULL);
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION run_step_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM add_run_event(NEW.run_id, 'step', '', '', '', NEW.seq);
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER agent_runs_events AFTER INSERT OR UPDATE OF status ON agent_runs
    FOR EACH ROW EXECUTE FUNCTION run_status_event();
CREATE TRIGGER run_steps_events AFTER INSERT OR UPDATE ON run_steps
    FOR EACH ROW EXECUTE FUNCTION run_step_event();

-- Fair sharing (ADR 0177): the claim counts an organization's Running runs, and a run's end
-- wakes the organization's oldest Queued runs.
CREATE INDEX agent_runs_org_running_idx ON agent_runs (organization_id) WHERE status = 'Running';
CREATE INDEX agent_runs_org_queued_idx ON agent_runs (organization_id, created_at, id) WHERE status = 'Queued';

-- +goose Down
DROP INDEX agent_runs_org_queued_idx;
DROP INDEX agent_runs_org_running_idx;
DROP TRIGGER run_steps_events ON run_steps;
DROP TRIGGER agent_runs_events ON agent_runs;
DROP FUNCTION run_step_event();
DROP FUNCTION run_status_event();
DROP FUNCTION add_run_event(uuid, text, text, text, text, integer);
DROP TABLE run_events;
