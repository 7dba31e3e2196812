-- +goose Up
-- The catalog listing reads everything it filters on and shows from the containers row: the
-- category and tag ids and the aspects of the published projects are kept on it by triggers, in
-- the same transaction as every change to the links and projects, under GIN indexes.
ALTER TABLE containers
    ADD COLUMN category_ids uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN tag_ids      uuid[] NOT NULL DEFAULT '{}',
    ADD COLUMN aspects      text[] NOT NULL DEFAULT '{}';

-- catalog_version counts the changes that can change a catalog total; every replica reads it to
-- know whether the totals it keeps are still exact (a missing row reads as 0).
CREATE TABLE catalog_version (
    id      boolean PRIMARY KEY DEFAULT true CHECK (id),
    version bigint  NOT NULL
);
INSERT INTO catalog_version (id, version) VALUES (true, 1);

-- +goose StatementBegin
CREATE FUNCTION catalog_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO catalog_version (id, version) VALUES (true, 1) ON CONFLICT (id) DO UPDATE SET version = catalog_version.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION catalog_sync_categories() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE containers c SET category_ids = coalesce(
        (SELECT array_agg(l.category_id ORDER BY l.category_id) FROM container_categories l WHERE l.container_id = c.id), '{}')
    WHERE c.id IN (SELECT container_id FROM changed);
    INSERT INTO catalog_version (id, version) VALUES (true, 1) ON CONFLICT (id) DO UPDATE SET version = catalog_version.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION catalog_sync_tags() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE containers c SET tag_ids = coalesce(
        (SELECT array_agg(l.tag_id ORDER BY l.tag_id) FROM container_tags l WHERE l.container_id = c.id), '{}')
    WHERE c.id IN (SELECT container_id FROM changed);
    INSERT INTO catalog_version (id, version) VALUES (true, 1) ON CONFLICT (id) DO UPDATE SET version = catalog_version.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION catalog_refresh_aspects(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    UPDATE containers c SET aspects = coalesce(
        (SELECT array_agg(DISTINCT p.aspect ORDER BY p.aspect) FROM projects p
         WHERE p.container_id = c.id AND p.is_published AND p.aspect <> ''), '{}')
    WHERE c.id = ANY (ids);
    INSERT INTO catalog_version (id, version) VALUES (true, 1) ON CONFLICT (id) DO UPDATE SET version = catalog_version.version + 1;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION catalog_sync_aspects() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM catalog_refresh_aspects(ARRAY(SELECT DISTINCT container_id FROM new_rows));
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM catalog_refresh_aspects(ARRAY(SELECT DISTINCT container_id FROM old_rows));
    ELSE
        -- Only a change of aspect, publication or container moves a project in the catalog.
        PERFORM catalog_refresh_aspects(ARRAY(
            SELECT n.container_id FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE (n.aspect, n.is_published, n.container_id) IS DISTINCT FROM (o.aspect, o.is_published, o.container_id)
            UNION
            SELECT o.container_id FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE (n.aspect, n.is_published, n.container_id) IS DISTINCT FROM (o.aspect, o.is_published, o.container_id)));
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER container_categories_insert AFTER INSERT ON container_categories
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_sync_categories();
CREATE TRIGGER container_categories_delete AFTER DELETE ON container_categories
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_sync_categories();
CREATE TRIGGER container_tags_insert AFTER INSERT ON container_tags
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_sync_tags();
CREATE TRIGGER container_tags_delete AFTER DELETE ON container_tags
    REFERENCING OLD TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION catalog_sync_tags();
CREATE TRIGGER projects_insert_aspects AFTER INSERT ON projects
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_sync_aspects();
CREATE TRIGGER projects_update_aspects AFTER UPDATE ON projects
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_sync_aspects();
CREATE TRIGGER projects_delete_aspects AFTER DELETE ON projects
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_sync_aspects();
-- A container entering or leaving the catalog, or changing what its filters and search match.
CREATE TRIGGER containers_insert_version AFTER INSERT OR DELETE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_bump_version();
CREATE TRIGGER containers_update_version
    AFTER UPDATE OF is_published, deleted_at, is_premium, primary_mode, name, keywords, description ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_bump_version();

UPDATE containers c SET
    category_ids = coalesce((SELECT array_agg(l.category_id ORDER BY l.category_id) FROM container_categories l WHERE l.container_id = c.id), '{}'),
    tag_ids = coalesce((SELECT array_agg(l.tag_id ORDER BY l.tag_id) FROM container_tags l WHERE l.container_id = c.id), '{}'),
    aspects = coalesce((SELECT array_agg(DISTINCT p.aspect ORDER BY p.aspect) FROM projects p
                        WHERE p.container_id = c.id AND p.is_published AND p.aspect <> ''), '{}');

CREATE INDEX containers_catalog_categories_idx ON containers USING gin (category_ids) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_tags_idx ON containers USING gin (tag_ids) WHERE is_published AND deleted_at IS NULL;
CREATE INDEX containers_catalog_aspects_idx ON containers USING gin (aspects) WHERE is_published AND deleted_at IS NULL;

-- +goose Down
DROP TRIGGER containers_update_version ON containers;
DROP TRIGGER containers_insert_version ON containers;
DROP TRIGGER projects_delete_aspects ON projects;
DROP TRIGGER projects_update_aspects ON projects;
DROP TRIGGER projects_insert_aspects ON projects;
DROP TRIGGER container_tags_delete ON container_tags;
DROP TRIGGER container_tags_insert ON container_tags;
DROP TRIGGER container_categories_delete ON container_categories;
DROP TRIGGER container_categories_insert ON container_categories;
DROP FUNCTION catalog_sync_aspects();
DROP FUNCTION catalog_refresh_aspects(uuid[]);
DROP FUNCTION catalog_sync_tags();
DROP FUNCTION catalog_sync_categories();
DROP FUNCTION catalog_bump_version();
DROP TABLE catalog_version;
ALTER TABLE containers DROP COLUMN aspects, DROP COLUMN tag_ids, DROP COLUMN category_ids;
