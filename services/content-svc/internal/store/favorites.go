package store

import (
	"context"
	"fmt"
	"time"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/content-svc/internal/favorite"
)

// Favorites implements favorite.Store.
type Favorites struct{ db *gorm.DB }

// NewFavorites returns a Favorites store.
func NewFavorites(db *gorm.DB) *Favorites { return &Favorites{db: db} }

type folderModel struct {
	ID          string
	UserID      string
	Name        string
	Description string
	ItemCount   int
	CreatedAt   time.Time
}

func (m folderModel) toDomain() favorite.Folder { return favorite.Folder(m) }

type favoriteRow struct {
	Card        cardRow `gorm:"embedded"`
	FolderID    *string
	Note        string
	FavoritedAt time.Time
}

func (r favoriteRow) toDomain(userID string) favorite.Item {
	return favorite.Item{
		Favorite: favorite.Favorite{UserID: userID, ContainerID: r.Card.ID, FolderID: r.FolderID, Note: r.Note, CreatedAt: r.FavoritedAt},
		Template: r.Card.toDomain(),
	}
}

func folderNotFound() error {
	return apperr.E(apperr.NotFound, "folder_not_found", "You have no favorite folder with this id.")
}

// ownFolder answers apperr NotFound unless the folder is the user's.
func ownFolder(db *gorm.DB, userID string, folderID *string) error {
	if folderID == nil {
		return nil
	}
	var n int64
	if err := db.Table("favorite_folders").Where("id = ? AND user_id = ?", *folderID, userID).Count(&n).Error; err != nil {
		return fmt.Errorf("store: find favorite folder: %w", err)
	}
	if n == 0 {
		return folderNotFound()
	}
	return nil
}

// Folders lists a user's folders with the number of their favorites still in the catalog.
func (s *Favorites) Folders(ctx context.Context, userID string) ([]favorite.Folder, error) {
	return list(s.db.WithContext(ctx), folderModel.toDomain, `SELECT f.id, f.user_id, f.name, f.description, f.created_at,
		(SELECT count(*) FROM favorites x JOIN containers c ON c.id = x.container_id WHERE x.folder_id = f.id AND `+live+`) AS item_count
		FROM favorite_folders f WHERE f.user_id = ? ORDER BY f.created_at, f.id`, userID)
}

// CreateFolder stores a folder unless the user has maxFolders already or a folder of that name
// (apperr Conflict).
func (s *Favorites) CreateFolder(ctx context.Context, f favorite.Folder, maxFolders int) error {
	return pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		// One user's folder creations run one at a time, so the limit holds under concurrency.
		if err := tx.Exec(`SELECT pg_advisory_xact_lock(hashtextextended('favorite_folders:' || ?, 0))`, f.UserID).Error; err != nil {
			return fmt.Errorf("store: lock favorite folders: %w", err)
		}
		var n int64
		if err := tx.Table("favorite_folders").Where("user_id = ?", f.UserID).Count(&n).Error; err != nil {
			return fmt.Errorf("store: count favorite folders: %w", err)
		}
		if int(n) >= maxFolders {
			return apperr.E(apperr.Conflict, "folder_limit_reached", fmt.Sprintf("You already have %d favorite folders, the most allowed.", maxFolders))
		}
		err := tx.Exec(`INSERT INTO favorite_folders (id, user_id, name, description, created_at) VALUES (?, ?, ?, ?, ?)`,
			f.ID, f.UserID, f.Name, f.Description, f.CreatedAt).Error
		if pgdb.IsUniqueViolation(err, "") {
			return apperr.E(apperr.Conflict, "folder_name_taken", "You already have a favorite folder with this name.").
				WithFields(apperr.FieldError{Field: "name", Message: "is taken"})
		}
		return pgdb.Translate(err, "favorite folder")
	})
}

// Favorites answers one page of a user's favorites still in the catalog, newest first.
func (s *Favorites) Favorites(ctx context.Context, userID string, folderID *string, page, pageSize int) ([]favorite.Item, int, error) {
	db := s.db.WithContext(ctx)
	if err := ownFolder(db, userID, folderID); err != nil {
		return nil, 0, err
	}
	cond, args := `x.user_id = ? AND `+live, []any{userID}
	if folderID != nil {
		cond, args = cond+` AND x.folder_id = ?`, append(args, *folderID)
	}
	var total int64
	if err := db.Raw(`SELECT count(*) FROM favorites x JOIN containers c ON c.id = x.container_id WHERE `+cond, args...).
		Scan(&total).Error; err != nil {
		return nil, 0, fmt.Errorf("store: count favorites: %w", err)
	}
	var rows []favoriteRow
	err := db.Raw(`SELECT `+cardColumns+`, x.folder_id, x.note, x.created_at AS favorited_at
		FROM favorites x JOIN containers c ON c.id = x.container_id WHERE `+cond+`
		ORDER BY x.created_at DESC, x.container_id DESC LIMIT ? OFFSET ?`, append(args, pageSize, (page-1)*pageSize)...).
		Scan(&rows).Error
	if err != nil {
		return nil, 0, fmt.Errorf("store: list favorites: %w", err)
	}
	items := make([]favorite.Item, len(rows))
	for i, r := range rows {
		items[i] = r.toDomain(userID)
	}
	return items, int(total), nil
}

// Add stores a favorite of a template in the catalog, or moves an existing one to the given
// folder with the given note, keeping when it was first added.
func (s *Favorites) Add(ctx context.Context, f favorite.Favorite) (favorite.Favorite, error) {
	err := pgdb.InTx(ctx, s.db.WithContext(ctx), func(tx *gorm.DB) error {
		if err := existingContainer(tx, f.ContainerID); err != nil {
			return err
		}
		if err := ownFolder(tx, f.UserID, f.FolderID); err != nil {
			return err
		}
		err := tx.Raw(`INSERT INTO favorites (user_id, container_id, folder_id, note, created_at) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (user_id, container_id) DO UPDATE SET folder_id = EXCLUDED.folder_id, note = EXCLUDED.note
			RETURNING created_at`, f.UserID, f.ContainerID, f.FolderID, f.Note, f.CreatedAt).Scan(&f.CreatedAt).Error
		return pgdb.Translate(err, "favorite")
	})
	return f, err
}

// existingContainer answers apperr NotFound unless the container exists and is not deleted;
// an unpublished one may be kept as a favorite and is listed once published.
func existingContainer(db *gorm.DB, id string) error {
	var n int64
	if err := db.Table("containers").Where("id = ? AND deleted_at IS NULL", id).Count(&n).Error; err != nil {
		return fmt.Errorf("store: find template: %w", err)
	}
	if n == 0 {
		return apperr.E(apperr.NotFound, "template_not_found", "No template has this id.")
	}
	return nil
}

// Remove deletes a user's favorite; it answers apperr NotFound when there is none.
func (s *Favorites) Remove(ctx context.Context, userID, containerID string) error {
	res := s.db.WithContext(ctx).Exec(`DELETE FROM favorites WHERE user_id = ? AND container_id = ?`, userID, containerID)
	if res.Error != nil {
		return pgdb.Translate(res.Error, "favorite")
	}
	if res.RowsAffected == 0 {
		return apperr.E(apperr.NotFound, "favorite_not_found", "This template is not in your favorites.")
	}
	return nil
}
