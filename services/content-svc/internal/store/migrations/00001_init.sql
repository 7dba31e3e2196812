-- +goose Up
CREATE TABLE tags (
    id         uuid PRIMARY KEY,
    slug       text        NOT NULL,
    name       text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX tags_slug_key ON tags (slug);
CREATE INDEX tags_name_idx ON tags (name, id);

CREATE TABLE project_servers (
    id                   uuid PRIMARY KEY,
    name                 text        NOT NULL,
    base_url             text        NOT NULL,
    region               text        NOT NULL DEFAULT '',
    is_active            boolean     NOT NULL DEFAULT true,
    max_parallel_renders integer     NOT NULL DEFAULT 1,
    created_at           timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX project_servers_name_key ON project_servers (name);

-- +goose Down
DROP TABLE project_servers;
DROP TABLE tags;
