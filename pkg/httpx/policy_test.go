package httpx_test

import (
	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/httpx"
)

// doc is a service's OpenAPI document with four operations.
var doc = []byte(`
openapi: 3.0.3
paths:
  /v1/things:
    get:
      operationId: listThings
    post:
      operationId: createThing
  /v1/ping:
    get:
      operationId: ping
  /v1/things/{id}:
    parameters:
      - name: id
        in: path
        required: true
        schema: {type: string}
    delete:
      operationId: deleteThing
`)

var _ = Describe("access policies", func() {
	It("accept a document whose every operation has a policy", func() {
		p := httpx.Policies{"listThings": httpx.Allow(), "createThing": httpx.Allow(), "ping": httpx.Public(), "deleteThing": httpx.Allow()}
		Expect(p.Verify(doc)).To(Succeed())
	})

	It("name the operations nobody gave a policy, so the service does not start open", func() {
		p := httpx.Policies{"listThings": httpx.Allow(), "ping": httpx.Public(), "deleteThing": httpx.Allow()}
		Expect(p.Verify(doc)).To(MatchError(ContainSubstring("POST /v1/things (createThing)")))
	})

	It("name policies for operations the document does not have", func() {
		p := httpx.Policies{"listThings": httpx.Allow(), "createThing": httpx.Allow(), "ping": httpx.Public(), "deleteThing": httpx.Allow(), "archiveThing": httpx.Allow()}
		Expect(p.Verify(doc)).To(MatchError(ContainSubstring("archiveThing")))
	})

	It("refuse a document that is not YAML", func() {
		Expect(httpx.Policies{}.Verify([]byte("\t: ["))).To(MatchError(ContainSubstring("parse openapi")))
	})
})

var _ = Describe("merging access policies", func() {
	It("combines the packages' policies", func() {
		p, err := httpx.Merge(httpx.Policies{"a": httpx.Public()}, httpx.Policies{"b": httpx.Allow()})
		Expect(err).NotTo(HaveOccurred())
		Expect(p).To(HaveLen(2))
	})

	It("refuses an operation claimed by two packages", func() {
		_, err := httpx.Merge(httpx.Policies{"a": httpx.Public()}, httpx.Policies{"a": httpx.Allow()})
		Expect(err).To(MatchError(ContainSubstring("operation a has two policies")))
	})
})

var _ = Describe("mounting a service's areas", func() {
	things := httpx.Policies{"listThings": httpx.Allow(), "createThing": httpx.Allow(), "deleteThing": httpx.Allow()}
	// area records the policies it was mounted with under its name.
	area := func(name string, p httpx.Policies, mounted map[string]httpx.Policies) httpx.Area {
		return httpx.Area{Policies: p, Mount: func(_ *echo.Echo, all httpx.Policies) { mounted[name] = all }}
	}

	It("mounts every area with the policies of all of them", func() {
		mounted := map[string]httpx.Policies{}
		Expect(httpx.Mount(echo.New(), doc,
			area("things", things, mounted),
			area("ping", httpx.Policies{"ping": httpx.Public()}, mounted))).To(Succeed())
		Expect(mounted).To(HaveLen(2))
		Expect(mounted["things"]).To(HaveKey("ping"))
		Expect(mounted["ping"]).To(HaveKey("listThings"))
	})

	It("mounts nothing when an operation of the document has no policy", func() {
		mounted := map[string]httpx.Policies{}
		err := httpx.Mount(echo.New(), doc, area("things", things, mounted))
		Expect(err).To(MatchError(ContainSubstring("GET /v1/ping (ping)")))
		Expect(mounted).To(BeEmpty())
	})

	It("mounts nothing when two areas claim one operation", func() {
		mounted := map[string]httpx.Policies{}
		err := httpx.Mount(echo.New(), doc,
			area("things", httpx.Policies{"listThings": httpx.Allow(), "createThing": httpx.Allow(), "deleteThing": httpx.Allow(), "ping": httpx.Public()}, mounted),
			area("ping", httpx.Policies{"ping": httpx.Public()}, mounted))
		Expect(err).To(MatchError(ContainSubstring("operation ping has two policies")))
		Expect(mounted).To(BeEmpty())
	})
})
