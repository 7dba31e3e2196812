package catalogapi

import (
	"github.com/motionstudio/platform/services/content-svc/internal/editor"
)

func toScene(s editor.Scene) Scene {
	return Scene{Id: uid(s.ID), ProjectId: uid(s.ProjectID), Key: s.Key, Title: s.Title, LocalizedTitle: s.LocalizedTitle,
		SceneType: s.SceneType, Position: s.Position, DurationSec: s.DurationSec, Image: s.Image, IsHidden: s.IsHidden,
		CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
}

func toSceneFull(s editor.SceneFull) SceneFull {
	b, els := toScene(s.Scene), toSceneElements(s.Elements)
	return SceneFull{Id: b.Id, ProjectId: b.ProjectId, Key: b.Key, Title: b.Title, LocalizedTitle: b.LocalizedTitle,
		SceneType: b.SceneType, Position: b.Position, DurationSec: b.DurationSec, Image: b.Image, IsHidden: b.IsHidden,
		CreatedAt: b.CreatedAt, UpdatedAt: b.UpdatedAt,
		Contents: els.Contents, Colors: els.Colors, Characters: els.Characters, Repeaters: els.Repeaters}
}

func toSceneElements(e editor.Elements) SceneElements {
	return SceneElements{Contents: mapAll(e.Contents, toContent), Colors: mapAll(e.Colors, toColor),
		Characters: mapAll(e.Characters, toCharacter), Repeaters: mapAll(e.Repeaters, toRepeater)}
}

func toContent(e editor.ContentElement) SceneContentElement {
	return SceneContentElement{Id: uid(e.ID), SceneId: uid(e.SceneID), Key: e.Key, Label: e.Label,
		ContentType: SceneContentElementContentType(e.ContentType), DefaultValue: e.DefaultValue, MaxLength: e.MaxLength,
		IsRequired: e.IsRequired, Position: e.Position, SharedLayerId: nullableID(e.SharedLayerID),
		CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func toColor(e editor.ColorElement) SceneColorElement {
	return SceneColorElement{Id: uid(e.ID), SceneId: uid(e.SceneID), Key: e.Key, Label: e.Label, DefaultColor: e.DefaultColor,
		Position: e.Position, SharedColorId: nullableID(e.SharedColorID), CreatedAt: e.CreatedAt, UpdatedAt: e.UpdatedAt}
}

func toCharacter(e editor.Character) SceneCharacter {
	return SceneCharacter{Id: uid(e.ID), SceneId: uid(e.SceneID), Key: e.Key, Name: e.Name,
		CharacterControllerId: nullableID(e.CharacterControllerID), Position: e.Position}
}

func toRepeater(e editor.RepeaterItem) RepeaterItem {
	return RepeaterItem{Id: uid(e.ID), SceneId: uid(e.SceneID), Key: e.Key, Label: e.Label, MinCount: e.MinCount,
		MaxCount: e.MaxCount, Position: e.Position}
}

func toSharedLayer(l editor.SharedLayer) SharedLayer {
	return SharedLayer{Id: uid(l.ID), ProjectId: uid(l.ProjectID), Key: l.Key, Label: l.Label, ContentType: l.ContentType,
		DefaultValue: l.DefaultValue}
}

func toSharedColor(c editor.SharedColor) SharedColor {
	return SharedColor{Id: uid(c.ID), ProjectId: uid(c.ProjectID), Key: c.Key, Label: c.Label, Color: c.Color}
}

func toController(c editor.CharacterController) CharacterController {
	return CharacterController{Id: uid(c.ID), ProjectId: uid(c.ProjectID), Key: c.Key, Name: c.Name, Options: c.Options,
		Position: c.Position}
}

func toPreset(p editor.CharacterPreset) CharacterPreset {
	return CharacterPreset{Id: uid(p.ID), ProjectId: uid(p.ProjectID), CharacterControllerId: uid(p.CharacterControllerID),
		Name: p.Name, Image: p.Image, Values: p.Values, Position: p.Position}
}

func toPresetStory(p editor.PresetStory) PresetStory {
	return PresetStory{Id: uid(p.ID), ProjectId: uid(p.ProjectID), Name: p.Name, Description: p.Description, Image: p.Image,
		Position: p.Position, SceneCount: p.SceneCount, CreatedAt: p.CreatedAt}
}

func toPresetStoryScene(s editor.PresetStoryScene) PresetStoryScene {
	return PresetStoryScene{SceneId: uid(s.SceneID), Position: s.Position, ContentValues: s.ContentValues,
		ColorValues: s.ColorValues}
}
