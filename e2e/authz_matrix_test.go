package e2e

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// The authorization matrix (BOLA/BFLA): one row per operation of the three services that takes
// an id (a path parameter, or a query parameter or body field named id, *_id(s) or *Id(s)).
// Each row builds a record of tenant A (or of an organization A's administrator owns) and
// calls the operation on it as callers who must be refused: nobody, an expired token, tenant
// B's administrator (the owner of B's organization), a plain user or Member beside the owner,
// the wrong kind of token, and the row's own mixed-id attempts. Every refusal must be the
// status the specs and the ADRs give (docs/adr/0048-authorization-matrix.md) and hold none of
// the record's data; a changing operation must leave the record as it was (the owner reads it
// back); then the owner's own call must work, so a row whose request cannot reach the record
// fails.

// admits is the kind of token an operation's policy takes.
type admits int

const (
	users          admits = iota // user access tokens; a service token is 403
	usersOrService               // user or service tokens
	services                     // service tokens; a user token is 403
	platformAdmins               // platform administrators' access tokens; anyone else is 403
)

// want is how a caller must be answered.
type want struct {
	status  int    // the exact status
	leftOut bool   // a 2xx answer that leaves the record out (a filtered list)
	holds   string // text the answer must hold besides the status
	may     bool   // the caller may do it (the row says why); not attempted
}

func is(status int) want                    { return want{status: status} }
func answers(status int, holds string) want { return want{status: status, holds: holds} }

var (
	leftOut = want{leftOut: true}
	may     = want{may: true}
)

// attempt is a further call a row makes: as someone, with some ids taken from the stranger's
// own records (f.foreign) instead of the owner's.
type attempt struct {
	who  string
	as   func(w *authzWorld) principal
	swap []string
	want want
}

func strangerWith(swap ...string) func(want) attempt {
	return func(x want) attempt {
		return attempt{who: "tenant B's administrator naming its own " + strings.Join(swap, ", "),
			as: func(w *authzWorld) principal { return w.b.admin }, swap: swap, want: x}
	}
}

func ownerWith(swap ...string) func(want) attempt {
	return func(x want) attempt {
		return attempt{who: "the owner naming tenant B's " + strings.Join(swap, ", "),
			as: func(w *authzWorld) principal { return w.a.admin }, swap: swap, want: x}
	}
}

// asService is an attempt with a service token, on operations that take one for a caller of
// its own (a service client owns its own favorites).
func asService(x want) attempt {
	return attempt{who: "a service client", as: func(w *authzWorld) principal { return w.service }, want: x}
}

type row struct {
	svc    service
	op     string                     // the operationId
	on     func(*authzWorld) *fixture // builds the record
	admits admits
	other  want      // tenant B's administrator
	member want      // the fixture's peer
	also   []attempt // further attempts
	query  []string  // the id query parameters to send, when not every one the fixture has
	params map[string]string
	body   func(ids map[string]string, text string) any
	kept   func(f *fixture, text string) // what must hold after the attempts, instead of the default
	ok     []int                         // the owner's own answer; default any 2xx
}

// notOwned are the id-taking operations without a row: their ids name nothing a tenant or
// organization owns, so there is nothing to take from anyone.
var notOwned = map[string]string{
	"identity-svc/issueToken":             "client_id is the OAuth client credential itself, checked with its secret",
	"identity-svc/login":                  "public; device_id is a label the client chooses for its new session",
	"identity-svc/loginOAuth":             "public; {provider} names a configured OAuth provider",
	"identity-svc/paymentWebhookCallback": "public; the gateway's signature authenticates it and id is the gateway's event id",
	"agentteam-svc/skillsWebhook":         "public push hook; {host} names a Git host, the shared library is no organization's",
}

var _ = Describe("the authorization matrix", func() {
	It("has a row for every operation that takes an id, and no row for an operation that does not exist", func() {
		rows := map[string]bool{}
		for _, r := range matrix {
			key := r.svc.name + "/" + r.op
			Expect(rows).NotTo(HaveKey(key), "two rows for %s", key)
			rows[key] = true
		}
		var missing, stale []string
		counted := map[string]int{}
		for svc, ops := range operations() {
			for id, op := range ops {
				key := svc + "/" + id
				if len(op.ids) == 0 {
					if rows[key] {
						stale = append(stale, key+" (takes no id)")
					}
					continue
				}
				counted[svc]++
				if !rows[key] && notOwned[key] == "" {
					missing = append(missing, fmt.Sprintf("%s %s %s (ids %v)", key, strings.ToUpper(op.method), op.path, op.ids))
				}
			}
		}
		for key := range rows {
			svc, id, _ := strings.Cut(key, "/")
			if _, ok := operations()[svc][id]; !ok {
				stale = append(stale, key+" (no such operation)")
			}
		}
		slices.Sort(missing)
		slices.Sort(stale)
		Expect(missing).To(BeEmpty(), "id-taking operations without a matrix row")
		Expect(stale).To(BeEmpty(), "matrix rows for no id-taking operation")
		AddReportEntry("id-taking operations", counted)
	})

	for _, r := range matrix {
		It(fmt.Sprintf("refuses everyone but the owner on %s %s", r.svc.name, r.op), func() { r.run(theWorld()) })
	}
})

// run builds the row's record, makes every refused attempt, checks the record and makes the
// owner's own call.
func (r row) run(w *authzWorld) {
	op, ok := operations()[r.svc.name][r.op]
	Expect(ok).To(BeTrue(), "%s has no operation %s", r.svc.name, r.op)
	f := r.on(w)
	text := "pwned-" + marker()
	cases := r.attempts(w, f)
	for _, c := range cases {
		ids := maps(f.ids)
		for _, name := range c.swap {
			Expect(f.foreign).To(HaveKey(name), "the fixture has no foreign %s", name)
			ids[name] = f.foreign[name]
		}
		code, body := r.send(op, ids, c.token, text)
		c.want.expect(code, body, fmt.Sprintf("%s %s as %s", r.svc.name, r.op, c.who))
		Expect(string(body)).NotTo(ContainSubstring(f.marker), "%s %s as %s leaks the record", r.svc.name, r.op, c.who)
	}
	if op.method != http.MethodGet {
		switch {
		case r.kept != nil:
			r.kept(f, text)
		case f.read != nil:
			code, body := f.read()
			Expect(code).To(BeNumerically("<", 300), "the owner reads the record back: %s", body)
			Expect(string(body)).To(ContainSubstring(f.marker), "the record is still there")
			Expect(string(body)).NotTo(ContainSubstring(text), "no refused attempt changed the record")
		}
	}
	owner := f.owner.token
	if r.admits == services {
		owner = w.service.token
	}
	code, body := r.send(op, f.ids, owner, "owner-"+marker())
	if len(r.ok) > 0 {
		Expect(r.ok).To(ContainElement(code), "the owner's own call: %s", body)
	} else {
		Expect(code).To(BeNumerically("<", 300), "the owner's own call: %s", body)
	}
	AddReportEntry("attempts", len(cases))
}

type authzCase struct {
	who   string
	token string
	swap  []string
	want  want
}

// attempts are the calls that must be refused.
func (r row) attempts(w *authzWorld, f *fixture) []authzCase {
	owner := f.owner
	if r.admits == services {
		owner = w.service
	}
	cs := []authzCase{
		{who: "no token", want: is(http.StatusUnauthorized)},
		{who: "an expired token", token: w.expired(owner), want: is(http.StatusUnauthorized)},
	}
	Expect(r.other).NotTo(Equal(want{}), "the row says how tenant B's administrator is answered")
	Expect(r.member).NotTo(Equal(want{}), "the row says how %s is answered", f.peer.who)
	if !r.other.may {
		cs = append(cs, authzCase{who: w.b.admin.who, token: w.b.admin.token, want: r.other})
	}
	if !r.member.may {
		cs = append(cs, authzCase{who: f.peer.who, token: f.peer.token, want: r.member})
	}
	switch r.admits {
	case users, platformAdmins:
		cs = append(cs, authzCase{who: "a service token", token: w.service.token, want: is(http.StatusForbidden)})
	case services:
		cs = append(cs,
			authzCase{who: "tenant A's administrator's user token", token: w.a.admin.token, want: is(http.StatusForbidden)},
			authzCase{who: "a platform administrator's user token", token: w.platform.token, want: is(http.StatusForbidden)})
	}
	if r.admits == platformAdmins {
		cs = append(cs, authzCase{who: "tenant A's administrator", token: w.a.admin.token, want: is(http.StatusForbidden)})
	}
	for _, a := range r.also {
		cs = append(cs, authzCase{who: a.who, token: a.as(w).token, swap: a.swap, want: a.want})
	}
	return cs
}

// send calls the operation with ids filling its path and id query parameters.
func (r row) send(op operation, ids map[string]string, token, text string) (int, []byte) {
	GinkgoHelper()
	path := op.path
	for name, v := range ids {
		path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(v))
	}
	Expect(path).NotTo(ContainSubstring("{"), "the fixture lacks a path parameter of %s", op.path)
	q := url.Values{}
	names := r.query
	if names == nil {
		names = op.query
	}
	for _, name := range names {
		if v, ok := ids[name]; ok {
			q.Set(name, v)
		}
	}
	for k, v := range r.params {
		q.Set(k, v)
	}
	var body any
	if r.body != nil {
		body = r.body(ids, text)
	}
	return r.svc.send(strings.ToUpper(op.method), path, q, token, body)
}

func (x want) expect(code int, body []byte, what string) {
	GinkgoHelper()
	switch {
	case x.leftOut:
		Expect(code).To(BeNumerically("<", 300), "%s: %s", what, body)
	default:
		Expect(code).To(Equal(x.status), "%s: %s", what, body)
	}
	if x.holds != "" {
		Expect(string(body)).To(ContainSubstring(x.holds), what)
	}
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// list is a JSON array of one id, as body fields taking several ids want it.
func list(id string) []string { return []string{id} }

// keptField checks, after the attempts, that the owner's read still answers field: value.
func keptField(field string, value any) func(*fixture, string) {
	return func(f *fixture, _ string) {
		GinkgoHelper()
		code, body := f.read()
		Expect(code).To(BeNumerically("<", 300), string(body))
		Expect(decode(body)).To(HaveKeyWithValue(field, value))
	}
}

// keptStatus checks that the owner's read still answers status (a record that stays hidden).
func keptStatus(status int) func(*fixture, string) {
	return func(f *fixture, _ string) {
		GinkgoHelper()
		code, body := f.read()
		Expect(code).To(Equal(status), string(body))
	}
}

// keptExactly checks that the owner's read still answers exactly body (an empty list).
func keptExactly(body string) func(*fixture, string) {
	return func(f *fixture, _ string) {
		GinkgoHelper()
		code, got := f.read()
		Expect(code).To(BeNumerically("<", 300), string(got))
		Expect(strings.TrimSpace(string(got))).To(Equal(body))
	}
}

// keptHolding checks that the owner's read still holds text (besides the marker).
func keptHolding(text string) func(*fixture, string) {
	return func(f *fixture, attempt string) {
		GinkgoHelper()
		code, body := f.read()
		Expect(code).To(BeNumerically("<", 300), string(body))
		Expect(string(body)).To(And(ContainSubstring(f.marker), ContainSubstring(text), Not(ContainSubstring(attempt))))
	}
}
