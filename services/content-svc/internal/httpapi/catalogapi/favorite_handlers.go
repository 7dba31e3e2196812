package catalogapi

import (
	"context"
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/services/content-svc/internal/favorite"
)

// Favorites is what the handlers need of the favorites service.
type Favorites interface {
	Folders(ctx context.Context, userID string) ([]favorite.Folder, error)
	CreateFolder(ctx context.Context, userID, name, description string) (favorite.Folder, error)
	Favorites(ctx context.Context, userID string, folderID *string, page, pageSize *int) (favorite.Page, error)
	Add(ctx context.Context, f favorite.Favorite) (favorite.Favorite, error)
	Remove(ctx context.Context, userID, containerID string) error
}

// ListFavoriteFolders answers the caller's folders.
func (h *Handler) ListFavoriteFolders(c echo.Context) error {
	folders, err := h.favorites.Folders(c.Request().Context(), owner(c))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, FavoriteFolderList{Data: mapAll(folders, toFolder)})
}

// CreateFavoriteFolder creates a folder for the caller.
func (h *Handler) CreateFavoriteFolder(c echo.Context) error {
	var b CreateFavoriteFolder
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	f, err := h.favorites.CreateFolder(c.Request().Context(), owner(c), b.Name, deref(b.Description))
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, toFolder(f))
}

// ListFavorites answers one page of the caller's favorites.
func (h *Handler) ListFavorites(c echo.Context, p ListFavoritesParams) error {
	page, err := h.favorites.Favorites(c.Request().Context(), owner(c), idString(p.FolderId), p.Page, p.PageSize)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, FavoritePage{Data: mapAll(page.Items, toFavoriteItem), Meta: PaginationMeta{
		Page: page.Page, PageSize: page.PageSize, Total: page.Total, HasMore: page.HasMore()}})
}

// AddFavorite adds a template to the caller's favorites.
func (h *Handler) AddFavorite(c echo.Context) error {
	var b AddFavorite
	if err := httpx.Bind(c, &b); err != nil {
		return err
	}
	f, err := h.favorites.Add(c.Request().Context(), favorite.Favorite{UserID: owner(c), ContainerID: requiredID(b.ContainerId),
		FolderID: idString(b.FolderId), Note: deref(b.Note)})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, Favorite{ContainerId: uid(f.ContainerID), FolderId: nullableID(f.FolderID), Note: f.Note,
		CreatedAt: f.CreatedAt})
}

// RemoveFavorite removes a template from the caller's favorites.
func (h *Handler) RemoveFavorite(c echo.Context, p RemoveFavoriteParams) error {
	if err := h.favorites.Remove(c.Request().Context(), owner(c), p.ContainerId.String()); err != nil {
		return err
	}
	return c.NoContent(http.StatusNoContent)
}

func toFolder(f favorite.Folder) FavoriteFolder {
	return FavoriteFolder{Id: uid(f.ID), Name: f.Name, Description: f.Description, ItemCount: f.ItemCount, CreatedAt: f.CreatedAt}
}

func toFavoriteItem(i favorite.Item) FavoriteItem {
	return FavoriteItem{ContainerId: uid(i.ContainerID), FolderId: nullableID(i.FolderID), Note: i.Note, CreatedAt: i.CreatedAt,
		Template: toTemplateCard(i.Template)}
}
