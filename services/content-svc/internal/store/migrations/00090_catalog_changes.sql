-- +goose Up
-- The listing index of each content-svc process (internal/cache) is the catalog's only read
-- model, kept current change by change. Every statement that changes a catalog template (one
-- published and not deleted before or after it) logs the templates it changed in
-- catalog_changes under the next catalog_version, and notifies content_catalog with that
-- version. catalog_version's row is locked by the bump until the writer commits, so versions
-- are gapless and in commit order: a process that applied version n applies n+1 next, and a
-- version it never heard of is read from the log. The link and aspect triggers of migration
-- 00035 change the containers row, whose trigger logs it; a truncation logs a reload (NULL ids).
-- The epoch changes when the version row is made again (a truncation), which also means reload.
-- The log keeps the last 10,000 versions; a process further behind reads the catalog again.
-- catalog_counts (migration 00039) and its triggers go: totals are counted by the index.
DROP TRIGGER containers_truncate_counts ON containers;
DROP TRIGGER containers_delete_counts ON containers;
DROP TRIGGER containers_update_counts ON containers;
DROP TRIGGER containers_insert_counts ON containers;
DROP FUNCTION catalog_counts_truncate();
DROP FUNCTION catalog_count_rows();
DROP FUNCTION catalog_count_keys(uuid[], uuid[], boolean, text, text[]);
DROP TABLE catalog_counts;

DROP TRIGGER catalog_version_notify ON catalog_version;
DROP TRIGGER containers_truncate_notify ON containers;
DROP TRIGGER container_categories_truncate_notify ON container_categories;
DROP TRIGGER container_tags_truncate_notify ON container_tags;
DROP TRIGGER projects_truncate_notify ON projects;
DROP TRIGGER containers_update_version ON containers;
DROP TRIGGER containers_insert_version ON containers;
DROP FUNCTION catalog_notify();
DROP FUNCTION catalog_bump_version();

ALTER TABLE catalog_version ADD COLUMN epoch uuid NOT NULL DEFAULT gen_random_uuid();

CREATE TABLE catalog_changes (
    version bigint PRIMARY KEY,
    ids     uuid[]
);

-- catalog_log logs a change of the templates ids (NULL: reload everything) under the next
-- version and notifies it; an empty change logs nothing.
-- +goose StatementBegin
CREATE FUNCTION catalog_log(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    v bigint;
BEGIN
    IF ids IS NOT NULL AND cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    INSERT INTO catalog_version AS k (id, version) VALUES (true, 1)
    ON CONFLICT (id) DO UPDATE SET version = k.version + 1 RETURNING k.version INTO v;
    INSERT INTO catalog_changes (version, ids) VALUES (v, ids);
    DELETE FROM catalog_changes WHERE version <= v - 10000;
    PERFORM pg_notify('content_catalog', v::text);
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION catalog_log_containers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM catalog_log(ARRAY(SELECT id FROM new_rows WHERE is_published AND deleted_at IS NULL));
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM catalog_log(ARRAY(SELECT id FROM old_rows WHERE is_published AND deleted_at IS NULL));
    ELSE
        PERFORM catalog_log(ARRAY(
            SELECT n.id FROM new_rows n JOIN old_rows o ON o.id = n.id
            WHERE (n.is_published AND n.deleted_at IS NULL OR o.is_published AND o.deleted_at IS NULL) AND n IS DISTINCT FROM o));
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION catalog_log_reload() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM catalog_log(NULL);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- The link and aspect triggers keep the containers columns; the containers trigger logs them.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION catalog_sync_categories() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE containers c SET category_ids = coalesce(
        (SELECT array_agg(l.category_id ORDER BY l.category_id) FROM container_categories l WHERE l.container_id = c.id), '{}')
    WHERE c.id IN (SELECT container_id FROM changed);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION catalog_sync_tags() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE containers c SET tag_ids = coalesce(
        (SELECT array_agg(l.tag_id ORDER BY l.tag_id) FROM container_tags l WHERE l.container_id = c.id), '{}')
    WHERE c.id IN (SELECT container_id FROM changed);
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION catalog_refresh_aspects(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF cardinality(ids) = 0 THEN
        RETURN;
    END IF;
    UPDATE containers c SET aspects = coalesce(
        (SELECT array_agg(DISTINCT p.aspect ORDER BY p.aspect) FROM projects p
         WHERE p.container_id = c.id AND p.is_published AND p.aspect <> ''), '{}')
    WHERE c.id = ANY (ids);
END $$;
-- +goose StatementEnd

CREATE TRIGGER containers_insert_log AFTER INSERT ON containers
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_log_containers();
CREATE TRIGGER containers_update_log AFTER UPDATE ON containers
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_log_containers();
CREATE TRIGGER containers_delete_log AFTER DELETE ON containers
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_log_containers();
CREATE TRIGGER containers_truncate_log AFTER TRUNCATE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_log_reload();
CREATE TRIGGER container_categories_truncate_log AFTER TRUNCATE ON container_categories
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_log_reload();
CREATE TRIGGER container_tags_truncate_log AFTER TRUNCATE ON container_tags
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_log_reload();
CREATE TRIGGER projects_truncate_log AFTER TRUNCATE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_log_reload();

-- +goose Down
-- Back to migrations 00035, 00038 and 00039: a statement-level version bump, a notification
-- without payload, and catalog_counts, counted again from the containers.
DROP TRIGGER projects_truncate_log ON projects;
DROP TRIGGER container_tags_truncate_log ON container_tags;
DROP TRIGGER container_categories_truncate_log ON container_categories;
DROP TRIGGER containers_truncate_log ON containers;
DROP TRIGGER containers_delete_log ON containers;
DROP TRIGGER containers_update_log ON containers;
DROP TRIGGER containers_insert_log ON containers;
DROP FUNCTION catalog_log_reload();
DROP FUNCTION catalog_log_containers();
DROP FUNCTION catalog_log(uuid[]);
DROP TABLE catalog_changes;
ALTER TABLE catalog_version DROP COLUMN epoch;

-- +goose StatementBegin
CREATE FUNCTION catalog_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO catalog_version (id, version) VALUES (true, 1) ON CONFLICT (id) DO UPDATE SET version = catalog_version.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION catalog_sync_categories() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE containers c SET category_ids = coalesce(
        (SELECT array_agg(l.category_id ORDER BY l.category_id) FROM container_categories l WHERE l.container_id = c.id), '{}')
    WHERE c.id IN (SELECT container_id FROM changed);
    INSERT INTO catalog_version (id, version) VALUES (true, 1) ON CONFLICT (id) DO UPDATE SET version = catalog_version.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION catalog_sync_tags() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE containers c SET tag_ids = coalesce(
        (SELECT array_agg(l.tag_id ORDER BY l.tag_id) FROM container_tags l WHERE l.container_id = c.id), '{}')
    WHERE c.id IN (SELECT container_id FROM changed);
    INSERT INTO catalog_version (id, version) VALUES (true, 1) ON CONFLICT (id) DO UPDATE SET version = catalog_version.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION catalog_refresh_aspects(ids uuid[]) RETURNS void LANGUAGE plpgsql AS $$
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

CREATE TRIGGER containers_insert_version AFTER INSERT OR DELETE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_bump_version();

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

CREATE TRIGGER containers_update_version AFTER UPDATE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_bump_version();


CREATE TABLE catalog_counts (
    tag_id      uuid,
    category_id uuid,
    is_premium  boolean,
    mode        text,
    aspect      text,
    total       bigint NOT NULL,
    CONSTRAINT catalog_counts_key UNIQUE NULLS NOT DISTINCT (tag_id, category_id, is_premium, mode, aspect)
);

-- catalog_count_keys answers the rows of catalog_counts one catalog container is counted in.
-- +goose StatementBegin
CREATE FUNCTION catalog_count_keys(category_ids uuid[], tag_ids uuid[], is_premium boolean, mode text, aspects text[])
    RETURNS TABLE (tag_id uuid, category_id uuid, is_premium boolean, mode text, aspect text)
    LANGUAGE sql IMMUTABLE AS $$
    SELECT NULL::uuid, c, p, m, a
    FROM unnest(array_append(category_ids, NULL)) c, unnest(ARRAY[is_premium, NULL]) p,
         unnest(ARRAY[mode, NULL]) m, unnest(array_append(aspects, NULL)) a
    UNION ALL
    SELECT t, NULL::uuid, NULL::boolean, NULL::text, NULL::text FROM unnest(tag_ids) t
$$;
-- +goose StatementEnd

-- catalog_count_rows adds the statement's change to catalog_counts. The change is the catalog
-- rows after the statement counted +1 and those before it -1, summed per distinct combination
-- of the counted columns: updates that move nothing in the catalog (ratings, use counts,
-- images) cancel out and touch no count, and a bulk statement is expanded once per distinct
-- combination, not per row, then aggregated and upserted in one statement whatever its size.
-- Before touching a count it bumps catalog_version, whose row every catalog writer locks until
-- it commits: writers thus take that row before any count row and never deadlock on counts.
-- +goose StatementBegin
CREATE FUNCTION catalog_count_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    cols  constant text := 'category_ids, tag_ids, is_premium, primary_mode, aspects';
    rows  text;
    moved boolean;
BEGIN
    IF TG_OP = 'INSERT' THEN
        rows := 'SELECT 1 AS sign, ' || cols || ' FROM new_rows WHERE is_published AND deleted_at IS NULL';
    ELSIF TG_OP = 'DELETE' THEN
        rows := 'SELECT -1 AS sign, ' || cols || ' FROM old_rows WHERE is_published AND deleted_at IS NULL';
    ELSE
        -- Most updates leave every counted column alone: look for one that does not first.
        SELECT EXISTS (
            SELECT FROM new_rows n FULL JOIN old_rows o ON o.id = n.id
            WHERE n.id IS NULL OR o.id IS NULL
               OR (n.is_published AND n.deleted_at IS NULL, n.category_ids, n.tag_ids, n.is_premium, n.primary_mode, n.aspects)
                  IS DISTINCT FROM
                  (o.is_published AND o.deleted_at IS NULL, o.category_ids, o.tag_ids, o.is_premium, o.primary_mode, o.aspects))
        INTO moved;
        IF NOT moved THEN
            RETURN NULL;
        END IF;
        rows := 'SELECT 1 AS sign, ' || cols || ' FROM new_rows WHERE is_published AND deleted_at IS NULL'
            || ' UNION ALL SELECT -1, ' || cols || ' FROM old_rows WHERE is_published AND deleted_at IS NULL';
    END IF;
    INSERT INTO catalog_version (id, version) VALUES (true, 1) ON CONFLICT (id) DO UPDATE SET version = catalog_version.version + 1;
    EXECUTE 'INSERT INTO catalog_counts AS k (tag_id, category_id, is_premium, mode, aspect, total)
        SELECT x.tag_id, x.category_id, x.is_premium, x.mode, x.aspect, sum(d.n)
        FROM (SELECT ' || cols || ', sum(sign) AS n FROM (' || rows || ') r
              GROUP BY ' || cols || ' HAVING sum(sign) <> 0) d,
             catalog_count_keys(d.category_ids, d.tag_ids, d.is_premium, d.primary_mode, d.aspects) x
        GROUP BY 1, 2, 3, 4, 5 HAVING sum(d.n) <> 0
        ORDER BY 1, 2, 3, 4, 5
        ON CONFLICT ON CONSTRAINT catalog_counts_key DO UPDATE SET total = k.total + excluded.total';
    RETURN NULL;
END $$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE FUNCTION catalog_counts_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM catalog_counts;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER containers_insert_counts AFTER INSERT ON containers
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_count_rows();
CREATE TRIGGER containers_update_counts AFTER UPDATE ON containers
    REFERENCING NEW TABLE AS new_rows OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_count_rows();
CREATE TRIGGER containers_delete_counts AFTER DELETE ON containers
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalog_count_rows();
CREATE TRIGGER containers_truncate_counts AFTER TRUNCATE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION catalog_counts_truncate();

INSERT INTO catalog_counts (tag_id, category_id, is_premium, mode, aspect, total)
SELECT x.tag_id, x.category_id, x.is_premium, x.mode, x.aspect, count(*)
FROM containers c, catalog_count_keys(c.category_ids, c.tag_ids, c.is_premium, c.primary_mode, c.aspects) x
WHERE c.is_published AND c.deleted_at IS NULL
GROUP BY 1, 2, 3, 4, 5;

