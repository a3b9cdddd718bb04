package plugins

import (
	"reflect"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/logtest"
)

func TestToolName(t *testing.T) {
	long := strings.Repeat("a", 70)
	tests := []struct {
		prefix, original, want string
	}{
		{"hash_", "sha256", "hash_sha256"},
		{"", "sha256", "sha256"},
		{"fs_", "read.file", "fs_read_file"},
		{"fs_", "read::file", "fs_read__file"},
		{"x_", "héllo wörld", "x_h_llo_w_rld"},
		{"x_", "bad\xffbyte", "x_bad_byte"},
		{"", "", "_"},
		{"p_", "ok-name_1", "p_ok-name_1"},
		{"p_", long, ""}, // checked for shape below
	}
	for _, tt := range tests {
		got := ToolName(tt.prefix, tt.original)
		if tt.original == long {
			// The hash suffix is checked for shape, not value.
			if len(got) != MaxToolName || !strings.HasPrefix(got, "p_"+strings.Repeat("a", 53)+"_") {
				t.Errorf("ToolName(%q, long) = %q; want 64 chars ending in _<8 hex>", tt.prefix, got)
			}
		} else if got != tt.want {
			t.Errorf("ToolName(%q, %q) = %q; want %q", tt.prefix, tt.original, got, tt.want)
		}
		if !ValidToolName(got) {
			t.Errorf("ToolName(%q, %q) = %q, which is not a valid tool name", tt.prefix, tt.original, got)
		}
	}
	// Long names that differ only past the cut stay distinct.
	a, b := ToolName("", long+"x"), ToolName("", long+"y")
	if a == b {
		t.Errorf("ToolName of two long names: both %q; want different hash suffixes", a)
	}
}

func TestValidToolName(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"a", true}, {"A-b_9", true}, {"", false}, {"a.b", false}, {"a b", false},
		{strings.Repeat("x", 64), true}, {strings.Repeat("x", 65), false}, {"é", false},
	}
	for _, tt := range tests {
		if got := ValidToolName(tt.in); got != tt.want {
			t.Errorf("ValidToolName(%q) = %v; want %v", tt.in, got, tt.want)
		}
	}
}

func TestAssignNames(t *testing.T) {
	tests := []struct {
		name  string
		reqs  []nameReq
		limit int
		want  []string
		warns []string
	}{
		{
			name: "no collisions",
			reqs: []nameReq{{"a", "x"}, {"b", "y"}},
			want: []string{"x", "y"},
		},
		{
			name:  "later plugin gets a suffix",
			reqs:  []nameReq{{"a", "echo"}, {"b", "echo"}, {"c", "echo"}},
			want:  []string{"echo", "echo_2", "echo_3"},
			warns: []string{"WARN tool name collision tool=echo plugin=b other=a name=echo_2", "WARN tool name collision tool=echo plugin=c other=a name=echo_3"},
		},
		{
			name:  "suffix taken by a real name",
			reqs:  []nameReq{{"a", "x"}, {"a", "x_2"}, {"b", "x"}},
			want:  []string{"x", "x_2", "x_3"},
			warns: []string{"WARN tool name collision tool=x plugin=b other=a name=x_3"},
		},
		{
			name:  "suffix respects the length limit",
			reqs:  []nameReq{{"a", strings.Repeat("n", 64)}, {"b", strings.Repeat("n", 64)}},
			limit: 64,
			want:  []string{strings.Repeat("n", 64), strings.Repeat("n", 62) + "_2"},
			warns: []string{"WARN tool name collision tool=" + strings.Repeat("n", 64) + " plugin=b other=a name=" + strings.Repeat("n", 62) + "_2"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, rec := logtest.New()
			got := assignNames(log, "tool", tt.reqs, tt.limit)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("names: got %q; want %q", got, tt.want)
			}
			if w := rec.All(); !reflect.DeepEqual(w, tt.warns) && (len(w) > 0 || len(tt.warns) > 0) {
				t.Errorf("warnings:\n got %q\nwant %q", w, tt.warns)
			}
		})
	}
}

func TestFirstWins(t *testing.T) {
	log, rec := logtest.New()
	got := firstWins(log, "resource", []nameReq{{"a", "file:///x"}, {"b", "file:///y"}, {"b", "file:///x"}}, nil)
	if want := []bool{true, true, false}; !reflect.DeepEqual(got, want) {
		t.Errorf("keep: got %v; want %v", got, want)
	}
	if w, want := rec.All(), []string{"WARN duplicate resource uri=file:///x plugin=b other=a"}; !reflect.DeepEqual(w, want) {
		t.Errorf("warnings: got %q; want %q", w, want)
	}
}
