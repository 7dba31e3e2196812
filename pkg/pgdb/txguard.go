package pgdb

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// guardTransactions makes db panic when a goroutine that holds one of db's transactions issues
// a statement on db's pool instead of on the transaction. Such a statement needs a second
// connection while the first is held: under load every connection is held by a transaction
// waiting for another, and the whole service stalls. Tests turn the guard on (Config.
// GuardTransactions) so that the mistake fails the spec that makes it; production never pays
// for it. Statements of goroutines the transaction's goroutine started are not followed.
func guardTransactions(db *gorm.DB) {
	g := &guardedPool{ConnPool: db.ConnPool, open: map[uint64]int{}}
	db.ConnPool = g
	db.Statement.ConnPool = g
}

// guardedPool is the pool of a guarded database: it counts the open transactions of each
// goroutine and refuses the pool to a goroutine that has one.
type guardedPool struct {
	gorm.ConnPool
	mu   sync.Mutex
	open map[uint64]int
}

// guardedTx is a transaction begun on a guardedPool by the goroutine gid.
type guardedTx struct {
	*sql.Tx
	pool  *guardedPool
	gid   uint64
	ended atomic.Bool
}

// GetDBConn returns the database/sql pool, for gorm's DB().
func (p *guardedPool) GetDBConn() (*sql.DB, error) {
	if db, ok := p.ConnPool.(*sql.DB); ok {
		return db, nil
	}
	if c, ok := p.ConnPool.(gorm.GetDBConnector); ok {
		return c.GetDBConn()
	}
	return nil, gorm.ErrInvalidDB
}

// BeginTx begins a transaction and records it as held by the calling goroutine until it ends.
func (p *guardedPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	p.check("BEGIN")
	beginner, ok := p.ConnPool.(gorm.TxBeginner)
	if !ok {
		return nil, gorm.ErrInvalidTransaction
	}
	tx, err := beginner.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	gid := goroutineID()
	p.mu.Lock()
	p.open[gid]++
	p.mu.Unlock()
	return &guardedTx{Tx: tx, pool: p, gid: gid}, nil
}

// PrepareContext prepares on the pool.
func (p *guardedPool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	p.check(query)
	return p.ConnPool.PrepareContext(ctx, query)
}

// ExecContext executes on the pool.
func (p *guardedPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	p.check(query)
	return p.ConnPool.ExecContext(ctx, query, args...)
}

// QueryContext queries on the pool.
func (p *guardedPool) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	p.check(query)
	return p.ConnPool.QueryContext(ctx, query, args...)
}

// QueryRowContext queries one row on the pool.
func (p *guardedPool) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	p.check(query)
	return p.ConnPool.QueryRowContext(ctx, query, args...)
}

// check panics when the calling goroutine holds a transaction of this pool.
func (p *guardedPool) check(query string) {
	gid := goroutineID()
	p.mu.Lock()
	held := p.open[gid]
	p.mu.Unlock()
	if held > 0 {
		panic(fmt.Sprintf("pgdb: a statement on the pool while this goroutine holds a transaction of the same pool "+
			"(use the transaction's *gorm.DB, or read before the transaction begins): %s", query))
	}
}

// GetDBConn returns the database/sql pool the transaction was begun on, for gorm's DB().
func (t *guardedTx) GetDBConn() (*sql.DB, error) { return t.pool.GetDBConn() }

// Commit commits and ends the goroutine's hold.
func (t *guardedTx) Commit() error {
	defer t.end()
	return t.Tx.Commit()
}

// Rollback rolls back and ends the goroutine's hold.
func (t *guardedTx) Rollback() error {
	defer t.end()
	return t.Tx.Rollback()
}

func (t *guardedTx) end() {
	if t.ended.Swap(true) {
		return
	}
	t.pool.mu.Lock()
	defer t.pool.mu.Unlock()
	if t.pool.open[t.gid]--; t.pool.open[t.gid] <= 0 {
		delete(t.pool.open, t.gid)
	}
}

// goroutineID returns the calling goroutine's number, read from the first line of its stack
// trace ("goroutine 42 [running]:"): slow, and only ever used by the guard.
func goroutineID() uint64 {
	var buf [64]byte
	line := bytes.TrimPrefix(buf[:runtime.Stack(buf[:], false)], []byte("goroutine "))
	if i := bytes.IndexByte(line, ' '); i > 0 {
		line = line[:i]
	}
	id, err := strconv.ParseUint(string(line), 10, 64)
	if err != nil {
		panic(fmt.Sprintf("pgdb: goroutine id from %q: %v", line, err))
	}
	return id
}
