-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE fonts (
    id         uuid PRIMARY KEY,
    name       text        NOT NULL,
    family     text        NOT NULL,
    direction  text        NOT NULL DEFAULT 'ltr' CHECK (direction IN ('ltr', 'rtl')),
    is_premium boolean     NOT NULL DEFAULT false,
    format     text        NOT NULL CHECK (format IN ('ttf', 'otf', 'woff', 'woff2')),
    object_key text        NOT NULL,
    url        text        NOT NULL,
    size_bytes bigint      NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX fonts_order_idx ON fonts (family, name, id);

CREATE TABLE music_tracks (
    id           uuid PRIMARY KEY,
    title        text             NOT NULL,
    artist       text             NOT NULL DEFAULT '',
    genre        text             NOT NULL DEFAULT '',
    mood         text             NOT NULL DEFAULT '',
    duration_sec double precision NOT NULL CHECK (duration_sec > 0),
    audio_url    text             NOT NULL,
    cover_url    text             NOT NULL DEFAULT '',
    is_premium   boolean          NOT NULL DEFAULT false,
    created_at   timestamptz      NOT NULL DEFAULT now()
);
CREATE INDEX music_tracks_order_idx ON music_tracks (title, id);
CREATE INDEX music_tracks_genre_idx ON music_tracks (lower(genre), title, id);
CREATE INDEX music_tracks_mood_idx ON music_tracks (lower(mood), title, id);
CREATE INDEX music_tracks_duration_idx ON music_tracks (duration_sec);
CREATE INDEX music_tracks_search_idx ON music_tracks USING gin ((lower(title || ' ' || artist)) gin_trgm_ops);

ALTER TABLE project_servers ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();

CREATE TABLE blogs (
    id           uuid PRIMARY KEY,
    slug         text        NOT NULL,
    title        text        NOT NULL,
    excerpt      text        NOT NULL DEFAULT '',
    body         text        NOT NULL,
    cover_image  text        NOT NULL DEFAULT '',
    author_name  text        NOT NULL DEFAULT '',
    is_published boolean     NOT NULL DEFAULT true,
    published_at timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    search       tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', title), 'A') ||
        setweight(to_tsvector('simple', excerpt), 'B') ||
        setweight(to_tsvector('simple', body), 'C')
    ) STORED
);
CREATE UNIQUE INDEX blogs_slug_key ON blogs (slug);
CREATE INDEX blogs_published_idx ON blogs (published_at DESC, id DESC) WHERE is_published;
CREATE INDEX blogs_search_idx ON blogs USING gin (search) WHERE is_published;

CREATE TABLE comments (
    id                uuid PRIMARY KEY,
    content           text             NOT NULL,
    rate              double precision CHECK (rate BETWEEN 1 AND 5),
    blog_id           uuid REFERENCES blogs (id) ON DELETE CASCADE,
    container_id      uuid REFERENCES containers (id) ON DELETE CASCADE,
    parent_comment_id uuid REFERENCES comments (id) ON DELETE CASCADE,
    author_id         text             NOT NULL,
    status            text             NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved', 'rejected')),
    decided_at        timestamptz,
    created_at        timestamptz      NOT NULL DEFAULT now(),
    CHECK ((blog_id IS NULL) <> (container_id IS NULL)),
    CHECK (rate IS NULL OR container_id IS NOT NULL)
);
CREATE INDEX comments_blog_idx ON comments (blog_id, created_at, id) WHERE status = 'approved';
CREATE INDEX comments_container_idx ON comments (container_id, created_at, id) WHERE status = 'approved';
CREATE INDEX comments_pending_idx ON comments (created_at, id) WHERE status = 'pending';
CREATE INDEX comments_parent_idx ON comments (parent_comment_id);

CREATE TABLE slides (
    id         uuid PRIMARY KEY,
    title      text        NOT NULL,
    subtitle   text        NOT NULL DEFAULT '',
    image_url  text        NOT NULL,
    link_url   text        NOT NULL DEFAULT '',
    position   integer     NOT NULL DEFAULT 0,
    is_active  boolean     NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX slides_order_idx ON slides (position, created_at, id) WHERE is_active;

CREATE TABLE home_events (
    id          uuid PRIMARY KEY,
    title       text        NOT NULL,
    description text        NOT NULL DEFAULT '',
    image_url   text        NOT NULL DEFAULT '',
    link_url    text        NOT NULL DEFAULT '',
    starts_at   timestamptz NOT NULL,
    ends_at     timestamptz,
    position    integer     NOT NULL DEFAULT 0,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (ends_at IS NULL OR ends_at > starts_at)
);
CREATE INDEX home_events_order_idx ON home_events (position, starts_at, id);

CREATE TABLE site_settings (
    tenant_id  uuid PRIMARY KEY,
    public     jsonb       NOT NULL DEFAULT '{}',
    private    jsonb       NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE site_settings;
DROP TABLE home_events;
DROP TABLE slides;
DROP TABLE comments;
DROP TABLE blogs;
ALTER TABLE project_servers DROP COLUMN updated_at;
DROP TABLE music_tracks;
DROP TABLE fonts;
