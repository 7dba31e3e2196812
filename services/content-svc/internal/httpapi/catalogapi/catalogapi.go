// Package catalogapi is content-svc's HTTP adapter for the catalog and the editor graph
// (operations tagged Templates, Containers, Projects, Scenes, Elements, Presets, Categories,
// Tags and Favorites).
package catalogapi

import (
	"context"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Catalog is what the handlers need of the catalog service.
type Catalog interface {
	Tags(ctx context.Context) ([]catalog.Tag, error)
	CreateTag(ctx context.Context, slug, name string) (catalog.Tag, error)
	Categories(ctx context.Context) ([]catalog.Category, error)
	CreateCategory(ctx context.Context, in catalog.Category) (catalog.Category, error)
	CreateContainer(ctx context.Context, f catalog.ContainerFields) (catalog.Container, error)
	UpdateContainer(ctx context.Context, id string, f catalog.ContainerFields) (catalog.Container, error)
	DeleteContainer(ctx context.Context, id string) error
	Publish(ctx context.Context, id, actor string) error
	Unpublish(ctx context.Context, id, reason, actor string) error
	Templates(ctx context.Context, f catalog.TemplateFilter) (catalog.TemplatePage, error)
	Template(ctx context.Context, slugOrID string) (catalog.TemplateDetail, error)
	TemplateProjects(ctx context.Context, containerID string) ([]catalog.Project, error)
	RelatedTemplates(ctx context.Context, containerID string, limit *int) ([]catalog.TemplateCard, error)
	CreateProject(ctx context.Context, f catalog.ProjectFields) (catalog.Project, error)
	Project(ctx context.Context, id string, privileged bool) (catalog.Project, error)
	UpdateProject(ctx context.Context, id string, f catalog.ProjectFields) (catalog.Project, error)
	DeleteProject(ctx context.Context, id string) error
}

// Handler implements ServerInterface.
type Handler struct {
	catalog   Catalog
	editor    Editor
	favorites Favorites
	aep       AEPLinks
	graphs    *graphCache
}

// AEPLinks turns a project's stored AEP file URL into a short-lived URL its reader can
// download; TTL is how long such a URL works.
type AEPLinks interface {
	Download(ctx context.Context, storedURL string) (string, error)
	TTL() time.Duration
}

// NewHandler returns a Handler.
func NewHandler(c Catalog, e Editor, f Favorites, aep AEPLinks) *Handler {
	// A cached graph is re-encoded (with a fresh AEP URL) once half the URL's life has passed.
	return &Handler{catalog: c, editor: e, favorites: f, aep: aep, graphs: newGraphCache(aep.TTL() / 2)}
}

// respondProject answers p with status, its AEP file as a presigned URL: whoever may read the
// project may download its file, for a short while.
func (h *Handler) respondProject(c echo.Context, status int, p catalog.Project) error {
	out := toProject(p)
	link, err := h.aep.Download(c.Request().Context(), out.AepFileUrl)
	if err != nil {
		return err
	}
	out.AepFileUrl = link
	return c.JSON(status, out)
}

// Policies says who may call each operation of this package: reads take a user or service
// token, changes to the catalog and the editor graph need a platform administrator, and
// favorites take a user or service token, each caller owning its own favorites.
func Policies(v *authn.Verifier) httpx.Policies {
	read, admin := httpx.Allow(v.UserOrService()), httpx.Allow(v.RequireAdmin())
	return httpx.Policies{
		"listTags":             read,
		"createTag":            admin,
		"listCategories":       read,
		"createCategory":       admin,
		"listTemplates":        read,
		"getTemplate":          read,
		"listTemplateProjects": read,
		"listRelatedTemplates": read,
		"createContainer":      admin,
		"updateContainer":      admin,
		"deleteContainer":      admin,
		"publishContainer":     admin,
		"unpublishContainer":   admin,
		"createProject":        admin,
		"getProject":           read,
		"updateProject":        admin,
		"deleteProject":        admin,
		"getProjectFull":       read,
		"listScenes":           read,
		"createScene":          admin,
		"getScene":             read,
		"updateScene":          admin,
		"deleteScene":          admin,
		"reorderScenes":        admin,
		"listSceneElements":    read,
		"createSceneContent":   admin,
		"updateSceneContent":   admin,
		"deleteSceneContent":   admin,
		"createSceneColor":     admin,
		"updateSceneColor":     admin,
		"deleteSceneColor":     admin,
		"listSharedLayers":     read,
		"createSharedLayer":    admin,
		"listSharedColors":     read,
		"createSharedColor":    admin,
		"listPresetStories":    read,
		"createPresetStory":    admin,
		"getPresetStory":       read,
		"listFavoriteFolders":  read,
		"createFavoriteFolder": read,
		"listFavorites":        read,
		"addFavorite":          read,
		"removeFavorite":       read,
	}
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// privileged reports whether the caller may read unpublished records: administrators and
// services.
func privileged(c echo.Context) bool {
	cl := authn.FromContext(c)
	return cl != nil && (cl.Admin || cl.IsService())
}

// owner names the owner of the caller's favorites: the user, or for a service token the
// service client, kept apart from user ids by a prefix.
func owner(c echo.Context) string {
	if cl := authn.FromContext(c); cl != nil && cl.IsService() {
		return "service:" + cl.Subject
	}
	return actor(c)
}

// actor names the caller for audit records.
func actor(c echo.Context) string {
	if cl := authn.FromContext(c); cl != nil {
		return cl.Subject
	}
	return ""
}
