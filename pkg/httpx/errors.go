package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/motionstudio/platform/pkg/apperr"
)

const (
	problemTypeBase   = "https://motionstudio.dev/problems/"
	genericMessage    = "An unexpected error occurred."
	timeoutMessage    = "The request took too long to process."
	mimeProblemJSON   = "application/problem+json"
	mimePlainTextUTF8 = "text/plain; charset=utf-8"
)

// problem is an error reduced to what a client may see.
type problem struct {
	status     int
	code       string
	message    string
	fields     []apperr.FieldError
	retryAfter time.Duration
	// typed is true for apperr errors, whose code gets its own problem type URI.
	typed bool
}

// toProblem maps any error to the answer: apperr kinds to their status, echo errors to their code,
// oversized bodies to 413, expired request deadlines to 503, everything else to a generic 500.
func toProblem(err error) problem {
	if e, ok := apperr.As(err); ok {
		p := problem{status: e.Kind.Status(), code: e.Code, message: e.Message, fields: e.Fields,
			retryAfter: e.RetryAfter, typed: true}
		if p.code == "" {
			p.code = e.Kind.String()
		}
		if p.message == "" {
			p.message = http.StatusText(p.status)
		}
		return p
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		if pe, ok := parameterError(he); ok {
			return toProblem(pe)
		}
		p := problem{status: he.Code, code: codeForStatus(he.Code), message: http.StatusText(he.Code)}
		if msg, ok := he.Message.(string); ok && msg != "" && he.Code < http.StatusInternalServerError {
			p.message = msg
		}
		if p.status >= http.StatusInternalServerError {
			p.message = genericMessage
		}
		return p
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return toProblem(tooLarge(mbe.Limit))
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return problem{status: http.StatusServiceUnavailable, code: apperr.Unavailable.String(), message: timeoutMessage}
	}
	return problem{status: http.StatusInternalServerError, code: apperr.Internal.String(), message: genericMessage}
}

// generatedParamPrefix starts the message of the error that oapi-codegen's echo wrappers return
// for a path or query parameter they cannot bind. The wrappers pass on nothing but this text
// ("Invalid format for parameter page: <cause>"), so the parameter's name and the kind of value
// it needs are read from it.
const generatedParamPrefix = "Invalid format for parameter "

// parameterError turns a generated wrapper's binding error into an Invalid error that names the
// parameter and what it must be, with the usual problem type.
func parameterError(he *echo.HTTPError) (*apperr.Error, bool) {
	msg, ok := he.Message.(string)
	if !ok || he.Code != http.StatusBadRequest || !strings.HasPrefix(msg, generatedParamPrefix) {
		return nil, false
	}
	name, cause, _ := strings.Cut(strings.TrimPrefix(msg, generatedParamPrefix), ": ")
	rule := parameterRule(cause)
	return apperr.Wrap(he, apperr.Invalid, "invalid_parameter", fmt.Sprintf("Parameter %q %s.", name, rule)).
		WithFields(apperr.FieldError{Field: name, Message: rule}), true
}

// parameterRule says what a parameter must be, from the binder's cause.
func parameterRule(cause string) string {
	lower := strings.ToLower(cause)
	switch {
	case strings.Contains(lower, "is required"), strings.Contains(lower, "is empty"):
		return "is required"
	case strings.Contains(lower, "multiple values"), strings.Contains(lower, "multiple times"):
		return "must be given once"
	case strings.Contains(lower, "uuid"):
		return "must be a UUID"
	case strings.Contains(lower, "parseint"), strings.Contains(lower, "parseuint"), strings.Contains(lower, "overflows destination of type: int"),
		strings.Contains(lower, "overflows destination of type: uint"):
		return "must be an integer"
	case strings.Contains(lower, "parsefloat"), strings.Contains(lower, "overflows destination of type: float"):
		return "must be a number"
	case strings.Contains(lower, "parsebool"):
		return "must be true or false"
	case strings.Contains(lower, "rfc3339"):
		return "must be an RFC 3339 date-time"
	case strings.Contains(lower, "as date"):
		return "must be a date (YYYY-MM-DD)"
	default:
		return "has an invalid value"
	}
}

// codeForStatus names an HTTP status the way apperr names kinds.
func codeForStatus(status int) string {
	switch status {
	case http.StatusBadRequest:
		return apperr.Invalid.String()
	case http.StatusUnauthorized:
		return apperr.Unauthenticated.String()
	case http.StatusForbidden:
		return apperr.Forbidden.String()
	case http.StatusNotFound:
		return apperr.NotFound.String()
	case http.StatusGone:
		return apperr.Gone.String()
	case http.StatusConflict:
		return apperr.Conflict.String()
	case http.StatusRequestEntityTooLarge:
		return apperr.TooLarge.String()
	case http.StatusUnsupportedMediaType:
		return apperr.Unsupported.String()
	case http.StatusTooManyRequests:
		return apperr.RateLimited.String()
	case http.StatusServiceUnavailable:
		return apperr.Unavailable.String()
	case http.StatusInternalServerError:
		return apperr.Internal.String()
	}
	text := http.StatusText(status)
	if text == "" {
		return "http_" + strconv.Itoa(status)
	}
	return strings.ReplaceAll(strings.ToLower(text), " ", "_")
}

type problemField struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

type problemDocument struct {
	Type      string         `json:"type"`
	Title     string         `json:"title"`
	Status    int            `json:"status"`
	Detail    string         `json:"detail"`
	Code      string         `json:"code"`
	RequestID string         `json:"request_id,omitempty"`
	Errors    []problemField `json:"errors,omitempty"`
}

// ErrorHandler is the echo error handler: it maps err once (see the package doc), logs 5xx
// answers at error with their cause and 4xx at debug, and writes the body in the given style.
// A response that has already been committed is left alone; HEAD requests get headers only.
func ErrorHandler(style ErrorStyle, log *slog.Logger) echo.HTTPErrorHandler {
	if log == nil {
		log = slog.Default()
	}
	return func(err error, c echo.Context) {
		p := toProblem(err)
		ctx := c.Request().Context()
		attrs := []slog.Attr{slog.Int("status", p.status), slog.String("code", p.code), slog.String("error", err.Error())}
		if p.status >= http.StatusInternalServerError {
			log.LogAttrs(ctx, slog.LevelError, "request failed", attrs...)
		} else {
			log.LogAttrs(ctx, slog.LevelDebug, "request refused", attrs...)
		}

		res := c.Response()
		if res.Committed {
			return
		}
		if p.retryAfter > 0 {
			res.Header().Set(echo.HeaderRetryAfter, strconv.FormatInt(int64(math.Ceil(p.retryAfter.Seconds())), 10))
		}
		if p.status == http.StatusUnauthorized {
			res.Header().Set(echo.HeaderWWWAuthenticate, "Bearer")
		}

		var werr error
		switch {
		case c.Request().Method == http.MethodHead:
			werr = c.NoContent(p.status)
		case style == PlainText:
			werr = writePlain(c, p)
		default:
			werr = writeProblem(c, p)
		}
		if werr != nil {
			log.LogAttrs(ctx, slog.LevelWarn, "write error response", slog.String("error", werr.Error()))
		}
	}
}

func writePlain(c echo.Context, p problem) error {
	if p.status == http.StatusUnauthorized || p.status == http.StatusForbidden {
		return c.NoContent(p.status)
	}
	return c.Blob(p.status, mimePlainTextUTF8, []byte(p.message))
}

func writeProblem(c echo.Context, p problem) error {
	doc := problemDocument{
		Type:      "about:blank",
		Title:     http.StatusText(p.status),
		Status:    p.status,
		Detail:    p.message,
		Code:      p.code,
		RequestID: RequestID(c),
	}
	if p.typed {
		doc.Type = problemTypeBase + p.code
	}
	for _, f := range p.fields {
		doc.Errors = append(doc.Errors, problemField(f))
	}
	body, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	return c.Blob(p.status, mimeProblemJSON, body)
}
