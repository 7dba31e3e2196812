// Package catalog holds the template catalog's records and rules: tags, categories, containers
// (templates) and their projects, and the published catalog read from them.
package catalog

import (
	"context"
	"errors"
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

// ListingRow is a template as the catalog's read model (the listing index) holds it: its card,
// whose premium flag, mode and aspects the filters test and whose uses, rating and name the
// orders sort by, and what a listing tests and sorts by but does not show: its categories,
// tags, creation time and search lexemes. Live is false for a template that is no longer in
// the catalog (only ID is then set).
type ListingRow struct {
	ID          string
	Live        bool
	CategoryIDs []string
	TagIDs      []string
	CreatedAt   time.Time
	Lexemes     []ListingLexeme
	Card        TemplateCard
}

// ListingLexeme is a word of a template's search vector and the best place it occurs in (a
// Weight* constant; 0 for none of them).
type ListingLexeme struct {
	Text   string
	Weight uint8
}

// ListingVersion names a state of the catalog: the count of changes logged since its epoch
// began (a new epoch starts when the log is made again).
type ListingVersion struct {
	Epoch string
	N     int64
}

// ErrListingGap says that the change log cannot bring a read model from its version to the
// current one (the log no longer holds those changes, it began again, or it asks for a
// reload): the catalog must be read again.
var ErrListingGap = errors.New("catalog: the change log cannot bring the listing up to date")

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

	Template(ctx context.Context, slugOrID string) (TemplateDetail, error)
	TemplateProjects(ctx context.Context, containerID string) ([]Project, error)

	CreateProject(ctx context.Context, p Project) error
	Project(ctx context.Context, id string, privileged bool) (Project, error)
	UpdateProject(ctx context.Context, id string, update func(*Project) error) (Project, error)
	DeleteProject(ctx context.Context, id string) error
}

// Listings answers the catalog's listings: up to q.PageSize+1 cards from the page's start, the
// extra one telling that more follow, and how many templates match q's filters; and up to limit
// templates sharing categories or tags with one in the catalog (apperr NotFound for one not in
// it), most shared first, then the most used.
type Listings interface {
	Templates(ctx context.Context, q TemplateQuery) (cards []TemplateCard, total int, err error)
	Related(ctx context.Context, containerID string, limit int) ([]TemplateCard, error)
}

// Service implements the catalog's rules over a Store and its Listings.
type Service struct {
	store    Store
	listings Listings
	now      func() time.Time
	newID    func() string
}

// NewService returns a Service over store answering listings from listings; now tells the time
// and newID makes record ids (UUID v7 in production).
func NewService(store Store, listings Listings, now func() time.Time, newID func() string) *Service {
	return &Service{store: store, listings: listings, now: now, newID: newID}
}
