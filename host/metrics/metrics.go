package metrics

import (
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/plugins"
)

// Eras, as the era label spells them.
const (
	eraHandshake = "2025-11-25" // every handshake revision, 2024-11-05 … 2025-11-25
	eraStateless = "2026-07-28"
)

// Metrics collects mcphost's metrics on a registry of its own (not the
// process-wide default one). It implements [plugins.Observer]. Its zero
// value is not usable: call [New].
type Metrics struct {
	reg *prometheus.Registry

	calls   *prometheus.HistogramVec
	faults  *prometheus.CounterVec
	reloads *prometheus.CounterVec
	failed  prometheus.Counter

	mu     sync.RWMutex
	series map[callKey]prometheus.Observer // resolved histogram children

	live liveCollector
}

type callKey struct{ plugin, tool string }

// New returns Metrics that read sessions, listeners and requests in flight
// from srv and instance pools from reg's current generation at each
// scrape. srv may be set later with [Metrics.Serve] when the server is
// made after the loader that needs the observer.
func New(reg *plugins.Registry) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "mcphost_tool_call_duration_seconds",
			Help: "Tool calls by plugin and tool (exposed name), with their latency.",
			// From a warm in-process call (~50µs) to the default 30s timeout.
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"plugin", "tool"}),
		faults: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcphost_tool_faults_total",
			Help: "Failed tool calls by plugin and fault kind (trap, timeout, out_of_memory, …).",
		}, []string{"plugin", "kind"}),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "mcphost_reloads_total",
			Help: "Loads of plugins.toml, the initial one included, by result (ok, config_error).",
		}, []string{"result"}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "mcphost_reload_plugin_failures_total",
			Help: "Plugins that failed to load or reload (the previous version may keep serving).",
		}),
		series: make(map[callKey]prometheus.Observer),
	}
	m.live.plugins = reg
	m.reloads.WithLabelValues("ok")
	m.reloads.WithLabelValues("config_error")
	m.reg.MustRegister(m.calls, m.faults, m.reloads, m.failed, &m.live,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Serve makes the scrapes read sessions, listeners and requests in flight
// from srv.
func (m *Metrics) Serve(srv *host.Server) {
	m.live.mu.Lock()
	m.live.srv = srv
	m.live.mu.Unlock()
}

// ToolCall implements [plugins.Observer].
func (m *Metrics) ToolCall(plugin, tool string, dur time.Duration, fault string) {
	k := callKey{plugin, tool}
	m.mu.RLock()
	o := m.series[k]
	m.mu.RUnlock()
	if o == nil {
		o = m.calls.WithLabelValues(plugin, tool)
		m.mu.Lock()
		m.series[k] = o
		m.mu.Unlock()
	}
	o.Observe(dur.Seconds())
	if fault != "" {
		m.faults.WithLabelValues(plugin, fault).Inc()
	}
}

// Reloaded counts one load of plugins.toml (plugins.Manager's OnReload).
func (m *Metrics) Reloaded(rep plugins.ReloadReport) {
	result := "ok"
	if rep.Err != nil {
		result = "config_error"
	}
	m.reloads.WithLabelValues(result).Inc()
	m.failed.Add(float64(len(rep.Failures)))
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// liveCollector reads the gauges when scraped, so that serving pays
// nothing for them.
type liveCollector struct {
	plugins *plugins.Registry
	mu      sync.Mutex
	srv     *host.Server
}

var (
	descSessions  = prometheus.NewDesc("mcphost_sessions", "Sessions being served, by era: handshake sessions (2025-11-25) and stateless HTTP requests, each on a throw-away session (2026-07-28).", []string{"era"}, nil)
	descListeners = prometheus.NewDesc("mcphost_listeners", "Clients that hear of list changes, by era: handshake sessions (2025-11-25) and open subscriptions/listen requests (2026-07-28).", []string{"era"}, nil)
	descInFlight  = prometheus.NewDesc("mcphost_inflight_requests", "Requests being served concurrently, across all sessions.", nil, nil)
	descPool      = prometheus.NewDesc("mcphost_pool_instances", "Live Wasm instances of each plugin's pool, idle or busy.", []string{"plugin"}, nil)
	descPoolIdle  = prometheus.NewDesc("mcphost_pool_idle_instances", "Instances of each plugin's pool waiting for a call.", []string{"plugin"}, nil)
	descSigner    = prometheus.NewDesc("mcphost_plugin_signer_info", "Always 1: who signed each plugin served under a [plugin.signature] table, as verified when it was fetched (identity and issuer of a keyless signature, or the key's fingerprint), and the digest verified.", []string{"plugin", "identity", "issuer", "key", "digest"}, nil)
)

func (c *liveCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descSessions, descListeners, descInFlight, descPool, descPoolIdle, descSigner} {
		ch <- d
	}
}

func (c *liveCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	srv := c.srv
	c.mu.Unlock()
	var st host.Stats
	if srv != nil {
		st = srv.Stats()
	}
	ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(st.Sessions), eraHandshake)
	ch <- prometheus.MustNewConstMetric(descSessions, prometheus.GaugeValue, float64(st.Stateless), eraStateless)
	ch <- prometheus.MustNewConstMetric(descListeners, prometheus.GaugeValue, float64(st.Sessions), eraHandshake)
	ch <- prometheus.MustNewConstMetric(descListeners, prometheus.GaugeValue, float64(st.Listeners), eraStateless)
	ch <- prometheus.MustNewConstMetric(descInFlight, prometheus.GaugeValue, float64(st.InFlight))
	g, release := c.plugins.Acquire()
	defer release()
	for _, p := range g.Plugins {
		if ps, ok := p.PoolStats(); ok {
			ch <- prometheus.MustNewConstMetric(descPool, prometheus.GaugeValue, float64(ps.Instances), p.Name)
			ch <- prometheus.MustNewConstMetric(descPoolIdle, prometheus.GaugeValue, float64(ps.Idle), p.Name)
		}
		if s := p.Signer(); s != nil {
			ch <- prometheus.MustNewConstMetric(descSigner, prometheus.GaugeValue, 1, p.Name, s.Identity, s.Issuer, s.Key, s.Digest)
		}
	}
}
