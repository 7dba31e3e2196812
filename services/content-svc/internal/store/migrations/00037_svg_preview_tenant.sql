-- +goose Up
-- The tenant of the user who asked for a preview (empty when a service did), which its events
-- carry as ce-tenantid.
ALTER TABLE svg_previews ADD COLUMN tenant_id text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE svg_previews DROP COLUMN tenant_id;
