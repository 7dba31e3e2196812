package catalogapi

import (
	"github.com/google/uuid"
	"github.com/oapi-codegen/nullable"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

func mapAll[D, W any](items []D, f func(D) W) []W {
	out := make([]W, len(items))
	for i, it := range items {
		out[i] = f(it)
	}
	return out
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func idStrings(ids *[]openapi_types.UUID) *[]string {
	if ids == nil {
		return nil
	}
	out := mapAll(*ids, func(id openapi_types.UUID) string { return id.String() })
	return &out
}

// requiredID turns a required uuid into a string; a missing one decodes to the nil uuid and
// becomes "", which the domain refuses as missing.
func requiredID(id openapi_types.UUID) string {
	if id == uuid.Nil {
		return ""
	}
	return id.String()
}

func idString(id *openapi_types.UUID) *string {
	if id == nil {
		return nil
	}
	s := id.String()
	return &s
}

// uid turns a stored id into its wire form; stored ids are always uuids.
func uid(s string) openapi_types.UUID { return uuid.MustParse(s) }

// nullableID is an optional stored id on the wire: the id, or null.
func nullableID(s *string) nullable.Nullable[openapi_types.UUID] {
	if s == nil {
		return nullable.NewNullNullable[openapi_types.UUID]()
	}
	return nullable.NewNullableWithValue(uid(*s))
}

// nullableOf is an optional value on the wire: the value, or null.
func nullableOf[T any](p *T) nullable.Nullable[T] {
	if p == nil {
		return nullable.NewNullNullable[T]()
	}
	return nullable.NewNullableWithValue(*p)
}

// patchID reads a PATCH body's nullable id: absent keeps (nil, false), null unlinks
// (nil, true), a value sets it.
func patchID(n nullable.Nullable[openapi_types.UUID]) (id *string, unlink bool) {
	if n.IsNull() {
		return nil, true
	}
	v, err := n.Get()
	if err != nil {
		return nil, false
	}
	s := v.String()
	return &s, false
}

// createdID reads a create body's nullable id: a value, or none for absent and null alike.
func createdID(n nullable.Nullable[openapi_types.UUID]) *string {
	id, _ := patchID(n)
	return id
}

func toTag(t catalog.Tag) Tag { return Tag{Id: uid(t.ID), Slug: t.Slug, Name: t.Name} }

func toCategory(c catalog.Category) Category {
	return Category{Id: uid(c.ID), Slug: c.Slug, Name: c.Name, Description: c.Description, Image: c.Image, Position: c.Position}
}

func toContainer(c catalog.Container) Container {
	return Container{
		Id: uid(c.ID), Slug: c.Slug, Name: c.Name, Description: c.Description, Keywords: c.Keywords, NewsText: c.NewsText,
		Image: c.Image, Demo: c.Demo, FullDemo: c.FullDemo, MiniDemo: c.MiniDemo, IsPublished: c.IsPublished,
		IsPremium: c.IsPremium, IsMockup: c.IsMockup, PrimaryMode: c.PrimaryMode, RateAvg: c.RateAvg,
		RateCount: c.RateCount, UseCount: c.UseCount, CategoryIds: mapAll(c.CategoryIDs, uid), TagIds: mapAll(c.TagIDs, uid),
		PublishedAt: nullableOf(c.PublishedAt), UnpublishReason: nullableOf(c.UnpublishReason), CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
	}
}

func toTemplateCard(t catalog.TemplateCard) TemplateCard {
	return TemplateCard{
		ContainerId: uid(t.ContainerID), Slug: t.Slug, Name: t.Name, Image: t.Image, Demo: t.Demo, MiniDemo: t.MiniDemo,
		IsPremium: t.IsPremium, IsMockup: t.IsMockup, PrimaryMode: t.PrimaryMode, RateAvg: t.RateAvg,
		RateCount: t.RateCount, UseCount: t.UseCount, AvailableAspects: t.AvailableAspects,
	}
}

func toProjectSummary(p catalog.Project) ProjectSummary {
	return ProjectSummary{
		Id: uid(p.ID), Name: p.Name, Aspect: p.Aspect, OriginalWidth: p.OriginalWidth, OriginalHeight: p.OriginalHeight,
		Resolution: p.Resolution, ProjectDurationSec: p.ProjectDurationSec, ChooseMode: p.ChooseMode, Image: p.Image,
	}
}

func toProject(p catalog.Project) Project {
	return Project{
		Id: uid(p.ID), ContainerId: uid(p.ContainerID), ProjectServerId: nullableID(p.ProjectServerID), Name: p.Name,
		Description: p.Description, Aspect: p.Aspect, OriginalWidth: p.OriginalWidth, OriginalHeight: p.OriginalHeight,
		Resolution: p.Resolution, ProjectDurationSec: p.ProjectDurationSec, MinDurationSec: p.MinDurationSec,
		MaxDurationSec: p.MaxDurationSec, ChooseMode: p.ChooseMode, Image: p.Image, FullDemo: p.FullDemo,
		DownloadLink: p.DownloadLink, AepFileUrl: p.AEPFileURL, AepFileMd5: p.AEPFileMD5,
		AepFileSizeBytes: p.AEPFileSizeBytes, FreeFps: p.FreeFPS, VipFactor: p.VIPFactor, RenderAepComp: p.RenderAEPComp,
		IsPublished: p.IsPublished, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
	}
}
