-- +goose Up
CREATE TABLE categories (
    id          uuid PRIMARY KEY,
    slug        text        NOT NULL,
    name        text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    image       text        NOT NULL DEFAULT '',
    position    integer     NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX categories_slug_key ON categories (slug);
CREATE INDEX categories_order_idx ON categories (position, name, id);

CREATE TABLE containers (
    id               uuid PRIMARY KEY,
    slug             text             NOT NULL,
    name             text             NOT NULL,
    description      text             NOT NULL DEFAULT '',
    keywords         text             NOT NULL DEFAULT '',
    news_text        text             NOT NULL DEFAULT '',
    image            text             NOT NULL DEFAULT '',
    demo             text             NOT NULL DEFAULT '',
    full_demo        text             NOT NULL DEFAULT '',
    mini_demo        text             NOT NULL DEFAULT '',
    is_published     boolean          NOT NULL DEFAULT false,
    is_premium       boolean          NOT NULL DEFAULT false,
    is_mockup        boolean          NOT NULL DEFAULT false,
    primary_mode     text             NOT NULL,
    rate_avg         double precision NOT NULL DEFAULT 0,
    rate_count       integer          NOT NULL DEFAULT 0,
    use_count        bigint           NOT NULL DEFAULT 0,
    published_at     timestamptz,
    unpublished_at   timestamptz,
    unpublish_reason text,
    created_at       timestamptz      NOT NULL DEFAULT now(),
    updated_at       timestamptz      NOT NULL DEFAULT now(),
    deleted_at       timestamptz,
    search           tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', name), 'A') ||
        setweight(to_tsvector('simple', keywords), 'B') ||
        setweight(to_tsvector('simple', description), 'C')
    ) STORED
);
-- A slug is unique among live containers; a soft-deleted one frees its slug.
CREATE UNIQUE INDEX containers_slug_key ON containers (slug) WHERE deleted_at IS NULL;
-- The catalog reads only published, live containers: every catalog index is partial on that.
CREATE INDEX containers_catalog_newest_idx ON containers (created_at DESC, id DESC) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_popular_idx ON containers (use_count DESC, id DESC) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_rate_idx ON containers (rate_avg DESC, id DESC) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_az_idx ON containers (name, id) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_mode_idx ON containers (primary_mode, created_at DESC, id DESC) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_premium_idx ON containers (is_premium, created_at DESC, id DESC) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_search_idx ON containers USING gin (search) WHERE is_published AND deleted_at IS NULL;

CREATE TABLE container_publications (
    id           uuid PRIMARY KEY,
    container_id uuid        NOT NULL REFERENCES containers (id) ON DELETE CASCADE,
    action       text        NOT NULL CHECK (action IN ('publish', 'unpublish')),
    reason       text        NOT NULL DEFAULT '',
    actor_id     text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX container_publications_container_idx ON container_publications (container_id, created_at DESC);

CREATE TABLE container_categories (
    container_id uuid NOT NULL REFERENCES containers (id) ON DELETE CASCADE,
    category_id  uuid NOT NULL REFERENCES categories (id) ON DELETE CASCADE,
    PRIMARY KEY (container_id, category_id)
);
CREATE INDEX container_categories_category_idx ON container_categories (category_id, container_id);

CREATE TABLE container_tags (
    container_id uuid NOT NULL REFERENCES containers (id) ON DELETE CASCADE,
    tag_id       uuid NOT NULL REFERENCES tags (id) ON DELETE CASCADE,
    PRIMARY KEY (container_id, tag_id)
);
CREATE INDEX container_tags_tag_idx ON container_tags (tag_id, container_id);

CREATE TABLE projects (
    id                   uuid PRIMARY KEY,
    container_id         uuid             NOT NULL REFERENCES containers (id) ON DELETE CASCADE,
    project_server_id    uuid             REFERENCES project_servers (id) ON DELETE SET NULL,
    name                 text             NOT NULL,
    description          text             NOT NULL DEFAULT '',
    aspect               text             NOT NULL DEFAULT '',
    original_width       integer          NOT NULL,
    original_height      integer          NOT NULL,
    resolution           text             NOT NULL DEFAULT '',
    project_duration_sec double precision NOT NULL,
    min_duration_sec     double precision NOT NULL DEFAULT 0,
    max_duration_sec     double precision NOT NULL DEFAULT 0,
    choose_mode          text             NOT NULL,
    image                text             NOT NULL DEFAULT '',
    full_demo            text             NOT NULL DEFAULT '',
    download_link        text             NOT NULL DEFAULT '',
    aep_file_url         text             NOT NULL DEFAULT '',
    aep_file_md5         text             NOT NULL DEFAULT '',
    aep_file_size_bytes  bigint           NOT NULL DEFAULT 0,
    free_fps             integer          NOT NULL DEFAULT 0,
    vip_factor           double precision NOT NULL DEFAULT 1,
    render_aep_comp      text             NOT NULL DEFAULT '',
    is_published         boolean          NOT NULL DEFAULT true,
    created_at           timestamptz      NOT NULL DEFAULT now(),
    updated_at           timestamptz      NOT NULL DEFAULT now()
);
CREATE INDEX projects_container_idx ON projects (container_id, created_at, id);
CREATE INDEX projects_aspect_idx ON projects (aspect, container_id);
CREATE INDEX projects_server_idx ON projects (project_server_id);

CREATE TABLE scenes (
    id              uuid PRIMARY KEY,
    project_id      uuid             NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    key             text             NOT NULL,
    title           text             NOT NULL DEFAULT '',
    localized_title jsonb            NOT NULL DEFAULT '{}',
    scene_type      text             NOT NULL DEFAULT 'normal',
    position        integer          NOT NULL DEFAULT 0,
    duration_sec    double precision NOT NULL DEFAULT 0,
    image           text             NOT NULL DEFAULT '',
    is_hidden       boolean          NOT NULL DEFAULT false,
    created_at      timestamptz      NOT NULL DEFAULT now(),
    updated_at      timestamptz      NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX scenes_project_key_key ON scenes (project_id, key);
CREATE INDEX scenes_project_position_idx ON scenes (project_id, position, id);

-- +goose Down
DROP TABLE scenes;
DROP TABLE projects;
DROP TABLE container_tags;
DROP TABLE container_categories;
DROP TABLE container_publications;
DROP TABLE containers;
DROP TABLE categories;
