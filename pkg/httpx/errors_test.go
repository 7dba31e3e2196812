package httpx_test

import (
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/httpx"
)

var _ = Describe("answering errors as problem+json", func() {
	var srv *running

	BeforeEach(func() {
		srv = start(httpx.Options{
			Service:    "problems",
			Config:     httpx.Config{BodyLimit: 1024, RequestTimeout: 50 * time.Millisecond},
			ErrorStyle: httpx.ProblemJSON,
			LargeBody:  func(c echo.Context) bool { return c.Path() == "/upload" },
		}, appRoutes)
	})

	It("answers a domain Invalid error with 400, its message, code and field problems", func() {
		res := srv.get("/invalid")
		Expect(res.status).To(Equal(http.StatusBadRequest))
		p := problemOf(res)
		Expect(p.Type).To(Equal("https://motionstudio.dev/problems/title_required"))
		Expect(p.Title).To(Equal("Bad Request"))
		Expect(p.Detail).To(Equal("Title is required."))
		Expect(p.Code).To(Equal("title_required"))
		Expect(p.Errors).To(HaveLen(1))
		Expect(p.Errors[0].Field).To(Equal("title"))
		Expect(p.Errors[0].Message).To(Equal("is required"))
	})

	It("keeps a sane incoming request id and replaces an unsafe one with a UUID v7", func() {
		res := srv.get("/invalid", "X-Request-ID", "req-42.a:b_c")
		Expect(res.header.Get("X-Request-ID")).To(Equal("req-42.a:b_c"))
		Expect(problemOf(res).RequestID).To(Equal("req-42.a:b_c"))

		res = srv.get("/invalid", "X-Request-ID", "bad id\twith <script>")
		id, err := uuid.Parse(problemOf(res).RequestID)
		Expect(err).NotTo(HaveOccurred())
		Expect(id.Version()).To(Equal(uuid.Version(7)))
	})

	It("answers an unknown route with 404 and a wrong method with 405", func() {
		res := srv.get("/no/such/route")
		Expect(res.status).To(Equal(http.StatusNotFound))
		p := problemOf(res)
		Expect(p.Type).To(Equal("about:blank"))
		Expect(p.Code).To(Equal("not_found"))

		res = srv.do(http.MethodDelete, "/ok", nil)
		Expect(res.status).To(Equal(http.StatusMethodNotAllowed))
		Expect(problemOf(res).Code).To(Equal("method_not_allowed"))
	})

	It("answers an unclassified error with a generic 500 and logs the cause with the request id", func() {
		res := srv.get("/boom")
		Expect(res.status).To(Equal(http.StatusInternalServerError))
		p := problemOf(res)
		Expect(p.Detail).To(Equal("An unexpected error occurred."))
		Expect(p.Code).To(Equal("internal"))
		Expect(res.body).NotTo(ContainSubstring("hunter2"))

		Expect(srv.logLines()).To(ContainElement(And(
			HaveKeyWithValue("level", "ERROR"),
			HaveKeyWithValue("request_id", p.RequestID),
			HaveKeyWithValue("error", ContainSubstring("hunter2")),
		)))
	})

	It("answers a panicking handler with 500 and keeps serving", func() {
		res := srv.get("/panic")
		Expect(res.status).To(Equal(http.StatusInternalServerError))
		Expect(problemOf(res).Detail).To(Equal("An unexpected error occurred."))
		Expect(srv.logLines()).To(ContainElement(And(
			HaveKeyWithValue("panic", "kaboom"),
			HaveKeyWithValue("stack", ContainSubstring("goroutine")),
		)))

		Expect(srv.get("/ok").status).To(Equal(http.StatusOK))
	})

	It("sends Retry-After in whole seconds, rounded up", func() {
		res := srv.get("/limited")
		Expect(res.status).To(Equal(http.StatusTooManyRequests))
		Expect(res.header.Get("Retry-After")).To(Equal("2"))
	})

	It("challenges an unauthenticated request for a bearer token", func() {
		res := srv.get("/unauthenticated")
		Expect(res.status).To(Equal(http.StatusUnauthorized))
		Expect(res.header.Get("WWW-Authenticate")).To(Equal("Bearer"))
		Expect(problemOf(res).Detail).To(Equal("Sign in first."))
	})

	It("leaves a response alone once it has been sent", func() {
		res := srv.get("/partial")
		Expect(res.status).To(Equal(http.StatusOK))
		Expect(res.body).To(Equal("partial"))
	})

	It("answers a handler that outlives the request deadline with 503", func() {
		res := srv.get("/wait")
		Expect(res.status).To(Equal(http.StatusServiceUnavailable))
		Expect(problemOf(res).Code).To(Equal("unavailable"))
	})

	It("writes one access log line per request with its route, status and sizes", func() {
		res := srv.get("/ok", "X-Request-ID", "access-1")
		Expect(res.status).To(Equal(http.StatusOK))
		Eventually(srv.logLines).Should(ContainElement(And(
			HaveKeyWithValue("msg", "http request"),
			HaveKeyWithValue("method", "GET"),
			HaveKeyWithValue("route", "/ok"),
			HaveKeyWithValue("status", BeNumerically("==", 200)),
			HaveKeyWithValue("request_id", "access-1"),
			HaveKeyWithValue("bytes_out", BeNumerically("==", len(res.body))),
			HaveKey("duration_ms"),
			HaveKey("remote_ip"),
		)))
	})

	Describe("binding JSON bodies", func() {
		It("decodes a valid body", func() {
			res := srv.post("/bind", `{"title":"Ship it","count":3}`)
			Expect(res.status).To(Equal(http.StatusOK))
			Expect(res.body).To(MatchJSON(`{"title":"Ship it","count":3}`))
		})

		It("refuses malformed JSON with 400", func() {
			res := srv.post("/bind", `{"title": `)
			Expect(res.status).To(Equal(http.StatusBadRequest))
			Expect(problemOf(res).Detail).To(ContainSubstring("not valid JSON"))

			res = srv.post("/bind", `{"title": nope}`)
			Expect(res.status).To(Equal(http.StatusBadRequest))
			Expect(problemOf(res).Code).To(Equal("invalid_json"))
		})

		It("names the field that has the wrong type", func() {
			res := srv.post("/bind", `{"title":"x","count":"three"}`)
			Expect(res.status).To(Equal(http.StatusBadRequest))
			p := problemOf(res)
			Expect(p.Detail).To(Equal(`Field "count" must be an integer.`))
			Expect(p.Errors).To(HaveLen(1))
			Expect(p.Errors[0].Field).To(Equal("count"))
		})

		It("refuses data after the JSON value and an empty body", func() {
			res := srv.post("/bind", `{"title":"a"} {"title":"b"}`)
			Expect(res.status).To(Equal(http.StatusBadRequest))
			Expect(problemOf(res).Detail).To(Equal("The request body must contain a single JSON value."))

			res = srv.post("/bind", ``)
			Expect(res.status).To(Equal(http.StatusBadRequest))
			Expect(problemOf(res).Detail).To(Equal("The request body is empty."))
		})

		It("leaves an optional body's defaults when none is sent, announced or streamed, and checks one that is", func() {
			res := srv.post("/bind-optional", ``)
			Expect(res.status).To(Equal(http.StatusOK))
			Expect(res.body).To(MatchJSON(`{"title":"default","count":0}`))

			res = srv.do(http.MethodPost, "/bind-optional", io.MultiReader(strings.NewReader("")))
			Expect(res.status).To(Equal(http.StatusOK))
			Expect(res.body).To(MatchJSON(`{"title":"default","count":0}`))

			res = srv.post("/bind-optional", `{"title":"given"}`)
			Expect(res.status).To(Equal(http.StatusOK))
			Expect(res.body).To(MatchJSON(`{"title":"given","count":0}`))

			res = srv.post("/bind-optional", `{"title": `)
			Expect(res.status).To(Equal(http.StatusBadRequest))
			Expect(problemOf(res).Code).To(Equal("invalid_json"))
		})

		It("refuses a body over the limit with 413, announced or streamed", func() {
			big := `{"title":"` + strings.Repeat("x", 2048) + `"}`
			res := srv.post("/bind", big)
			Expect(res.status).To(Equal(http.StatusRequestEntityTooLarge))
			Expect(problemOf(res).Code).To(Equal("too_large"))

			// A reader without a length makes the client stream the body chunked.
			res = srv.do(http.MethodPost, "/bind", io.MultiReader(strings.NewReader(big)))
			Expect(res.status).To(Equal(http.StatusRequestEntityTooLarge))
			Expect(problemOf(res).Detail).To(Equal("The request body is larger than 1024 bytes."))
		})

		It("refuses a NUL character in any string of the body, naming the field", func() {
			for body, field := range map[string]string{
				`{"title":"a\u0000b"}`:                     "title",
				`{"title":"ok","tags":["x","\u0000"]}`:     "tags.1",
				`{"title":"ok","meta":{"k":"v\u0000"}}`:    "meta.k",
				`{"title":"ok","owner":{"name":"\u0000"}}`: "owner.name",
			} {
				res := srv.post("/bind", body)
				Expect(res.status).To(Equal(http.StatusBadRequest), body)
				p := problemOf(res)
				Expect(p.Type).To(Equal("https://motionstudio.dev/problems/invalid_text"))
				Expect(p.Detail).To(Equal(`Field "` + field + `" must be valid UTF-8 text without NUL characters.`))
				Expect(p.Errors).To(HaveLen(1))
				Expect(p.Errors[0].Field).To(Equal(field))
			}
		})

		It("refuses a body that is not UTF-8", func() {
			res := srv.post("/bind", "{\"title\":\"a\xff\xfeb\"}")
			Expect(res.status).To(Equal(http.StatusBadRequest))
			Expect(problemOf(res).Code).To(Equal("invalid_text"))
		})

		It("lets large-body routes through without the limit or the request deadline", func() {
			res := srv.do(http.MethodPost, "/upload", strings.NewReader(strings.Repeat("x", 4096)))
			Expect(res.status).To(Equal(http.StatusOK))
			Expect(res.body).To(Equal("4096 bytes, deadline=false"))
		})
	})
})

var _ = Describe("refusing text no service can store", func() {
	var srv *running

	BeforeEach(func() {
		srv = start(httpx.Options{Service: "text", ErrorStyle: httpx.ProblemJSON}, appRoutes)
	})

	It("refuses NUL characters and invalid UTF-8 in the path and the query with 400", func() {
		for _, target := range []string{"/items/a%00b", "/items/%ff%fe", "/items/ok?q=a%00b", "/items/ok?q=%C3%28", "/items/ok?a%00=1"} {
			res := srv.get(target)
			Expect(res.status).To(Equal(http.StatusBadRequest), target)
			Expect(problemOf(res).Code).To(Equal("invalid_text"), target)
		}
		res := srv.get("/items/ok?q=%zz")
		Expect(res.status).To(Equal(http.StatusBadRequest))
		Expect(problemOf(res).Code).To(Equal("invalid_query"))

		res = srv.get("/items/caf%C3%A9?q=%E2%9C%93")
		Expect(res.status).To(Equal(http.StatusOK))
		Expect(res.body).To(Equal("café|✓"))
	})

	It("names the query parameter that holds bad text", func() {
		p := problemOf(srv.get("/items/ok?q=a%00b"))
		Expect(p.Detail).To(Equal(`Query parameter "q" must be valid UTF-8 text without NUL characters.`))
		Expect(p.Errors).To(HaveLen(1))
		Expect(p.Errors[0].Field).To(Equal("q"))
	})

	It("answers a parameter the generated wrapper cannot bind with the usual problem type and a clear detail", func() {
		res := srv.get("/generated")
		Expect(res.status).To(Equal(http.StatusBadRequest))
		p := problemOf(res)
		Expect(p.Type).To(Equal("https://motionstudio.dev/problems/invalid_parameter"))
		Expect(p.Code).To(Equal("invalid_parameter"))
		Expect(p.Detail).To(Equal(`Parameter "page" must be an integer.`))
		Expect(p.Errors).To(HaveLen(1))
		Expect(p.Errors[0].Field).To(Equal("page"))
		Expect(p.Errors[0].Message).To(Equal("must be an integer"))
	})

	It("answers plain-text services with a 400 and a plain-text message", func() {
		plain := start(httpx.Options{Service: "plain-text", ErrorStyle: httpx.PlainText}, appRoutes)
		res := plain.get("/items/a%00b")
		Expect(res.status).To(Equal(http.StatusBadRequest))
		Expect(res.header.Get("Content-Type")).To(Equal("text/plain; charset=utf-8"))
		Expect(res.body).To(Equal("The request path must be valid UTF-8 text without NUL characters."))
	})
})

var _ = Describe("answering errors as plain text", func() {
	var srv *running

	BeforeEach(func() {
		srv = start(httpx.Options{Service: "plain", ErrorStyle: httpx.PlainText}, appRoutes)
	})

	It("sends the domain message verbatim", func() {
		res := srv.get("/invalid")
		Expect(res.status).To(Equal(http.StatusBadRequest))
		Expect(res.header.Get("Content-Type")).To(Equal("text/plain; charset=utf-8"))
		Expect(res.body).To(Equal("Title is required."))
	})

	It("sends 403 and 401 with empty bodies", func() {
		res := srv.get("/forbidden")
		Expect(res.status).To(Equal(http.StatusForbidden))
		Expect(res.body).To(BeEmpty())

		res = srv.get("/unauthenticated")
		Expect(res.status).To(Equal(http.StatusUnauthorized))
		Expect(res.body).To(BeEmpty())
		Expect(res.header.Get("WWW-Authenticate")).To(Equal("Bearer"))
	})

	It("hides the cause of an unexpected error", func() {
		res := srv.get("/boom")
		Expect(res.status).To(Equal(http.StatusInternalServerError))
		Expect(res.body).To(Equal("An unexpected error occurred."))
	})
})
