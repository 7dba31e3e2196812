package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

type projectModel struct {
	ID                 string `gorm:"primaryKey"`
	ContainerID        string
	ProjectServerID    *string
	Name               string
	Description        string
	Aspect             string
	OriginalWidth      int
	OriginalHeight     int
	Resolution         string
	ProjectDurationSec float64
	MinDurationSec     float64
	MaxDurationSec     float64
	ChooseMode         string
	Image              string
	FullDemo           string
	DownloadLink       string
	AEPFileURL         string  `gorm:"column:aep_file_url"`
	AEPFileMD5         string  `gorm:"column:aep_file_md5"`
	AEPFileSizeBytes   int64   `gorm:"column:aep_file_size_bytes"`
	FreeFPS            int     `gorm:"column:free_fps"`
	VIPFactor          float64 `gorm:"column:vip_factor"`
	RenderAEPComp      string  `gorm:"column:render_aep_comp"`
	IsPublished        bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

func (projectModel) TableName() string { return "projects" }

func (m projectModel) toDomain() catalog.Project {
	return catalog.Project{
		ID: m.ID, ContainerID: m.ContainerID, ProjectServerID: m.ProjectServerID, Name: m.Name, Description: m.Description,
		Aspect: m.Aspect, OriginalWidth: m.OriginalWidth, OriginalHeight: m.OriginalHeight, Resolution: m.Resolution,
		ProjectDurationSec: m.ProjectDurationSec, MinDurationSec: m.MinDurationSec, MaxDurationSec: m.MaxDurationSec,
		ChooseMode: m.ChooseMode, Image: m.Image, FullDemo: m.FullDemo, DownloadLink: m.DownloadLink,
		AEPFileURL: m.AEPFileURL, AEPFileMD5: m.AEPFileMD5, AEPFileSizeBytes: m.AEPFileSizeBytes, FreeFPS: m.FreeFPS,
		VIPFactor: m.VIPFactor, RenderAEPComp: m.RenderAEPComp, IsPublished: m.IsPublished,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

func toProjectModel(p catalog.Project) projectModel {
	return projectModel{
		ID: p.ID, ContainerID: p.ContainerID, ProjectServerID: p.ProjectServerID, Name: p.Name, Description: p.Description,
		Aspect: p.Aspect, OriginalWidth: p.OriginalWidth, OriginalHeight: p.OriginalHeight, Resolution: p.Resolution,
		ProjectDurationSec: p.ProjectDurationSec, MinDurationSec: p.MinDurationSec, MaxDurationSec: p.MaxDurationSec,
		ChooseMode: p.ChooseMode, Image: p.Image, FullDemo: p.FullDemo, DownloadLink: p.DownloadLink,
		AEPFileURL: p.AEPFileURL, AEPFileMD5: p.AEPFileMD5, AEPFileSizeBytes: p.AEPFileSizeBytes, FreeFPS: p.FreeFPS,
		VIPFactor: p.VIPFactor, RenderAEPComp: p.RenderAEPComp, IsPublished: p.IsPublished,
		CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt,
	}
}

// checkServer answers apperr Invalid when a project names a render server that does not exist.
func checkServer(tx *gorm.DB, id *string) error {
	if id == nil {
		return nil
	}
	var n int64
	if err := tx.Table("project_servers").Where("id = ?", *id).Count(&n).Error; err != nil {
		return fmt.Errorf("store: find project server: %w", err)
	}
	if n == 0 {
		return apperr.E(apperr.Invalid, "invalid_reference", "Field \"project_server_id\" names a render server that does not exist.").
			WithFields(apperr.FieldError{Field: "project_server_id", Message: "names an unknown render server"})
	}
	return nil
}

// CreateProject stores a project of a live container. It answers apperr NotFound for a missing
// or deleted container and apperr Invalid for an unknown render server.
func (s *Catalog) CreateProject(ctx context.Context, p catalog.Project) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var ids []string
		if err := tx.Raw(`SELECT id FROM containers WHERE id = ? AND deleted_at IS NULL FOR SHARE`, p.ContainerID).
			Scan(&ids).Error; err != nil {
			return fmt.Errorf("store: find container: %w", err)
		}
		if len(ids) == 0 {
			return apperr.NotFoundf("container %s not found", p.ContainerID)
		}
		if err := checkServer(tx, p.ProjectServerID); err != nil {
			return err
		}
		return pgdb.Translate(tx.Create(ptr(toProjectModel(p))).Error, "project")
	})
}

// projectOfLiveContainer selects projects whose container is not deleted; unless privileged,
// only published projects of published containers.
func projectOfLiveContainer(db *gorm.DB, privileged bool) *gorm.DB {
	q := db.Table("projects p").Select("p.*").Joins("JOIN containers c ON c.id = p.container_id AND c.deleted_at IS NULL")
	if !privileged {
		q = q.Where("c.is_published AND p.is_published")
	}
	return q
}

// Project answers a project of a live container; unpublished ones only when privileged. It
// answers apperr NotFound otherwise.
func (s *Catalog) Project(ctx context.Context, id string, privileged bool) (catalog.Project, error) {
	var m projectModel
	if err := projectOfLiveContainer(s.db.WithContext(ctx), privileged).Where("p.id = ?", id).Take(&m).Error; err != nil {
		return catalog.Project{}, pgdb.Translate(err, "project")
	}
	return m.toDomain(), nil
}

// UpdateProject applies update to a project of a live container under a row lock and saves it.
// It answers apperr NotFound for a missing project and apperr Invalid for an unknown render
// server.
func (s *Catalog) UpdateProject(ctx context.Context, id string, update func(*catalog.Project) error) (catalog.Project, error) {
	var out catalog.Project
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		var m projectModel
		if err := projectOfLiveContainer(tx, true).Where("p.id = ?", id).
			Clauses(clause.Locking{Strength: "UPDATE", Table: clause.Table{Name: "p"}}).Take(&m).Error; err != nil {
			return pgdb.Translate(err, "project")
		}
		p := m.toDomain()
		if err := update(&p); err != nil {
			return err
		}
		if err := checkServer(tx, p.ProjectServerID); err != nil {
			return err
		}
		out = p
		return pgdb.Translate(tx.Save(ptr(toProjectModel(p))).Error, "project")
	})
	return out, err
}

// DeleteProject deletes a project of a live container with everything under it. It answers
// apperr NotFound otherwise.
func (s *Catalog) DeleteProject(ctx context.Context, id string) error {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM projects p USING containers c
		WHERE p.id = ? AND c.id = p.container_id AND c.deleted_at IS NULL`, id)
	if res.Error != nil {
		return pgdb.Translate(res.Error, "project")
	}
	if res.RowsAffected == 0 {
		return apperr.NotFoundf("project %s not found", id)
	}
	return nil
}
