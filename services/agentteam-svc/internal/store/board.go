package store

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/motionstudio/platform/pkg/outbox"
	"github.com/motionstudio/platform/pkg/pgdb"
	events "github.com/motionstudio/platform/proto-events"
	agentteamv1 "github.com/motionstudio/platform/proto-events/gen/agentteam/v1"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/audit"
	"github.com/motionstudio/platform/services/agentteam-svc/internal/board"
)

// Board implements board.Store: work items, their transitions, the QA handoff, performance and
// the audit log.
type Board struct {
	db     *gorm.DB
	outbox *outbox.Writer
}

// NewBoard returns a Board store that writes events and run wake-ups through w.
func NewBoard(db *gorm.DB, w *outbox.Writer) *Board { return &Board{db: db, outbox: w} }

type workItemModel struct {
	ID           string `gorm:"primaryKey"`
	TeamID       string
	Title        string
	Description  string
	Type         string
	Status       string
	AssigneeKind *string
	AssigneeID   *string
	ParentID     *string
	HandoffOf    *string
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

func (workItemModel) TableName() string { return "work_items" }

func toWorkItemModel(w board.WorkItem) workItemModel {
	return workItemModel{
		ID: w.ID, TeamID: w.TeamID, Title: w.Title, Description: w.Description, Type: w.Type, Status: w.Status,
		AssigneeKind: w.AssigneeKind, AssigneeID: w.AssigneeID, ParentID: w.ParentID, HandoffOf: w.HandoffOf,
		CreatedAt: w.CreatedAt, UpdatedAt: w.UpdatedAt,
	}
}

func (m workItemModel) toDomain() board.WorkItem {
	return board.WorkItem{
		ID: m.ID, TeamID: m.TeamID, Title: m.Title, Description: m.Description, Type: m.Type, Status: m.Status,
		AssigneeKind: m.AssigneeKind, AssigneeID: m.AssigneeID, ParentID: m.ParentID, HandoffOf: m.HandoffOf,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

type transitionModel struct {
	ID         string `gorm:"primaryKey"`
	WorkItemID string
	TeamID     string
	FromStatus string
	ToStatus   string
	MemberID   *string
	CreatedAt  time.Time
}

func (transitionModel) TableName() string { return "work_item_transitions" }

func toTransitionModel(t board.Transition) transitionModel {
	m := transitionModel{ID: t.ID, WorkItemID: t.WorkItemID, TeamID: t.TeamID, FromStatus: t.From, ToStatus: t.To, CreatedAt: t.CreatedAt}
	if t.MemberID != "" {
		m.MemberID = &t.MemberID
	}
	return m
}

// AssignedTo lists the work items assigned to (kind, id), most recently updated first.
func (s *Board) AssignedTo(ctx context.Context, kind, assigneeID string, limit int) ([]board.WorkItem, error) {
	var rows []workItemModel
	err := s.db.WithContext(ctx).
		Where("assignee_kind = ? AND assignee_id = ?", kind, assigneeID).
		Order("updated_at DESC, id").Limit(limit).Find(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "work item")
	}
	items := make([]board.WorkItem, len(rows))
	for i, r := range rows {
		items[i] = r.toDomain()
	}
	return items, nil
}

// CreateTask inserts the task with its audit entry.
func (s *Board) CreateTask(ctx context.Context, w board.WorkItem, e audit.Entry) error {
	m := toWorkItemModel(w)
	return create(ctx, s.db, "task", &m, e)
}

// Task returns board.TaskNotFound for an unknown id.
func (s *Board) Task(ctx context.Context, id string) (board.WorkItem, error) {
	var m workItemModel
	if err := takeTask(s.db.WithContext(ctx), id, &m); err != nil {
		return board.WorkItem{}, err
	}
	return m.toDomain(), nil
}

func takeTask(db *gorm.DB, id string, m *workItemModel) error {
	return takeByID(db, id, m, "task", board.TaskNotFound)
}

// columnRow is a work item with the size of its column.
type columnRow struct {
	Item         workItemModel `gorm:"embedded"`
	ColumnStatus string
	Total        int
}

// Columns reads the team's board in one query: for each status, its task count and the page of
// its tasks in creation order, each page read off the (team, status, created_at) index.
func (s *Board) Columns(ctx context.Context, teamID string, statuses []string, offset, limit int) ([]board.Column, error) {
	var rows []columnRow
	err := s.db.WithContext(ctx).Raw(`
		SELECT w.*, col.status AS column_status, c.total
		FROM unnest(?::text[]) AS col(status)
		CROSS JOIN LATERAL (SELECT count(*) AS total FROM work_items WHERE team_id = ? AND status = col.status) c
		LEFT JOIN LATERAL (
			SELECT * FROM work_items
			WHERE team_id = ? AND status = col.status
			ORDER BY created_at, id OFFSET ? LIMIT ?
		) w ON true
		ORDER BY array_position(?::text[], col.status), w.created_at, w.id`,
		stringArray(statuses), teamID, teamID, offset, limit, stringArray(statuses)).Scan(&rows).Error
	if err != nil {
		return nil, pgdb.Translate(err, "task")
	}
	cols := make([]board.Column, len(statuses))
	index := make(map[string]int, len(statuses))
	for i, st := range statuses {
		cols[i] = board.Column{Status: st, Tasks: make([]board.WorkItem, 0, min(limit, 16))}
		index[st] = i
	}
	for _, r := range rows {
		c := &cols[index[r.ColumnStatus]]
		c.Total = r.Total
		if r.Item.ID != "" {
			c.Tasks = append(c.Tasks, r.Item.toDomain())
		}
	}
	return cols, nil
}

// MoveTask locks the task, lets decide plan the move, and stores it in one transaction: the
// task, the transition and the task-moved event when the status changed, the audit entry, and
// the handoff when one is planned and the task never handed off before (the unique index on
// handoff_of decides, so concurrent moves hand off once). handedOff reports whether it did.
func (s *Board) MoveTask(ctx context.Context, id string, decide func(board.WorkItem) (board.Move, error)) (_ board.WorkItem, handedOff bool, err error) {
	var item board.WorkItem
	err = pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var m workItemModel
		if err := takeTask(tx.Clauses(clause.Locking{Strength: "UPDATE"}), id, &m); err != nil {
			return err
		}
		mv, err := decide(m.toDomain())
		if err != nil {
			return err
		}
		item = mv.Item
		if mv.Transition != nil {
			if err := s.recordTransition(ctx, tx, mv); err != nil {
				return err
			}
		}
		if err := writeAudit(tx, mv.Audit); err != nil {
			return err
		}
		if mv.Handoff != nil {
			handedOff, err = s.handOff(ctx, tx, *mv.Handoff)
		}
		return err
	})
	return item, handedOff, err
}

func (s *Board) recordTransition(ctx context.Context, tx *gorm.DB, mv board.Move) error {
	t := *mv.Transition
	err := tx.Model(&workItemModel{ID: mv.Item.ID}).Updates(map[string]any{"status": mv.Item.Status, "updated_at": mv.Item.UpdatedAt}).Error
	if err != nil {
		return pgdb.Translate(err, "task")
	}
	tm := toTransitionModel(t)
	if err := tx.Create(&tm).Error; err != nil {
		return pgdb.Translate(err, "transition")
	}
	ev := &agentteamv1.TaskMoved{
		TaskId: t.WorkItemID, TeamId: t.TeamID, OrganizationId: mv.OrganizationID, FromStatus: t.From, ToStatus: t.To,
		MemberId: t.MemberID, MovedAt: timestamppb.New(t.CreatedAt),
	}
	_, err = s.outbox.Add(ctx, tx, events.SubjectTaskMoved, events.SubjectTaskMoved, ev)
	return err
}

// handOff creates the QA task unless the finished task already has one, then queues its run and
// audits the handoff.
func (s *Board) handOff(ctx context.Context, tx *gorm.DB, h board.Handoff) (bool, error) {
	m := toWorkItemModel(h.Task)
	res := tx.Clauses(clause.OnConflict{Columns: []clause.Column{{Name: "handoff_of"}}, DoNothing: true}).Create(&m)
	if res.Error != nil {
		return false, pgdb.Translate(res.Error, "task")
	}
	if res.RowsAffected == 0 {
		return false, nil
	}
	if _, _, err := enqueueRun(ctx, tx, s.outbox, h.Run); err != nil {
		return false, err
	}
	return true, writeAudit(tx, h.Audit)
}

// UpdateTask locks the task, lets change modify it, and stores the task and the audit entry
// change returns in one transaction; board.TaskNotFound for an unknown task.
func (s *Board) UpdateTask(ctx context.Context, id string, change func(*board.WorkItem) (audit.Entry, error)) (board.WorkItem, error) {
	var item board.WorkItem
	err := pgdb.InTx(ctx, s.db, func(tx *gorm.DB) error {
		var m workItemModel
		if err := takeTask(tx.Clauses(clause.Locking{Strength: "UPDATE"}), id, &m); err != nil {
			return err
		}
		item = m.toDomain()
		e, err := change(&item)
		if err != nil {
			return err
		}
		m = toWorkItemModel(item)
		if err := tx.Save(&m).Error; err != nil {
			return pgdb.Translate(err, "task")
		}
		return writeAudit(tx, e)
	})
	return item, err
}

// TaskTeam returns the task's team, or board.TaskNotFound.
func (s *Board) TaskTeam(ctx context.Context, id string) (string, error) {
	var ids []string
	if err := s.db.WithContext(ctx).Model(&workItemModel{}).Where("id = ?", id).Limit(1).Pluck("team_id", &ids).Error; err != nil {
		return "", pgdb.Translate(err, "task")
	}
	if len(ids) == 0 {
		return "", board.TaskNotFound()
	}
	return ids[0], nil
}
