-- +goose Up
CREATE TABLE favorite_folders (
    id          uuid PRIMARY KEY,
    user_id     text        NOT NULL,
    name        text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX favorite_folders_user_name_key ON favorite_folders (user_id, lower(name));
CREATE INDEX favorite_folders_user_idx ON favorite_folders (user_id, created_at, id);

CREATE TABLE favorites (
    user_id      text        NOT NULL,
    container_id uuid        NOT NULL REFERENCES containers (id) ON DELETE CASCADE,
    folder_id    uuid        REFERENCES favorite_folders (id) ON DELETE SET NULL,
    note         text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, container_id)
);
CREATE INDEX favorites_user_created_idx ON favorites (user_id, created_at DESC, container_id DESC);
CREATE INDEX favorites_folder_idx ON favorites (folder_id, created_at DESC, container_id DESC);
CREATE INDEX favorites_container_idx ON favorites (container_id);

-- +goose Down
DROP TABLE favorites;
DROP TABLE favorite_folders;
