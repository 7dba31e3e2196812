-- +goose Up
CREATE TABLE svg_previews (
    id                  uuid PRIMARY KEY,
    target_type         text        NOT NULL CHECK (target_type IN ('project', 'scene')),
    target_id           uuid        NOT NULL,
    color_keys          jsonb       NOT NULL,
    image_key           text        NOT NULL,
    image_content_type  text        NOT NULL,
    status              text        NOT NULL DEFAULT 'Generating' CHECK (status IN ('Generating', 'Ready', 'Failed')),
    svg_key             text        NOT NULL DEFAULT '',
    svg_url             text        NOT NULL DEFAULT '',
    failure_reason      text        NOT NULL DEFAULT '',
    detected_color_keys jsonb       NOT NULL DEFAULT '[]',
    attempts            integer     NOT NULL DEFAULT 0,
    lease_owner         text        NOT NULL DEFAULT '',
    lease_until         timestamptz,
    created_at          timestamptz NOT NULL DEFAULT now(),
    updated_at          timestamptz NOT NULL DEFAULT now(),
    generated_at        timestamptz
);
-- The latest preview of a scene or project.
CREATE INDEX svg_previews_target_idx ON svg_previews (target_type, target_id, created_at DESC, id DESC);
-- The requeuer looks for previews still generating.
CREATE INDEX svg_previews_generating_idx ON svg_previews (updated_at) WHERE status = 'Generating';

-- +goose Down
DROP TABLE svg_previews;
