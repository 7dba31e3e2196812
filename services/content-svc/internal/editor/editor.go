// Package editor holds a project's editor graph and its rules: scenes in order, their content,
// color, character and repeater elements, the project's shared layers and colors, character
// controllers and presets, and preset stories.
package editor

import (
	"context"
	"time"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Scene is one composition of a project, shown in order.
type Scene struct {
	ID             string
	ProjectID      string
	Key            string
	Title          string
	LocalizedTitle map[string]string
	SceneType      string
	Position       int
	DurationSec    float64
	Image          string
	IsHidden       bool
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// SceneFields are the fields an administrator sets on a scene; nil means "not given".
type SceneFields struct {
	Key            *string
	Title          *string
	LocalizedTitle *map[string]string
	SceneType      *string
	DurationSec    *float64
	Image          *string
	IsHidden       *bool
}

// Elements are what a user fills in or recolors in a scene.
type Elements struct {
	Contents   []ContentElement
	Colors     []ColorElement
	Characters []Character
	Repeaters  []RepeaterItem
}

// SceneFull is a scene with its elements.
type SceneFull struct {
	Scene
	Elements
}

// ContentElement is a replaceable text or media layer of a scene.
type ContentElement struct {
	ID            string
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

// ContentFields are the fields an administrator sets on a content element; nil means "not
// given" (a nil SharedLayerID keeps the current link unless UnlinkSharedLayer is set).
type ContentFields struct {
	Key           *string
	Label         *string
	ContentType   *string
	DefaultValue  *string
	MaxLength     *int
	IsRequired    *bool
	Position      *int
	SharedLayerID *string
	// UnlinkSharedLayer removes the link to a shared layer (the client sent null).
	UnlinkSharedLayer bool
}

// ColorElement is a recolorable zone of a scene.
type ColorElement struct {
	ID            string
	SceneID       string
	Key           string
	Label         string
	DefaultColor  string
	Position      int
	SharedColorID *string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// ColorFields are the fields an administrator sets on a color element; nil means "not given"
// (a nil SharedColorID keeps the current link unless UnlinkSharedColor is set).
type ColorFields struct {
	Key           *string
	Label         *string
	DefaultColor  *string
	Position      *int
	SharedColorID *string
	// UnlinkSharedColor removes the link to a shared color (the client sent null).
	UnlinkSharedColor bool
}

// Character is a character slot of a scene, driven by a project's character controller.
type Character struct {
	ID                    string
	SceneID               string
	Key                   string
	Name                  string
	CharacterControllerID *string
	Position              int
}

// RepeaterItem is a group of layers a user may repeat between MinCount and MaxCount times.
type RepeaterItem struct {
	ID       string
	SceneID  string
	Key      string
	Label    string
	MinCount int
	MaxCount int
	Position int
}

// SharedLayer is a content value shared by several scenes of a project.
type SharedLayer struct {
	ID           string
	ProjectID    string
	Key          string
	Label        string
	ContentType  string
	DefaultValue string
}

// SharedColor is a color shared by several scenes of a project.
type SharedColor struct {
	ID        string
	ProjectID string
	Key       string
	Label     string
	Color     string
}

// CharacterController drives the characters of a project.
type CharacterController struct {
	ID        string
	ProjectID string
	Key       string
	Name      string
	Options   map[string]any
	Position  int
}

// CharacterPreset is a ready-made set of values for a character controller.
type CharacterPreset struct {
	ID                    string
	ProjectID             string
	CharacterControllerID string
	Name                  string
	Image                 string
	Values                map[string]any
	Position              int
}

// PresetStory is a ready-made sequence of a project's scenes with filled-in values.
type PresetStory struct {
	ID          string
	ProjectID   string
	Name        string
	Description string
	Image       string
	Position    int
	SceneCount  int
	CreatedAt   time.Time
}

// PresetStoryScene is one step of a preset story.
type PresetStoryScene struct {
	SceneID       string
	Position      int
	ContentValues map[string]string
	ColorValues   map[string]string
}

// PresetStoryFull is a preset story with its steps in order.
type PresetStoryFull struct {
	PresetStory
	Scenes []PresetStoryScene
}

// ProjectFull is the whole editor graph of a project.
type ProjectFull struct {
	Project              catalog.Project
	Scenes               []SceneFull
	SharedColors         []SharedColor
	SharedLayers         []SharedLayer
	CharacterControllers []CharacterController
	CharacterPresets     []CharacterPreset
	PresetStories        []PresetStory
	// Version is the editor graphs' version the graph was read at; any change to any graph
	// increases it.
	Version int64
}

// Store persists the editor graph. Reads take privileged=true for administrators and services,
// who also see unpublished projects; every lookup answers apperr NotFound for a record that is
// missing, under a deleted template or, unless privileged, unpublished. Writes answer apperr
// Conflict for a key taken in its scene or project and apperr Invalid for references to records
// of another project.
type Store interface {
	Scenes(ctx context.Context, projectID string, privileged bool) ([]Scene, error)
	CreateScene(ctx context.Context, s Scene) (Scene, error)
	Scene(ctx context.Context, id string, privileged bool) (SceneFull, error)
	UpdateScene(ctx context.Context, id string, update func(*Scene) error) (Scene, error)
	DeleteScene(ctx context.Context, id string) error
	ReorderScenes(ctx context.Context, sceneID string, orderedIDs []string) error

	Elements(ctx context.Context, sceneID string, privileged bool) (Elements, error)
	CreateContent(ctx context.Context, e ContentElement) error
	UpdateContent(ctx context.Context, id string, update func(*ContentElement) error) (ContentElement, error)
	DeleteContent(ctx context.Context, id string) error
	CreateColor(ctx context.Context, e ColorElement) error
	UpdateColor(ctx context.Context, id string, update func(*ColorElement) error) (ColorElement, error)
	DeleteColor(ctx context.Context, id string) error

	SharedLayers(ctx context.Context, projectID string, privileged bool) ([]SharedLayer, error)
	CreateSharedLayer(ctx context.Context, l SharedLayer) error
	SharedColors(ctx context.Context, projectID string, privileged bool) ([]SharedColor, error)
	CreateSharedColor(ctx context.Context, c SharedColor) error

	PresetStories(ctx context.Context, projectID string, privileged bool) ([]PresetStory, error)
	CreatePresetStory(ctx context.Context, p PresetStoryFull) error
	PresetStory(ctx context.Context, id string, privileged bool) (PresetStoryFull, error)

	ProjectFull(ctx context.Context, projectID string, privileged bool) (ProjectFull, error)
	GraphVersion(ctx context.Context, projectID string, privileged bool) (int64, error)
}

// Service implements the editor graph's rules over a Store.
type Service struct {
	store Store
	now   func() time.Time
	newID func() string
}

// NewService returns a Service; now tells the time and newID makes record ids (UUID v7 in
// production).
func NewService(store Store, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, now: now, newID: newID}
}
