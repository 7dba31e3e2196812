-- +goose Up
-- content_hash is the SHA-256 of the source file a shared item was indexed from, so a sync can
-- tell the files that did not change and neither re-embed nor rewrite them.
ALTER TABLE library_items ADD COLUMN content_hash text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE library_items DROP COLUMN content_hash;
