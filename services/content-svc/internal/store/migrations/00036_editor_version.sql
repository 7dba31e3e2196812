-- +goose Up
-- editor_version counts the changes to any editor graph (GET /v1/projects/{id}/full): every
-- replica reads it to tell whether a graph it keeps, or a client's ETag, is still current. A
-- missing row reads as 0.
CREATE TABLE editor_version (
    id      boolean PRIMARY KEY DEFAULT true CHECK (id),
    version bigint  NOT NULL
);
INSERT INTO editor_version (id, version) VALUES (true, 1);

-- +goose StatementBegin
CREATE FUNCTION editor_bump_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO editor_version (id, version) VALUES (true, 1)
    ON CONFLICT (id) DO UPDATE SET version = editor_version.version + 1;
    RETURN NULL;
END $$;
-- +goose StatementEnd

CREATE TRIGGER projects_editor_version AFTER INSERT OR UPDATE OR DELETE ON projects
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER scenes_editor_version AFTER INSERT OR UPDATE OR DELETE ON scenes
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER scene_contents_editor_version AFTER INSERT OR UPDATE OR DELETE ON scene_contents
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER scene_colors_editor_version AFTER INSERT OR UPDATE OR DELETE ON scene_colors
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER scene_characters_editor_version AFTER INSERT OR UPDATE OR DELETE ON scene_characters
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER repeater_items_editor_version AFTER INSERT OR UPDATE OR DELETE ON repeater_items
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER shared_layers_editor_version AFTER INSERT OR UPDATE OR DELETE ON shared_layers
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER shared_colors_editor_version AFTER INSERT OR UPDATE OR DELETE ON shared_colors
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER character_controllers_editor_version AFTER INSERT OR UPDATE OR DELETE ON character_controllers
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER character_presets_editor_version AFTER INSERT OR UPDATE OR DELETE ON character_presets
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER preset_stories_editor_version AFTER INSERT OR UPDATE OR DELETE ON preset_stories
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
CREATE TRIGGER preset_story_scenes_editor_version AFTER INSERT OR UPDATE OR DELETE ON preset_story_scenes
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();
-- Who may read a graph depends on its container's publication and deletion.
CREATE TRIGGER containers_editor_version AFTER UPDATE OF is_published, deleted_at OR DELETE ON containers
    FOR EACH STATEMENT EXECUTE FUNCTION editor_bump_version();

-- +goose Down
DROP TRIGGER containers_editor_version ON containers;
DROP TRIGGER preset_story_scenes_editor_version ON preset_story_scenes;
DROP TRIGGER preset_stories_editor_version ON preset_stories;
DROP TRIGGER character_presets_editor_version ON character_presets;
DROP TRIGGER character_controllers_editor_version ON character_controllers;
DROP TRIGGER shared_colors_editor_version ON shared_colors;
DROP TRIGGER shared_layers_editor_version ON shared_layers;
DROP TRIGGER repeater_items_editor_version ON repeater_items;
DROP TRIGGER scene_characters_editor_version ON scene_characters;
DROP TRIGGER scene_colors_editor_version ON scene_colors;
DROP TRIGGER scene_contents_editor_version ON scene_contents;
DROP TRIGGER scenes_editor_version ON scenes;
DROP TRIGGER projects_editor_version ON projects;
DROP FUNCTION editor_bump_version();
DROP TABLE editor_version;
