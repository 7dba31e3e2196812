-- +goose Up
-- A comment names at most one target; one without a target is about the site in general.
ALTER TABLE comments DROP CONSTRAINT comments_check;
ALTER TABLE comments ADD CONSTRAINT comments_at_most_one_target CHECK (blog_id IS NULL OR container_id IS NULL);
CREATE INDEX comments_general_idx ON comments (created_at, id)
    WHERE status = 'approved' AND blog_id IS NULL AND container_id IS NULL;

-- +goose Down
DROP INDEX comments_general_idx;
DELETE FROM comments WHERE blog_id IS NULL AND container_id IS NULL;
ALTER TABLE comments DROP CONSTRAINT comments_at_most_one_target;
ALTER TABLE comments ADD CONSTRAINT comments_check CHECK ((blog_id IS NULL) <> (container_id IS NULL));
