package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/content-svc/internal/editor"
)

// Editor implements editor.Store.
type Editor struct{ db *gorm.DB }

// NewEditor returns an Editor store.
func NewEditor(db *gorm.DB) *Editor { return &Editor{db: db} }

// visible is the condition, over projects p joined to containers c, for a project the caller
// may read.
func visible(privileged bool) string {
	if privileged {
		return "c.deleted_at IS NULL"
	}
	return "c.deleted_at IS NULL AND c.is_published AND p.is_published"
}

const projectJoin = ` JOIN projects p ON p.id = s.project_id JOIN containers c ON c.id = p.container_id`

func notFound(what string) error {
	return apperr.E(apperr.NotFound, "not_found", what+" not found")
}

// readableProject answers apperr NotFound unless the caller may read the project.
func readableProject(db *gorm.DB, id string, privileged bool) error {
	var n int64
	err := db.Raw(`SELECT count(*) FROM projects p JOIN containers c ON c.id = p.container_id WHERE p.id = ? AND `+visible(privileged), id).
		Scan(&n).Error
	if err != nil {
		return fmt.Errorf("store: find project: %w", err)
	}
	if n == 0 {
		return notFound("project")
	}
	return nil
}

// lockProject locks a project of a live template for a change to its editor graph, so that
// changes to one project's graph apply one after the other. It answers apperr NotFound.
func lockProject(tx *gorm.DB, id string) error {
	var ids []string
	err := tx.Raw(`SELECT p.id FROM projects p JOIN containers c ON c.id = p.container_id
		WHERE p.id = ? AND c.deleted_at IS NULL FOR UPDATE OF p`, id).Scan(&ids).Error
	if err != nil {
		return fmt.Errorf("store: lock project: %w", err)
	}
	if len(ids) == 0 {
		return notFound("project")
	}
	return nil
}

// lockSceneProject answers the project of a scene of a live template and locks that project.
func lockSceneProject(tx *gorm.DB, sceneID string) (string, error) {
	var ids []string
	if err := tx.Raw(`SELECT s.project_id FROM scenes s WHERE s.id = ?`, sceneID).Scan(&ids).Error; err != nil {
		return "", fmt.Errorf("store: find scene: %w", err)
	}
	if len(ids) == 0 {
		return "", notFound("scene")
	}
	if err := lockProject(tx, ids[0]); err != nil {
		return "", notFound("scene")
	}
	return ids[0], nil
}

// keyConflict turns a unique violation on a key into an apperr Conflict naming the field.
func keyConflict(err error, what string) error {
	if pgdb.IsUniqueViolation(err, "") {
		return apperr.E(apperr.Conflict, "key_taken", "A "+what+" with this key already exists here.").
			WithFields(apperr.FieldError{Field: "key", Message: "is taken"})
	}
	return pgdb.Translate(err, what)
}

// belongs answers apperr Invalid unless the row of table with that id is in the project.
func belongs(tx *gorm.DB, table, field string, id *string, projectID string) error {
	if id == nil {
		return nil
	}
	var n int64
	if err := tx.Table(table).Where("id = ? AND project_id = ?", *id, projectID).Count(&n).Error; err != nil {
		return fmt.Errorf("store: find %s: %w", table, err)
	}
	if n == 0 {
		return apperr.E(apperr.Invalid, "invalid_reference", fmt.Sprintf("Field %q names nothing of this project.", field)).
			WithFields(apperr.FieldError{Field: field, Message: "names nothing of this project"})
	}
	return nil
}

// Limits that keep every unpaged editor-graph list bounded.
const (
	maxScenesPerProject  = 500
	maxElementsPerScene  = 500
	maxSharedPerProject  = 500
	maxStoriesPerProject = 200
)

// underLimit answers apperr Conflict when the rows of table whose column equals id already
// number max. Callers hold the project's lock, so the count cannot go stale.
func underLimit(tx *gorm.DB, table, column, id string, max int, what string) error {
	var n int64
	if err := tx.Table(table).Where(column+" = ?", id).Count(&n).Error; err != nil {
		return fmt.Errorf("store: count %s: %w", table, err)
	}
	if int(n) >= max {
		return apperr.E(apperr.Conflict, "limit_reached", fmt.Sprintf("There are already %d %s here, the most allowed.", max, what))
	}
	return nil
}

func list[M, D any](db *gorm.DB, f func(M) D, query string, args ...any) ([]D, error) {
	var rows []M
	if err := db.Raw(query, args...).Scan(&rows).Error; err != nil {
		return nil, fmt.Errorf("store: %w", err)
	}
	return mapAll(rows, f), nil
}

// Scenes lists a project's scenes in order.
func (s *Editor) Scenes(ctx context.Context, projectID string, privileged bool) ([]editor.Scene, error) {
	db := s.db.WithContext(ctx)
	if err := readableProject(db, projectID, privileged); err != nil {
		return nil, err
	}
	return list(db, sceneModel.toDomain, `SELECT * FROM scenes WHERE project_id = ? ORDER BY position, id`, projectID)
}

// CreateScene stores a scene at the end of its project and answers it with its position.
func (s *Editor) CreateScene(ctx context.Context, sc editor.Scene) (editor.Scene, error) {
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if err := lockProject(tx, sc.ProjectID); err != nil {
			return err
		}
		if err := underLimit(tx, "scenes", "project_id", sc.ProjectID, maxScenesPerProject, "scenes"); err != nil {
			return err
		}
		if err := tx.Raw(`SELECT coalesce(max(position) + 1, 0) FROM scenes WHERE project_id = ?`, sc.ProjectID).
			Scan(&sc.Position).Error; err != nil {
			return fmt.Errorf("store: next scene position: %w", err)
		}
		return keyConflict(tx.Create(ptr(toSceneModel(sc))).Error, "scene")
	})
	return sc, err
}

// Scene answers a scene with its elements.
func (s *Editor) Scene(ctx context.Context, id string, privileged bool) (editor.SceneFull, error) {
	db := s.db.WithContext(ctx)
	var m sceneModel
	if err := db.Raw(`SELECT s.* FROM scenes s`+projectJoin+` WHERE s.id = ? AND `+visible(privileged), id).Take(&m).Error; err != nil {
		return editor.SceneFull{}, pgdb.Translate(err, "scene")
	}
	els, err := sceneElements(db, "e.scene_id = ?", id)
	if err != nil {
		return editor.SceneFull{}, err
	}
	return editor.SceneFull{Scene: m.toDomain(), Elements: els}, nil
}

// sceneElements reads the four element kinds of the scenes matching cond (over elements e and
// scenes s), in four queries whatever the number of scenes.
func sceneElements(db *gorm.DB, cond string, args ...any) (editor.Elements, error) {
	var els editor.Elements
	var err error
	from := func(table string) string {
		return `SELECT e.* FROM ` + table + ` e JOIN scenes s ON s.id = e.scene_id WHERE ` + cond + ` ORDER BY s.position, e.scene_id, e.position, e.id`
	}
	if els.Contents, err = list(db, contentModel.toDomain, from("scene_contents"), args...); err != nil {
		return els, err
	}
	if els.Colors, err = list(db, colorModel.toDomain, from("scene_colors"), args...); err != nil {
		return els, err
	}
	if els.Characters, err = list(db, characterModel.toDomain, from("scene_characters"), args...); err != nil {
		return els, err
	}
	els.Repeaters, err = list(db, repeaterModel.toDomain, from("repeater_items"), args...)
	return els, err
}

// UpdateScene applies update to a scene under its project's lock and saves it.
func (s *Editor) UpdateScene(ctx context.Context, id string, update func(*editor.Scene) error) (editor.Scene, error) {
	var out editor.Scene
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if _, err := lockSceneProject(tx, id); err != nil {
			return err
		}
		var m sceneModel
		if err := tx.Where("id = ?", id).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "scene")
		}
		sc := m.toDomain()
		if err := update(&sc); err != nil {
			return err
		}
		out = sc
		return keyConflict(tx.Save(ptr(toSceneModel(sc))).Error, "scene")
	})
	return out, err
}

// DeleteScene deletes a scene of a live template with its elements.
func (s *Editor) DeleteScene(ctx context.Context, id string) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if _, err := lockSceneProject(tx, id); err != nil {
			return err
		}
		return pgdb.Translate(tx.Exec(`DELETE FROM scenes WHERE id = ?`, id).Error, "scene")
	})
}

// ReorderScenes gives the scenes of the scene's project the positions of orderedIDs, all at
// once. It answers apperr Invalid unless orderedIDs are exactly the project's scenes.
func (s *Editor) ReorderScenes(ctx context.Context, sceneID string, orderedIDs []string) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		projectID, err := lockSceneProject(tx, sceneID)
		if err != nil {
			return err
		}
		var current []string
		if err := tx.Raw(`SELECT id FROM scenes WHERE project_id = ?`, projectID).Scan(&current).Error; err != nil {
			return fmt.Errorf("store: project scenes: %w", err)
		}
		have := make(map[string]bool, len(current))
		for _, id := range current {
			have[id] = true
		}
		exact := len(orderedIDs) == len(current)
		for _, id := range orderedIDs {
			exact = exact && have[strings.ToLower(id)]
		}
		if !exact {
			return apperr.E(apperr.Invalid, "invalid_order",
				fmt.Sprintf("Field \"ordered_ids\" must name each of the project's %d scenes exactly once.", len(current))).
				WithFields(apperr.FieldError{Field: "ordered_ids", Message: "must name each scene of the project exactly once"})
		}
		err = tx.Exec(`UPDATE scenes s SET position = o.ord - 1, updated_at = now()
			FROM unnest(CAST(? AS uuid[])) WITH ORDINALITY AS o(id, ord) WHERE s.id = o.id`,
			"{"+strings.Join(orderedIDs, ",")+"}").Error
		return pgdb.Translate(err, "scene")
	})
}

// Elements answers the elements of a scene the caller may read.
func (s *Editor) Elements(ctx context.Context, sceneID string, privileged bool) (editor.Elements, error) {
	db := s.db.WithContext(ctx)
	var n int64
	if err := db.Raw(`SELECT count(*) FROM scenes s`+projectJoin+` WHERE s.id = ? AND `+visible(privileged), sceneID).
		Scan(&n).Error; err != nil {
		return editor.Elements{}, fmt.Errorf("store: find scene: %w", err)
	}
	if n == 0 {
		return editor.Elements{}, notFound("scene")
	}
	return sceneElements(db, "e.scene_id = ?", sceneID)
}

// CreateContent stores a content element of a scene of a live template.
func (s *Editor) CreateContent(ctx context.Context, e editor.ContentElement) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		projectID, err := lockSceneProject(tx, e.SceneID)
		if err != nil {
			return err
		}
		if err := belongs(tx, "shared_layers", "shared_layer_id", e.SharedLayerID, projectID); err != nil {
			return err
		}
		if err := underLimit(tx, "scene_contents", "scene_id", e.SceneID, maxElementsPerScene, "content elements"); err != nil {
			return err
		}
		return keyConflict(tx.Create(ptr(toContentModel(e))).Error, "content element")
	})
}

// UpdateContent applies update to a content element under its project's lock and saves it.
func (s *Editor) UpdateContent(ctx context.Context, id string, update func(*editor.ContentElement) error) (editor.ContentElement, error) {
	var out editor.ContentElement
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var m contentModel
		if err := tx.Where("id = ?", id).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "content element")
		}
		projectID, err := lockSceneProject(tx, m.SceneID)
		if err != nil {
			return notFound("content element")
		}
		e := m.toDomain()
		if err := update(&e); err != nil {
			return err
		}
		if err := belongs(tx, "shared_layers", "shared_layer_id", e.SharedLayerID, projectID); err != nil {
			return err
		}
		out = e
		return keyConflict(tx.Save(ptr(toContentModel(e))).Error, "content element")
	})
	return out, err
}

// deleteElement deletes an element of a scene of a live template from table.
func (s *Editor) deleteElement(ctx context.Context, table, what, id string) error {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM `+table+` e USING scenes s, projects p, containers c
		WHERE e.id = ? AND s.id = e.scene_id AND p.id = s.project_id AND c.id = p.container_id AND c.deleted_at IS NULL`, id)
	if res.Error != nil {
		return pgdb.Translate(res.Error, what)
	}
	if res.RowsAffected == 0 {
		return notFound(what)
	}
	return nil
}

// DeleteContent deletes a content element.
func (s *Editor) DeleteContent(ctx context.Context, id string) error {
	return s.deleteElement(ctx, "scene_contents", "content element", id)
}

// CreateColor stores a color element of a scene of a live template.
func (s *Editor) CreateColor(ctx context.Context, e editor.ColorElement) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		projectID, err := lockSceneProject(tx, e.SceneID)
		if err != nil {
			return err
		}
		if err := belongs(tx, "shared_colors", "shared_color_id", e.SharedColorID, projectID); err != nil {
			return err
		}
		if err := underLimit(tx, "scene_colors", "scene_id", e.SceneID, maxElementsPerScene, "color elements"); err != nil {
			return err
		}
		return keyConflict(tx.Create(ptr(colorModel(e))).Error, "color element")
	})
}

// UpdateColor applies update to a color element under its project's lock and saves it.
func (s *Editor) UpdateColor(ctx context.Context, id string, update func(*editor.ColorElement) error) (editor.ColorElement, error) {
	var out editor.ColorElement
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var m colorModel
		if err := tx.Where("id = ?", id).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "color element")
		}
		projectID, err := lockSceneProject(tx, m.SceneID)
		if err != nil {
			return notFound("color element")
		}
		e := m.toDomain()
		if err := update(&e); err != nil {
			return err
		}
		if err := belongs(tx, "shared_colors", "shared_color_id", e.SharedColorID, projectID); err != nil {
			return err
		}
		out = e
		return keyConflict(tx.Save(ptr(colorModel(e))).Error, "color element")
	})
	return out, err
}

// DeleteColor deletes a color element.
func (s *Editor) DeleteColor(ctx context.Context, id string) error {
	return s.deleteElement(ctx, "scene_colors", "color element", id)
}

// SharedLayers lists a project's shared layers by key.
func (s *Editor) SharedLayers(ctx context.Context, projectID string, privileged bool) ([]editor.SharedLayer, error) {
	db := s.db.WithContext(ctx)
	if err := readableProject(db, projectID, privileged); err != nil {
		return nil, err
	}
	return list(db, sharedLayerModel.toDomain, `SELECT * FROM shared_layers WHERE project_id = ? ORDER BY key`, projectID)
}

// CreateSharedLayer stores a shared layer of a project of a live template.
func (s *Editor) CreateSharedLayer(ctx context.Context, l editor.SharedLayer) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if err := lockProject(tx, l.ProjectID); err != nil {
			return err
		}
		if err := underLimit(tx, "shared_layers", "project_id", l.ProjectID, maxSharedPerProject, "shared layers"); err != nil {
			return err
		}
		return keyConflict(tx.Create(ptr(sharedLayerModel(l))).Error, "shared layer")
	})
}

// SharedColors lists a project's shared colors by key.
func (s *Editor) SharedColors(ctx context.Context, projectID string, privileged bool) ([]editor.SharedColor, error) {
	db := s.db.WithContext(ctx)
	if err := readableProject(db, projectID, privileged); err != nil {
		return nil, err
	}
	return list(db, sharedColorModel.toDomain, `SELECT * FROM shared_colors WHERE project_id = ? ORDER BY key`, projectID)
}

// CreateSharedColor stores a shared color of a project of a live template.
func (s *Editor) CreateSharedColor(ctx context.Context, c editor.SharedColor) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if err := lockProject(tx, c.ProjectID); err != nil {
			return err
		}
		if err := underLimit(tx, "shared_colors", "project_id", c.ProjectID, maxSharedPerProject, "shared colors"); err != nil {
			return err
		}
		return keyConflict(tx.Create(ptr(sharedColorModel(c))).Error, "shared color")
	})
}

const storyColumns = `ps.id, ps.project_id, ps.name, ps.description, ps.image, ps.position, ps.created_at,
	(SELECT count(*) FROM preset_story_scenes x WHERE x.preset_story_id = ps.id) AS scene_count`

// PresetStories lists a project's preset stories in order.
func (s *Editor) PresetStories(ctx context.Context, projectID string, privileged bool) ([]editor.PresetStory, error) {
	db := s.db.WithContext(ctx)
	if err := readableProject(db, projectID, privileged); err != nil {
		return nil, err
	}
	return list(db, storyModel.toDomain, `SELECT `+storyColumns+` FROM preset_stories ps WHERE ps.project_id = ?
		ORDER BY ps.position, ps.created_at, ps.id`, projectID)
}

// CreatePresetStory stores a preset story and its steps. It answers apperr Invalid when a step
// names a scene of another project.
func (s *Editor) CreatePresetStory(ctx context.Context, p editor.PresetStoryFull) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if err := lockProject(tx, p.ProjectID); err != nil {
			return err
		}
		if err := underLimit(tx, "preset_stories", "project_id", p.ProjectID, maxStoriesPerProject, "preset stories"); err != nil {
			return err
		}
		ids := make([]string, len(p.Scenes))
		for i, st := range p.Scenes {
			ids[i] = st.SceneID
		}
		var n int64
		if err := tx.Table("scenes").Where("project_id = ? AND id IN ?", p.ProjectID, nonEmpty(ids)).Count(&n).Error; err != nil {
			return fmt.Errorf("store: story scenes: %w", err)
		}
		if int(n) != len(dedupeIDs(ids)) {
			return apperr.E(apperr.Invalid, "invalid_reference", "Every scene of a preset story must belong to its project.").
				WithFields(apperr.FieldError{Field: "scenes", Message: "names scenes of another project"})
		}
		err := tx.Exec(`INSERT INTO preset_stories (id, project_id, name, description, image, position, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)`, p.ID, p.ProjectID, p.Name, p.Description, p.Image, p.Position, p.CreatedAt).Error
		if err != nil {
			return pgdb.Translate(err, "preset story")
		}
		for _, st := range p.Scenes {
			err := tx.Exec(`INSERT INTO preset_story_scenes (preset_story_id, position, scene_id, content_values, color_values)
				VALUES (?, ?, ?, ?, ?)`, p.ID, st.Position, st.SceneID, jsonOf(st.ContentValues), jsonOf(st.ColorValues)).Error
			if err != nil {
				return pgdb.Translate(err, "preset story scene")
			}
		}
		return nil
	})
}

func dedupeIDs(ids []string) map[string]bool {
	out := make(map[string]bool, len(ids))
	for _, id := range ids {
		out[strings.ToLower(id)] = true
	}
	return out
}

// PresetStory answers a preset story the caller may read, with its steps.
func (s *Editor) PresetStory(ctx context.Context, id string, privileged bool) (editor.PresetStoryFull, error) {
	db := s.db.WithContext(ctx)
	var m storyModel
	if err := db.Raw(`SELECT `+storyColumns+` FROM preset_stories ps JOIN projects p ON p.id = ps.project_id
		JOIN containers c ON c.id = p.container_id WHERE ps.id = ? AND `+visible(privileged), id).Take(&m).Error; err != nil {
		return editor.PresetStoryFull{}, pgdb.Translate(err, "preset story")
	}
	steps, err := list(db, storySceneModel.toDomain, `SELECT scene_id, position, content_values, color_values
		FROM preset_story_scenes WHERE preset_story_id = ? ORDER BY position`, id)
	if err != nil {
		return editor.PresetStoryFull{}, err
	}
	return editor.PresetStoryFull{PresetStory: m.toDomain(), Scenes: steps}, nil
}

// editorVersion reads the version of every editor graph (migration 00036), 0 when unset.
const editorVersion = `SELECT coalesce((SELECT version FROM editor_version), 0)`

// GraphVersion answers the editor graphs' version when the caller may read the project's graph,
// in one query, and apperr NotFound otherwise.
func (s *Editor) GraphVersion(ctx context.Context, projectID string, privileged bool) (int64, error) {
	var v []int64
	err := s.db.WithContext(ctx).Raw(`SELECT (`+editorVersion+`) FROM projects p JOIN containers c ON c.id = p.container_id
		WHERE p.id = ? AND `+visible(privileged), projectID).Scan(&v).Error
	if err != nil {
		return 0, fmt.Errorf("store: graph version: %w", err)
	}
	if len(v) == 0 {
		return 0, notFound("project")
	}
	return v[0], nil
}

// ProjectFull answers a project's whole editor graph and the editor version it was read at
// from one consistent snapshot in twelve queries, whatever the number of scenes and elements.
func (s *Editor) ProjectFull(ctx context.Context, projectID string, privileged bool) (editor.ProjectFull, error) {
	var full editor.ProjectFull
	err := s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		var pm projectModel
		if err := tx.Raw(`SELECT p.* FROM projects p JOIN containers c ON c.id = p.container_id WHERE p.id = ? AND `+
			visible(privileged), projectID).Take(&pm).Error; err != nil {
			return pgdb.Translate(err, "project")
		}
		full.Project = pm.toDomain()
		if err := tx.Raw(editorVersion).Scan(&full.Version).Error; err != nil {
			return fmt.Errorf("store: editor version: %w", err)
		}
		scenes, err := list(tx, sceneModel.toDomain, `SELECT * FROM scenes WHERE project_id = ? ORDER BY position, id`, projectID)
		if err != nil {
			return err
		}
		els, err := sceneElements(tx, "s.project_id = ?", projectID)
		if err != nil {
			return err
		}
		full.Scenes = assemble(scenes, els)
		if full.SharedColors, err = list(tx, sharedColorModel.toDomain, `SELECT * FROM shared_colors WHERE project_id = ? ORDER BY key`, projectID); err != nil {
			return err
		}
		if full.SharedLayers, err = list(tx, sharedLayerModel.toDomain, `SELECT * FROM shared_layers WHERE project_id = ? ORDER BY key`, projectID); err != nil {
			return err
		}
		if full.CharacterControllers, err = list(tx, controllerModel.toDomain, `SELECT * FROM character_controllers
			WHERE project_id = ? ORDER BY position, id`, projectID); err != nil {
			return err
		}
		if full.CharacterPresets, err = list(tx, presetModel.toDomain, `SELECT * FROM character_presets
			WHERE project_id = ? ORDER BY position, id`, projectID); err != nil {
			return err
		}
		full.PresetStories, err = list(tx, storyModel.toDomain, `SELECT `+storyColumns+` FROM preset_stories ps
			WHERE ps.project_id = ? ORDER BY ps.position, ps.created_at, ps.id`, projectID)
		return err
	}, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
	return full, err
}

// assemble hands each scene its elements; the elements come in scene order.
func assemble(scenes []editor.Scene, els editor.Elements) []editor.SceneFull {
	out := make([]editor.SceneFull, len(scenes))
	index := make(map[string]*editor.Elements, len(scenes))
	for i, sc := range scenes {
		out[i] = editor.SceneFull{Scene: sc, Elements: editor.Elements{
			Contents: []editor.ContentElement{}, Colors: []editor.ColorElement{},
			Characters: []editor.Character{}, Repeaters: []editor.RepeaterItem{}}}
		index[sc.ID] = &out[i].Elements
	}
	for _, e := range els.Contents {
		index[e.SceneID].Contents = append(index[e.SceneID].Contents, e)
	}
	for _, e := range els.Colors {
		index[e.SceneID].Colors = append(index[e.SceneID].Colors, e)
	}
	for _, e := range els.Characters {
		index[e.SceneID].Characters = append(index[e.SceneID].Characters, e)
	}
	for _, e := range els.Repeaters {
		index[e.SceneID].Repeaters = append(index[e.SceneID].Repeaters, e)
	}
	return out
}
