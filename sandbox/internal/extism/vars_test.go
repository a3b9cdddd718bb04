package extism

import (
	"strings"
	"testing"
)

// TestVars: vars outlive the kernel's reset (they are the instance's),
// a set replaces, val 0 deletes, and a set past MaxVarBytes panics (the
// call fails, as on go-sdk) while a replacement that keeps the total
// under it does not.
func TestVars(t *testing.T) {
	k := NewKernel(4 << 20)
	var v Vars
	get := func(name string) string {
		off := v.Get(&k, k.Write([]byte(name)))
		if off == 0 {
			return "<none>"
		}
		return string(k.Read(off))
	}
	set := func(name, val string) {
		var off uint64
		if val != "" {
			off = k.Write([]byte(val))
		}
		v.Set(&k, k.Write([]byte(name)), off)
	}
	set("a", "1")
	k.Reset()
	set("b", "2")
	set("b", "3")
	tests := []struct{ name, want string }{{"a", "1"}, {"b", "3"}, {"c", "<none>"}}
	for _, tc := range tests {
		if got := get(tc.name); got != tc.want {
			t.Errorf("var %q: got %q; want %q", tc.name, got, tc.want)
		}
	}
	set("a", "")
	if got := get("a"); got != "<none>" {
		t.Errorf("var a after delete: got %q; want none", got)
	}
	big := strings.Repeat("x", MaxVarBytes/2)
	set("big", big)
	set("big", big) // a replacement: the old value is not counted twice
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a set past MaxVarBytes: no panic; want the call to fail")
			}
		}()
		set("big2", big)
	}()
	if got := get("big2"); got != "<none>" {
		t.Errorf("the refused var is set: %d bytes", len(got))
	}
}
