package cli

import (
	"context"
	"os"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/prom"
)

// metricsListenUsage is the help of --metrics-listen.
const metricsListenUsage = "serve live Prometheus metrics (operations, bytes, errors, latency histograms per phase) at http://`ADDRESS`/metrics while the command runs (host:port, e.g. :9781); see docs/metrics.md"

// addMetricsFlag declares --metrics-listen on cmd.
func addMetricsFlag(cmd *cobra.Command, addr *string) {
	cmd.Flags().StringVar(addr, "metrics-listen", "", metricsListenUsage)
}

// liveMetrics is a metrics endpoint serving a board of the run's phases.
type liveMetrics struct {
	Board  *prom.Board
	server *prom.Server
}

// startMetrics serves the live metrics of the phases run under the
// returned context at addr, plus extra collectors; with addr "" it
// returns ctx and a nil *liveMetrics, whose Close does nothing.
func startMetrics(ctx context.Context, app *App, addr string, extra ...prometheus.Collector) (context.Context, *liveMetrics, error) {
	host, _ := os.Hostname()
	return startMetricsAs(ctx, app, addr, host, extra...)
}

// startMetricsAs is startMetrics with the host label of the local phases.
func startMetricsAs(ctx context.Context, app *App, addr, host string, extra ...prometheus.Collector) (context.Context, *liveMetrics, error) {
	if addr == "" {
		return ctx, nil, nil
	}
	m := &liveMetrics{Board: prom.NewBoard(host)}
	reg, err := prom.NewRegistry(append([]prometheus.Collector{m.Board}, extra...)...)
	if err != nil {
		return ctx, nil, err
	}
	if m.server, err = prom.Serve(addr, reg); err != nil {
		return ctx, nil, &UsageError{Err: err}
	}
	app.Infof("Live metrics at %s", m.server.URL())
	return engine.WithWatcher(ctx, m.Board), m, nil
}

// Close stops serving.
func (m *liveMetrics) Close() {
	if m != nil {
		_ = m.server.Close()
	}
}
