package board

import (
	"context"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// StructureStore persists divisions, products and teams; every mutation writes its audit entry
// in the same transaction.
type StructureStore interface {
	CreateDivision(ctx context.Context, d Division, e audit.Entry) error
	// Division returns NotFound for an unknown id.
	Division(ctx context.Context, id string) (Division, error)
	Divisions(ctx context.Context, organizationID string, p org.Page) ([]Division, error)
	CreateProduct(ctx context.Context, p Product, e audit.Entry) error
	// Product returns NotFound for an unknown id.
	Product(ctx context.Context, id string) (Product, error)
	Products(ctx context.Context, organizationID string, p org.Page) ([]Product, error)
	SetProductIdentity(ctx context.Context, id, identity string, e audit.Entry) (Product, error)
	CreateTeam(ctx context.Context, t Team, e audit.Entry) error
	// Team returns access.TeamNotFound for an unknown id.
	Team(ctx context.Context, id string) (Team, error)
	Teams(ctx context.Context, organizationID string, p org.Page) ([]Team, error)
}

// BoardVersions answers board versions with the reader's membership.
type BoardVersions interface {
	// BoardVersion returns the team's board version, which changes with every write to its
	// tasks, with the member's role in the team's organization (ok false when none), in one
	// lookup; access.TeamNotFound for an unknown team.
	BoardVersion(ctx context.Context, teamID, memberID string) (version int64, role access.Role, ok bool, err error)
}

// Organizations answers whether an organization exists.
type Organizations interface {
	// Organization returns NotFound for an unknown id.
	Organization(ctx context.Context, id string) (org.Organization, error)
}

// name checks a required name.
func name(c *check.Checker, s string) {
	c.AddIf(check.Blank(s), "Name", "is required")
	c.Text("name", &s, check.NameMax)
}

// CreateDivision creates a division (owner-level). It returns Invalid and Forbidden.
func (s *Service) CreateDivision(ctx context.Context, memberID, organizationID, divisionName string) (Division, error) {
	var c check.Checker
	name(&c, divisionName)
	if err := c.First(); err != nil {
		return Division{}, err
	}
	if _, err := s.Access.Require(ctx, memberID, access.OwnerLevel, access.Org(organizationID)); err != nil {
		return Division{}, err
	}
	d := Division{ID: s.NewID(), OrganizationID: organizationID, Name: divisionName, CreatedAt: s.Now()}
	return d, s.Structure.CreateDivision(ctx, d, audit.New(organizationID, memberID, "division.created", "Division", d.ID, d.Name))
}

// Divisions lists the organization's divisions, oldest first (ViewBoard).
func (s *Service) Divisions(ctx context.Context, memberID, organizationID string, p org.Page) ([]Division, error) {
	if _, err := s.Access.Require(ctx, memberID, access.ViewBoard, access.Org(organizationID)); err != nil {
		return nil, err
	}
	return s.Structure.Divisions(ctx, organizationID, p)
}

// NewProduct is a product as a client asks for it.
type NewProduct struct {
	OrganizationID, Name, Kind, Identity string
	DivisionID                           *string
}

// CreateProduct creates a product or service (owner-level); a blank kind is Product. It returns
// Invalid (also for a division of another organization) and Forbidden.
func (s *Service) CreateProduct(ctx context.Context, memberID string, np NewProduct) (Product, error) {
	if np.Kind == "" {
		np.Kind = KindProduct
	}
	if np.Kind != KindProduct && np.Kind != KindService {
		return Product{}, apperr.Invalidf("kind must be Product or Service.")
	}
	var c check.Checker
	name(&c, np.Name)
	c.Text("identity", &np.Identity, check.DocMax)
	if err := c.First(); err != nil {
		return Product{}, err
	}
	if _, err := s.Access.Require(ctx, memberID, access.OwnerLevel, access.Org(np.OrganizationID)); err != nil {
		return Product{}, err
	}
	if np.DivisionID != nil {
		d, err := s.Structure.Division(ctx, *np.DivisionID)
		if apperr.Is(err, apperr.NotFound) || (err == nil && d.OrganizationID != np.OrganizationID) {
			return Product{}, apperr.Invalidf("divisionId does not name a division of this organization.")
		}
		if err != nil {
			return Product{}, err
		}
	}
	now := s.Now()
	p := Product{
		ID: s.NewID(), OrganizationID: np.OrganizationID, DivisionID: np.DivisionID, Name: np.Name, Kind: np.Kind,
		Identity: np.Identity, CreatedAt: now, UpdatedAt: now,
	}
	return p, s.Structure.CreateProduct(ctx, p, audit.New(np.OrganizationID, memberID, "product.created", "Product", p.ID, p.Kind+": "+p.Name))
}

// Products lists the organization's products and services, oldest first (ViewBoard).
func (s *Service) Products(ctx context.Context, memberID, organizationID string, p org.Page) ([]Product, error) {
	if _, err := s.Access.Require(ctx, memberID, access.ViewBoard, access.Org(organizationID)); err != nil {
		return nil, err
	}
	return s.Structure.Products(ctx, organizationID, p)
}

// ProductNotFound is the 404 for an unknown product.
func ProductNotFound() error {
	return apperr.E(apperr.NotFound, "product_not_found", "Product not found.")
}

// product reads the product and checks the capability on its organization.
func (s *Service) product(ctx context.Context, memberID, id string, c access.Capability) (Product, error) {
	p, err := s.Structure.Product(ctx, id)
	if apperr.Is(err, apperr.NotFound) {
		return Product{}, ProductNotFound()
	}
	if err != nil {
		return Product{}, err
	}
	_, err = s.Access.Require(ctx, memberID, c, access.Org(p.OrganizationID))
	return p, err
}

// ProductIdentity answers the product (ViewBoard). It returns ProductNotFound and Forbidden.
func (s *Service) ProductIdentity(ctx context.Context, memberID, id string) (Product, error) {
	return s.product(ctx, memberID, id, access.ViewBoard)
}

// SetProductIdentity replaces the product's identity text (owner-level). It returns Invalid,
// ProductNotFound and Forbidden.
func (s *Service) SetProductIdentity(ctx context.Context, memberID, id, identity string) (Product, error) {
	var c check.Checker
	c.Text("identity", &identity, check.DocMax)
	if err := c.First(); err != nil {
		return Product{}, err
	}
	p, err := s.product(ctx, memberID, id, access.OwnerLevel)
	if err != nil {
		return Product{}, err
	}
	return s.Structure.SetProductIdentity(ctx, id, identity, audit.New(p.OrganizationID, memberID, "product.identity_updated", "Product", id, ""))
}

// CreateTeam creates a team, optionally for a product of the same organization
// (CreateProductsAndTeams). An unknown organization is Invalid before the capability is checked,
// as the spec lists it as a 400. It also returns Invalid for a blank name or a foreign product,
// and Forbidden.
func (s *Service) CreateTeam(ctx context.Context, memberID, organizationID, teamName string, productID *string) (Team, error) {
	var c check.Checker
	name(&c, teamName)
	if err := c.First(); err != nil {
		return Team{}, err
	}
	_, err := s.Orgs.Organization(ctx, organizationID)
	if apperr.Is(err, apperr.NotFound) {
		return Team{}, apperr.Invalidf("Organization does not exist; create it first.")
	}
	if err != nil {
		return Team{}, err
	}
	if _, err := s.Access.Require(ctx, memberID, access.CreateProductsAndTeams, access.Org(organizationID)); err != nil {
		return Team{}, err
	}
	if productID != nil {
		p, err := s.Structure.Product(ctx, *productID)
		if apperr.Is(err, apperr.NotFound) || (err == nil && p.OrganizationID != organizationID) {
			return Team{}, apperr.Invalidf("productId does not name a product of this organization.")
		}
		if err != nil {
			return Team{}, err
		}
	}
	t := Team{ID: s.NewID(), OrganizationID: organizationID, Name: teamName, ProductID: productID, CreatedAt: s.Now()}
	return t, s.Structure.CreateTeam(ctx, t, audit.New(organizationID, memberID, "team.created", "Team", t.ID, t.Name))
}

// Teams lists the organization's teams, oldest first (ViewBoard).
func (s *Service) Teams(ctx context.Context, memberID, organizationID string, p org.Page) ([]Team, error) {
	if _, err := s.Access.Require(ctx, memberID, access.ViewBoard, access.Org(organizationID)); err != nil {
		return nil, err
	}
	return s.Structure.Teams(ctx, organizationID, p)
}
