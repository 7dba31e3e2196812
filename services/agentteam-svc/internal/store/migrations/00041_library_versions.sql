-- +goose Up
-- library_versions counts the changes of each library scope (a kind's shared items, or one
-- organization's), bumped by a trigger in the changing transaction, so a replica can tell in
-- one indexed read whether a list it keeps in memory is still current.
CREATE TABLE library_versions (
    kind    text   NOT NULL,
    scope   text   NOT NULL,
    version bigint NOT NULL,
    PRIMARY KEY (kind, scope)
);

-- +goose StatementBegin
CREATE FUNCTION library_items_bump() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r library_items;
BEGIN
    IF TG_OP = 'DELETE' THEN
        r := OLD;
    ELSE
        r := NEW;
    END IF;
    INSERT INTO library_versions (kind, scope, version) VALUES (r.kind, coalesce(r.organization_id::text, ''), 1)
    ON CONFLICT (kind, scope) DO UPDATE SET version = library_versions.version + 1;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER library_items_bump AFTER INSERT OR UPDATE OR DELETE ON library_items
    FOR EACH ROW EXECUTE FUNCTION library_items_bump();

-- +goose Down
DROP TRIGGER library_items_bump ON library_items;
DROP FUNCTION library_items_bump();
DROP TABLE library_versions;
