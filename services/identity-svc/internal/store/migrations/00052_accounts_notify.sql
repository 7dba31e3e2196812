-- +goose Up
-- Each identity-svc process keeps the users its refreshes read, with their tenants, in memory
-- (internal/cache) and drops them when it hears identity_accounts: every update or deletion of a
-- user or tenant notifies it with the row's id, in the writing transaction (so at its commit),
-- and a truncation of either table drops everything.
-- +goose StatementBegin
CREATE FUNCTION accounts_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_LEVEL = 'STATEMENT' THEN
        PERFORM pg_notify('identity_accounts', '');
    ELSIF TG_TABLE_NAME = 'users' THEN
        PERFORM pg_notify('identity_accounts', 'user:' || OLD.id::text);
    ELSE
        PERFORM pg_notify('identity_accounts', 'tenant:' || OLD.id::text);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER users_accounts_notify AFTER UPDATE OR DELETE ON users
    FOR EACH ROW EXECUTE FUNCTION accounts_notify();
CREATE TRIGGER tenants_accounts_notify AFTER UPDATE OR DELETE ON tenants
    FOR EACH ROW EXECUTE FUNCTION accounts_notify();
CREATE TRIGGER users_truncate_accounts_notify AFTER TRUNCATE ON users
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_notify();
CREATE TRIGGER tenants_truncate_accounts_notify AFTER TRUNCATE ON tenants
    FOR EACH STATEMENT EXECUTE FUNCTION accounts_notify();

-- +goose Down
DROP TRIGGER tenants_truncate_accounts_notify ON tenants;
DROP TRIGGER users_truncate_accounts_notify ON users;
DROP TRIGGER tenants_accounts_notify ON tenants;
DROP TRIGGER users_accounts_notify ON users;
DROP FUNCTION accounts_notify();
