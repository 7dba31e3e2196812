package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

// secretFields are the JSON fields, in requests and answers, whose string values are secrets:
// passwords, API-key secrets, webhook signing and TOTP secrets, refresh tokens, OAuth client
// secrets, model-connection API keys and invitation join tokens.
var secretFields = map[string]bool{
	"password": true, "new_password": true, "current_password": true, "secret": true, "secret_key": true,
	"refresh_token": true, "client_secret": true, "apiKey": true, "joinToken": true,
}

// secretLists are the JSON fields whose every value is a secret: MFA recovery codes, and the
// auth headers of MCP servers.
var secretLists = map[string]bool{"recovery_codes": true, "headers": true}

// minSecretLen is the length below which a value is not tracked: shorter ones would match
// unrelated log text, and the platform refuses such short secrets anyway.
const minSecretLen = 8

// secretSet is what this ginkgo process sent or was answered that must never be logged: each
// secret with the field it came in. The suite's HTTP helper and admin feed it.
type secretSet struct {
	mu     sync.Mutex
	values map[string]string
}

var secrets = &secretSet{values: map[string]string{}}

// add records value as a secret of the given kind.
func (s *secretSet) add(kind, value string) {
	if len(value) < minSecretLen {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.values[value] = kind
}

// addJSON records the secrets of a JSON document (a request or an answer); other bodies are
// ignored.
func (s *secretSet) addJSON(body []byte) {
	var doc any
	if json.Unmarshal(body, &doc) == nil {
		s.walk("", doc)
	}
}

// addForm records the secrets of a form-encoded body.
func (s *secretSet) addForm(body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		return
	}
	for field, values := range form {
		if secretFields[field] {
			for _, v := range values {
				s.add(field, v)
			}
		}
	}
}

func (s *secretSet) walk(field string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, child := range v {
			if secretLists[k] {
				s.walkAll(k, child)
				continue
			}
			s.walk(k, child)
		}
	case []any:
		for _, child := range v {
			s.walk(field, child)
		}
	case string:
		if secretFields[field] {
			s.add(field, v)
		}
	}
}

// walkAll records every string below v as a secret of kind.
func (s *secretSet) walkAll(kind string, v any) {
	switch v := v.(type) {
	case map[string]any:
		for _, child := range v {
			s.walkAll(kind, child)
		}
	case []any:
		for _, child := range v {
			s.walkAll(kind, child)
		}
	case string:
		s.add(kind, v)
	}
}

// save writes the set to this process's file in dir, for process 1's scan.
func (s *secretSet) save(dir string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	raw, err := json.Marshal(s.values)
	Expect(err).NotTo(HaveOccurred())
	Expect(os.WriteFile(filepath.Join(dir, fmt.Sprintf("secrets-%d.json", GinkgoParallelProcess())), raw, 0o600)).To(Succeed())
}

// loadSecrets reads every process's secrets from dir.
func loadSecrets(dir string) map[string]string {
	files, err := filepath.Glob(filepath.Join(dir, "secrets-*.json"))
	Expect(err).NotTo(HaveOccurred())
	all := map[string]string{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		var values map[string]string
		Expect(json.Unmarshal(raw, &values)).To(Succeed())
		for v, kind := range values {
			all[v] = kind
		}
	}
	return all
}

// keepAdminLog appends the log of an `identity-svc admin` run to this process's admin log in
// dir, which process 1 scans with the services' logs.
func keepAdminLog(dir string, log []byte) {
	f, err := os.OpenFile(filepath.Join(dir, fmt.Sprintf("admin-%d.log", GinkgoParallelProcess())),
		os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	Expect(err).NotTo(HaveOccurred())
	defer func() { Expect(f.Close()).To(Succeed()) }()
	_, err = f.Write(log)
	Expect(err).NotTo(HaveOccurred())
}

// serviceSessions are the services process 1 started, by name; their output is kept in full.
var serviceSessions = map[string]*gexec.Session{}

// leak is a secret found in a log line.
type leak struct {
	log  string
	line int
	kind string
}

func (l leak) String() string { return fmt.Sprintf("%s line %d: a %s", l.log, l.line, l.kind) }

// findLeaks answers where in log (named name) any of secrets appears. It looks each window of
// minSecretLen bytes up among the secrets' first bytes, so that a long log is read once whatever
// the number of secrets.
func findLeaks(name string, log []byte, secrets map[string]string) []leak {
	byPrefix := map[[minSecretLen]byte][]string{}
	for s := range secrets {
		k := [minSecretLen]byte([]byte(s[:minSecretLen]))
		byPrefix[k] = append(byPrefix[k], s)
	}
	var leaks []leak
	for i, line := range bytes.Split(log, []byte("\n")) {
		for at := 0; at+minSecretLen <= len(line); at++ {
			for _, s := range byPrefix[[minSecretLen]byte(line[at:at+minSecretLen])] {
				if bytes.HasPrefix(line[at:], []byte(s)) {
					leaks = append(leaks, leak{log: name, line: i + 1, kind: secrets[s]})
				}
			}
		}
	}
	return leaks
}

// Every secret a spec of any process sent or received is looked for in every line the services
// and the admin CLI logged during the run; the run fails on the first one found. Each process
// leaves its secrets in the shared directory, and process 1, which started the services and
// holds their output, scans once all processes are done.
var _ = SynchronizedAfterSuite(func() {
	secrets.save(p.ScanDir)
}, func() {
	all := loadSecrets(p.ScanDir)
	var leaks []leak
	for name, s := range serviceSessions {
		leaks = append(leaks, findLeaks(name+" stdout", s.Out.Contents(), all)...)
		leaks = append(leaks, findLeaks(name+" stderr", s.Err.Contents(), all)...)
	}
	adminLogs, err := filepath.Glob(filepath.Join(p.ScanDir, "admin-*.log"))
	Expect(err).NotTo(HaveOccurred())
	for _, f := range adminLogs {
		raw, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		leaks = append(leaks, findLeaks("identity-svc admin "+filepath.Base(f), raw, all)...)
	}
	AddReportEntry("secret scan", fmt.Sprintf("%d secrets looked for in %d service and %d admin-CLI logs",
		len(all), 2*len(serviceSessions), len(adminLogs)))
	Expect(all).NotTo(BeEmpty(), "the specs fed no secret to the scan")
	Expect(leaks).To(BeEmpty(), "secrets appear in the service logs (%d secrets checked)", len(all))
})

var _ = Describe("the log scan for secrets", func() {
	It("finds each secret in the lines it appears in, at any position, and nothing else", func() {
		log := []byte(`{"msg":"http request","path":"/v1/auth/login"}` + "\n" +
			`{"msg":"bad","body":"password=correct horse battery"}` + "\n" +
			`{"msg":"ok","prefix":"whsec_"}` + "\n" +
			`whsec_c2VjcmV0LXNpZ25pbmcta2V5 at the start`)
		found := findLeaks("identity-svc stderr", log, map[string]string{
			"correct horse battery":          "password",
			"whsec_c2VjcmV0LXNpZ25pbmcta2V5": "secret",
			"never-logged-refresh-token":     "refresh_token",
		})
		Expect(found).To(ConsistOf(
			leak{log: "identity-svc stderr", line: 2, kind: "password"},
			leak{log: "identity-svc stderr", line: 4, kind: "secret"},
		))
	})

	It("collects secrets from request and answer bodies by field, and no other values", func() {
		set := &secretSet{values: map[string]string{}}
		set.addJSON([]byte(`{"email":"ada@example.test","password":"correct horse","apiKey":"sk-model-0123456789",
			"headers":{"X-Api-Token":"mcp-token-0123"},"data":[{"secret_key":"ms_live_abcdefgh12345678","name":"deploy key"}],
			"recovery_codes":["aaaa-bbbb-cccc","dddd-eeee-ffff"],"joinToken":"short"}`))
		set.addForm([]byte("grant_type=client_credentials&client_secret=s3cr3t-client-value"))
		Expect(set.values).To(Equal(map[string]string{
			"correct horse":            "password",
			"sk-model-0123456789":      "apiKey",
			"mcp-token-0123":           "headers",
			"ms_live_abcdefgh12345678": "secret_key",
			"aaaa-bbbb-cccc":           "recovery_codes",
			"dddd-eeee-ffff":           "recovery_codes",
			"s3cr3t-client-value":      "client_secret",
		}))
	})
})
