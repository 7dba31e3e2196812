package skillapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/library"
)

// UploadAgentProfile stores an agent profile document written by the organization.
func (h *Handler) UploadAgentProfile(c echo.Context) error { return h.upload(c, library.AgentProfile) }

// ListAgentProfiles answers the shared agent profiles plus the organization's own.
func (h *Handler) ListAgentProfiles(c echo.Context, params ListAgentProfilesParams) error {
	return h.list(c, library.AgentProfile, listQuery{params.OrganizationId, params.Role, params.Visibility, params.Page, params.PageSize}, mapAll(toProfileSummary))
}

// GetAgentProfileVersions answers every version of an agent profile key.
func (h *Handler) GetAgentProfileVersions(c echo.Context, key string, params GetAgentProfileVersionsParams) error {
	return h.versions(c, library.AgentProfile, key, params.OrganizationId, mapAll(toProfile))
}

// ForkAgentProfile copies a shared or own agent profile version into the organization.
func (h *Handler) ForkAgentProfile(c echo.Context, key string) error {
	return h.fork(c, library.AgentProfile, key, one(toProfile))
}

// PublishAgentProfile lists an agent profile version on the marketplace.
func (h *Handler) PublishAgentProfile(c echo.Context, key string) error {
	return h.visibility(c, (*library.Library).Publish, library.AgentProfile, key, one(toProfile))
}

// UnpublishAgentProfile withdraws an agent profile version's listing.
func (h *Handler) UnpublishAgentProfile(c echo.Context, key string) error {
	return h.visibility(c, (*library.Library).Unpublish, library.AgentProfile, key, one(toProfile))
}

// AgentProfileMarketplace answers other organizations' listed agent profiles.
func (h *Handler) AgentProfileMarketplace(c echo.Context, params AgentProfileMarketplaceParams) error {
	return h.marketplace(c, library.AgentProfile, params.OrganizationId, params.Page, params.PageSize, mapAll(toProfileListing))
}

// InstallAgentProfile copies a listed agent profile into the organization.
func (h *Handler) InstallAgentProfile(c echo.Context) error {
	return h.install(c, library.AgentProfile)
}

// UploadProductProfile stores a product profile document written by the organization.
func (h *Handler) UploadProductProfile(c echo.Context) error {
	return h.upload(c, library.ProductProfile)
}

// ListProductProfiles answers the shared product profiles plus the organization's own.
func (h *Handler) ListProductProfiles(c echo.Context, params ListProductProfilesParams) error {
	return h.list(c, library.ProductProfile, listQuery{params.OrganizationId, params.Role, params.Visibility, params.Page, params.PageSize}, mapAll(toProfileSummary))
}

// GetProductProfileVersions answers every version of a product profile key.
func (h *Handler) GetProductProfileVersions(c echo.Context, key string, params GetProductProfileVersionsParams) error {
	return h.versions(c, library.ProductProfile, key, params.OrganizationId, mapAll(toProfile))
}

// ForkProductProfile copies a shared or own product profile version into the organization.
func (h *Handler) ForkProductProfile(c echo.Context, key string) error {
	return h.fork(c, library.ProductProfile, key, one(toProfile))
}

// PublishProductProfile lists a product profile version on the marketplace.
func (h *Handler) PublishProductProfile(c echo.Context, key string) error {
	return h.visibility(c, (*library.Library).Publish, library.ProductProfile, key, one(toProfile))
}

// UnpublishProductProfile withdraws a product profile version's listing.
func (h *Handler) UnpublishProductProfile(c echo.Context, key string) error {
	return h.visibility(c, (*library.Library).Unpublish, library.ProductProfile, key, one(toProfile))
}

// ProductProfileMarketplace answers other organizations' listed product profiles.
func (h *Handler) ProductProfileMarketplace(c echo.Context, params ProductProfileMarketplaceParams) error {
	return h.marketplace(c, library.ProductProfile, params.OrganizationId, params.Page, params.PageSize, mapAll(toProfileListing))
}

// InstallProductProfile copies a listed product profile into the organization.
func (h *Handler) InstallProductProfile(c echo.Context) error {
	return h.install(c, library.ProductProfile)
}

// ApplyProductProfile sets a product's identity to a product profile's document.
func (h *Handler) ApplyProductProfile(c echo.Context, key string) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req ApplyProductProfileRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	it, err := h.svc.Library(library.ProductProfile).Apply(c.Request().Context(), member, req.OrganizationId.String(), key, req.Version, req.ProductId.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProfile(it))
}

func (h *Handler) upload(c echo.Context, kind library.Kind) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req UploadProfileRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	it, err := h.svc.Library(kind).Upload(c.Request().Context(), member, req.OrganizationId.String(), str(req.Content))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProfile(it))
}

func (h *Handler) install(c echo.Context, kind library.Kind) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req InstallProfileRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	it, err := h.svc.Library(kind).Install(c.Request().Context(), member, req.OrganizationId.String(), req.ProfileId.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProfile(it))
}
