-- +goose Up
-- One table holds the three libraries (skills, agent profiles, product profiles). Identity is
-- (kind, organization, key, version); a shared item has a null organization and is unique by
-- kind, key and version too (NULLS NOT DISTINCT).
CREATE TABLE library_items (
    id                uuid PRIMARY KEY,
    kind              text        NOT NULL CHECK (kind IN ('skill', 'agent_profile', 'product_profile')),
    organization_id   uuid REFERENCES organizations (id),
    key               text        NOT NULL,
    name              text        NOT NULL,
    version           text        NOT NULL,
    summary           text        NOT NULL DEFAULT '',
    roles             jsonb       NOT NULL DEFAULT '[]',
    inputs            text        NOT NULL DEFAULT '',
    outputs           text        NOT NULL DEFAULT '',
    actions           jsonb       NOT NULL DEFAULT '[]',
    tools             jsonb       NOT NULL DEFAULT '[]',
    context           jsonb       NOT NULL DEFAULT '[]',
    visibility        text        NOT NULL CHECK (visibility IN ('PrivateToOrg', 'Public')),
    min_tier          text        NOT NULL DEFAULT '',
    status            text        NOT NULL CHECK (status IN ('Draft', 'Published')),
    origin            text        NOT NULL CHECK (origin IN ('Builtin', 'Authored', 'Installed')),
    golden_tests      jsonb       NOT NULL DEFAULT '[]',
    golden_test_count integer     NOT NULL DEFAULT 0,
    body              text        NOT NULL,
    license           text        NOT NULL DEFAULT '',
    compatibility     text        NOT NULL DEFAULT '',
    metadata          jsonb       NOT NULL DEFAULT '{}',
    source_repo       text        NOT NULL DEFAULT '',
    source_path       text        NOT NULL DEFAULT '',
    source_commit     text        NOT NULL DEFAULT '',
    embedding         jsonb,
    created_at        timestamptz NOT NULL DEFAULT now(),
    updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX library_items_identity_idx ON library_items (kind, organization_id, key, version) NULLS NOT DISTINCT;
CREATE INDEX library_items_keys_idx ON library_items (kind, organization_id, key COLLATE "C");
CREATE INDEX library_items_roles_idx ON library_items USING gin (roles);
CREATE INDEX library_items_source_idx ON library_items (kind, source_repo) WHERE organization_id IS NULL;
CREATE INDEX library_items_market_idx ON library_items (kind, key COLLATE "C", version COLLATE "C" DESC)
    WHERE visibility = 'Public';

-- +goose Down
DROP TABLE library_items;
