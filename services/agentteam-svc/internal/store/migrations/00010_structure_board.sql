-- +goose Up
CREATE TABLE divisions (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    name            text        NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX divisions_organization_idx ON divisions (organization_id, created_at, id);

CREATE TABLE products (
    id              uuid PRIMARY KEY,
    organization_id uuid        NOT NULL REFERENCES organizations (id),
    division_id     uuid REFERENCES divisions (id),
    name            text        NOT NULL,
    kind            text        NOT NULL CHECK (kind IN ('Product', 'Service')),
    identity        text        NOT NULL DEFAULT '',
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX products_organization_idx ON products (organization_id, created_at, id);

ALTER TABLE teams ADD CONSTRAINT teams_product_fk FOREIGN KEY (product_id) REFERENCES products (id);

-- handoff_of is set on the QA task a handoff creates and names the finished task; being unique,
-- it lets a task hand off at most once whatever the concurrency.
ALTER TABLE work_items
    ADD COLUMN handoff_of uuid REFERENCES work_items (id),
    ADD CONSTRAINT work_items_status_check CHECK (status IN ('Backlog', 'InProgress', 'InReview', 'Done')),
    ADD CONSTRAINT work_items_assignee_kind_check CHECK (assignee_kind IN ('Member', 'Agent'));
CREATE UNIQUE INDEX work_items_handoff_of_key ON work_items (handoff_of);
-- The board reads each column in creation order.
CREATE INDEX work_items_board_idx ON work_items (team_id, status, created_at, id);

CREATE TABLE work_item_transitions (
    id           uuid PRIMARY KEY,
    work_item_id uuid        NOT NULL REFERENCES work_items (id),
    team_id      uuid        NOT NULL REFERENCES teams (id),
    from_status  text        NOT NULL,
    to_status    text        NOT NULL,
    member_id    uuid,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX work_item_transitions_item_idx ON work_item_transitions (work_item_id, created_at, id);
CREATE INDEX work_item_transitions_team_idx ON work_item_transitions (team_id, created_at);

-- +goose Down
DROP TABLE work_item_transitions;
DROP INDEX work_items_board_idx;
DROP INDEX work_items_handoff_of_key;
ALTER TABLE work_items
    DROP CONSTRAINT work_items_assignee_kind_check,
    DROP CONSTRAINT work_items_status_check,
    DROP COLUMN handoff_of;
ALTER TABLE teams DROP CONSTRAINT teams_product_fk;
DROP TABLE products;
DROP TABLE divisions;
