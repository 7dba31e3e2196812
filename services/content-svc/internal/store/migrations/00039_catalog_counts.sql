-- +goose Up
-- catalog_counts holds the exact number of catalog templates (published, not deleted) of every
-- filter set without search words: each combination of category, premium, mode and aspect, a
-- NULL standing for "any", and each single tag with nothing else (tag_id set, the rest NULL).
-- A container with k categories and m aspects is counted in (k+1)·2·2·(m+1) rows plus one per
-- tag. Statement-level triggers on containers keep it in the writing statement, so a total read
-- in the writing transaction is already exact; the category and tag links and the projects'
-- aspects reach it through the containers columns their own triggers (migration 00035) keep.
-- Rows that fall to zero are kept: their number is bounded by the combinations ever seen.
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

-- +goose Down
DROP TRIGGER containers_truncate_counts ON containers;
DROP TRIGGER containers_delete_counts ON containers;
DROP TRIGGER containers_update_counts ON containers;
DROP TRIGGER containers_insert_counts ON containers;
DROP FUNCTION catalog_counts_truncate();
DROP FUNCTION catalog_count_rows();
DROP FUNCTION catalog_count_keys(uuid[], uuid[], boolean, text, text[]);
DROP TABLE catalog_counts;
