package catalogapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/content-svc/internal/editor"
)

// Editor is what the handlers need of the editor-graph service.
type Editor interface {
	Scenes(ctx context.Context, projectID string, privileged bool) ([]editor.Scene, error)
	CreateScene(ctx context.Context, projectID string, f editor.SceneFields) (editor.Scene, error)
	Scene(ctx context.Context, id string, privileged bool) (editor.SceneFull, error)
	UpdateScene(ctx context.Context, id string, f editor.SceneFields) (editor.Scene, error)
	DeleteScene(ctx context.Context, id string) error
	ReorderScenes(ctx context.Context, sceneID string, orderedIDs []string) error
	Elements(ctx context.Context, sceneID string, privileged bool) (editor.Elements, error)
	CreateContent(ctx context.Context, sceneID string, f editor.ContentFields) (editor.ContentElement, error)
	UpdateContent(ctx context.Context, id string, f editor.ContentFields) (editor.ContentElement, error)
	DeleteContent(ctx context.Context, id string) error
	CreateColor(ctx context.Context, sceneID string, f editor.ColorFields) (editor.ColorElement, error)
	UpdateColor(ctx context.Context, id string, f editor.ColorFields) (editor.ColorElement, error)
	DeleteColor(ctx context.Context, id string) error
	SharedLayers(ctx context.Context, projectID string, privileged bool) ([]editor.SharedLayer, error)
	CreateSharedLayer(ctx context.Context, l editor.SharedLayer) (editor.SharedLayer, error)
	SharedColors(ctx context.Context, projectID string, privileged bool) ([]editor.SharedColor, error)
	CreateSharedColor(ctx context.Context, c editor.SharedColor) (editor.SharedColor, error)
	PresetStories(ctx context.Context, projectID string, privileged bool) ([]editor.PresetStory, error)
	CreatePresetStory(ctx context.Context, p editor.PresetStoryFull) (editor.PresetStoryFull, error)
	PresetStory(ctx context.Context, id string, privileged bool) (editor.PresetStoryFull, error)
	ProjectFull(ctx context.Context, projectID string, privileged bool) (editor.ProjectFull, error)
	GraphVersion(ctx context.Context, projectID string, privileged bool) (int64, error)
}

// GetProjectFull answers a project's whole editor graph with an ETag of the editor version:
// 304 when the client holds that version, else the graph, encoded once per version.
func (h *Handler) GetProjectFull(c echo.Context, id openapi_types.UUID, params GetProjectFullParams) error {
	ctx, project := c.Request().Context(), id.String()
	version, err := h.editor.GraphVersion(ctx, project, privileged(c))
	if err != nil {
		return err
	}
	if params.IfNoneMatch != nil && matches(*params.IfNoneMatch, graphETag(version)) {
		c.Response().Header().Set("ETag", graphETag(version))
		return c.NoContent(http.StatusNotModified)
	}
	body, ok := h.graphs.get(project, version)
	if !ok {
		full, err := h.editor.ProjectFull(ctx, project, privileged(c))
		if err != nil {
			return err
		}
		out := toProjectFull(full)
		if out.Project.AepFileUrl, err = h.aep.Download(ctx, out.Project.AepFileUrl); err != nil {
			return err
		}
		if body, err = json.Marshal(out); err != nil {
			return fmt.Errorf("catalogapi: encode project graph: %w", err)
		}
		version = full.Version
		h.graphs.put(project, version, body)
	}
	c.Response().Header().Set("ETag", graphETag(version))
	return c.JSONBlob(http.StatusOK, body)
}

func toProjectFull(full editor.ProjectFull) ProjectFull {
	return ProjectFull{Project: toProject(full.Project), Scenes: mapAll(full.Scenes, toSceneFull),
		SharedColors: mapAll(full.SharedColors, toSharedColor), SharedLayers: mapAll(full.SharedLayers, toSharedLayer),
		CharacterControllers: mapAll(full.CharacterControllers, toController),
		CharacterPresets:     mapAll(full.CharacterPresets, toPreset), PresetStories: mapAll(full.PresetStories, toPresetStory)}
}

// ListScenes answers a project's scenes.
func (h *Handler) ListScenes(c echo.Context, id openapi_types.UUID) error {
	scenes, err := h.editor.Scenes(c.Request().Context(), id.String(), privileged(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, SceneList{Data: mapAll(scenes, toScene)})
}

// CreateScene adds a scene to a project.
func (h *Handler) CreateScene(c echo.Context, id openapi_types.UUID) error {
	var b SceneCreate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	f := editor.SceneFields{Key: b.Key, Title: b.Title, LocalizedTitle: b.LocalizedTitle, SceneType: b.SceneType,
		DurationSec: b.DurationSec, Image: b.Image, IsHidden: b.IsHidden}
	sc, err := h.editor.CreateScene(c.Request().Context(), id.String(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toScene(sc))
}

// GetScene answers a scene with its elements.
func (h *Handler) GetScene(c echo.Context, id openapi_types.UUID) error {
	sc, err := h.editor.Scene(c.Request().Context(), id.String(), privileged(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSceneFull(sc))
}

// UpdateScene changes a scene.
func (h *Handler) UpdateScene(c echo.Context, id openapi_types.UUID) error {
	var b SceneUpdate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	f := editor.SceneFields{Key: b.Key, Title: b.Title, LocalizedTitle: b.LocalizedTitle, SceneType: b.SceneType,
		DurationSec: b.DurationSec, Image: b.Image, IsHidden: b.IsHidden}
	sc, err := h.editor.UpdateScene(c.Request().Context(), id.String(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toScene(sc))
}

// DeleteScene deletes a scene.
func (h *Handler) DeleteScene(c echo.Context, id openapi_types.UUID) error {
	if err := h.editor.DeleteScene(c.Request().Context(), id.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ReorderScenes reorders the scenes of a scene's project.
func (h *Handler) ReorderScenes(c echo.Context, id openapi_types.UUID) error {
	var b SceneReorder
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	ids := mapAll(b.OrderedIds, func(u openapi_types.UUID) string { return u.String() })
	if err := h.editor.ReorderScenes(c.Request().Context(), id.String(), ids); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ListSceneElements answers a scene's elements.
func (h *Handler) ListSceneElements(c echo.Context, id openapi_types.UUID) error {
	els, err := h.editor.Elements(c.Request().Context(), id.String(), privileged(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSceneElements(els))
}

// CreateSceneContent adds a content element to a scene.
func (h *Handler) CreateSceneContent(c echo.Context, id openapi_types.UUID) error {
	var b SceneContentCreate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	f := editor.ContentFields{Key: &b.Key, Label: b.Label, ContentType: (*string)(b.ContentType), DefaultValue: b.DefaultValue,
		MaxLength: b.MaxLength, IsRequired: b.IsRequired, Position: b.Position, SharedLayerID: createdID(b.SharedLayerId)}
	e, err := h.editor.CreateContent(c.Request().Context(), id.String(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toContent(e))
}

// UpdateSceneContent changes a content element.
func (h *Handler) UpdateSceneContent(c echo.Context, id openapi_types.UUID) error {
	var b SceneContentUpdate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	layer, unlink := patchID(b.SharedLayerId)
	f := editor.ContentFields{Key: b.Key, Label: b.Label, ContentType: (*string)(b.ContentType), DefaultValue: b.DefaultValue,
		MaxLength: b.MaxLength, IsRequired: b.IsRequired, Position: b.Position, SharedLayerID: layer,
		UnlinkSharedLayer: unlink}
	e, err := h.editor.UpdateContent(c.Request().Context(), id.String(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toContent(e))
}

// DeleteSceneContent deletes a content element.
func (h *Handler) DeleteSceneContent(c echo.Context, id openapi_types.UUID) error {
	if err := h.editor.DeleteContent(c.Request().Context(), id.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// CreateSceneColor adds a color element to a scene.
func (h *Handler) CreateSceneColor(c echo.Context, id openapi_types.UUID) error {
	var b SceneColorCreate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	f := editor.ColorFields{Key: &b.Key, Label: b.Label, DefaultColor: &b.DefaultColor, Position: b.Position,
		SharedColorID: createdID(b.SharedColorId)}
	e, err := h.editor.CreateColor(c.Request().Context(), id.String(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toColor(e))
}

// UpdateSceneColor changes a color element.
func (h *Handler) UpdateSceneColor(c echo.Context, id openapi_types.UUID) error {
	var b SceneColorUpdate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	color, unlink := patchID(b.SharedColorId)
	f := editor.ColorFields{Key: b.Key, Label: b.Label, DefaultColor: b.DefaultColor, Position: b.Position,
		SharedColorID: color, UnlinkSharedColor: unlink}
	e, err := h.editor.UpdateColor(c.Request().Context(), id.String(), f)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toColor(e))
}

// DeleteSceneColor deletes a color element.
func (h *Handler) DeleteSceneColor(c echo.Context, id openapi_types.UUID) error {
	if err := h.editor.DeleteColor(c.Request().Context(), id.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

// ListSharedLayers answers a project's shared layers.
func (h *Handler) ListSharedLayers(c echo.Context, id openapi_types.UUID) error {
	ls, err := h.editor.SharedLayers(c.Request().Context(), id.String(), privileged(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, SharedLayerList{Data: mapAll(ls, toSharedLayer)})
}

// CreateSharedLayer adds a shared layer to a project.
func (h *Handler) CreateSharedLayer(c echo.Context, id openapi_types.UUID) error {
	var b SharedLayerCreate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	l, err := h.editor.CreateSharedLayer(c.Request().Context(), editor.SharedLayer{ProjectID: id.String(), Key: b.Key,
		Label: deref(b.Label), ContentType: string(deref(b.ContentType)), DefaultValue: deref(b.DefaultValue)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toSharedLayer(l))
}

// ListSharedColors answers a project's shared colors.
func (h *Handler) ListSharedColors(c echo.Context, id openapi_types.UUID) error {
	cs, err := h.editor.SharedColors(c.Request().Context(), id.String(), privileged(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, SharedColorList{Data: mapAll(cs, toSharedColor)})
}

// CreateSharedColor adds a shared color to a project.
func (h *Handler) CreateSharedColor(c echo.Context, id openapi_types.UUID) error {
	var b SharedColorCreate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	sc, err := h.editor.CreateSharedColor(c.Request().Context(), editor.SharedColor{ProjectID: id.String(), Key: b.Key,
		Label: deref(b.Label), Color: b.Color})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toSharedColor(sc))
}

// ListPresetStories answers a project's preset stories.
func (h *Handler) ListPresetStories(c echo.Context, id openapi_types.UUID) error {
	ps, err := h.editor.PresetStories(c.Request().Context(), id.String(), privileged(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, PresetStoryList{Data: mapAll(ps, toPresetStory)})
}

// CreatePresetStory adds a preset story to a project.
func (h *Handler) CreatePresetStory(c echo.Context, id openapi_types.UUID) error {
	var b PresetStoryCreate
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	p := editor.PresetStoryFull{PresetStory: editor.PresetStory{ProjectID: id.String(), Name: b.Name,
		Description: deref(b.Description), Image: deref(b.Image), Position: deref(b.Position)}}
	for _, st := range deref(b.Scenes) {
		p.Scenes = append(p.Scenes, editor.PresetStoryScene{SceneID: st.SceneId.String(),
			ContentValues: deref(st.ContentValues), ColorValues: deref(st.ColorValues)})
	}
	out, err := h.editor.CreatePresetStory(c.Request().Context(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toPresetStory(out.PresetStory))
}

// GetPresetStory answers a preset story with its steps.
func (h *Handler) GetPresetStory(c echo.Context, id openapi_types.UUID) error {
	p, err := h.editor.PresetStory(c.Request().Context(), id.String(), privileged(c))
	if err != nil {
		return err
	}
	s := toPresetStory(p.PresetStory)
	return c.JSON(http.StatusOK, PresetStoryFull{Id: s.Id, ProjectId: s.ProjectId, Name: s.Name, Description: s.Description,
		Image: s.Image, Position: s.Position, SceneCount: s.SceneCount, CreatedAt: s.CreatedAt,
		Scenes: mapAll(p.Scenes, toPresetStoryScene)})
}
