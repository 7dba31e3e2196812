// Package skillapi is agentteam-svc's HTTP adapter for the skill library, agent profiles and
// product profiles (tag Skills): one library implementation behind three sets of routes, the
// admin-key index and sync, and the anonymous push hook.
package skillapi

import (
	"context"
	"io"
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// Service is what the handlers need of the library service.
type Service interface {
	Library(kind library.Kind) *library.Library
	Sync(ctx context.Context, adminKey string) (library.SyncResult, error)
	VerifyHook(host string, header func(string) string, body []byte) error
}

// Trigger schedules a debounced re-sync of the shared source.
type Trigger interface{ Trigger() }

// Handler implements ServerInterface.
type Handler struct {
	svc  Service
	sync Trigger
}

// NewHandler returns a Handler.
func NewHandler(svc Service, sync Trigger) *Handler {
	return &Handler{svc: svc, sync: sync}
}

// Policies says who may call each operation of this package: members only (the domain checks
// capabilities and the admin key), except the push hook, which is anonymous.
func Policies(v *authn.Verifier) httpx.Policies {
	user := httpx.Allow(v.RequireUser())
	p := httpx.Policies{"skillsWebhook": httpx.Public()}
	for _, op := range []string{
		"listSkills", "getSkillVersions", "authorSkill", "forkSkill", "publishSkill", "unpublishSkill", "skillMarketplace",
		"installSkill", "indexSkill", "syncSkills",
		"uploadAgentProfile", "listAgentProfiles", "getAgentProfileVersions", "publishAgentProfile", "unpublishAgentProfile",
		"forkAgentProfile", "agentProfileMarketplace", "installAgentProfile",
		"uploadProductProfile", "listProductProfiles", "getProductProfileVersions", "publishProductProfile",
		"unpublishProductProfile", "forkProductProfile", "productProfileMarketplace", "installProductProfile", "applyProductProfile",
	} {
		p[op] = user
	}
	return p
}

// Mount mounts this package's operations on e with the service's merged policies.
func (h *Handler) Mount(e *echo.Echo, policies httpx.Policies) {
	RegisterHandlersWithOptions(e, h, RegisterHandlersOptions{OperationMiddlewares: policies})
}

// ListSkills answers the shared skills plus the organization's own.
func (h *Handler) ListSkills(c echo.Context, params ListSkillsParams) error {
	return h.list(c, library.Skill, listQuery{params.OrganizationId, params.Role, params.Visibility, params.Page, params.PageSize}, mapAll(toSkillSummary))
}

// GetSkillVersions answers every version of a key the organization sees.
func (h *Handler) GetSkillVersions(c echo.Context, key string, params GetSkillVersionsParams) error {
	return h.versions(c, library.Skill, key, params.OrganizationId, mapAll(toSkill))
}

// AuthorSkill stores a skill version written by the organization.
func (h *Handler) AuthorSkill(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req AuthorSkillRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	it, err := h.svc.Library(library.Skill).Author(c.Request().Context(), member, req.OrganizationId.String(), fromAuthorRequest(req))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSkill(it))
}

// ForkSkill copies a shared or own version into the organization.
func (h *Handler) ForkSkill(c echo.Context, key string) error {
	return h.fork(c, library.Skill, key, one(toSkill))
}

// PublishSkill lists a version on the marketplace.
func (h *Handler) PublishSkill(c echo.Context, key string) error {
	return h.visibility(c, (*library.Library).Publish, library.Skill, key, one(toSkill))
}

// UnpublishSkill withdraws a version's listing.
func (h *Handler) UnpublishSkill(c echo.Context, key string) error {
	return h.visibility(c, (*library.Library).Unpublish, library.Skill, key, one(toSkill))
}

// SkillMarketplace answers other organizations' listed skills.
func (h *Handler) SkillMarketplace(c echo.Context, params SkillMarketplaceParams) error {
	return h.marketplace(c, library.Skill, params.OrganizationId, params.Page, params.PageSize, mapAll(toSkillListing))
}

// InstallSkill copies a listed skill into the organization.
func (h *Handler) InstallSkill(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req InstallSkillRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	it, err := h.svc.Library(library.Skill).Install(c.Request().Context(), member, req.OrganizationId.String(), req.SkillId.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSkill(it))
}

// IndexSkill stores a document as a shared starter skill.
func (h *Handler) IndexSkill(c echo.Context, params IndexSkillParams) error {
	var req IndexSkillRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	src := library.Source{Repo: str(req.SourceRepo), Path: str(req.SourcePath), Commit: str(req.SourceCommit)}
	it, err := h.svc.Library(library.Skill).Index(c.Request().Context(), str(params.XSkillsAdminKey), str(req.Content), src)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSkill(it))
}

// SyncSkills re-reads the shared source.
func (h *Handler) SyncSkills(c echo.Context, params SyncSkillsParams) error {
	res, err := h.svc.Sync(c.Request().Context(), str(params.XSkillsAdminKey))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toSyncResult(res))
}

// SkillsWebhook verifies a push hook and schedules a debounced re-sync.
func (h *Handler) SkillsWebhook(c echo.Context, host string) error {
	body, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return err
	}
	if err := h.svc.VerifyHook(host, c.Request().Header.Get, body); err != nil {
		return err
	}
	h.sync.Trigger()
	return c.JSON(http.StatusOK, HookResult{Status: Scheduled})
}

// listQuery is what the list operations of every library read.
type listQuery struct {
	org              *uuid.UUID
	role, visibility *string
	page, size       *int
}

// list answers a page of a library.
func (h *Handler) list(c echo.Context, kind library.Kind, q listQuery, mapper func([]library.Item) any) error {
	member, p, err := memberAndPage(c, q.page, q.size)
	if err != nil {
		return err
	}
	items, err := h.svc.Library(kind).List(c.Request().Context(), member, orgOf(q.org), str(q.role), str(q.visibility), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapper(items))
}

func (h *Handler) versions(c echo.Context, kind library.Kind, key string, org *uuid.UUID, mapper func([]library.Item) any) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	items, err := h.svc.Library(kind).Versions(c.Request().Context(), member, orgOf(org), key)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapper(items))
}

func (h *Handler) fork(c echo.Context, kind library.Kind, key string, mapper func(library.Item) any) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req ForkRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	it, err := h.svc.Library(kind).Fork(c.Request().Context(), member, req.OrganizationId.String(), key, req.Version, str(req.Name))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapper(it))
}

type visibilityOp func(l *library.Library, ctx context.Context, memberID, organizationID, key, version string) (library.Item, error)

func (h *Handler) visibility(c echo.Context, op visibilityOp, kind library.Kind, key string, mapper func(library.Item) any) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req VersionRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	it, err := op(h.svc.Library(kind), c.Request().Context(), member, req.OrganizationId.String(), key, req.Version)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapper(it))
}

func (h *Handler) marketplace(c echo.Context, kind library.Kind, org uuid.UUID, page, size *int, mapper func([]library.Listing) any) error {
	member, p, err := memberAndPage(c, page, size)
	if err != nil {
		return err
	}
	rows, err := h.svc.Library(kind).Marketplace(c.Request().Context(), member, org.String(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapper(rows))
}

func memberAndPage(c echo.Context, page, size *int) (string, library.Page, error) {
	member, err := caller.Member(c)
	if err != nil {
		return "", library.Page{}, err
	}
	offset, limit, err := caller.Page(page, size)
	return member, library.Page{Offset: offset, Limit: limit}, err
}

func orgOf(id *uuid.UUID) string {
	if id == nil {
		return ""
	}
	return id.String()
}

func str(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
