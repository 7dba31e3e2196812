-- +goose Up
-- run_steps is a run's transcript: every model call and tool call, in the order made (seq from 1).
-- A model step has its tokens and whether it asked for tools; a tool step its call id, server,
-- tool, arguments, risk, status and the result text as the model read it. No secret is stored.
CREATE TABLE run_steps (
    run_id            uuid        NOT NULL REFERENCES agent_runs (id) ON DELETE CASCADE,
    seq               integer     NOT NULL,
    kind              text        NOT NULL,
    connection_id     uuid,
    prompt_tokens     integer     NOT NULL DEFAULT 0,
    completion_tokens integer     NOT NULL DEFAULT 0,
    asked_for_tools   boolean     NOT NULL DEFAULT false,
    call_id           text        NOT NULL DEFAULT '',
    mcp_server_id     uuid,
    tool_name         text        NOT NULL DEFAULT '',
    function_name     text        NOT NULL DEFAULT '',
    arguments         text        NOT NULL DEFAULT '',
    risk              text        NOT NULL DEFAULT '',
    status            text        NOT NULL DEFAULT '',
    result            text        NOT NULL DEFAULT '',
    duration_ms       bigint      NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);

-- +goose Down
DROP TABLE run_steps;
