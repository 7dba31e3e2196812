-- +goose Up
CREATE TABLE memberships (
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    member_id       uuid        NOT NULL,
    role            text        NOT NULL CHECK (role IN ('Owner', 'TeamOwner', 'Member')),
    created_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (organization_id, member_id)
);
CREATE INDEX memberships_member_idx ON memberships (member_id, created_at, organization_id);
CREATE INDEX memberships_directory_idx ON memberships (organization_id, created_at, member_id);

CREATE TABLE invitations (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    role            text        NOT NULL CHECK (role IN ('Owner', 'TeamOwner', 'Member')),
    invited_by      uuid        NOT NULL,
    join_token      text,
    join_token_hash bytea       NOT NULL UNIQUE,
    created_at      timestamptz NOT NULL,
    expires_at      timestamptz NOT NULL,
    accepted_by     uuid,
    accepted_at     timestamptz
);
CREATE INDEX invitations_inviter_idx ON invitations (organization_id, invited_by, created_at DESC, id DESC);

CREATE TABLE audit_records (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL,
    action          text        NOT NULL,
    entity_type     text        NOT NULL,
    entity_id       text        NOT NULL,
    member_id       uuid,
    detail          text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_records_org_idx ON audit_records (organization_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE audit_records;
DROP TABLE invitations;
DROP TABLE memberships;
