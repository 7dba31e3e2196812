-- +goose Up
-- A platform admin suspends, cancels and reactivates tenants (ADR 0145, 0146).
-- tokens_not_before: sessions of the tenant issued before it are refused (refresh), also after a
-- reactivation; set when the tenant is suspended or cancelled.
ALTER TABLE tenants ADD COLUMN tokens_not_before timestamptz;

-- The audit trail of status changes: who changed which tenant from what to what, and when.
CREATE TABLE tenant_status_changes (
    id          uuid PRIMARY KEY,
    tenant_id   uuid        NOT NULL REFERENCES tenants (id),
    from_status text        NOT NULL,
    to_status   text        NOT NULL,
    changed_by  text        NOT NULL,
    changed_at  timestamptz NOT NULL
);
CREATE INDEX tenant_status_changes_tenant ON tenant_status_changes (tenant_id, changed_at DESC);

-- +goose Down
DROP TABLE tenant_status_changes;
ALTER TABLE tenants DROP COLUMN tokens_not_before;
