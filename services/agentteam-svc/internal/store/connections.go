package store

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/connection"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/org"
)

// Connections implements connection.Store.
type Connections struct{ db *gorm.DB }

// NewConnections returns a Connections store.
func NewConnections(db *gorm.DB) *Connections { return &Connections{db: db} }

type modelConnectionModel struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	Name           string
	BaseURL        string `gorm:"column:base_url"`
	Model          string
	APIKeySealed   []byte `gorm:"column:api_key_sealed"`
	APIKeyLast4    string `gorm:"column:api_key_last4"`
	CreatedBy      string
	CreatedAt      time.Time
}

func (modelConnectionModel) TableName() string { return "model_connections" }

func (m modelConnectionModel) toDomain() connection.Model {
	return connection.Model{
		ID: m.ID, OrganizationID: m.OrganizationID, Name: m.Name, BaseURL: m.BaseURL, Model: m.Model,
		APIKeyLast4: m.APIKeyLast4, CreatedBy: m.CreatedBy, CreatedAt: m.CreatedAt,
	}
}

type mcpServerModel struct {
	ID             string `gorm:"primaryKey"`
	OrganizationID string
	Name           string
	URL            string `gorm:"column:url"`
	HeaderNames    []byte `gorm:"type:jsonb"`
	HeadersSealed  []byte
	CreatedBy      string
	CreatedAt      time.Time
}

func (mcpServerModel) TableName() string { return "mcp_servers" }

func (m mcpServerModel) toDomain() (connection.MCPServer, error) {
	s := connection.MCPServer{ID: m.ID, OrganizationID: m.OrganizationID, Name: m.Name, URL: m.URL, CreatedBy: m.CreatedBy, CreatedAt: m.CreatedAt}
	if err := json.Unmarshal(m.HeaderNames, &s.HeaderNames); err != nil {
		return s, apperr.Wrap(err, apperr.Internal, "", "decode mcp server header names")
	}
	return s, nil
}

// CreateModel inserts the connection and its audit entry in one transaction.
func (s *Connections) CreateModel(ctx context.Context, c connection.Model, sealedKey []byte, e audit.Entry) error {
	m := modelConnectionModel{
		ID: c.ID, OrganizationID: c.OrganizationID, Name: c.Name, BaseURL: c.BaseURL, Model: c.Model,
		APIKeySealed: sealedKey, APIKeyLast4: c.APIKeyLast4, CreatedBy: c.CreatedBy, CreatedAt: c.CreatedAt,
	}
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.Create(&m).Error; err != nil {
			return pgdb.Translate(err, "model connection")
		}
		return writeAudit(tx, e)
	})
}

// Models lists the organization's connections, oldest first.
func (s *Connections) Models(ctx context.Context, organizationID string, p org.Page) ([]connection.Model, error) {
	var rows []modelConnectionModel
	err := s.db.WithContext(ctx).Where("organization_id = ?", organizationID).Order("created_at, id").
		Offset(p.Offset).Limit(p.Limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "model connection")
	}
	out := make([]connection.Model, len(rows))
	for i, r := range rows {
		out[i] = r.toDomain()
	}
	return out, nil
}

// Model returns the connection and its sealed key; ModelNotFound for an unknown id.
func (s *Connections) Model(ctx context.Context, id string) (connection.Model, []byte, error) {
	var m modelConnectionModel
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return connection.Model{}, nil, connection.ModelNotFound()
	}
	if err != nil {
		return connection.Model{}, nil, pgdb.Translate(err, "model connection")
	}
	return m.toDomain(), m.APIKeySealed, nil
}

// DeleteModel deletes the connection and writes the audit entry in one transaction;
// ModelNotFound when it is already gone.
func (s *Connections) DeleteModel(ctx context.Context, id string, e audit.Entry) error {
	return s.delete(ctx, &modelConnectionModel{}, id, e, connection.ModelNotFound)
}

// CreateMCPServer inserts the server config and its audit entry in one transaction.
func (s *Connections) CreateMCPServer(ctx context.Context, c connection.MCPServer, sealedHeaders []byte, e audit.Entry) error {
	names, err := json.Marshal(emptyIfNil(c.HeaderNames))
	if err != nil {
		return apperr.Wrap(err, apperr.Internal, "", "encode mcp server header names")
	}
	m := mcpServerModel{
		ID: c.ID, OrganizationID: c.OrganizationID, Name: c.Name, URL: c.URL, HeaderNames: names, HeadersSealed: sealedHeaders,
		CreatedBy: c.CreatedBy, CreatedAt: c.CreatedAt,
	}
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		if err := tx.Create(&m).Error; err != nil {
			return pgdb.Translate(err, "mcp server")
		}
		return writeAudit(tx, e)
	})
}

// MCPServers lists the organization's MCP servers, oldest first.
func (s *Connections) MCPServers(ctx context.Context, organizationID string, p org.Page) ([]connection.MCPServer, error) {
	var rows []mcpServerModel
	err := s.db.WithContext(ctx).Where("organization_id = ?", organizationID).Order("created_at, id").
		Offset(p.Offset).Limit(p.Limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "mcp server")
	}
	out := make([]connection.MCPServer, len(rows))
	for i, r := range rows {
		if out[i], err = r.toDomain(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// MCPServer returns the server config and its sealed headers; MCPServerNotFound for an unknown
// id.
func (s *Connections) MCPServer(ctx context.Context, id string) (connection.MCPServer, []byte, error) {
	var m mcpServerModel
	err := s.db.WithContext(ctx).Where("id = ?", id).Take(&m).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return connection.MCPServer{}, nil, connection.MCPServerNotFound()
	}
	if err != nil {
		return connection.MCPServer{}, nil, pgdb.Translate(err, "mcp server")
	}
	out, err := m.toDomain()
	return out, m.HeadersSealed, err
}

// DeleteMCPServer deletes the server config and writes the audit entry in one transaction;
// MCPServerNotFound when it is already gone.
func (s *Connections) DeleteMCPServer(ctx context.Context, id string, e audit.Entry) error {
	return s.delete(ctx, &mcpServerModel{}, id, e, connection.MCPServerNotFound)
}

func (s *Connections) delete(ctx context.Context, model any, id string, e audit.Entry, notFound func() error) error {
	return pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		res := tx.Where("id = ?", id).Delete(model)
		if res.Error != nil {
			return pgdb.Translate(res.Error, "connection")
		}
		if res.RowsAffected == 0 {
			return notFound()
		}
		return writeAudit(tx, e)
	})
}

func emptyIfNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
