// Package catalog holds the template catalog's records and rules: tags, categories, containers
// (templates) and their projects, and the published catalog read from them.
package catalog

import (
	"context"
	"time"
)

// Tag labels templates for filtering.
type Tag struct {
	ID   string
	Slug string
	Name string
}

// Category groups templates for browsing.
type Category struct {
	ID          string
	Slug        string
	Name        string
	Description string
	Image       string
	Position    int
}

// Container is a template: the catalog entry that owns one or more projects.
type Container struct {
	ID              string
	Slug            string
	Name            string
	Description     string
	Keywords        string
	NewsText        string
	Image           string
	Demo            string
	FullDemo        string
	MiniDemo        string
	IsPublished     bool
	IsPremium       bool
	IsMockup        bool
	PrimaryMode     string
	RateAvg         float64
	RateCount       int
	UseCount        int64
	CategoryIDs     []string
	TagIDs          []string
	PublishedAt     *time.Time
	UnpublishReason *string
	CreatedAt       time.Time
	UpdatedAt       time.Time
}

// ContainerFields are the fields an administrator sets on a container; nil means "not given".
type ContainerFields struct {
	Slug        *string
	Name        *string
	PrimaryMode *string
	Description *string
	Keywords    *string
	NewsText    *string
	Image       *string
	Demo        *string
	FullDemo    *string
	MiniDemo    *string
	IsPremium   *bool
	IsMockup    *bool
	CategoryIDs *[]string
	TagIDs      *[]string
}

// Project is a variant of a template: its size, duration, render settings and source file.
type Project struct {
	ID                 string
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
	AEPFileURL         string
	AEPFileMD5         string
	AEPFileSizeBytes   int64
	FreeFPS            int
	VIPFactor          float64
	RenderAEPComp      string
	IsPublished        bool
	CreatedAt          time.Time
	UpdatedAt          time.Time
}

// ProjectFields are the fields an administrator sets on a project; nil means "not given".
type ProjectFields struct {
	ContainerID     *string
	ProjectServerID *string
	// UnlinkProjectServer removes the project's render server (the client sent null).
	UnlinkProjectServer bool
	Name                *string
	Description         *string
	Aspect              *string
	OriginalWidth       *int
	OriginalHeight      *int
	Resolution          *string
	ProjectDurationSec  *float64
	MinDurationSec      *float64
	MaxDurationSec      *float64
	ChooseMode          *string
	Image               *string
	FullDemo            *string
	DownloadLink        *string
	FreeFPS             *int
	VIPFactor           *float64
	RenderAEPComp       *string
	IsPublished         *bool
}

// Sort orders of the catalog.
const (
	SortRelevance = "relevance"
	SortNewest    = "newest"
	SortPopular   = "popular"
	SortRate      = "rate"
	SortAZ        = "az"
)

// Sorts are the orders a client may ask for; with search words and no sort, the catalog is
// ordered by relevance.
func Sorts() []string { return []string{SortNewest, SortPopular, SortRate, SortAZ} }

// Search weights: where a word matched, for relevance. A word counts the best place it matched
// in: the name, the keywords, the description.
const (
	WeightName        = 3
	WeightKeywords    = 2
	WeightDescription = 1
)

// ListingRow is a catalog template as an in-memory listing index reads it: its id, what the
// filters test, and its place in each of the Sorts (Places, in that order, 1 first; its
// popular place is its number in the listing, which is in that order).
type ListingRow struct {
	ID          string
	IsPremium   bool
	PrimaryMode string
	Aspects     []string
	CategoryIDs []string
	TagIDs      []string
	Places      [4]int
}

// ListingLexeme is a word of the catalog's search vectors and the templates it occurs in:
// Entries are their numbers in the listing (0 its first row), ascending, and Weights the best
// place it occurs in each of them (a Weight* constant; 0 for none of them).
type ListingLexeme struct {
	Text    string
	Entries []int32
	Weights []uint8
}

// ListingVisitor receives the catalog as a listing index reads it, as one snapshot: Row for
// every template, in the popular order; Card for the first of them, in the same order; then
// Lexeme for every lexeme of their search vectors, in byte order. What it is given is valid
// only during the call.
type ListingVisitor interface {
	Row(ListingRow) error
	Card(TemplateCard) error
	Lexeme(ListingLexeme) error
}

// Aspects are the aspect ratios a project can have.
func Aspects() []string { return []string{"16:9", "9:16", "1:1", "4:5"} }

// TemplateQuery filters, sorts and pages the catalog. Words are the search words, reduced to
// letters and digits; each matches as a prefix.
type TemplateQuery struct {
	Words      []string
	CategoryID string
	TagIDs     []string
	Mode       string
	Aspect     string
	IsPremium  *bool
	Sort       string
	Page       int
	PageSize   int
}

// TemplateCard is a template as a catalog list shows it.
type TemplateCard struct {
	ContainerID      string
	Slug             string
	Name             string
	Image            string
	Demo             string
	MiniDemo         string
	IsPremium        bool
	IsMockup         bool
	PrimaryMode      string
	RateAvg          float64
	RateCount        int
	UseCount         int64
	AvailableAspects []string
}

// TemplatePage is one page of the catalog and the number of templates matching in all; both
// are exact.
type TemplatePage struct {
	Cards    []TemplateCard
	Total    int
	Page     int
	PageSize int
	// HasMore reports whether templates follow this page.
	HasMore bool
}

// TemplateDetail is a published template with its published projects, categories and tags.
type TemplateDetail struct {
	Container  Container
	Projects   []Project
	Categories []Category
	Tags       []Tag
}

// Store persists catalog records. Lookups answer apperr NotFound for missing or soft-deleted
// records; writes answer apperr Conflict on a taken slug and apperr Invalid on unknown
// referenced ids.
type Store interface {
	Tags(ctx context.Context) ([]Tag, error)
	CreateTag(ctx context.Context, t Tag) error
	Categories(ctx context.Context) ([]Category, error)
	CreateCategory(ctx context.Context, c Category) error

	CreateContainer(ctx context.Context, c Container) error
	UpdateContainer(ctx context.Context, id string, update func(*Container) error) (Container, error)
	DeleteContainer(ctx context.Context, id string, at time.Time) error
	SetPublished(ctx context.Context, id string, published bool, reason, actor string, at time.Time) error

	// Templates answers up to q.PageSize+1 cards from the page's start, the extra one telling
	// that more follow; CountTemplates answers how many templates match q's filters.
	Templates(ctx context.Context, q TemplateQuery) ([]TemplateCard, error)
	CountTemplates(ctx context.Context, q TemplateQuery) (int, error)
	Template(ctx context.Context, slugOrID string) (TemplateDetail, error)
	TemplateProjects(ctx context.Context, containerID string) ([]Project, error)
	RelatedTemplates(ctx context.Context, containerID string, limit int) ([]TemplateCard, error)

	CreateProject(ctx context.Context, p Project) error
	Project(ctx context.Context, id string, privileged bool) (Project, error)
	UpdateProject(ctx context.Context, id string, update func(*Project) error) (Project, error)
	DeleteProject(ctx context.Context, id string) error
}

// Service implements the catalog's rules over a Store.
type Service struct {
	store Store
	now   func() time.Time
	newID func() string
}

// NewService returns a Service over store; now tells the time and newID makes record ids
// (UUID v7 in production).
func NewService(store Store, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, now: now, newID: newID}
}
