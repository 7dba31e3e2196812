package testkit

import (
	"context"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/redis/go-redis/v9"
)

// Redis returns a client on REDIS_URL's server (default the local Redis) using DB index
// Process()%15+1, and the key prefix "<scope>:" the suite must put in front of every key. Keys
// under the prefix, including the limiter's "rate:<prefix>" keys, are deleted now and when the
// suite ends; other suites share the DB, so nothing else is touched.
func Redis(suite string) (*redis.Client, string) {
	url := Env("REDIS_URL", "redis://127.0.0.1:6379/0")
	opts, err := redis.ParseURL(url)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "REDIS_URL")
	opts.DB = Process()%15 + 1
	c := redis.NewClient(opts)
	prefix := Scope(suite) + ":"

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	gomega.Expect(c.Ping(ctx).Err()).To(gomega.Succeed(), "redis must be reachable at %s (run scripts/infra.sh up)", opts.Addr)
	gomega.Expect(deleteKeys(ctx, c, prefix)).To(gomega.Succeed())

	ginkgo.DeferCleanup(func(ctx ginkgo.SpecContext) {
		gomega.Expect(deleteKeys(ctx, c, prefix)).To(gomega.Succeed())
		gomega.Expect(c.Close()).To(gomega.Succeed())
	}, ginkgo.NodeTimeout(time.Minute))
	return c, prefix
}

// deleteKeys removes the keys under prefix and "rate:"+prefix with SCAN and DEL, never FLUSHDB.
func deleteKeys(ctx context.Context, c *redis.Client, prefix string) error {
	for _, p := range []string{prefix, "rate:" + prefix} {
		var batch []string
		it := c.Scan(ctx, 0, globEscape(p)+"*", 500).Iterator()
		for it.Next(ctx) {
			batch = append(batch, it.Val())
			if len(batch) == 500 {
				if err := c.Del(ctx, batch...).Err(); err != nil {
					return err
				}
				batch = batch[:0]
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
		if len(batch) > 0 {
			if err := c.Del(ctx, batch...).Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

var globSpecial = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`, `]`, `\]`)

// globEscape quotes the characters SCAN's MATCH pattern treats specially.
func globEscape(s string) string { return globSpecial.Replace(s) }
