package httpx

import (
	"context"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
)

// readyTimeout bounds GET /readyz; a check still running then is reported as timed out.
const readyTimeout = 2 * time.Second

type readiness struct {
	Status string            `json:"status"`
	Checks map[string]string `json:"checks"`
}

// readyz answers 503 shutting_down once shutdown began; otherwise it runs every check
// concurrently and answers 200 when all pass, else 503 with each failing check's error.
func (s *Server) readyz(c echo.Context) error {
	if s.draining.Load() {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "shutting_down"})
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), readyTimeout)
	defer cancel()

	type result struct {
		name string
		err  error
	}
	results := make(chan result, len(s.checks))
	out := readiness{Status: "ok", Checks: make(map[string]string, len(s.checks))}
	for _, chk := range s.checks {
		out.Checks[chk.Name] = "timed out after " + readyTimeout.String()
		go func() { results <- result{name: chk.Name, err: chk.Fn(ctx)} }()
	}
collect:
	for range s.checks {
		select {
		case r := <-results:
			if r.err != nil {
				out.Checks[r.name] = r.err.Error()
			} else {
				out.Checks[r.name] = "ok"
			}
		case <-ctx.Done():
			break collect
		}
	}

	status := http.StatusOK
	for _, v := range out.Checks {
		if v != "ok" {
			out.Status = "unavailable"
			status = http.StatusServiceUnavailable
		}
	}
	return c.JSON(status, out)
}
