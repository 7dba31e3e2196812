package e2e

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/sha1" // #nosec G505 -- TOTP (RFC 6238) is defined over HMAC-SHA1
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"gorm.io/gorm"

	"github.com/motionstudio/platform/pkg/authn"
	"github.com/motionstudio/platform/pkg/pgdb"
)

// principal is one caller of the authorization matrix.
type principal struct {
	who    string // names the caller in failure messages
	id     string // user id (the member id in agentteam-svc)
	claims authn.Claims
	token  string
}

// party is one tenant with its administrator and a plain user. In agentteam-svc the
// administrator owns the organizations the rows make for the party and the user is a Member.
type party struct {
	tenantID, slug, name string
	admin, member        principal
	password             string
}

// authzWorld is who the matrix calls as: tenant A owns every record a row attacks, tenant B is
// the stranger; beside them a platform administrator (a user of A) and a service client. One
// world is built per test process, the first time a row needs it.
type authzWorld struct {
	a, b     party
	platform principal
	service  principal
	signer   *authn.Signer
	db       *gorm.DB // identity's database, for what an operator seeds with SQL (plans, quests, gifts)
}

var world *authzWorld

func theWorld() *authzWorld {
	if world == nil {
		world = buildWorld()
	}
	return world
}

func buildWorld() *authzWorld {
	GinkgoHelper()
	signer, err := authn.NewSigner(ed25519.NewKeyFromSeed(p.SigningSeed), jwksKeyID(), p.Issuer)
	Expect(err).NotTo(HaveOccurred())
	w := &authzWorld{signer: signer}
	now := time.Now()
	w.service = principal{who: "a service client", claims: authn.Claims{
		Issuer: p.Issuer, Subject: "service:" + p.ClientID, TokenUse: authn.TokenUseService, ID: uuid.NewString(),
		Audience: []string{authn.DefaultAudience}, IssuedAt: now, ExpiresAt: now.Add(time.Hour),
	}}
	w.service.token = serviceToken()
	w.a, w.b = w.newParty(), w.newParty()

	// The users are made with the operator CLI (registration is rate limited per address);
	// each run hashes a password, so they run side by side.
	type want struct {
		into  *principal
		party *party
		email string
		flags []string
	}
	wants := []want{
		{&w.a.admin, &w.a, "admin", []string{"-tenant-admin"}},
		{&w.a.member, &w.a, "member", nil},
		{&w.b.admin, &w.b, "admin", []string{"-tenant-admin"}},
		{&w.b.member, &w.b, "member", nil},
		{&w.platform, &w.a, "platform", []string{"-platform-admin"}},
	}
	var wg sync.WaitGroup
	for _, u := range wants {
		wg.Go(func() {
			defer GinkgoRecover()
			args := append([]string{"create-user", "-tenant", u.party.slug, "-email", u.email + "@" + u.party.slug + ".test",
				"-password", u.party.password, "-name", u.email + " of " + u.party.name}, u.flags...)
			out := admin(args...)
			*u.into = principal{id: out["id"].(string)}
		})
	}
	wg.Wait()
	w.a.admin.who, w.a.member.who = "tenant A's administrator", "a plain user of tenant A"
	w.b.admin.who, w.b.member.who = "tenant B's administrator", "a plain user of tenant B"
	w.platform.who = "a platform administrator"
	for _, u := range []struct {
		p         *principal
		tenant    string
		adm, tadm bool
	}{
		{&w.a.admin, w.a.tenantID, false, true}, {&w.a.member, w.a.tenantID, false, false},
		{&w.b.admin, w.b.tenantID, false, true}, {&w.b.member, w.b.tenantID, false, false},
		{&w.platform, w.a.tenantID, true, false},
	} {
		u.p.claims = authn.Claims{
			Issuer: p.Issuer, Subject: u.p.id, TenantID: u.tenant, SessionID: uuid.NewString(), ID: uuid.NewString(),
			Admin: u.adm, TenantAdmin: u.tadm, TokenUse: authn.TokenUseAccess, Audience: []string{authn.DefaultAudience},
			IssuedAt: now, ExpiresAt: now.Add(time.Hour),
		}
		u.p.token = w.sign(u.p.claims)
	}
	return w
}

// newParty creates a tenant through identity's API with the service token.
func (w *authzWorld) newParty() party {
	GinkgoHelper()
	m := marker()
	slug := "authz-" + m
	out := w.must(identity, "POST", "/v1/tenants", w.service.token, map[string]any{
		"slug": slug, "name": "Tenant " + m, "contact_email": "ops@" + slug + ".test",
	})
	return party{tenantID: out["id"].(string), slug: slug, name: "Tenant " + m, password: "correct horse " + m}
}

func (w *authzWorld) sign(c authn.Claims) string {
	GinkgoHelper()
	tok, err := w.signer.Sign(c)
	Expect(err).NotTo(HaveOccurred())
	return tok
}

// expired is a token with pr's claims that expired an hour ago, signed with identity's key.
func (w *authzWorld) expired(pr principal) string {
	c := pr.claims
	c.ID, c.IssuedAt, c.ExpiresAt = uuid.NewString(), time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	return w.sign(c)
}

// identityDB opens identity's database once, for seeding what only operators create.
func (w *authzWorld) identityDB() *gorm.DB {
	GinkgoHelper()
	if w.db == nil {
		var dsn string
		for _, kv := range p.IdentityEnv {
			if v, ok := strings.CutPrefix(kv, "DATABASE_URL="); ok {
				dsn = v
			}
		}
		db, err := pgdb.Open(context.Background(), pgdb.Config{DSN: dsn, MaxOpenConns: 2, MaxIdleConns: 1})
		Expect(err).NotTo(HaveOccurred())
		w.db = db
	}
	return w.db
}

func (w *authzWorld) exec(sql string, args ...any) {
	GinkgoHelper()
	Expect(w.identityDB().Exec(sql, args...).Error).To(Succeed())
}

// service is one of the three services; base is read when called, after the suite started them.
type service struct {
	name string
	base func() string
}

var (
	identity  = service{"identity-svc", func() string { return p.IdentityURL }}
	content   = service{"content-svc", func() string { return p.ContentURL }}
	agentteam = service{"agentteam-svc", func() string { return p.AgentteamURL }}
)

// form is a multipart/form-data body: fields, and files by field name.
type form struct {
	fields map[string]string
	files  map[string][]byte
}

// send calls the service and answers the status and body. body is JSON unless it is a form.
func (s service) send(method, path string, query url.Values, token string, body any, header ...string) (int, []byte) {
	GinkgoHelper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case form:
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		for k, v := range b.fields {
			Expect(mw.WriteField(k, v)).To(Succeed())
		}
		for k, data := range b.files {
			part, err := mw.CreateFormFile(k, k+".bin")
			Expect(err).NotTo(HaveOccurred())
			_, err = part.Write(data)
			Expect(err).NotTo(HaveOccurred())
		}
		Expect(mw.Close()).To(Succeed())
		r, header = &buf, append(header, "Content-Type", mw.FormDataContentType())
	default:
		raw, err := json.Marshal(b)
		Expect(err).NotTo(HaveOccurred())
		r, header = bytes.NewReader(raw), append(header, "Content-Type", "application/json")
	}
	u := s.base() + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	code, _, answer := call(method, u, token, r, header...)
	return code, answer
}

// must sends a request that has to succeed and decodes its JSON object answer (nil for none).
func (w *authzWorld) must(s service, method, path, token string, body any) map[string]any {
	GinkgoHelper()
	code, answer := s.send(method, path, nil, token, body)
	Expect(code).To(BeNumerically("<", 300), "%s %s %s: %s", s.name, method, path, answer)
	var out map[string]any
	if len(bytes.TrimSpace(answer)) > 0 && answer[0] == '{' {
		Expect(json.Unmarshal(answer, &out)).To(Succeed())
	}
	return out
}

// reader answers a read the owner makes to see the record after the attempts.
func reader(s service, path, token string) func() (int, []byte) {
	return func() (int, []byte) { return s.send("GET", path, nil, token, nil) }
}

// marker is a random word that only one record holds, so an answer holding it leaks the record.
func marker() string { return strings.ReplaceAll(uuid.NewString(), "-", "")[:12] }

// sessionID is the sid claim of an access token (read without verifying: the service issued it).
func sessionID(token string) string {
	GinkgoHelper()
	parts := strings.Split(token, ".")
	Expect(parts).To(HaveLen(3))
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	Expect(err).NotTo(HaveOccurred())
	var claims struct {
		SID string `json:"sid"`
	}
	Expect(json.Unmarshal(raw, &claims)).To(Succeed())
	return claims.SID
}

// totp is the RFC 6238 code (SHA-1, 30 s, 6 digits) of a base32 secret at t.
func totp(secret string, t time.Time) string {
	GinkgoHelper()
	key, err := base32.StdEncoding.WithPadding(base32.NoPadding).DecodeString(strings.ToUpper(strings.TrimRight(secret, "=")))
	Expect(err).NotTo(HaveOccurred())
	mac := hmac.New(sha1.New, key)
	Expect(binary.Write(mac, binary.BigEndian, uint64(t.Unix()/30))).To(Succeed())
	sum := mac.Sum(nil)
	off := sum[len(sum)-1] & 0x0f
	return fmt.Sprintf("%06d", (binary.BigEndian.Uint32(sum[off:])&0x7fffffff)%1_000_000)
}

// operation is one operation of a service's OpenAPI document.
type operation struct {
	method, path string
	ids          []string // the parameters and body fields that name a record
	query        []string // those of ids that are query parameters
}

// idName matches a parameter or body field that names a record: id, *_id(s), *Id(s).
var idName = regexp.MustCompile(`^(id|.+_ids?|.*[a-z]Ids?)$`)

var (
	opsOnce sync.Once
	opsBy   map[string]map[string]operation
)

// operations answers every operation of each service's served OpenAPI document by operationId.
func operations() map[string]map[string]operation {
	GinkgoHelper()
	opsOnce.Do(func() {
		opsBy = map[string]map[string]operation{}
		for _, s := range []service{identity, content, agentteam} {
			code, raw := s.send("GET", "/openapi.json", nil, "", nil)
			Expect(code).To(Equal(http.StatusOK))
			doc, err := openapi3.NewLoader().LoadFromData(raw)
			Expect(err).NotTo(HaveOccurred(), s.name)
			opsBy[s.name] = map[string]operation{}
			for path, item := range doc.Paths.Map() {
				for method, op := range item.Operations() {
					params := append(slices.Clone(item.Parameters), op.Parameters...)
					ids, query := idsOf(params, op)
					opsBy[s.name][op.OperationID] = operation{method: method, path: path, ids: ids, query: query}
				}
			}
		}
	})
	return opsBy
}

// idsOf lists an operation's path parameters and its query parameters and top-level body
// fields (JSON or multipart) whose names name a record; query lists those query parameters.
func idsOf(params openapi3.Parameters, op *openapi3.Operation) (ids, query []string) {
	for _, ref := range params {
		switch prm := ref.Value; {
		case prm.In == openapi3.ParameterInPath:
			ids = append(ids, prm.Name)
		case prm.In == openapi3.ParameterInQuery && idName.MatchString(prm.Name):
			ids, query = append(ids, prm.Name), append(query, prm.Name)
		}
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		for _, media := range op.RequestBody.Value.Content {
			if media.Schema == nil {
				continue
			}
			for name := range properties(media.Schema.Value) {
				if idName.MatchString(name) && !slices.Contains(ids, name) {
					ids = append(ids, name)
				}
			}
		}
	}
	slices.Sort(ids)
	return ids, query
}

// properties are a schema's own properties and those of its allOf parts.
func properties(s *openapi3.Schema) openapi3.Schemas {
	out := openapi3.Schemas{}
	if s == nil {
		return out
	}
	for k, v := range s.Properties {
		out[k] = v
	}
	for _, part := range s.AllOf {
		for k, v := range properties(part.Value) {
			out[k] = v
		}
	}
	return out
}
