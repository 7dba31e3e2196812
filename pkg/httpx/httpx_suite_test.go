package httpx_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gbytes"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/httpx"
	"github.com/motionstudio/platform/pkg/logx"
	"github.com/motionstudio/platform/pkg/testkit"
)

func TestHTTPX(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "httpx")
}

// running is a started test server.
type running struct {
	base string
	addr string
	logs *gbytes.Buffer
}

// start builds a server on 127.0.0.1:0 from opts, registers routes, serves it until the spec
// ends and checks that it then stops cleanly.
func start(opts httpx.Options, routes func(e *echo.Echo)) *running {
	logs := gbytes.NewBuffer()
	opts.Config.Addr = "127.0.0.1:0"
	if opts.Logger == nil {
		opts.Logger = logx.New(io.MultiWriter(logs, GinkgoWriter), "httpx-test", "debug")
	}
	srv, err := httpx.New(opts)
	Expect(err).NotTo(HaveOccurred())
	if routes != nil {
		routes(srv.Echo)
	}
	addr, err := srv.Listen()
	Expect(err).NotTo(HaveOccurred())
	testkit.RunUntilCleanup(srv.Serve)
	return &running{base: "http://" + addr.String(), addr: addr.String(), logs: logs}
}

// response is what a client saw.
type response struct {
	status int
	header http.Header
	body   string
}

func (r *running) do(method, path string, body io.Reader, header ...string) response {
	GinkgoHelper()
	req, err := http.NewRequest(method, r.base+path, body)
	Expect(err).NotTo(HaveOccurred())
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	return response{status: res.StatusCode, header: res.Header, body: string(b)}
}

func (r *running) get(path string, header ...string) response {
	GinkgoHelper()
	return r.do(http.MethodGet, path, nil, header...)
}

func (r *running) post(path, body string) response {
	GinkgoHelper()
	return r.do(http.MethodPost, path, strings.NewReader(body), "Content-Type", "application/json")
}

// logLines decodes the JSON log records written so far.
func (r *running) logLines() []map[string]any { return testkit.LogRecords(r.logs.Contents()) }

// problem is an RFC 9457 document as sent by httpx.
type problem struct {
	Type      string `json:"type"`
	Title     string `json:"title"`
	Status    int    `json:"status"`
	Detail    string `json:"detail"`
	Code      string `json:"code"`
	RequestID string `json:"request_id"`
	Errors    []struct {
		Field   string `json:"field"`
		Message string `json:"message"`
	} `json:"errors"`
}

func problemOf(r response) problem {
	GinkgoHelper()
	Expect(r.header.Get("Content-Type")).To(Equal("application/problem+json"))
	var p problem
	Expect(json.Unmarshal([]byte(r.body), &p)).To(Succeed(), r.body)
	Expect(p.Status).To(Equal(r.status))
	Expect(p.RequestID).NotTo(BeEmpty())
	Expect(p.RequestID).To(Equal(r.header.Get("X-Request-ID")))
	return p
}

// errSecretCause is an internal error whose text must never reach a client.
var errSecretCause = errors.New("dial postgres://app:hunter2@db:5432 refused")

type titleBody struct {
	Title string            `json:"title"`
	Count int               `json:"count"`
	Tags  []string          `json:"tags,omitempty"`
	Meta  map[string]string `json:"meta,omitempty"`
	Owner *struct {
		Name string `json:"name"`
	} `json:"owner,omitempty"`
}

// appRoutes registers handlers that fail in every way the error handler maps.
func appRoutes(e *echo.Echo) {
	e.GET("/ok", func(c echo.Context) error { return c.JSON(http.StatusOK, map[string]string{"hello": "world"}) })
	e.GET("/invalid", func(echo.Context) error {
		return apperr.E(apperr.Invalid, "title_required", "Title is required.").
			WithFields(apperr.FieldError{Field: "title", Message: "is required"})
	})
	e.GET("/forbidden", func(echo.Context) error { return apperr.E(apperr.Forbidden, "", "You may not.") })
	e.GET("/unauthenticated", func(echo.Context) error {
		return apperr.E(apperr.Unauthenticated, "", "Sign in first.")
	})
	e.GET("/limited", func(echo.Context) error {
		err := apperr.E(apperr.RateLimited, "", "Slow down.")
		err.RetryAfter = 1500 * time.Millisecond
		return err
	})
	e.GET("/boom", func(echo.Context) error { return fmt.Errorf("load board: %w", errSecretCause) })
	e.GET("/panic", func(echo.Context) error { panic("kaboom") })
	e.GET("/partial", func(c echo.Context) error {
		if err := c.String(http.StatusOK, "partial"); err != nil {
			return err
		}
		return errors.New("failed after the response was sent")
	})
	e.POST("/bind", func(c echo.Context) error {
		var body titleBody
		if err := httpx.Bind(c, &body); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, body)
	})
	e.POST("/bind-optional", func(c echo.Context) error {
		body := titleBody{Title: "default"}
		if err := httpx.BindOptional(c, &body); err != nil {
			return err
		}
		return c.JSON(http.StatusOK, body)
	})
	e.GET("/items/:id", func(c echo.Context) error { return c.String(http.StatusOK, c.Param("id")+"|"+c.QueryParam("q")) })
	e.GET("/generated", func(echo.Context) error {
		// The error oapi-codegen's echo wrapper returns for a query parameter that is no integer.
		return echo.NewHTTPError(http.StatusBadRequest,
			`Invalid format for parameter page: error binding string parameter: strconv.ParseInt: parsing "x": invalid syntax`)
	})
	e.GET("/wait", func(c echo.Context) error {
		<-c.Request().Context().Done()
		return c.Request().Context().Err()
	})
	e.POST("/upload", func(c echo.Context) error {
		n, err := io.Copy(io.Discard, c.Request().Body)
		if err != nil {
			return err
		}
		_, hasDeadline := c.Request().Context().Deadline()
		return c.String(http.StatusOK, fmt.Sprintf("%d bytes, deadline=%t", n, hasDeadline))
	})
}
