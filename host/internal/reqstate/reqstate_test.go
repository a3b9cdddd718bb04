package reqstate

import (
	"strings"
	"testing"
	"time"
)

// TestOpen: a state opens with the key that sealed it, before it expires,
// and with its body as sealed; any other key, an expired state and a
// tampered one are refused, saying why.
func TestOpen(t *testing.T) {
	s := New([]byte("k1"))
	body := Body{Target: "tools/call x", Expires: time.Now().Add(time.Minute).Unix(), Consent: []string{"q"}}
	good := s.Seal(body)
	got, err := s.Open(good)
	if err != nil || got.Target != body.Target || got.Expires != body.Expires || len(got.Consent) != 1 {
		t.Fatalf("Open(Seal(%+v)) = %+v, %v; want the body", body, got, err)
	}
	tests := []struct {
		name, state, want string
	}{
		{"another key", New([]byte("k2")).Seal(body), "integrity check failed"},
		{"random key", New(nil).Seal(body), "integrity check failed"},
		{"expired", s.Seal(Body{Target: "t", Expires: time.Now().Add(-time.Second).Unix()}), "expired"},
		{"tampered", "e30" + good[strings.IndexByte(good, '.'):], "integrity check failed"},
		{"no signature", "e30", "malformed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if b, err := s.Open(tt.state); err == nil || err.Error() != tt.want {
				t.Errorf("Open = %+v, %v; want %q", b, err, tt.want)
			}
		})
	}
}

// FuzzOpen: requestState is attacker-controlled; no input panics, and
// only what Seal made opens.
func FuzzOpen(f *testing.F) {
	s := New([]byte("key"))
	// A fixed expiry (2100-01-01): the fuzzing engine runs this function
	// again in each worker process, and the seeds must be the same bytes
	// there (time.Now() gave a different good state across a second's
	// boundary, and the worker took the coordinator's seed for forged).
	good := s.Seal(Body{Target: "t", Expires: 4102444800})
	lf := good[:len(good)-4] + "\n" + good[len(good)-4:] // base64 decoders skip line breaks
	for _, seed := range []string{good, good + "x", lf, "", ".", "e30.", "e30.AAAA", strings.Repeat("a.", 100)} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, state string) {
		body, err := s.Open(state)
		if err == nil && (state != good || body.Target != "t") {
			t.Fatalf("Open(%q) accepted %+v", state, body)
		}
	})
}
