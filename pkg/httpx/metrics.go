package httpx

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// httpMetrics counts and times requests by method, route template and status.
type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

// newHTTPMetrics registers the request metrics on reg, labelled with the service name when given.
func newHTTPMetrics(reg prometheus.Registerer, service string) (*httpMetrics, error) {
	labels := []string{"method", "route", "status"}
	var constLabels prometheus.Labels
	if service != "" {
		constLabels = prometheus.Labels{"service": service}
	}
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name:        "http_requests_total",
			Help:        "HTTP requests answered, by method, route template and status.",
			ConstLabels: constLabels,
		}, labels),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:        "http_request_duration_seconds",
			Help:        "Time to answer HTTP requests, by method, route template and status.",
			ConstLabels: constLabels,
			Buckets:     prometheus.DefBuckets,
		}, labels),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("httpx: register http metrics: %w", err)
		}
	}
	return m, nil
}

func (m *httpMetrics) observe(method, route string, status int, elapsed time.Duration) {
	code := strconv.Itoa(status)
	m.requests.WithLabelValues(method, route, code).Inc()
	m.duration.WithLabelValues(method, route, code).Observe(elapsed.Seconds())
}

// otherMethod is the label of every request method outside the standard set.
const otherMethod = "_OTHER"

// methodLabel is the request method as metrics, spans and access logs name it: a standard
// method as sent, any other as "_OTHER" (OpenTelemetry's HTTP semantic conventions), so that a
// client inventing methods cannot add series without bound.
func methodLabel(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return method
	}
	return otherMethod
}
