// Package connection holds an organization's outbound integrations: model connections (an
// OpenAI-compatible chat-completions endpoint, its model and its API key) and MCP servers (a
// URL and authentication headers). Keys and header values are sealed at rest under the
// service's encryption key, bound to their row, and never leave the service: answers carry the
// key's last four characters and the headers' names only. Creating and deleting needs
// ManageApiKeys, listing ConfigureAgents; the worker opens the secrets to call out.
package connection

import (
	"context"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/check"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/access"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Limits of the fields of a connection, in characters.
const (
	URLMax    = 2000
	ModelMax  = 200
	APIKeyMax = 4000
)

// Secret is a key or header value in clear. It prints and logs as [redacted], so a struct that
// carries one can be logged without leaking it; Reveal gives the value to the HTTP client.
type Secret string

// String hides the value.
func (Secret) String() string { return "[redacted]" }

// GoString hides the value from %#v.
func (Secret) GoString() string { return "[redacted]" }

// LogValue hides the value from slog.
func (Secret) LogValue() slog.Value { return slog.StringValue("[redacted]") }

// Reveal is the value in clear, for the request that needs it.
func (s Secret) Reveal() string { return string(s) }

// Model is a model connection as clients see it.
type Model struct {
	ID             string
	OrganizationID string
	Name           string
	BaseURL        string
	Model          string
	// APIKeyLast4 is the key's last four characters, or empty for a key shorter than eight.
	APIKeyLast4 string
	CreatedBy   string
	CreatedAt   time.Time
}

// NewModel is what a client gives to create a model connection.
type NewModel struct {
	OrganizationID string
	Name           string
	BaseURL        string
	Model          string
	APIKey         string
}

// OpenedModel is a model connection with its key in clear, for the call to the model.
type OpenedModel struct {
	ID      string
	Name    string
	BaseURL string
	Model   string
	APIKey  Secret
}

// Sealer seals secrets at rest bound to associated data (the row) and opens them.
type Sealer interface {
	Seal(plain, aad []byte) ([]byte, error)
	Open(sealed, aad []byte) ([]byte, error)
}

// Store persists model connections and MCP servers; each mutation writes its audit entry in
// the same transaction. Lookups by id return a NotFound error (ModelNotFound, MCPServerNotFound).
type Store interface {
	CreateModel(ctx context.Context, m Model, sealedKey []byte, e audit.Entry) error
	Models(ctx context.Context, organizationID string, p org.Page) ([]Model, error)
	Model(ctx context.Context, id string) (Model, []byte, error)
	DeleteModel(ctx context.Context, id string, e audit.Entry) error
	CreateMCPServer(ctx context.Context, s MCPServer, sealedHeaders []byte, e audit.Entry) error
	MCPServers(ctx context.Context, organizationID string, p org.Page) ([]MCPServer, error)
	MCPServer(ctx context.Context, id string) (MCPServer, []byte, error)
	DeleteMCPServer(ctx context.Context, id string, e audit.Entry) error
}

// Service implements model connections and MCP servers.
type Service struct {
	store    Store
	access   *access.Checker
	sealer   Sealer
	checkURL func(raw string) error
	tools    ToolLister
	newID    func() string
	now      func() time.Time
}

// Deps are what a Service needs. CheckURL is the create-time check of a user-given URL (an
// Invalid error with a message for the user); Tools lists an MCP server's tools for the test.
type Deps struct {
	Store    Store
	Access   *access.Checker
	Sealer   Sealer
	CheckURL func(raw string) error
	Tools    ToolLister
	NewID    func() string
	Now      func() time.Time
}

// NewService returns a Service.
func NewService(d Deps) *Service {
	return &Service{store: d.Store, access: d.Access, sealer: d.Sealer, checkURL: d.CheckURL, tools: d.Tools, newID: d.NewID, now: d.Now}
}

// CreateModel stores a model connection with its key sealed (ManageApiKeys). It returns Invalid
// for a blank or oversized field or a refused baseUrl, and Forbidden.
func (s *Service) CreateModel(ctx context.Context, memberID string, in NewModel) (Model, error) {
	if check.Blank(in.Name) || check.Blank(in.BaseURL) || check.Blank(in.Model) || check.Blank(in.APIKey) {
		return Model{}, apperr.Invalidf("name, baseUrl, model, and apiKey are required.")
	}
	var c check.Checker
	c.Text("name", &in.Name, check.NameMax)
	c.Text("baseUrl", &in.BaseURL, URLMax)
	c.Text("model", &in.Model, ModelMax)
	c.Text("apiKey", &in.APIKey, APIKeyMax)
	s.checkURLOf(&c, "baseUrl", in.BaseURL)
	if err := c.First(); err != nil {
		return Model{}, err
	}
	if _, err := s.access.Require(ctx, memberID, access.ManageApiKeys, access.Org(in.OrganizationID)); err != nil {
		return Model{}, err
	}
	m := Model{
		ID: s.newID(), OrganizationID: in.OrganizationID, Name: strings.TrimSpace(in.Name), BaseURL: strings.TrimSpace(in.BaseURL),
		Model: strings.TrimSpace(in.Model), APIKeyLast4: last4(in.APIKey), CreatedBy: memberID, CreatedAt: s.now(),
	}
	sealed, err := s.sealer.Seal([]byte(in.APIKey), ModelAAD(m.ID))
	if err != nil {
		return Model{}, err
	}
	return m, s.store.CreateModel(ctx, m, sealed, audit.New(m.OrganizationID, memberID, "connection.created", "ModelConnection", m.ID, m.Name))
}

// Models lists the organization's model connections, oldest first (ConfigureAgents).
func (s *Service) Models(ctx context.Context, memberID, organizationID string, p org.Page) ([]Model, error) {
	if _, err := s.access.Require(ctx, memberID, access.ConfigureAgents, access.Org(organizationID)); err != nil {
		return nil, err
	}
	return s.store.Models(ctx, organizationID, p)
}

// DeleteModel deletes a model connection (ManageApiKeys on its organization) and returns it.
// Agents that name it keep the id; their runs use the fallback connection or fail with
// no_connection. It returns ModelNotFound and Forbidden.
func (s *Service) DeleteModel(ctx context.Context, memberID, id string) (Model, error) {
	m, _, err := s.store.Model(ctx, id)
	if err != nil {
		return Model{}, err
	}
	if _, err := s.access.Require(ctx, memberID, access.ManageApiKeys, access.Org(m.OrganizationID)); err != nil {
		return Model{}, err
	}
	return m, s.store.DeleteModel(ctx, id, audit.New(m.OrganizationID, memberID, "connection.deleted", "ModelConnection", m.ID, m.Name))
}

// ModelOrganization returns the organization of the model connection id names, or "" when it
// names none.
func (s *Service) ModelOrganization(ctx context.Context, id string) (string, error) {
	return ownerOf(ctx, s.store.Model, id)
}

// OpenModel returns the organization's connection with its key in clear, for the worker
// (openOwn). It returns ModelNotFound, and Internal when the key does not open.
func (s *Service) OpenModel(ctx context.Context, organizationID, id string) (OpenedModel, error) {
	m, key, err := openOwn(ctx, s.sealer, s.store.Model, organizationID, id)
	if err != nil {
		return OpenedModel{}, err
	}
	return OpenedModel{ID: m.ID, Name: m.Name, BaseURL: m.BaseURL, Model: m.Model, APIKey: Secret(key)}, nil
}

// sealedRow is a model connection or an MCP server: a row of an organization's whose secret
// is sealed bound to the row.
type sealedRow interface {
	owner() string
	aad() []byte
	notFound() error
	unusable(cause error) error
}

// ownerOf returns the organization of the row id names, or "" when it names none.
func ownerOf[T sealedRow](ctx context.Context, read func(context.Context, string) (T, []byte, error), id string) (string, error) {
	r, _, err := read(ctx, id)
	if apperr.Is(err, apperr.NotFound) {
		return "", nil
	}
	return r.owner(), err
}

// openOwn reads the row id names and opens its secret for a call of organizationID's (no
// member check: the run's agent named it). Another organization's row is not found, so a key
// or header never goes out for an agent that is not its organization's.
func openOwn[T sealedRow](ctx context.Context, sealer Sealer, read func(context.Context, string) (T, []byte, error), organizationID, id string) (T, []byte, error) {
	r, sealed, err := read(ctx, id)
	if err == nil && r.owner() != organizationID {
		err = r.notFound()
	}
	if err != nil {
		return r, nil, err
	}
	plain, err := sealer.Open(sealed, r.aad())
	if err != nil {
		return r, nil, r.unusable(err)
	}
	return r, plain, nil
}

func (m Model) owner() string { return m.OrganizationID }
func (m Model) aad() []byte   { return ModelAAD(m.ID) }
func (Model) notFound() error { return ModelNotFound() }
func (Model) unusable(cause error) error {
	return apperr.Wrap(cause, apperr.Internal, "connection_unusable", "The model connection's key cannot be opened.")
}

// checkURLOf applies the outbound URL check to the named field.
func (s *Service) checkURLOf(c *check.Checker, name, raw string) {
	err := s.checkURL(strings.TrimSpace(raw))
	if err == nil {
		return
	}
	msg := "is not an allowed URL"
	if e, ok := apperr.As(err); ok && e.Message != "" {
		msg = strings.TrimPrefix(e.Message, "url ")
	}
	c.Add(name, strings.TrimSuffix(msg, "."))
}

// ModelAAD is the associated data a model connection's sealed key is bound to.
func ModelAAD(id string) []byte { return []byte("model_connection:" + id) }

// last4 is the key's last four characters, or empty when showing them would reveal half of a
// short key.
func last4(key string) string {
	n := utf8.RuneCountInString(key)
	if n < 8 {
		return ""
	}
	r := []rune(key)
	return string(r[n-4:])
}

// ModelNotFound answers an unknown model connection id.
func ModelNotFound() error {
	return apperr.E(apperr.NotFound, "connection_not_found", "Model connection not found.")
}
