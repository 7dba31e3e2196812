-- +goose Up
-- Operators retire gifts (ADR 0147): a retired gift is awarded by no new quest; earned ones stay.
ALTER TABLE gifts ADD COLUMN retired_at timestamptz;

-- +goose Down
ALTER TABLE gifts DROP COLUMN retired_at;
