package cachefile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRacyWindows: a file changed within the window of when it is hashed
// gets no entry; times with fractions of a second get the fine window.
func TestRacyWindows(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	at := func(d time.Duration) int64 { return now.Add(-d).UnixNano() }
	w := Racy
	tests := []struct {
		name  string
		st    Stat
		want  bool
		until time.Duration // how long it stays racy
	}{
		{"whole seconds, 1 s old", Stat{Mod: at(3 * time.Second), Change: at(time.Second)}, true, time.Second},
		{"whole seconds, 3 s old", Stat{Mod: at(3 * time.Second), Change: at(3 * time.Second)}, false, 0},
		{"fine times, 1 s old", Stat{Mod: at(time.Second + time.Millisecond), Change: at(time.Second + 3)}, false, 0},
		{"fine times, 50 ms old", Stat{Mod: at(time.Hour), Change: at(50*time.Millisecond + 7)}, true, 50*time.Millisecond - 7},
		{"changed in the future", Stat{Mod: at(-time.Hour + 7), Change: at(-time.Hour + 7)}, true, time.Hour + 100*time.Millisecond - 7},
	}
	for _, tt := range tests {
		if got := w.Racy(tt.st, now); got != tt.want {
			t.Errorf("%s: racy %v; want %v", tt.name, got, tt.want)
		}
		if got := w.Until(tt.st, now); got != tt.until {
			t.Errorf("%s: racy for %v more; want %v", tt.name, got, tt.until)
		}
	}
}

// TestVerifyStat: an entry that hashed to its record once is trusted
// while its metadata stays (even when its record's sum is then changed,
// which shows it was not hashed); a rewrite of the same size with its
// modification time set back is caught by its change time; a corrupt
// entry is caught; a file changed within the racy window gets no
// witness.
func TestVerifyStat(t *testing.T) {
	if _, ok := StatOf(os.Args[0]); !ok {
		t.Skip("no file metadata on this OS: VerifyStat always hashes")
	}
	dir := t.TempDir()
	entry := filepath.Join(dir, "e.bin")
	data := []byte("compiled code, 32 bytes of it...")
	other := []byte("other code, the same 32 bytes...")
	write := func(t *testing.T, b []byte) {
		t.Helper()
		if err := os.WriteFile(entry, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := Record(entry, Sum(data)); err != nil {
		t.Fatal(err)
	}
	write(t, data)
	never := RacyWindows{}
	tests := []struct {
		name    string
		w       RacyWindows
		setup   func(t *testing.T)
		corrupt bool
		witness bool // a stat line recorded after
	}{
		{"just written, racy", Racy, func(*testing.T) {}, false, false},
		{"hashed, witness recorded", never, func(*testing.T) {}, false, true},
		{"witness trusted: the sum is not hashed again", never, func(t *testing.T) {
			b, err := os.ReadFile(SumFile(entry))
			if err == nil {
				err = os.WriteFile(SumFile(entry), append([]byte(Sum(other)), b[64:]...), 0o600)
			}
			if err != nil {
				t.Fatal(err)
			}
		}, false, true},
		{"rewritten, same size, mtime set back", never, func(t *testing.T) {
			if err := Record(entry, Sum(data)); err != nil { // the witness only
				t.Fatal(err)
			}
			if err := VerifyStat(entry, never); err != nil {
				t.Fatal(err)
			}
			_, st0 := recorded(entry)
			// Rewrite until the change time moves on (the kernel's
			// clock ticks every few ms): a rewrite within one tick is
			// the racy case, which the window keeps out.
			for st := st0; st.Change == st0.Change; st, _ = StatOf(entry) {
				write(t, other)
				mod := time.Unix(0, st0.Mod)
				if err := os.Chtimes(entry, mod, mod); err != nil {
					t.Fatal(err)
				}
			}
			if st, _ := StatOf(entry); st.Size != st0.Size || st.Mod != st0.Mod {
				t.Fatalf("rewrite: %+v; want size and mtime of %+v", st, st0)
			}
		}, true, true},
		{"corrupt, no witness", never, func(t *testing.T) {
			if err := Record(entry, Sum(data)); err != nil {
				t.Fatal(err)
			}
			write(t, data[:4])
		}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.setup(t)
			err := VerifyStat(entry, tt.w)
			var ce *CorruptError
			if got := errors.As(err, &ce); got != tt.corrupt || (err != nil && !tt.corrupt) {
				t.Errorf("VerifyStat: %v; want corrupt %v", err, tt.corrupt)
			}
			if _, st := recorded(entry); (st != Stat{}) != tt.witness {
				t.Errorf("witness recorded %+v; want one: %v", st, tt.witness)
			}
		})
	}
}
