-- +goose Up
-- Every replica keeps members' roles, teams' organizations and board versions, and the library
-- stamps in memory (internal/cache) and listens on the channel agentteam_changes. These triggers
-- name, at the commit of whatever transaction changes one of them, what changed:
-- 'm:<organization>:<member>' for a membership, 't:<team>' for a team (whose row carries its board
-- version), 'l:<kind>:<scope>' for a library scope, and '*' for a truncation, after which a
-- replica drops everything. 'o' says that outbox rows were committed, so the relays pass at once.

-- +goose StatementBegin
-- notify_changes's arguments are the payload's prefix, then the columns that name the changed
-- entry; a statement trigger (truncation) sends the prefix alone.
CREATE FUNCTION notify_changes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    r jsonb;
    payload text;
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('agentteam_changes', TG_ARGV[0]);
        RETURN NULL;
    END IF;
    FOREACH r IN ARRAY ARRAY[to_jsonb(OLD), to_jsonb(NEW)] LOOP
        CONTINUE WHEN r IS NULL;
        payload := TG_ARGV[0];
        FOR i IN 1 .. TG_NARGS - 1 LOOP
            payload := payload || ':' || (r ->> TG_ARGV[i]);
        END LOOP;
        PERFORM pg_notify('agentteam_changes', payload);
    END LOOP;
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER memberships_cache AFTER INSERT OR UPDATE OR DELETE ON memberships
    FOR EACH ROW EXECUTE FUNCTION notify_changes('m', 'organization_id', 'member_id');
CREATE TRIGGER teams_cache AFTER UPDATE OR DELETE ON teams
    FOR EACH ROW EXECUTE FUNCTION notify_changes('t', 'id');
CREATE TRIGGER library_versions_cache AFTER INSERT OR UPDATE OR DELETE ON library_versions
    FOR EACH ROW EXECUTE FUNCTION notify_changes('l', 'kind', 'scope');
CREATE TRIGGER outbox_committed AFTER INSERT ON outbox
    FOR EACH STATEMENT EXECUTE FUNCTION notify_changes('o');
-- A truncation fires no row trigger (nor the board and library version bumps).
-- +goose StatementBegin
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memberships', 'teams', 'work_items', 'library_items', 'library_versions'] LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER TRUNCATE ON %I FOR EACH STATEMENT EXECUTE FUNCTION notify_changes(%L)',
            t || '_truncated', t, '*');
    END LOOP;
END
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['memberships', 'teams', 'work_items', 'library_items', 'library_versions'] LOOP
        EXECUTE format('DROP TRIGGER %I ON %I', t || '_truncated', t);
    END LOOP;
END
$$;
-- +goose StatementEnd
DROP TRIGGER outbox_committed ON outbox;
DROP TRIGGER library_versions_cache ON library_versions;
DROP TRIGGER teams_cache ON teams;
DROP TRIGGER memberships_cache ON memberships;
DROP FUNCTION notify_changes();
