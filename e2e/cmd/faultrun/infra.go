package main

import (
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the database/sql driver the checks query with
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/redis/go-redis/v9"
)

// databases are the services' databases on the private Postgres.
var databases = []string{"identity", "content", "agentteam"}

// postgresBin finds the newest PostgreSQL server binaries (FAULT_PG_BIN overrides).
func postgresBin() (string, error) {
	if dir := os.Getenv("FAULT_PG_BIN"); dir != "" {
		return dir, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) < versionOf(dirs[j]) })
	if len(dirs) == 0 {
		return "", fmt.Errorf("no /usr/lib/postgresql/*/bin (set FAULT_PG_BIN)")
	}
	return dirs[len(dirs)-1], nil
}

func versionOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// postgresCred is the postgres system user: the server refuses to run as root.
func postgresCred() (*syscall.Credential, int, int, error) {
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, 0, 0, fmt.Errorf("postgres system user: %w", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
}

// newPostgres initialises an empty cluster in dir (as the postgres user) listening on port, and
// returns its server process, not started.
func newPostgres(ctx context.Context, dir, logs string, port int) (*proc, error) {
	bin, err := postgresBin()
	if err != nil {
		return nil, err
	}
	cred, uid, gid, err := postgresCred()
	if err != nil {
		return nil, err
	}
	if err := os.RemoveAll(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return nil, err
	}
	initdb := exec.CommandContext(ctx, filepath.Join(bin, "initdb"), "-D", dir, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	initdb.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}
	if out, err := initdb.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("initdb: %w: %s", err, out)
	}
	// fsync is off because only processes crash here, never the machine; commits stay
	// synchronous, so an immediate shutdown keeps every acknowledged transaction.
	conf := fmt.Sprintf(`
listen_addresses = '127.0.0.1'
port = %d
unix_socket_directories = '%s'
max_connections = 400
shared_buffers = 128MB
fsync = off
full_page_writes = off
synchronous_commit = on
log_min_messages = warning
`, port, dir)
	f, err := os.OpenFile(filepath.Join(dir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, err
	}
	if _, err := f.WriteString(conf); err != nil {
		_ = f.Close()
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	p := &proc{
		name: "postgres", bin: filepath.Join(bin, "postgres"), args: []string{"-D", dir},
		env: []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}, cred: cred, logPath: filepath.Join(logs, "postgres.log"),
	}
	p.ready = func(ctx context.Context) error {
		db, err := sql.Open("pgx", pgURL(port, "postgres"))
		if err != nil {
			return err
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		return db.PingContext(ctx)
	}
	return p, nil
}

func pgURL(port int, db string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", port, db)
}

// createDatabases makes the services' empty databases.
func createDatabases(ctx context.Context, port int) error {
	db, err := sql.Open("pgx", pgURL(port, "postgres"))
	if err != nil {
		return err
	}
	defer db.Close()
	for _, name := range databases {
		if _, err := db.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	return nil
}

// natsNode is one server of the private JetStream cluster.
type natsNode struct {
	*proc
	client, cluster, monitor int
}

// newNATSCluster writes the configuration of n clustered JetStream servers under dir and returns
// them, not started.
func newNATSCluster(dir, logs string, ports []int) ([]*natsNode, error) {
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	n := len(ports) / 3
	routes := make([]string, n)
	for i := range n {
		routes[i] = fmt.Sprintf("nats-route://127.0.0.1:%d", ports[3*i+1])
	}
	nodes := make([]*natsNode, n)
	for i := range n {
		name := fmt.Sprintf("nats-%d", i+1)
		node := &natsNode{client: ports[3*i], cluster: ports[3*i+1], monitor: ports[3*i+2]}
		store := filepath.Join(dir, name)
		if err := os.MkdirAll(store, 0o755); err != nil {
			return nil, err
		}
		conf := fmt.Sprintf(`server_name: %s
host: 127.0.0.1
port: %d
http: 127.0.0.1:%d
jetstream {
  store_dir: %q
  max_memory_store: 64MB
  max_file_store: 4GB
}
cluster {
  name: faultrun
  host: 127.0.0.1
  port: %d
  routes: [%s]
}
`, name, node.client, node.monitor, store, node.cluster, strings.Join(routes, ", "))
		path := filepath.Join(dir, name+".conf")
		if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
			return nil, err
		}
		monitor := node.monitor
		node.proc = &proc{
			name: name, bin: bin, args: []string{"-c", path}, env: []string{"PATH=/usr/bin:/bin"},
			logPath: filepath.Join(logs, name+".log"),
			// healthz answers 200 once JetStream is enabled and this node is current.
			ready: func(ctx context.Context) error {
				return httpOK(ctx, fmt.Sprintf("http://127.0.0.1:%d/healthz", monitor))
			},
		}
		nodes[i] = node
	}
	return nodes, nil
}

// natsURL lists every node's client address, the form NATS_URL takes for a cluster.
func natsURL(nodes []*natsNode) string {
	urls := make([]string, len(nodes))
	for i, n := range nodes {
		urls[i] = fmt.Sprintf("nats://127.0.0.1:%d", n.client)
	}
	return strings.Join(urls, ",")
}

// httpOK returns nil when GET url answers 200 within two seconds.
func httpOK(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %d", url, resp.StatusCode)
	}
	return nil
}

// freePorts returns n distinct loopback ports that were free a moment ago.
func freePorts(n int) ([]int, error) {
	ports := make([]int, n)
	listeners := make([]net.Listener, n)
	defer func() {
		for _, l := range listeners {
			if l != nil {
				_ = l.Close()
			}
		}
	}()
	for i := range ports {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners[i] = l
		ports[i] = l.Addr().(*net.TCPAddr).Port
	}
	return ports, nil
}

// sharedInfra is what the run borrows from the shared servers: a Redis key prefix and a MinIO
// bucket, both removed at the end.
type sharedInfra struct {
	redisURL    string
	redisPrefix string
	s3Endpoint  string
	s3Key       string
	s3Secret    string
	bucket      string
}

func newSharedInfra(run string) sharedInfra {
	return sharedInfra{
		redisURL:    envOr("REDIS_URL", "redis://127.0.0.1:6379/0"),
		redisPrefix: "faultrun-" + run + ":",
		s3Endpoint:  envOr("S3_ENDPOINT", "127.0.0.1:9000"),
		s3Key:       envOr("S3_ACCESS_KEY", "minioadmin"),
		s3Secret:    envOr("S3_SECRET_KEY", "minioadmin"),
		bucket:      "faultrun-" + run,
	}
}

// check fails when Redis or MinIO does not answer.
func (s sharedInfra) check(ctx context.Context) error {
	opts, err := redis.ParseURL(s.redisURL)
	if err != nil {
		return fmt.Errorf("REDIS_URL: %w", err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s: %w (run scripts/infra.sh up)", opts.Addr, err)
	}
	mc, err := s.minio()
	if err != nil {
		return err
	}
	if _, err := mc.ListBuckets(ctx); err != nil {
		return fmt.Errorf("minio at %s: %w (run scripts/infra.sh up)", s.s3Endpoint, err)
	}
	return nil
}

func (s sharedInfra) minio() (*minio.Client, error) {
	return minio.New(s.s3Endpoint, &minio.Options{Creds: credentials.NewStaticV4(s.s3Key, s.s3Secret, "")})
}

// cleanup deletes the run's Redis keys and its bucket with every object in it.
func (s sharedInfra) cleanup(ctx context.Context) error {
	opts, err := redis.ParseURL(s.redisURL)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	for _, prefix := range []string{s.redisPrefix, "rate:" + s.redisPrefix} {
		it := rdb.Scan(ctx, 0, prefix+"*", 500).Iterator()
		for it.Next(ctx) {
			if err := rdb.Del(ctx, it.Val()).Err(); err != nil {
				return err
			}
		}
		if err := it.Err(); err != nil {
			return err
		}
	}
	mc, err := s.minio()
	if err != nil {
		return err
	}
	exists, err := mc.BucketExists(ctx, s.bucket)
	if err != nil || !exists {
		return err
	}
	for obj := range mc.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Recursive: true}) {
		if obj.Err != nil {
			return obj.Err
		}
		if err := mc.RemoveObject(ctx, s.bucket, obj.Key, minio.RemoveObjectOptions{}); err != nil {
			return err
		}
	}
	return mc.RemoveBucket(ctx, s.bucket)
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
