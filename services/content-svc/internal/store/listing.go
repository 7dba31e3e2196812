package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// listingColumns are a catalog.ListingRow's columns: whether the template is in the catalog,
// what the filters test and the orders sort by (its card's premium flag, mode, aspects, uses,
// rating and name among them), its lexemes as "<weight><lexeme>" separated by spaces (the
// parser never makes a lexeme with a space), then the rest of its card.
var listingColumns = fmt.Sprintf(`c.id, `+live+`, c.is_premium, c.primary_mode, array_to_string(c.aspects, ','),
	array_to_string(c.category_ids, ','), array_to_string(c.tag_ids, ','), c.created_at, c.use_count, c.rate_avg, c.name,
	coalesce((SELECT string_agg(CASE WHEN 'A' = ANY(u.weights) THEN '%d' WHEN 'B' = ANY(u.weights) THEN '%d'
		WHEN 'C' = ANY(u.weights) THEN '%d' ELSE '0' END || u.lexeme, ' ') FROM unnest(c.search) u), ''),
	c.slug, c.image, c.demo, c.mini_demo, c.is_mockup, c.rate_count`,
	catalog.WeightName, catalog.WeightKeywords, catalog.WeightDescription)

// readOnlySnapshot runs f in a read-only repeatable-read transaction: everything it reads is
// one state of the catalog.
func (s *Catalog) readOnlySnapshot(ctx context.Context, f func(tx *gorm.DB) error) error {
	return s.db.WithContext(ctx).Transaction(f, &sql.TxOptions{Isolation: sql.LevelRepeatableRead, ReadOnly: true})
}

// listingVersion reads the catalog's version (migration 00090); a missing row is version 0 of
// no epoch.
func listingVersion(tx *gorm.DB) (catalog.ListingVersion, error) {
	var v struct {
		Epoch   string
		Version int64
	}
	if err := tx.Raw(`SELECT epoch::text AS epoch, version FROM catalog_version`).Scan(&v).Error; err != nil {
		return catalog.ListingVersion{}, fmt.Errorf("store: read catalog version: %w", err)
	}
	return catalog.ListingVersion{Epoch: v.Epoch, N: v.Version}, nil
}

// Listing reads the whole catalog as one snapshot, in the popular order, into v and answers
// its version and size, told to size before the first row (so that the reader can make room
// for all at once). A catalog of more than max templates is counted, not read.
func (s *Catalog) Listing(ctx context.Context, max int, size func(int), v func(catalog.ListingRow) error) (catalog.ListingVersion, int, error) {
	var (
		at catalog.ListingVersion
		n  int64
	)
	err := s.readOnlySnapshot(ctx, func(tx *gorm.DB) error {
		var err error
		if at, err = listingVersion(tx); err != nil {
			return err
		}
		if err := tx.Raw(`SELECT count(*) FROM containers c WHERE ` + live).Scan(&n).Error; err != nil {
			return fmt.Errorf("store: count catalog: %w", err)
		}
		if n > int64(max) {
			return nil
		}
		size(int(n))
		// These few large reads are not worth compiling.
		if err := tx.Exec(`SET LOCAL jit = off`).Error; err != nil {
			return fmt.Errorf("store: listing settings: %w", err)
		}
		return listingRows(tx, `WHERE `+live+` ORDER BY c.use_count DESC, c.id DESC`, nil, v)
	})
	return at, int(n), err
}

// ListingChanges reads, as one snapshot, the templates the changes logged after since named,
// each as it is now (Live false for those no longer in the catalog), and answers the version
// read. It answers catalog.ErrListingGap when the log cannot say what changed since since.
func (s *Catalog) ListingChanges(ctx context.Context, since catalog.ListingVersion, v func(catalog.ListingRow) error) (catalog.ListingVersion, error) {
	var at catalog.ListingVersion
	err := s.readOnlySnapshot(ctx, func(tx *gorm.DB) error {
		var err error
		if at, err = listingVersion(tx); err != nil {
			return err
		}
		if at.Epoch != since.Epoch || at.N < since.N {
			return catalog.ErrListingGap
		}
		if at.N == since.N {
			return nil
		}
		var changes []struct {
			Reload bool
			IDs    string
		}
		if err := tx.Raw(`SELECT ids IS NULL AS reload, coalesce(array_to_string(ids, ','), '') AS ids FROM catalog_changes
			WHERE version > ? AND version <= ?`, since.N, at.N).Scan(&changes).Error; err != nil {
			return fmt.Errorf("store: read catalog changes: %w", err)
		}
		if int64(len(changes)) != at.N-since.N {
			return catalog.ErrListingGap
		}
		var ids []string
		for _, c := range changes {
			if c.Reload {
				return catalog.ErrListingGap
			}
			ids = append(ids, splitList(c.IDs)...)
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		seen := make(map[string]bool, len(ids))
		err = listingRows(tx, `WHERE c.id = ANY(?::uuid[])`, []any{"{" + strings.Join(ids, ",") + "}"}, func(r catalog.ListingRow) error {
			seen[r.ID] = true
			return v(r)
		})
		if err != nil {
			return err
		}
		for _, id := range ids {
			if !seen[id] {
				if err := v(catalog.ListingRow{ID: id}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return at, err
}

// listingRows reads the listing rows of the containers where selects (with args) into v.
func listingRows(tx *gorm.DB, where string, args []any, v func(catalog.ListingRow) error) error {
	rows, err := tx.Raw(`SELECT `+listingColumns+` FROM containers c `+where, args...).Rows()
	if err != nil {
		return fmt.Errorf("store: read listing: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r                            catalog.ListingRow
			aspects, cats, tags, lexemes string
			c                            = &r.Card
		)
		if err := rows.Scan(&r.ID, &r.Live, &c.IsPremium, &c.PrimaryMode, &aspects, &cats, &tags, &r.CreatedAt, &c.UseCount,
			&c.RateAvg, &c.Name, &lexemes, &c.Slug, &c.Image, &c.Demo, &c.MiniDemo, &c.IsMockup, &c.RateCount); err != nil {
			return fmt.Errorf("store: read listing row: %w", err)
		}
		c.ContainerID, r.CategoryIDs, r.TagIDs = r.ID, splitList(cats), splitList(tags)
		if c.AvailableAspects = splitList(aspects); c.AvailableAspects == nil {
			c.AvailableAspects = []string{}
		}
		if r.Lexemes, err = parseLexemes(lexemes); err != nil {
			return fmt.Errorf("store: listing row %s: %w", r.ID, err)
		}
		if err := v(r); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: read listing: %w", err)
	}
	return nil
}

// parseLexemes parses listingColumns' lexemes.
func parseLexemes(s string) ([]catalog.ListingLexeme, error) {
	if s == "" {
		return nil, nil
	}
	words := strings.Split(s, " ")
	out := make([]catalog.ListingLexeme, len(words))
	for i, w := range words {
		if len(w) < 2 || w[0] < '0' || w[0] > '3' {
			return nil, errors.New("a lexeme without its weight")
		}
		out[i] = catalog.ListingLexeme{Text: w[1:], Weight: w[0] - '0'}
	}
	return out, nil
}

// splitList splits a comma-separated list; "" is none.
func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
