-- +goose Up
-- board_version changes whenever a task of the team is created, changed or deleted, by whatever
-- writes it, so a board read can be answered from a copy made at the same version on any replica.
ALTER TABLE teams ADD COLUMN board_version bigint NOT NULL DEFAULT 0;

-- +goose StatementBegin
CREATE FUNCTION bump_board_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        UPDATE teams SET board_version = board_version + 1 WHERE id = OLD.team_id;
    ELSE
        UPDATE teams SET board_version = board_version + 1 WHERE id = NEW.team_id;
        IF TG_OP = 'UPDATE' AND OLD.team_id <> NEW.team_id THEN
            UPDATE teams SET board_version = board_version + 1 WHERE id = OLD.team_id;
        END IF;
    END IF;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER work_items_board_version AFTER INSERT OR UPDATE OR DELETE ON work_items
    FOR EACH ROW EXECUTE FUNCTION bump_board_version();

-- +goose Down
DROP TRIGGER work_items_board_version ON work_items;
DROP FUNCTION bump_board_version();
ALTER TABLE teams DROP COLUMN board_version;
