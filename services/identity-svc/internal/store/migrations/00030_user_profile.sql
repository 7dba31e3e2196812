-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;

ALTER TABLE users
    ADD COLUMN slogan           text,
    ADD COLUMN about_me         text,
    ADD COLUMN company_name     text,
    ADD COLUMN website_name     text,
    ADD COLUMN birth_date       date,
    ADD COLUMN gender           text CHECK (gender IN ('Male', 'Female', 'Other', 'PreferNotToSay')),
    ADD COLUMN email_tell_me    boolean NOT NULL DEFAULT true,
    ADD COLUMN sms_tell_me      boolean NOT NULL DEFAULT true,
    ADD COLUMN push_tell_me     boolean NOT NULL DEFAULT true,
    ADD COLUMN telegram_tell_me boolean NOT NULL DEFAULT false,
    ADD COLUMN avatar_id        uuid;

-- The admin user list pages newest first, across tenants or inside one.
CREATE INDEX users_register_date_idx ON users (register_date DESC, id DESC);
CREATE INDEX users_tenant_register_date_idx ON users (tenant_id, register_date DESC, id DESC);
-- q matches email, phone or name anywhere in the text.
CREATE INDEX users_search_trgm_idx ON users USING gin (
    (lower(coalesce(email, '') || ' ' || coalesce(phone_number, '') || ' ' || coalesce(full_name, ''))) gin_trgm_ops);

-- The platform's avatar library, chosen by id with POST /v1/users/me/avatar.
CREATE TABLE avatar_library (
    id         uuid PRIMARY KEY,
    url        text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO avatar_library (id, url) VALUES
    ('01930000-0000-7000-8000-000000000001', 'https://assets.motionstudio.app/avatars/library/01.png'),
    ('01930000-0000-7000-8000-000000000002', 'https://assets.motionstudio.app/avatars/library/02.png'),
    ('01930000-0000-7000-8000-000000000003', 'https://assets.motionstudio.app/avatars/library/03.png'),
    ('01930000-0000-7000-8000-000000000004', 'https://assets.motionstudio.app/avatars/library/04.png');

-- +goose Down
DROP TABLE avatar_library;
DROP INDEX users_search_trgm_idx;
DROP INDEX users_tenant_register_date_idx;
DROP INDEX users_register_date_idx;
ALTER TABLE users
    DROP COLUMN slogan, DROP COLUMN about_me, DROP COLUMN company_name, DROP COLUMN website_name,
    DROP COLUMN birth_date, DROP COLUMN gender, DROP COLUMN email_tell_me, DROP COLUMN sms_tell_me,
    DROP COLUMN push_tell_me, DROP COLUMN telegram_tell_me, DROP COLUMN avatar_id;
