package store

import (
	"encoding/json"
	"time"

	"github.com/motionstudio/platform/services/content-svc/internal/editor"
)

type sceneModel struct {
	ID             string `gorm:"primaryKey"`
	ProjectID      string
	Key            string
	Title          string
	LocalizedTitle json.RawMessage `gorm:"type:jsonb"`
	SceneType      string
	Position       int
	DurationSec    float64
	Image          string
	IsHidden       bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

func (sceneModel) TableName() string { return "scenes" }

func toSceneModel(s editor.Scene) sceneModel {
	return sceneModel{ID: s.ID, ProjectID: s.ProjectID, Key: s.Key, Title: s.Title, LocalizedTitle: jsonOf(s.LocalizedTitle),
		SceneType: s.SceneType, Position: s.Position, DurationSec: s.DurationSec, Image: s.Image, IsHidden: s.IsHidden,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

func (m sceneModel) toDomain() editor.Scene {
	titles := map[string]string{}
	_ = json.Unmarshal(m.LocalizedTitle, &titles)
	return editor.Scene{ID: m.ID, ProjectID: m.ProjectID, Key: m.Key, Title: m.Title, LocalizedTitle: titles,
		SceneType: m.SceneType, Position: m.Position, DurationSec: m.DurationSec, Image: m.Image, IsHidden: m.IsHidden,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt}
}

// jsonOf encodes a value the editor built itself (maps of strings or decoded JSON), which
// cannot fail to encode; nil maps become {}.
func jsonOf[T any](v map[string]T) json.RawMessage {
	if v == nil {
		return json.RawMessage(`{}`)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return b
}

func mapOf[T any](raw json.RawMessage) map[string]T {
	out := map[string]T{}
	_ = json.Unmarshal(raw, &out)
	return out
}

type contentModel struct {
	ID            string `gorm:"primaryKey"`
	SceneID       string
	Key           string
	Label         string
	ContentType   string
	DefaultValue  string
	MaxLength     int
	IsRequired    bool
	Position      int
	SharedLayerID *string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

func (contentModel) TableName() string { return "scene_contents" }

func toContentModel(e editor.ContentElement) contentModel {
	return contentModel(e)
}

func (m contentModel) toDomain() editor.ContentElement { return editor.ContentElement(m) }

type colorModel struct {
	ID            string `gorm:"primaryKey"`
	SceneID       string
	Key           string
	Label         string
	DefaultColor  string
	Position      int
	SharedColorID *string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

func (colorModel) TableName() string { return "scene_colors" }

func (m colorModel) toDomain() editor.ColorElement { return editor.ColorElement(m) }

type characterModel struct {
	ID                    string
	SceneID               string
	Key                   string
	Name                  string
	CharacterControllerID *string
	Position              int
}

func (m characterModel) toDomain() editor.Character { return editor.Character(m) }

type repeaterModel struct {
	ID       string
	SceneID  string
	Key      string
	Label    string
	MinCount int
	MaxCount int
	Position int
}

func (m repeaterModel) toDomain() editor.RepeaterItem { return editor.RepeaterItem(m) }

type sharedLayerModel struct {
	ID           string `gorm:"primaryKey"`
	ProjectID    string
	Key          string
	Label        string
	ContentType  string
	DefaultValue string
}

func (sharedLayerModel) TableName() string { return "shared_layers" }

func (m sharedLayerModel) toDomain() editor.SharedLayer { return editor.SharedLayer(m) }

type sharedColorModel struct {
	ID        string `gorm:"primaryKey"`
	ProjectID string
	Key       string
	Label     string
	Color     string
}

func (sharedColorModel) TableName() string { return "shared_colors" }

func (m sharedColorModel) toDomain() editor.SharedColor { return editor.SharedColor(m) }

type controllerModel struct {
	ID        string
	ProjectID string
	Key       string
	Name      string
	Options   json.RawMessage
	Position  int
}

func (m controllerModel) toDomain() editor.CharacterController {
	return editor.CharacterController{ID: m.ID, ProjectID: m.ProjectID, Key: m.Key, Name: m.Name,
		Options: mapOf[any](m.Options), Position: m.Position}
}

type presetModel struct {
	ID                    string
	ProjectID             string
	CharacterControllerID string
	Name                  string
	Image                 string
	Values                json.RawMessage
	Position              int
}

func (m presetModel) toDomain() editor.CharacterPreset {
	return editor.CharacterPreset{ID: m.ID, ProjectID: m.ProjectID, CharacterControllerID: m.CharacterControllerID,
		Name: m.Name, Image: m.Image, Values: mapOf[any](m.Values), Position: m.Position}
}

type storyModel struct {
	ID          string
	ProjectID   string
	Name        string
	Description string
	Image       string
	Position    int
	SceneCount  int
	CreatedAt   time.Time
}

func (m storyModel) toDomain() editor.PresetStory { return editor.PresetStory(m) }

type storySceneModel struct {
	SceneID       string
	Position      int
	ContentValues json.RawMessage
	ColorValues   json.RawMessage
}

func (m storySceneModel) toDomain() editor.PresetStoryScene {
	return editor.PresetStoryScene{SceneID: m.SceneID, Position: m.Position,
		ContentValues: mapOf[string](m.ContentValues), ColorValues: mapOf[string](m.ColorValues)}
}
