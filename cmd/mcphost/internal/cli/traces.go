package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// tracing is the OpenTelemetry trace pipeline of `mcphost serve`, built
// from the standard OTEL_* variables. A nil *tracing is off.
type tracing struct {
	tp *sdktrace.TracerProvider
}

// startTracing reads the environment: traces are on only with
// OTEL_TRACES_EXPORTER=otlp (and OTEL_SDK_DISABLED not true), and are
// exported over OTLP/HTTP (protobuf) to OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (default http://localhost:4318),
// which the exporter reads itself, as it reads the headers, timeout,
// compression and certificate variables. The sampler (OTEL_TRACES_SAMPLER)
// and batch (OTEL_BSP_*) variables are the SDK's. The service is
// OTEL_SERVICE_NAME, else "mcphost"; OTEL_RESOURCE_ATTRIBUTES adds to it.
func startTracing(ctx context.Context, getenv func(string) string, log *slog.Logger) (*tracing, error) {
	exporter := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		if exporter != "" && exporter != "none" {
			log.Info("traces are off: OTEL_SDK_DISABLED=true", "OTEL_TRACES_EXPORTER", exporter)
		}
		return nil, nil
	}
	switch exporter {
	case "", "none":
		if getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" {
			log.Info("traces are off: an OTLP endpoint is set but OTEL_TRACES_EXPORTER is not otlp; set OTEL_TRACES_EXPORTER=otlp to send them")
		}
		return nil, nil
	case "otlp":
	default:
		return nil, fmt.Errorf("OTEL_TRACES_EXPORTER=%q: mcphost exports traces with otlp only; set otlp, or none for no traces", exporter)
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: mcphost sends OTLP over http/protobuf only (port 4318 of a collector); set http/protobuf", proto)
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("traces: otlp exporter: %w", err)
	}
	res, err := resource.Merge(
		resource.NewSchemaless(attribute.String("service.name", "mcphost"), attribute.String("service.version", versionString())),
		envResource(ctx),
	)
	if err != nil {
		return nil, fmt.Errorf("traces: resource: %w", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	log.Info("traces on", "exporter", "otlp", "protocol", "http/protobuf", "service", serviceName(res))
	return &tracing{tp: tp}, nil
}

// envResource is the resource the environment describes
// (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
func envResource(ctx context.Context) *resource.Resource {
	r, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil {
		// A malformed OTEL_RESOURCE_ATTRIBUTES still yields the valid
		// part; the SDK says which part it dropped through its own log.
		slog.Warn("traces: OTEL_RESOURCE_ATTRIBUTES", "err", err)
	}
	if r == nil {
		return resource.Empty()
	}
	return r
}

func serviceName(r *resource.Resource) string {
	v, _ := r.Set().Value("service.name")
	return v.AsString()
}

// tracer is the server's tracer, or nil when tracing is off.
func (t *tracing) tracer() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tp.Tracer("github.com/mcphost/mcphost")
}

// sandbox is the sandbox's tracer, or nil when tracing is off; its
// outbound HTTP carries the trace context host.Propagator writes.
func (t *tracing) sandbox() trace.Tracer {
	if t == nil {
		return nil
	}
	return t.tp.Tracer("github.com/mcphost/mcphost/sandbox")
}

// shutdown flushes the spans still buffered and stops the exporter. Every
// return from serve runs it (EOF, a signal, an error); only a second
// signal, which exits at once, loses what is buffered.
func (t *tracing) shutdown(log *slog.Logger) {
	if t == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := t.tp.Shutdown(ctx); err != nil {
		log.Warn("traces: flush on exit failed; the spans still buffered are lost", "err", err)
	}
}
