// Package storetest holds what tests compare the catalog's read model with: the catalog
// listing and the related templates as plain SQL, the oracle of the listing index's differential specs. No service
// code reads listings from Postgres.
package storetest

import (
	"context"
	"fmt"
	"strings"

	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/services/content-svc/internal/catalog"
)

// Listing answers catalog listings by plain SQL over db.
type Listing struct{ DB *gorm.DB }

// cardColumns are a card's columns.
const cardColumns = `c.id AS container_id, c.slug, c.name, c.image, c.demo, c.mini_demo, c.is_premium, c.is_mockup,
	c.primary_mode, c.rate_avg, c.rate_count, c.use_count, array_to_string(c.aspects, ',') AS aspects`

type cardRow struct {
	ContainerID, Slug, Name, Image, Demo, MiniDemo, PrimaryMode string
	IsPremium, IsMockup                                         bool
	RateAvg                                                     float64
	RateCount                                                   int
	UseCount                                                    int64
	Aspects                                                     string
}

// Templates answers up to q.PageSize+1 cards of q's page from its start, and q's total.
func (l Listing) Templates(ctx context.Context, q catalog.TemplateQuery) ([]catalog.TemplateCard, int, error) {
	cond, args := filter(q)
	order := sortOrders[q.Sort]
	if q.Sort == catalog.SortRelevance {
		var byRank []any
		order, byRank = relevance(q.Words)
		args = append(args, byRank...)
	}
	var rows []cardRow
	err := l.DB.WithContext(ctx).Raw(`SELECT `+cardColumns+` FROM containers c WHERE `+cond+` ORDER BY `+order+` LIMIT ? OFFSET ?`,
		append(args, q.PageSize+1, (q.Page-1)*q.PageSize)...).Scan(&rows).Error
	if err != nil {
		return nil, 0, fmt.Errorf("storetest: list templates: %w", err)
	}
	cond, args = filter(q)
	var total int64
	if err := l.DB.WithContext(ctx).Raw(`SELECT count(*) FROM containers c WHERE `+cond, args...).Scan(&total).Error; err != nil {
		return nil, 0, fmt.Errorf("storetest: count templates: %w", err)
	}
	return cards(rows), int(total), nil
}

// Related answers up to limit templates in the catalog sharing categories or tags with the
// template containerID, ranked by the number shared, then popularity and id; apperr NotFound
// when that template is not in the catalog.
func (l Listing) Related(ctx context.Context, containerID string, limit int) ([]catalog.TemplateCard, error) {
	db := l.DB.WithContext(ctx)
	var n int64
	if err := db.Raw(`SELECT count(*) FROM containers c WHERE c.id = ? AND `+live, containerID).Scan(&n).Error; err != nil {
		return nil, fmt.Errorf("storetest: find template: %w", err)
	}
	if n == 0 {
		return nil, apperr.E(apperr.NotFound, "template_not_found", "No published template has this id.")
	}
	var rows []cardRow
	err := db.Raw(`SELECT `+cardColumns+` FROM (
			SELECT x.container_id, count(*) AS score FROM (
				SELECT b.container_id FROM container_categories a JOIN container_categories b ON b.category_id = a.category_id
				WHERE a.container_id = @id AND b.container_id <> @id
				UNION ALL
				SELECT b.container_id FROM container_tags a JOIN container_tags b ON b.tag_id = a.tag_id
				WHERE a.container_id = @id AND b.container_id <> @id
			) x GROUP BY x.container_id
		) s JOIN containers c ON c.id = s.container_id
		WHERE `+live+`
		ORDER BY s.score DESC, `+sortOrders[catalog.SortPopular]+` LIMIT @limit`,
		map[string]any{"id": containerID, "limit": limit}).Scan(&rows).Error
	if err != nil {
		return nil, fmt.Errorf("storetest: related templates: %w", err)
	}
	return cards(rows), nil
}

// cards maps rows to cards.
func cards(rows []cardRow) []catalog.TemplateCard {
	out := make([]catalog.TemplateCard, len(rows))
	for i, r := range rows {
		out[i] = catalog.TemplateCard{ContainerID: r.ContainerID, Slug: r.Slug, Name: r.Name, Image: r.Image, Demo: r.Demo,
			MiniDemo: r.MiniDemo, IsPremium: r.IsPremium, IsMockup: r.IsMockup, PrimaryMode: r.PrimaryMode, RateAvg: r.RateAvg,
			RateCount: r.RateCount, UseCount: r.UseCount, AvailableAspects: []string{}}
		if r.Aspects != "" {
			out[i].AvailableAspects = strings.Split(r.Aspects, ",")
		}
	}
	return out
}

// live is the condition for a container in the catalog.
const live = `c.is_published AND c.deleted_at IS NULL`

// filter answers the WHERE condition of q's filters and its arguments.
func filter(q catalog.TemplateQuery) (cond string, args []any) {
	where := []string{live}
	if len(q.Words) > 0 {
		where, args = append(where, `c.search @@ to_tsquery('simple', ?)`), append(args, strings.Join(q.Words, ":* & ")+":*")
	}
	if q.Mode != "" {
		where, args = append(where, `c.primary_mode = ?`), append(args, q.Mode)
	}
	if q.IsPremium != nil {
		where, args = append(where, `c.is_premium = ?`), append(args, *q.IsPremium)
	}
	if q.CategoryID != "" {
		where, args = append(where, `c.category_ids @> ARRAY[?::uuid]`), append(args, q.CategoryID)
	}
	if len(q.TagIDs) > 0 {
		where, args = append(where, `c.tag_ids @> ?::uuid[]`), append(args, "{"+strings.Join(q.TagIDs, ",")+"}")
	}
	if q.Aspect != "" {
		where, args = append(where, `c.aspects @> ARRAY[?::text]`), append(args, q.Aspect)
	}
	return strings.Join(where, " AND "), args
}

// sortOrders are the SQL orders of the catalog's sorts; names sort by their bytes.
var sortOrders = map[string]string{
	catalog.SortNewest:  `c.created_at DESC, c.id DESC`,
	catalog.SortPopular: `c.use_count DESC, c.id DESC`,
	catalog.SortRate:    `c.rate_avg DESC, c.id DESC`,
	catalog.SortAZ:      `c.name COLLATE "C" ASC, c.id ASC`,
}

// relevance answers the order of a search for words: the sum over the words of the best place
// each matched in, then the popular order.
func relevance(words []string) (order string, args []any) {
	terms := make([]string, len(words))
	for i, w := range words {
		terms[i] = fmt.Sprintf(`CASE WHEN ts_filter(c.search, '{a}') @@ to_tsquery('simple', ?) THEN %d
			WHEN ts_filter(c.search, '{b}') @@ to_tsquery('simple', ?) THEN %d
			WHEN ts_filter(c.search, '{c}') @@ to_tsquery('simple', ?) THEN %d ELSE 0 END`,
			catalog.WeightName, catalog.WeightKeywords, catalog.WeightDescription)
		args = append(args, w+":*", w+":*", w+":*")
	}
	return `(` + strings.Join(terms, " + ") + `) DESC, ` + sortOrders[catalog.SortPopular], args
}
