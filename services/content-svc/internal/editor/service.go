package editor

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/check"
)

// Editor limits.
const (
	maxReorder     = 1000
	maxStoryScenes = 200
	maxValue       = 5000
	maxValues      = 500
)

var (
	keyPattern   = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,100}$`)
	colorPattern = regexp.MustCompile(`^#[0-9A-Fa-f]{6}$`)
)

// contentTypes are the kinds of content a layer holds.
func contentTypes() []string { return []string{"text", "image", "video", "audio", "logo"} }

// defaultContentType is the content type of an element or shared layer created without one.
const defaultContentType = "text"

const (
	keyMessage   = "must be 1 to 100 letters, digits, '_', '.' or '-'"
	colorMessage = "must be a #RRGGBB color"
)

func checkKey(c *check.Checker, field string, v *string) {
	c.Match(field, v, keyPattern, keyMessage)
}

func checkScene(c *check.Checker, f SceneFields) {
	checkKey(c, "key", f.Key)
	c.Text("title", f.Title, 200)
	c.Text("scene_type", f.SceneType, 50)
	c.Text("image", f.Image, 2000)
	c.NonNegative("duration_sec", f.DurationSec)
	if f.LocalizedTitle != nil {
		if len(*f.LocalizedTitle) > 50 {
			c.Add("localized_title", "must hold at most 50 languages")
		}
		for lang, t := range *f.LocalizedTitle {
			if len(lang) == 0 || len(lang) > 20 || utf8.RuneCountInString(t) > 200 {
				c.Add("localized_title", "must map language codes of at most 20 characters to titles of at most 200")
				break
			}
		}
	}
}

func (f SceneFields) apply(s *Scene) {
	set(&s.Key, f.Key)
	set(&s.Title, f.Title)
	set(&s.LocalizedTitle, f.LocalizedTitle)
	set(&s.SceneType, f.SceneType)
	set(&s.DurationSec, f.DurationSec)
	set(&s.Image, f.Image)
	set(&s.IsHidden, f.IsHidden)
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// Scenes lists a project's scenes in order. It answers apperr NotFound for a project the
// caller cannot read.
func (s *Service) Scenes(ctx context.Context, projectID string, privileged bool) ([]Scene, error) {
	return s.store.Scenes(ctx, projectID, privileged)
}

// CreateScene adds a scene at the end of a project; without a key it gets "scene-" and the
// last 12 characters of its id. It answers apperr Invalid for bad fields, apperr NotFound for
// an unknown project and apperr Conflict for a key taken in the project.
func (s *Service) CreateScene(ctx context.Context, projectID string, f SceneFields) (Scene, error) {
	var c check.Checker
	checkScene(&c, f)
	if err := c.Err(); err != nil {
		return Scene{}, err
	}
	now := s.now().UTC()
	sc := Scene{ID: s.newID(), ProjectID: projectID, SceneType: "normal", LocalizedTitle: map[string]string{},
		CreatedAt: now, UpdatedAt: now}
	if f.Key == nil {
		id := strings.ReplaceAll(sc.ID, "-", "")
		f.Key = new("scene-" + id[max(0, len(id)-12):])
	}
	f.apply(&sc)
	return s.store.CreateScene(ctx, sc)
}

// Scene answers a scene with its elements. It answers apperr NotFound for a scene the caller
// cannot read.
func (s *Service) Scene(ctx context.Context, id string, privileged bool) (SceneFull, error) {
	return s.store.Scene(ctx, id, privileged)
}

// UpdateScene changes the given fields of a scene. It answers apperr Invalid, apperr NotFound
// and apperr Conflict like CreateScene.
func (s *Service) UpdateScene(ctx context.Context, id string, f SceneFields) (Scene, error) {
	var c check.Checker
	checkScene(&c, f)
	if err := c.Err(); err != nil {
		return Scene{}, err
	}
	return s.store.UpdateScene(ctx, id, func(sc *Scene) error {
		f.apply(sc)
		sc.UpdatedAt = s.now().UTC()
		return nil
	})
}

// DeleteScene deletes a scene with its elements. It answers apperr NotFound for an unknown
// scene.
func (s *Service) DeleteScene(ctx context.Context, id string) error {
	return s.store.DeleteScene(ctx, id)
}

// ReorderScenes sets the order of all the scenes of the given scene's project at once. It
// answers apperr Invalid unless orderedIDs names every scene of the project exactly once, and
// apperr NotFound for an unknown scene.
func (s *Service) ReorderScenes(ctx context.Context, sceneID string, orderedIDs []string) error {
	var c check.Checker
	c.IDs("ordered_ids", &orderedIDs, maxReorder)
	seen := make(map[string]bool, len(orderedIDs))
	for _, id := range orderedIDs {
		if seen[id] {
			c.Add("ordered_ids", "must not repeat an id")
			break
		}
		seen[id] = true
	}
	if err := c.Err(); err != nil {
		return err
	}
	return s.store.ReorderScenes(ctx, sceneID, orderedIDs)
}

// Elements answers a scene's elements. It answers apperr NotFound for a scene the caller
// cannot read.
func (s *Service) Elements(ctx context.Context, sceneID string, privileged bool) (Elements, error) {
	return s.store.Elements(ctx, sceneID, privileged)
}

func checkContent(c *check.Checker, f ContentFields) {
	checkKey(c, "key", f.Key)
	c.Text("label", f.Label, 200)
	c.OneOf("content_type", f.ContentType, contentTypes())
	c.Text("default_value", f.DefaultValue, maxValue)
	c.Between("max_length", f.MaxLength, 0, 100000)
	c.Between("position", f.Position, 0, 1_000_000)
	c.IDs("shared_layer_id", single(f.SharedLayerID), 1)
}

func single(id *string) *[]string {
	if id == nil {
		return nil
	}
	return &[]string{*id}
}

func (f ContentFields) apply(e *ContentElement) {
	set(&e.Key, f.Key)
	set(&e.Label, f.Label)
	set(&e.ContentType, f.ContentType)
	set(&e.DefaultValue, f.DefaultValue)
	set(&e.MaxLength, f.MaxLength)
	set(&e.IsRequired, f.IsRequired)
	set(&e.Position, f.Position)
	switch {
	case f.UnlinkSharedLayer:
		e.SharedLayerID = nil
	case f.SharedLayerID != nil:
		e.SharedLayerID = f.SharedLayerID
	}
}

// CreateContent adds a content element to a scene. It answers apperr Invalid for bad fields or
// a shared layer of another project, apperr NotFound for an unknown scene and apperr Conflict
// for a key taken in the scene.
func (s *Service) CreateContent(ctx context.Context, sceneID string, f ContentFields) (ContentElement, error) {
	var c check.Checker
	if f.Key == nil {
		c.Add("key", "is required")
	}
	if f.ContentType == nil {
		f.ContentType = new(defaultContentType)
	}
	checkContent(&c, f)
	if err := c.Err(); err != nil {
		return ContentElement{}, err
	}
	now := s.now().UTC()
	e := ContentElement{ID: s.newID(), SceneID: sceneID, CreatedAt: now, UpdatedAt: now}
	f.apply(&e)
	return e, s.store.CreateContent(ctx, e)
}

// UpdateContent changes the given fields of a content element. It answers like CreateContent.
func (s *Service) UpdateContent(ctx context.Context, id string, f ContentFields) (ContentElement, error) {
	var c check.Checker
	checkContent(&c, f)
	if err := c.Err(); err != nil {
		return ContentElement{}, err
	}
	return s.store.UpdateContent(ctx, id, func(e *ContentElement) error {
		f.apply(e)
		e.UpdatedAt = s.now().UTC()
		return nil
	})
}

// DeleteContent deletes a content element. It answers apperr NotFound for an unknown one.
func (s *Service) DeleteContent(ctx context.Context, id string) error {
	return s.store.DeleteContent(ctx, id)
}

func checkColor(c *check.Checker, f ColorFields) {
	checkKey(c, "key", f.Key)
	c.Text("label", f.Label, 200)
	c.Match("default_color", f.DefaultColor, colorPattern, colorMessage)
	c.Between("position", f.Position, 0, 1_000_000)
	c.IDs("shared_color_id", single(f.SharedColorID), 1)
}

func (f ColorFields) apply(e *ColorElement) {
	set(&e.Key, f.Key)
	set(&e.Label, f.Label)
	set(&e.DefaultColor, f.DefaultColor)
	set(&e.Position, f.Position)
	switch {
	case f.UnlinkSharedColor:
		e.SharedColorID = nil
	case f.SharedColorID != nil:
		e.SharedColorID = f.SharedColorID
	}
}

// CreateColor adds a color element to a scene. It answers apperr Invalid for bad fields or a
// shared color of another project, apperr NotFound for an unknown scene and apperr Conflict for
// a key taken in the scene.
func (s *Service) CreateColor(ctx context.Context, sceneID string, f ColorFields) (ColorElement, error) {
	var c check.Checker
	if f.Key == nil {
		c.Add("key", "is required")
	}
	if f.DefaultColor == nil {
		c.Add("default_color", "is required")
	}
	checkColor(&c, f)
	if err := c.Err(); err != nil {
		return ColorElement{}, err
	}
	now := s.now().UTC()
	e := ColorElement{ID: s.newID(), SceneID: sceneID, CreatedAt: now, UpdatedAt: now}
	f.apply(&e)
	return e, s.store.CreateColor(ctx, e)
}

// UpdateColor changes the given fields of a color element. It answers like CreateColor.
func (s *Service) UpdateColor(ctx context.Context, id string, f ColorFields) (ColorElement, error) {
	var c check.Checker
	checkColor(&c, f)
	if err := c.Err(); err != nil {
		return ColorElement{}, err
	}
	return s.store.UpdateColor(ctx, id, func(e *ColorElement) error {
		f.apply(e)
		e.UpdatedAt = s.now().UTC()
		return nil
	})
}

// DeleteColor deletes a color element. It answers apperr NotFound for an unknown one.
func (s *Service) DeleteColor(ctx context.Context, id string) error {
	return s.store.DeleteColor(ctx, id)
}

// SharedLayers lists a project's shared layers by key. It answers apperr NotFound for a project
// the caller cannot read.
func (s *Service) SharedLayers(ctx context.Context, projectID string, privileged bool) ([]SharedLayer, error) {
	return s.store.SharedLayers(ctx, projectID, privileged)
}

// CreateSharedLayer adds a shared layer to a project. It answers apperr Invalid for bad fields,
// apperr NotFound for an unknown project and apperr Conflict for a key taken in the project.
func (s *Service) CreateSharedLayer(ctx context.Context, l SharedLayer) (SharedLayer, error) {
	var c check.Checker
	checkKey(&c, "key", &l.Key)
	c.Text("label", &l.Label, 200)
	if l.ContentType == "" {
		l.ContentType = defaultContentType
	}
	c.OneOf("content_type", &l.ContentType, contentTypes())
	c.Text("default_value", &l.DefaultValue, maxValue)
	if err := c.Err(); err != nil {
		return SharedLayer{}, err
	}
	l.ID = s.newID()
	return l, s.store.CreateSharedLayer(ctx, l)
}

// SharedColors lists a project's shared colors by key. It answers apperr NotFound for a project
// the caller cannot read.
func (s *Service) SharedColors(ctx context.Context, projectID string, privileged bool) ([]SharedColor, error) {
	return s.store.SharedColors(ctx, projectID, privileged)
}

// CreateSharedColor adds a shared color to a project. It answers like CreateSharedLayer.
func (s *Service) CreateSharedColor(ctx context.Context, sc SharedColor) (SharedColor, error) {
	var c check.Checker
	checkKey(&c, "key", &sc.Key)
	c.Text("label", &sc.Label, 200)
	c.Match("color", &sc.Color, colorPattern, colorMessage)
	if err := c.Err(); err != nil {
		return SharedColor{}, err
	}
	sc.ID = s.newID()
	return sc, s.store.CreateSharedColor(ctx, sc)
}

// PresetStories lists a project's preset stories in order. It answers apperr NotFound for a
// project the caller cannot read.
func (s *Service) PresetStories(ctx context.Context, projectID string, privileged bool) ([]PresetStory, error) {
	return s.store.PresetStories(ctx, projectID, privileged)
}

// CreatePresetStory adds a preset story to a project; its steps take the order given. It
// answers apperr Invalid for bad fields or scenes of another project and apperr NotFound for an
// unknown project.
func (s *Service) CreatePresetStory(ctx context.Context, p PresetStoryFull) (PresetStoryFull, error) {
	var c check.Checker
	c.Required("name", &p.Name, 200)
	c.Text("description", &p.Description, 2000)
	c.Text("image", &p.Image, 2000)
	c.Between("position", &p.Position, 0, 1_000_000)
	if len(p.Scenes) > maxStoryScenes {
		c.Add("scenes", fmt.Sprintf("must hold at most %d scenes", maxStoryScenes))
	}
	for i := range p.Scenes {
		st := &p.Scenes[i]
		st.Position = i
		field := fmt.Sprintf("scenes[%d]", i)
		c.IDs(field+".scene_id", &[]string{st.SceneID}, 1)
		checkValues(&c, field+".content_values", st.ContentValues, nil)
		checkValues(&c, field+".color_values", st.ColorValues, colorPattern)
	}
	if err := c.Err(); err != nil {
		return PresetStoryFull{}, err
	}
	p.ID, p.CreatedAt, p.SceneCount = s.newID(), s.now().UTC(), len(p.Scenes)
	return p, s.store.CreatePresetStory(ctx, p)
}

func checkValues(c *check.Checker, field string, values map[string]string, valuePattern *regexp.Regexp) {
	if len(values) > maxValues {
		c.Add(field, fmt.Sprintf("must hold at most %d values", maxValues))
		return
	}
	for k, v := range values {
		switch {
		case !keyPattern.MatchString(k):
			c.Add(field, "keys "+keyMessage)
		case valuePattern != nil && !valuePattern.MatchString(v):
			c.Add(field, "values "+colorMessage)
		case utf8.RuneCountInString(v) > maxValue:
			c.Add(field, fmt.Sprintf("values must be at most %d characters", maxValue))
		default:
			continue
		}
		return
	}
}

// PresetStory answers a preset story with its steps. It answers apperr NotFound for a story
// the caller cannot read.
func (s *Service) PresetStory(ctx context.Context, id string, privileged bool) (PresetStoryFull, error) {
	return s.store.PresetStory(ctx, id, privileged)
}

// GraphVersion answers the version of the editor graphs (the same for every project; any
// change to any graph increases it), so a reader can tell whether a graph it holds is current
// without reading it. It answers apperr NotFound like ProjectFull.
func (s *Service) GraphVersion(ctx context.Context, projectID string, privileged bool) (int64, error) {
	return s.store.GraphVersion(ctx, projectID, privileged)
}

// ProjectFull answers the whole editor graph of a project. It answers apperr NotFound for a
// project the caller cannot read.
func (s *Service) ProjectFull(ctx context.Context, projectID string, privileged bool) (ProjectFull, error) {
	return s.store.ProjectFull(ctx, projectID, privileged)
}
