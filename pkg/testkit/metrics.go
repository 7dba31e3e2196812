package testkit

import (
	"bytes"
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Metrics is one scrape of a service's GET /metrics: the metric families by name.
type Metrics map[string]*dto.MetricFamily

// ParseMetrics parses the Prometheus text format of a GET /metrics answer. It fails the spec
// when body is not in that format.
func ParseMetrics(body []byte) Metrics {
	ginkgo.GinkgoHelper()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(body))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return families
}

// Value answers the value of the gauge or counter name whose labels include the given
// name-value pairs, or an error when the scrape has no such sample.
func (m Metrics) Value(name string, labels ...string) (float64, error) {
	f, ok := m[name]
	if !ok {
		return 0, fmt.Errorf("no metric %s", name)
	}
	for _, s := range f.GetMetric() {
		if hasLabels(s, labels) {
			switch {
			case s.GetGauge() != nil:
				return s.GetGauge().GetValue(), nil
			case s.GetCounter() != nil:
				return s.GetCounter().GetValue(), nil
			}
			return s.GetUntyped().GetValue(), nil
		}
	}
	return 0, fmt.Errorf("no %s sample with labels %v", name, labels)
}

// hasLabels reports whether s carries every name-value pair of pairs.
func hasLabels(s *dto.Metric, pairs []string) bool {
	have := map[string]string{}
	for _, l := range s.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if have[pairs[i]] != pairs[i+1] {
			return false
		}
	}
	return true
}
