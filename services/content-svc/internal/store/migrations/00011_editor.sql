-- +goose Up
CREATE TABLE shared_layers (
    id            uuid PRIMARY KEY,
    project_id    uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key           text        NOT NULL,
    label         text        NOT NULL DEFAULT '',
    content_type  text        NOT NULL,
    default_value text        NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX shared_layers_project_key_key ON shared_layers (project_id, key);

CREATE TABLE shared_colors (
    id         uuid PRIMARY KEY,
    project_id uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key        text        NOT NULL,
    label      text        NOT NULL DEFAULT '',
    color      text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX shared_colors_project_key_key ON shared_colors (project_id, key);

CREATE TABLE character_controllers (
    id         uuid PRIMARY KEY,
    project_id uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key        text        NOT NULL,
    name       text        NOT NULL DEFAULT '',
    options    jsonb       NOT NULL DEFAULT '{}',
    position   integer     NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX character_controllers_project_key_key ON character_controllers (project_id, key);
CREATE INDEX character_controllers_project_idx ON character_controllers (project_id, position, id);

CREATE TABLE character_presets (
    id                      uuid PRIMARY KEY,
    project_id              uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    character_controller_id uuid        NOT NULL REFERENCES character_controllers (id) ON DELETE CASCADE,
    name                    text        NOT NULL,
    image                   text        NOT NULL DEFAULT '',
    "values"                jsonb       NOT NULL DEFAULT '{}',
    position                integer     NOT NULL DEFAULT 0,
    created_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX character_presets_project_idx ON character_presets (project_id, position, id);
CREATE INDEX character_presets_controller_idx ON character_presets (character_controller_id);

CREATE TABLE scene_contents (
    id              uuid PRIMARY KEY,
    scene_id        uuid        NOT NULL REFERENCES scenes (id) ON DELETE CASCADE,
    key             text        NOT NULL,
    label           text        NOT NULL DEFAULT '',
    content_type    text        NOT NULL,
    default_value   text        NOT NULL DEFAULT '',
    max_length      integer     NOT NULL DEFAULT 0,
    is_required     boolean     NOT NULL DEFAULT false,
    position        integer     NOT NULL DEFAULT 0,
    shared_layer_id uuid        REFERENCES shared_layers (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX scene_contents_scene_key_key ON scene_contents (scene_id, key);
CREATE INDEX scene_contents_scene_idx ON scene_contents (scene_id, position, id);
CREATE INDEX scene_contents_shared_layer_idx ON scene_contents (shared_layer_id);

CREATE TABLE scene_colors (
    id              uuid PRIMARY KEY,
    scene_id        uuid        NOT NULL REFERENCES scenes (id) ON DELETE CASCADE,
    key             text        NOT NULL,
    label           text        NOT NULL DEFAULT '',
    default_color   text        NOT NULL,
    position        integer     NOT NULL DEFAULT 0,
    shared_color_id uuid        REFERENCES shared_colors (id) ON DELETE SET NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX scene_colors_scene_key_key ON scene_colors (scene_id, key);
CREATE INDEX scene_colors_scene_idx ON scene_colors (scene_id, position, id);
CREATE INDEX scene_colors_shared_color_idx ON scene_colors (shared_color_id);

CREATE TABLE scene_characters (
    id                      uuid PRIMARY KEY,
    scene_id                uuid        NOT NULL REFERENCES scenes (id) ON DELETE CASCADE,
    key                     text        NOT NULL,
    name                    text        NOT NULL DEFAULT '',
    character_controller_id uuid        REFERENCES character_controllers (id) ON DELETE SET NULL,
    position                integer     NOT NULL DEFAULT 0,
    created_at              timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX scene_characters_scene_key_key ON scene_characters (scene_id, key);
CREATE INDEX scene_characters_scene_idx ON scene_characters (scene_id, position, id);

CREATE TABLE repeater_items (
    id         uuid PRIMARY KEY,
    scene_id   uuid        NOT NULL REFERENCES scenes (id) ON DELETE CASCADE,
    key        text        NOT NULL,
    label      text        NOT NULL DEFAULT '',
    min_count  integer     NOT NULL DEFAULT 0,
    max_count  integer     NOT NULL DEFAULT 1,
    position   integer     NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX repeater_items_scene_key_key ON repeater_items (scene_id, key);
CREATE INDEX repeater_items_scene_idx ON repeater_items (scene_id, position, id);

CREATE TABLE preset_stories (
    id          uuid PRIMARY KEY,
    project_id  uuid        NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name        text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    image       text        NOT NULL DEFAULT '',
    position    integer     NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX preset_stories_project_idx ON preset_stories (project_id, position, id);

CREATE TABLE preset_story_scenes (
    preset_story_id uuid    NOT NULL REFERENCES preset_stories (id) ON DELETE CASCADE,
    position        integer NOT NULL,
    scene_id        uuid    NOT NULL REFERENCES scenes (id) ON DELETE CASCADE,
    content_values  jsonb   NOT NULL DEFAULT '{}',
    color_values    jsonb   NOT NULL DEFAULT '{}',
    PRIMARY KEY (preset_story_id, position)
);
CREATE INDEX preset_story_scenes_scene_idx ON preset_story_scenes (scene_id);

-- +goose Down
DROP TABLE preset_story_scenes;
DROP TABLE preset_stories;
DROP TABLE repeater_items;
DROP TABLE scene_characters;
DROP TABLE scene_colors;
DROP TABLE scene_contents;
DROP TABLE character_presets;
DROP TABLE character_controllers;
DROP TABLE shared_colors;
DROP TABLE shared_layers;
