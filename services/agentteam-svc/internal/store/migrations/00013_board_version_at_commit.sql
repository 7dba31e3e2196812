-- +goose Up
-- The board version is bumped when the writing transaction commits rather than at its first
-- write, so concurrent moves on one team hold the team row only for their commit.
DROP TRIGGER work_items_board_version ON work_items;
CREATE CONSTRAINT TRIGGER work_items_board_version AFTER INSERT OR UPDATE OR DELETE ON work_items
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION bump_board_version();

-- +goose Down
DROP TRIGGER work_items_board_version ON work_items;
CREATE TRIGGER work_items_board_version AFTER INSERT OR UPDATE OR DELETE ON work_items
    FOR EACH ROW EXECUTE FUNCTION bump_board_version();
