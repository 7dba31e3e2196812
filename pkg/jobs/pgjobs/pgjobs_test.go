package pgjobs_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/jobs"
	"github.com/motionstudio/platform/pkg/jobs/pgjobs"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/pkg/testkit"
)

// tasks has a working state of its own and scheduled retries, as webhook messages and agent-run
// jobs do.
var tasks = pgjobs.Table{
	Name: "tasks", Key: "id", Ready: []string{"Waiting"}, Leased: "Working", Attempts: "attempts", Touched: "touched_at",
	Scheduled: "Scheduled", DueAt: "retry_at",
}

// generating keeps one state while a job waits and while it is worked on, as SVG previews do.
var generating = pgjobs.Table{
	Name: "tasks", Key: "id", Ready: []string{"Generating"}, Leased: "Generating", Attempts: "attempts", Touched: "touched_at",
}

func seed(status string, touched time.Time) string {
	GinkgoHelper()
	id := uuid.NewString()
	Expect(db.Exec(`INSERT INTO tasks (id, status, touched_at) VALUES (?, ?, ?)`, id, status, touched).Error).To(Succeed())
	return id
}

type task struct {
	Status     string
	Attempts   int
	LeaseOwner string
	LeaseUntil *time.Time
	Result     string
}

func read(id string) task {
	GinkgoHelper()
	var t task
	Expect(db.Raw(`SELECT status, attempts, lease_owner, lease_until, result FROM tasks WHERE id = ?`, id).Scan(&t).Error).To(Succeed())
	return t
}

// requeue runs t.Requeue and answers the keys of the jobs it requeued.
func requeue(ctx context.Context, t pgjobs.Table, staleBefore time.Time, limit int) []string {
	GinkgoHelper()
	var rows []struct{ ID string }
	woken := 0
	n, err := t.Requeue(ctx, db, staleBefore, limit, &rows, func(*gorm.DB) error {
		woken = len(rows)
		return nil
	})
	Expect(err).NotTo(HaveOccurred())
	Expect(n).To(Equal(len(rows)))
	Expect(woken).To(Equal(n), "wake sees every requeued row")
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.ID
	}
	return keys
}

// finish records the outcome done in its own transaction.
func finish(ctx context.Context, l jobs.Lease, result string) error {
	return pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
		return tasks.Finish(ctx, tx, l, "Done", map[string]any{"result": result})
	})
}

var _ = Describe("a job table", func() {
	BeforeEach(func() { testkit.Truncate(db) })

	It("gives a job to exactly one of many workers claiming it at once; the others learn when its lease ends", func(ctx context.Context) {
		id := seed("Waiting", time.Now())
		var (
			mu     sync.Mutex
			leases []jobs.Lease
			held   []jobs.HeldError
			wg     sync.WaitGroup
		)
		for i := range 12 {
			wg.Go(func() {
				l, err := tasks.Claim(ctx, db, id, fmt.Sprintf("worker-%d", i), time.Minute)
				mu.Lock()
				defer mu.Unlock()
				var h jobs.HeldError
				switch {
				case err == nil:
					leases = append(leases, l)
				case errors.As(err, &h):
					held = append(held, h)
				default:
					Fail("unexpected claim error: " + err.Error())
				}
			})
		}
		wg.Wait()
		Expect(leases).To(HaveLen(1))
		Expect(held).To(HaveLen(11))
		for _, h := range held {
			Expect(h.Until).To(BeTemporally("~", leases[0].Until, time.Millisecond))
		}
		Expect(leases[0].Attempt).To(Equal(1))
		Expect(leases[0].Until).To(BeTemporally("~", time.Now().Add(time.Minute), 5*time.Second))
		t := read(id)
		Expect(t.Status).To(Equal("Working"))
		Expect(t.LeaseOwner).To(Equal(leases[0].Owner))
		Expect(t.Attempts).To(Equal(1))
	})

	It("answers ErrNoWork for a finished or unknown job", func(ctx context.Context) {
		_, err := tasks.Claim(ctx, db, seed("Done", time.Now()), "w", time.Minute)
		Expect(err).To(MatchError(jobs.ErrNoWork))
		_, err = tasks.Claim(ctx, db, uuid.NewString(), "w", time.Minute)
		Expect(err).To(MatchError(jobs.ErrNoWork))
	})

	It("lets another worker reclaim a job whose lease lapsed, counting the attempt, and fences out the first", func(ctx context.Context) {
		id := seed("Waiting", time.Now())
		first, err := tasks.Claim(ctx, db, id, "crashed", 50*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())

		var second jobs.Lease
		Eventually(func() error {
			second, err = tasks.Claim(ctx, db, id, "survivor", time.Minute)
			return err
		}).WithTimeout(5 * time.Second).Should(Succeed())
		Expect(second.Attempt).To(Equal(2))

		Expect(finish(ctx, first, "from the crashed worker")).To(MatchError(jobs.ErrLeaseLost))
		Expect(tasks.Renew(ctx, db, first)).To(MatchError(jobs.ErrLeaseLost))
		Expect(tasks.Release(ctx, db, first)).To(MatchError(jobs.ErrLeaseLost))
		t := read(id)
		Expect(t.Status).To(Equal("Working"))
		Expect(t.LeaseOwner).To(Equal("survivor"))
		Expect(t.Result).To(BeEmpty())

		Expect(finish(ctx, second, "from the survivor")).To(Succeed())
		t = read(id)
		Expect(t.Status).To(Equal("Done"))
		Expect(t.Result).To(Equal("from the survivor"))
		Expect(t.LeaseUntil).To(BeNil())
	})

	It("fences a second claim by the same owner: only the newest claim holds the job", func(ctx context.Context) {
		id := seed("Waiting", time.Now())
		first, err := tasks.Claim(ctx, db, id, "one-process", 50*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		var second jobs.Lease
		Eventually(func() error {
			second, err = tasks.Claim(ctx, db, id, "one-process", time.Minute)
			return err
		}).WithTimeout(5 * time.Second).Should(Succeed())
		Expect(finish(ctx, first, "stale")).To(MatchError(jobs.ErrLeaseLost))
		Expect(finish(ctx, second, "fresh")).To(Succeed())
		Expect(read(id).Result).To(Equal("fresh"))
	})

	It("keeps a job while its work outlasts the lease, renewing it, so that no other worker takes it", func(ctx context.Context) {
		id := seed("Waiting", time.Now())
		l, err := tasks.Claim(ctx, db, id, "slow", 300*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		renew := func(ctx context.Context, l jobs.Lease) error { return tasks.Renew(ctx, db, l) }

		err = jobs.Keep(ctx, l, renew, func(ctx context.Context) error {
			Consistently(func() error {
				_, err := tasks.Claim(ctx, db, id, "other", time.Minute)
				return err
			}).WithTimeout(time.Second).Should(BeAssignableToTypeOf(jobs.HeldError{}))
			return nil
		})
		Expect(err).NotTo(HaveOccurred())
		t := read(id)
		Expect(t.LeaseUntil).NotTo(BeNil())
		Expect(*t.LeaseUntil).To(BeTemporally(">", l.Until))
		Expect(finish(ctx, l, "slow but done")).To(Succeed())
		Expect(read(id).Attempts).To(Equal(1))
	})

	It("cancels the work once the lease is lost, for instance when the job is cancelled", func(ctx context.Context) {
		id := seed("Waiting", time.Now())
		l, err := tasks.Claim(ctx, db, id, "w", 90*time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		Expect(db.Exec(`UPDATE tasks SET status = 'Cancelled', lease_until = NULL WHERE id = ?`, id).Error).To(Succeed())

		err = jobs.Keep(ctx, l, func(ctx context.Context, l jobs.Lease) error { return tasks.Renew(ctx, db, l) },
			func(ctx context.Context) error {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(10 * time.Second):
					return errors.New("the work was not cancelled")
				}
			})
		Expect(err).To(MatchError(jobs.ErrLeaseLost))
		Expect(read(id).Status).To(Equal("Cancelled"))
	})

	It("renews at once when told the job may have changed, so a cancel stops the work long before the next renewal", func(ctx context.Context) {
		id := seed("Waiting", time.Now())
		l, err := tasks.Claim(ctx, db, id, "w", time.Hour)
		Expect(err).NotTo(HaveOccurred())
		changed := make(chan struct{}, 1)
		started := time.Now()

		err = jobs.KeepChecking(ctx, l, func(ctx context.Context, l jobs.Lease) error { return tasks.Renew(ctx, db, l) }, changed,
			func(ctx context.Context) error {
				Expect(db.Exec(`UPDATE tasks SET status = 'Cancelled', lease_until = NULL WHERE id = ?`, id).Error).To(Succeed())
				changed <- struct{}{}
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(10 * time.Second):
					return errors.New("the work was not cancelled")
				}
			})
		Expect(err).To(MatchError(jobs.ErrLeaseLost))
		Expect(time.Since(started)).To(BeNumerically("<", time.Second))
	})

	It("finishes in the caller's transaction: a rolled-back outcome leaves the job leased", func(ctx context.Context) {
		id := seed("Waiting", time.Now())
		l, err := tasks.Claim(ctx, db, id, "w", time.Minute)
		Expect(err).NotTo(HaveOccurred())
		boom := errors.New("the outbox write failed")
		err = pgdb.InTx(ctx, db, func(tx *gorm.DB) error {
			Expect(tasks.Finish(ctx, tx, l, "Done", map[string]any{"result": "lost"})).To(Succeed())
			return boom
		})
		Expect(err).To(MatchError(boom))
		t := read(id)
		Expect(t.Status).To(Equal("Working"))
		Expect(t.Result).To(BeEmpty())
		Expect(finish(ctx, l, "recorded")).To(Succeed())
		Expect(read(id).Status).To(Equal("Done"))
	})

	It("hands a released job to the next worker at once", func(ctx context.Context) {
		id := seed("Waiting", time.Now())
		l, err := tasks.Claim(ctx, db, id, "interrupted", time.Hour)
		Expect(err).NotTo(HaveOccurred())
		Expect(tasks.Release(ctx, db, l)).To(Succeed())
		next, err := tasks.Claim(ctx, db, id, "next", time.Minute)
		Expect(err).NotTo(HaveOccurred())
		Expect(next.Attempt).To(Equal(2))
		Expect(finish(ctx, l, "interrupted")).To(MatchError(jobs.ErrLeaseLost))
	})

	It("requeues lapsed leases, lost wake-ups and due retries, and leaves live, fresh, future and finished jobs", func(ctx context.Context) {
		now := time.Now()
		lapsed := seed("Waiting", now)
		_, err := tasks.Claim(ctx, db, lapsed, "dead", time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		live := seed("Waiting", now)
		_, err = tasks.Claim(ctx, db, live, "alive", time.Hour)
		Expect(err).NotTo(HaveOccurred())
		released := seed("Waiting", now)
		l, err := tasks.Claim(ctx, db, released, "released", time.Hour)
		Expect(err).NotTo(HaveOccurred())
		Expect(tasks.Release(ctx, db, l)).To(Succeed())
		Expect(db.Exec(`UPDATE tasks SET touched_at = ? WHERE id = ?`, now.Add(-time.Hour), released).Error).To(Succeed())
		lost := seed("Waiting", now.Add(-time.Hour))
		fresh := seed("Waiting", now)
		due := seed("Scheduled", now)
		Expect(db.Exec(`UPDATE tasks SET retry_at = ? WHERE id = ?`, now.Add(-time.Second), due).Error).To(Succeed())
		future := seed("Scheduled", now)
		Expect(db.Exec(`UPDATE tasks SET retry_at = ? WHERE id = ?`, now.Add(time.Hour), future).Error).To(Succeed())
		done := seed("Done", now.Add(-time.Hour))

		var keys []string
		Eventually(func() []string {
			keys = requeue(ctx, tasks, now.Add(-time.Minute), 10)
			return keys
		}).WithTimeout(5 * time.Second).Should(ContainElement(lapsed))
		Expect(keys).To(ConsistOf(lapsed, released, lost, due))
		for _, id := range keys {
			t := read(id)
			Expect(t.Status).To(Equal("Waiting"), id)
			Expect(t.LeaseUntil).To(BeNil(), id)
		}
		Expect(read(lapsed).Attempts).To(Equal(1))
		Expect(read(live).Status).To(Equal("Working"))
		Expect(read(fresh).Status).To(Equal("Waiting"))
		Expect(read(future).Status).To(Equal("Scheduled"))
		Expect(read(done).Status).To(Equal("Done"))

		Expect(requeue(ctx, tasks, now.Add(-time.Minute), 10)).To(BeEmpty(), "a requeued job is touched and waits for its new wake-up")
	})

	It("requeues at most limit jobs", func(ctx context.Context) {
		for range 3 {
			seed("Waiting", time.Now().Add(-time.Hour))
		}
		Expect(requeue(ctx, tasks, time.Now().Add(-time.Minute), 2)).To(HaveLen(2))
	})

	It("requeues nothing when the wake-ups cannot be written", func(ctx context.Context) {
		l, err := tasks.Claim(ctx, db, seed("Waiting", time.Now()), "dead", time.Millisecond)
		Expect(err).NotTo(HaveOccurred())
		boom := errors.New("the outbox write failed")
		Eventually(func() error {
			var rows []struct{ ID string }
			_, err := tasks.Requeue(ctx, db, time.Now().Add(-time.Minute), 10, &rows, func(*gorm.DB) error { return boom })
			return err
		}).WithTimeout(5 * time.Second).Should(MatchError(boom))
		t := read(l.ID)
		Expect(t.Status).To(Equal("Working"))
		Expect(t.LeaseUntil).NotTo(BeNil())
	})

	Describe("whose jobs keep one state while they wait and while they are worked on", func() {
		It("claims a waiting job once and answers the live lease to the next claim", func(ctx context.Context) {
			id := seed("Generating", time.Now())
			l, err := generating.Claim(ctx, db, id, "first", time.Minute)
			Expect(err).NotTo(HaveOccurred())
			Expect(l.Attempt).To(Equal(1))
			_, err = generating.Claim(ctx, db, id, "second", time.Minute)
			Expect(err).To(BeAssignableToTypeOf(jobs.HeldError{}))
			Expect(read(id).Status).To(Equal("Generating"))
		})

		It("requeues a job left without a lease only once it is stale, not while its wake-up may be on its way", func(ctx context.Context) {
			fresh := seed("Generating", time.Now())
			stale := seed("Generating", time.Now().Add(-time.Hour))
			Expect(requeue(ctx, generating, time.Now().Add(-time.Minute), 10)).To(ConsistOf(stale))
			Expect(read(fresh).Status).To(Equal("Generating"))
		})
	})
})
