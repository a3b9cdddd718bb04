package cli

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestStartTracing: traces are off unless OTEL_TRACES_EXPORTER=otlp, an
// exporter or protocol mcphost does not speak is an error that says what
// to set, and an endpoint without the exporter says why nothing is sent.
func TestStartTracing(t *testing.T) {
	for _, tc := range []struct {
		name    string
		env     map[string]string
		on      bool
		wantErr string
		wantLog string
	}{
		{name: "unset"},
		{name: "none", env: map[string]string{"OTEL_TRACES_EXPORTER": "none"}},
		{name: "otlp", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true, wantLog: "traces on"},
		{name: "otlp http/protobuf", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}, on: true},
		{name: "grpc", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, wantErr: "set http/protobuf"},
		{name: "traces protocol wins", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
			"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, on: true},
		{name: "zipkin", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, wantErr: "otlp only"},
		{name: "disabled", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}, wantLog: "OTEL_SDK_DISABLED"},
		{name: "endpoint alone", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, wantLog: "set OTEL_TRACES_EXPORTER=otlp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			tr, err := startTracing(context.Background(), func(k string) string { return tc.env[k] }, slog.New(slog.NewTextHandler(&logs, nil)))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v; want an error containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tr.shutdown(slog.New(slog.DiscardHandler))
			if got := tr != nil; got != tc.on {
				t.Errorf("on = %v; want %v", got, tc.on)
			}
			if (tr.tracer() != nil) != tc.on || (tr.sandbox() != nil) != tc.on {
				t.Errorf("tracers do not match on = %v", tc.on)
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Errorf("log %q; want it to contain %q", logs.String(), tc.wantLog)
			}
		})
	}
}
