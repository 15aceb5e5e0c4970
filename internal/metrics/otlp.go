package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"

	promBridge "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// ExportOTLP also pushes the metrics over OTLP when the environment asks for it, the way
// traces are configured: OTEL_METRICS_EXPORTER=otlp, or unset while an OTLP endpoint is
// set (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_METRICS_ENDPOINT); the protocol
// is OTEL_EXPORTER_OTLP_METRICS_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf
// or grpc), the period OTEL_METRIC_EXPORT_INTERVAL. The metrics are the registry's, read
// through OpenTelemetry's Prometheus bridge. It returns how they are exported ("" when
// they are not) and a shutdown that sends the last reading.
func (m *Metrics) ExportOTLP(ctx context.Context, getenv func(string) string) (exporter string, shutdown func(context.Context) error, err error) {
	none := func(context.Context) error { return nil }
	if m == nil {
		return "", none, nil
	}
	switch kind := strings.TrimSpace(getenv("OTEL_METRICS_EXPORTER")); kind {
	case "none":
		return "", none, nil
	case "":
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") == "" && getenv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") == "" {
			return "", none, nil
		}
	case "otlp":
	default:
		return "", none, fmt.Errorf("metrics: OTEL_METRICS_EXPORTER=%q is not supported: use otlp or none", kind)
	}
	proto := getenv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	var exp metric.Exporter
	switch proto {
	case "", "http/protobuf":
		exp, err = otlpmetrichttp.New(ctx)
		exporter = "otlp (http/protobuf)"
	case "grpc":
		exp, err = otlpmetricgrpc.New(ctx)
		exporter = "otlp (grpc)"
	default:
		return "", none, fmt.Errorf("metrics: OTLP protocol %q is not supported: use http/protobuf or grpc", proto)
	}
	if err != nil {
		return "", none, fmt.Errorf("metrics: OTLP exporter: %w", err)
	}
	res, err := resource.New(ctx, resource.WithAttributes(semconv.ServiceName("agentengine")), resource.WithFromEnv())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return "", none, fmt.Errorf("metrics: resource: %w", err)
	}
	reader := metric.NewPeriodicReader(exp, metric.WithProducer(promBridge.NewMetricProducer(promBridge.WithGatherer(m.reg))))
	mp := metric.NewMeterProvider(metric.WithReader(reader), metric.WithResource(res))
	return exporter, mp.Shutdown, nil
}
