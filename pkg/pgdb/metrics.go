package pgdb

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"gorm.io/gorm"
)

// ScrapeTimeout bounds the query a QueryCollector runs on each scrape.
const ScrapeTimeout = 2 * time.Second

// Gauge names one gauge of a QueryCollector.
type Gauge struct {
	Name string
	Help string
}

// QueryCollector is a Prometheus collector that runs one SQL query on each scrape and turns
// every row into samples: the row's first columns are the label values, the rest one value per
// gauge. A query that fails or outlasts ScrapeTimeout leaves its gauges out of that scrape
// (absent, not zero) rather than failing the whole scrape; /readyz reports the database.
type QueryCollector struct {
	db     *gorm.DB
	query  string
	labels int
	descs  []*prometheus.Desc
}

// NewQueryCollector returns a collector of gauges over query, whose rows hold the values of
// labels, in order, followed by one number per gauge. The query should be cheap (answered from
// a partial index): it runs on every scrape.
func NewQueryCollector(db *gorm.DB, query string, labels []string, gauges ...Gauge) *QueryCollector {
	descs := make([]*prometheus.Desc, len(gauges))
	for i, g := range gauges {
		descs[i] = prometheus.NewDesc(g.Name, g.Help, labels, nil)
	}
	return &QueryCollector{db: db, query: query, labels: len(labels), descs: descs}
}

// Describe sends the gauges' descriptions.
func (c *QueryCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

// Collect runs the query and sends one sample per gauge and row.
func (c *QueryCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), ScrapeTimeout)
	defer cancel()
	rows, err := c.db.WithContext(ctx).Raw(c.query).Rows()
	if err != nil {
		return
	}
	defer func() { _ = rows.Close() }()
	labels := make([]string, c.labels)
	values := make([]float64, len(c.descs))
	dest := make([]any, 0, len(labels)+len(values))
	for i := range labels {
		dest = append(dest, &labels[i])
	}
	for i := range values {
		dest = append(dest, &values[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return
		}
		for i, d := range c.descs {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, values[i], labels...)
		}
	}
}

// NewJobQueueCollector returns the collector of a service's job queues: query answers rows of
// (queue, state, depth, oldest age in seconds) for the jobs waiting or running, exported as
// job_queue_depth{queue,state} and job_queue_oldest_age_seconds{queue,state}. The query
// should answer every state it measures, with 0 and 0 when no job is in it, so that the series
// do not come and go.
func NewJobQueueCollector(db *gorm.DB, query string) *QueryCollector {
	return NewQueryCollector(db, query, []string{"queue", "state"},
		Gauge{Name: "job_queue_depth", Help: "Jobs in the queue, by queue and state."},
		Gauge{Name: "job_queue_oldest_age_seconds", Help: "Age of the oldest job in the queue and state, in seconds (0 when none)."},
	)
}

// NewStatsCollector returns the Prometheus collector of db's connection pool statistics
// (go_sql_* with db_name the current database). It fails when db has no database/sql pool or
// the database's name cannot be read.
func NewStatsCollector(ctx context.Context, db *gorm.DB) (prometheus.Collector, error) {
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("pgdb: stats collector: %w", err)
	}
	var name string
	if err := db.WithContext(ctx).Raw(`SELECT current_database()`).Scan(&name).Error; err != nil {
		return nil, fmt.Errorf("pgdb: stats collector: database name: %w", err)
	}
	return collectors.NewDBStatsCollector(sqlDB, name), nil
}
