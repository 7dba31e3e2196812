package boardapi

import (
	"net/http"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	openapi_types "github.com/oapi-codegen/runtime/types"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/caller"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/httpapi/ids"
)

// CreateDivision creates a division.
func (h *Handler) CreateDivision(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateDivisionRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	d, err := h.board.CreateDivision(c.Request().Context(), member, req.OrganizationId.String(), deref(req.Name))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toDivision(d))
}

// ListDivisions answers the organization's divisions.
func (h *Handler) ListDivisions(c echo.Context, params ListDivisionsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.board.Divisions(c.Request().Context(), member, params.OrganizationId.String(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapAll(list, toDivision))
}

// CreateProduct creates a product or service.
func (h *Handler) CreateProduct(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateProductRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	np := board.NewProduct{
		OrganizationID: req.OrganizationId.String(), Name: deref(req.Name), Kind: deref(req.Kind), Identity: deref(req.Identity),
		DivisionID: ids.OptionalString(req.DivisionId),
	}
	p, err := h.board.CreateProduct(c.Request().Context(), member, np)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProduct(p))
}

// ListProducts answers the organization's products and services.
func (h *Handler) ListProducts(c echo.Context, params ListProductsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.board.Products(c.Request().Context(), member, params.OrganizationId.String(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapAll(list, toProduct))
}

// GetProductIdentity answers the product's identity text.
func (h *Handler) GetProductIdentity(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	p, err := h.board.ProductIdentity(c.Request().Context(), member, id.String())
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProductIdentity(p))
}

// PutProductIdentity replaces the product's identity text.
func (h *Handler) PutProductIdentity(c echo.Context, id openapi_types.UUID) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req PutProductIdentityRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	p, err := h.board.SetProductIdentity(c.Request().Context(), member, id.String(), req.Identity)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toProductIdentity(p))
}

// CreateTeam creates a team.
func (h *Handler) CreateTeam(c echo.Context) error {
	member, err := caller.Member(c)
	if err != nil {
		return err
	}
	var req CreateTeamRequest
	if err := httpx.Bind(c, &req); err != nil {
		return err
	}
	t, err := h.board.CreateTeam(c.Request().Context(), member, req.OrganizationId.String(), deref(req.Name), ids.OptionalString(req.ProductId))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, toTeam(t))
}

// ListTeams answers the organization's teams, oldest first.
func (h *Handler) ListTeams(c echo.Context, params ListTeamsParams) error {
	member, p, err := caller.MemberAndPage(c, params.Page, params.PageSize)
	if err != nil {
		return err
	}
	list, err := h.board.Teams(c.Request().Context(), member, params.OrganizationId.String(), p)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, mapAll(list, toTeam))
}

func toDivision(d board.Division) Division {
	return Division{Id: uuid.MustParse(d.ID), OrganizationId: uuid.MustParse(d.OrganizationID), Name: d.Name, CreatedAt: d.CreatedAt}
}

func toProduct(p board.Product) Product {
	return Product{
		Id: uuid.MustParse(p.ID), OrganizationId: uuid.MustParse(p.OrganizationID), DivisionId: ids.Optional(p.DivisionID),
		Name: p.Name, Kind: ProductKind(p.Kind), Identity: p.Identity, CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
	}
}

func toProductIdentity(p board.Product) ProductIdentity {
	return ProductIdentity{ProductId: uuid.MustParse(p.ID), Identity: p.Identity, UpdatedAt: p.UpdatedAt}
}

func toTeam(t board.Team) Team {
	return Team{
		Id: uuid.MustParse(t.ID), OrganizationId: uuid.MustParse(t.OrganizationID), Name: t.Name,
		ProductId: ids.Optional(t.ProductID), CreatedAt: t.CreatedAt,
	}
}
