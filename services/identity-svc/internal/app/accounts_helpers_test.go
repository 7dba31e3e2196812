package app_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/pgdb"
	"github.com/motionstudio/platform/services/identity-svc/internal/token"
)

// member is a user of a tenant created through the operator CLI, with an access token.
type member struct {
	ID, TenantID, TenantSlug, Email, Token string
}

// newTenant creates a tenant with a unique slug and answers its id and slug.
func newTenant(prefix string) (id, slug string) {
	GinkgoHelper()
	slug = prefix + "-" + strings.ReplaceAll(uuid.NewString(), "-", "")[:10]
	t := admin("create-tenant", "-slug", slug, "-name", "Tenant "+slug, "-email", "it@"+slug+".test")
	return t["id"].(string), slug
}

// newMember creates a user in the tenant; role is "", "tenant-admin" or "platform-admin".
func newMember(tenantSlug, role string) member {
	GinkgoHelper()
	email := strings.ReplaceAll(uuid.NewString(), "-", "")[:12] + "@" + tenantSlug + ".test"
	args := []string{"create-user", "-tenant", tenantSlug, "-email", email, "-password", "correct-horse-battery", "-name", "Member " + email}
	if role != "" {
		args = append(args, "-"+role)
	}
	u := admin(args...)
	tok := admin("token", "-tenant", tenantSlug, "-email", email, "-ttl", "30m")
	return member{ID: u["id"].(string), TenantID: u["tenant_id"].(string), TenantSlug: tenantSlug, Email: email, Token: tok["access_token"].(string)}
}

var (
	testDBOnce sync.Once
	testDBConn *gorm.DB
)

// testDB is a connection to the service's database, for seeding and for reading the outbox.
// Unlike the service's pool it is not guarded: specs hold locks in a transaction on purpose
// while they read what the service did.
func testDB() *gorm.DB {
	GinkgoHelper()
	testDBOnce.Do(func() {
		dbCfg := cfg.DB
		dbCfg.GuardTransactions = false
		db, err := pgdb.Open(context.Background(), dbCfg)
		Expect(err).NotTo(HaveOccurred())
		testDBConn = db
	})
	return testDBConn
}

// outboxEvents counts the outbox events of the subject whose payload contains every fragment.
func outboxEvents(subject string, fragments ...string) int {
	GinkgoHelper()
	var payloads []string
	Expect(testDB().Raw("SELECT data::text FROM outbox WHERE subject = ?", subject).Scan(&payloads).Error).To(Succeed())
	n := 0
	for _, p := range payloads {
		all := true
		for _, f := range fragments {
			all = all && strings.Contains(p, f)
		}
		if all {
			n++
		}
	}
	return n
}

// testJSON decodes a JSON body.
func testJSON(body []byte, dst any) error { return json.Unmarshal(body, dst) }

// serviceToken mints a service token with the service's signing key, as the token endpoint
// would for a configured client.
func serviceToken() string {
	GinkgoHelper()
	key, err := token.LoadKey(token.KeySource{Inline: cfg.SigningKey})
	Expect(err).NotTo(HaveOccurred())
	kid, err := token.KeyID(key.Public().(ed25519.PublicKey))
	Expect(err).NotTo(HaveOccurred())
	signer, err := authn.NewSigner(key, kid, cfg.Issuer)
	Expect(err).NotTo(HaveOccurred())
	tok, err := signer.Sign(authn.Claims{Subject: "service:gateway", TokenUse: authn.TokenUseService,
		Audience: []string{cfg.Audience}, ExpiresAt: time.Now().Add(10 * time.Minute)})
	Expect(err).NotTo(HaveOccurred())
	return tok
}

// lockedBuffer is a log sink safe for the service's concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// serviceLog holds every line the service under test logged.
var serviceLog = &lockedBuffer{}
