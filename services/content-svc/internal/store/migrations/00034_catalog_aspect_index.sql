-- +goose Up
-- The catalog's aspect filter reads only published projects: a partial index lets it count the
-- matching templates with an index-only scan instead of reading every project.
CREATE INDEX projects_catalog_aspect_idx ON projects (aspect, container_id) WHERE is_published;
DROP INDEX projects_aspect_idx;

-- +goose Down
CREATE INDEX projects_aspect_idx ON projects (aspect, container_id);
DROP INDEX projects_catalog_aspect_idx;
