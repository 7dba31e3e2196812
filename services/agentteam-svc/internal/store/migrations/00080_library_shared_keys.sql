-- +goose Up
-- A list pages the shared keys in byte order. library_items_keys_idx (kind, organization_id,
-- key) gives that order for one organization but not under "organization_id IS NULL" (not an
-- equality), so the shared branch read, hashed and sorted every shared key of the kind on every
-- list. This partial index hands them over in order, cut at the page's end.
CREATE INDEX library_items_shared_keys_idx ON library_items (kind, key COLLATE "C") WHERE organization_id IS NULL;

-- +goose Down
DROP INDEX library_items_shared_keys_idx;
