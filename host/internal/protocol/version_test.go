package protocol

import (
	"testing"
)

func TestNegotiate(t *testing.T) {
	tests := []struct{ requested, want string }{
		{"2024-11-05", "2024-11-05"},
		{"2025-03-26", "2025-03-26"},
		{"2025-06-18", "2025-06-18"},
		{"2025-11-25", "2025-11-25"},
		{"2026-07-28", "2025-11-25"},
		{"1999-01-01", "2025-11-25"},
		{"", "2025-11-25"},
	}
	for _, tt := range tests {
		if got := Negotiate(tt.requested).String(); got != tt.want {
			t.Errorf("Negotiate(%q) = %s; want %s", tt.requested, got, tt.want)
		}
	}
}
