-- +goose Up
-- oauth_identities link an external provider's account (its subject) to a user of a tenant.
CREATE TABLE oauth_identities (
    id         uuid PRIMARY KEY,
    tenant_id  uuid        NOT NULL REFERENCES tenants (id),
    user_id    uuid        NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    provider   text        NOT NULL,
    subject    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX oauth_identities_subject_key ON oauth_identities (tenant_id, provider, subject);
CREATE INDEX oauth_identities_user_idx ON oauth_identities (user_id);

-- +goose Down
DROP TABLE oauth_identities;
