-- +goose Up
-- The listing index answers every listing and the related templates (ADR 0090, 0201): no query
-- reads the SQL listing's indexes any more, yet each catalog write paid for them, a use counted
-- included (use_count is in none of them but one, so the update cannot be HOT, and every index,
-- the search GIN among them, took a new entry). Kept: the popular order, which the index's read
-- of the whole catalog takes (ADR 0202).
DROP INDEX containers_catalog_newest_idx;
DROP INDEX containers_catalog_rate_idx;
DROP INDEX containers_catalog_az_idx;
DROP INDEX containers_catalog_mode_idx;
DROP INDEX containers_catalog_premium_idx;
DROP INDEX containers_catalog_search_idx;
DROP INDEX containers_catalog_categories_idx;
DROP INDEX containers_catalog_tags_idx;
DROP INDEX containers_catalog_aspects_idx;

-- +goose Down
CREATE INDEX containers_catalog_newest_idx ON containers (created_at DESC, id DESC) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_rate_idx ON containers (rate_avg DESC, id DESC) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_az_idx ON containers (name, id) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_mode_idx ON containers (primary_mode, created_at DESC, id DESC) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_premium_idx ON containers (is_premium, created_at DESC, id DESC) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_search_idx ON containers USING gin (search) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_categories_idx ON containers USING gin (category_ids) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_tags_idx ON containers USING gin (tag_ids) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_aspects_idx ON containers USING gin (aspects) WHERE is_published AND deleted_at IS NULL;
