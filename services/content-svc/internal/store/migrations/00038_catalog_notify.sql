-- +goose Up
-- Each content-svc process keeps catalog pages and totals in memory (internal/cache) and drops
-- them when it hears content_catalog: every bump of catalog_version notifies it, in the bumping
-- transaction, and so does a truncation of any table a listing reads. Cards also show columns
-- no filter reads (slug, images, ratings, use count) and sort by some (creation time, use
-- count, rating, name), so every update of a container bumps the version now, not only those
-- of the filtered columns.
-- +goose StatementBegin
CREATE FUNCTION catalog_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('content_catalog', '');
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER catalog_version_notify AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON catalog_version
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_notify();
CREATE TRIGGER containers_truncate_notify AFTER TRUNCATE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_notify();
CREATE TRIGGER container_categories_truncate_notify AFTER TRUNCATE ON container_categories
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_notify();
CREATE TRIGGER container_tags_truncate_notify AFTER TRUNCATE ON container_tags
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_notify();
CREATE TRIGGER projects_truncate_notify AFTER TRUNCATE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_notify();

DROP TRIGGER containers_update_version ON containers;
CREATE TRIGGER containers_update_version AFTER UPDATE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_bump_version();

-- +goose Down
DROP TRIGGER containers_update_version ON containers;
CREATE TRIGGER containers_update_version
    AFTER UPDATE OF is_published, deleted_at, is_premium, primary_mode, name, keywords, description ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_bump_version();
DROP TRIGGER projects_truncate_notify ON projects;
DROP TRIGGER container_tags_truncate_notify ON container_tags;
DROP TRIGGER container_categories_truncate_notify ON container_categories;
DROP TRIGGER containers_truncate_notify ON containers;
DROP TRIGGER catalog_version_notify ON catalog_version;
DROP FUNCTION catalog_notify();
