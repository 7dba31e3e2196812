-- +goose Up
ALTER TABLE users
    ADD COLUMN banned_at    timestamptz,
    ADD COLUMN banned_until timestamptz,
    ADD COLUMN ban_reason   text;

-- +goose Down
ALTER TABLE users DROP COLUMN banned_at, DROP COLUMN banned_until, DROP COLUMN ban_reason;
