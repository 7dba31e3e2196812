-- +goose Up
-- Model connections: an OpenAI-compatible chat-completions endpoint per organization. The key
-- is sealed with AES-256-GCM (nonce || ciphertext, bound to the row id); only its last four
-- characters are kept in clear.
CREATE TABLE model_connections (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    name            text        NOT NULL,
    base_url        text        NOT NULL,
    model           text        NOT NULL,
    api_key_sealed  bytea       NOT NULL,
    api_key_last4   text        NOT NULL DEFAULT '',
    created_by      uuid        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX model_connections_organization_idx ON model_connections (organization_id, created_at, id);

-- MCP servers: the headers (names and values) are sealed as one JSON object; their names are
-- kept in clear for the answers.
CREATE TABLE mcp_servers (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    name            text        NOT NULL,
    url             text        NOT NULL,
    header_names    jsonb       NOT NULL DEFAULT '[]',
    headers_sealed  bytea       NOT NULL,
    created_by      uuid        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mcp_servers_organization_idx ON mcp_servers (organization_id, created_at, id);

-- +goose Down
DROP TABLE mcp_servers;
DROP TABLE model_connections;
