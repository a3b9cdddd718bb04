package cachefile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// sumSuffix ends the name of the file holding an entry's recorded SHA-256.
const sumSuffix = ".sha256"

// SumFile is the file that holds the recorded SHA-256 of entry.
func SumFile(entry string) string { return entry + sumSuffix }

// IsSumFile reports whether name is a record made by [Record].
func IsSumFile(name string) bool { return strings.HasSuffix(name, sumSuffix) }

// CorruptError is a cache entry whose content does not hash to what was
// recorded when it was written, or that has no record at all.
type CorruptError struct {
	File string
	Want string // the recorded SHA-256 (hex); "" when there is none
	Got  string // the content's SHA-256 (hex)
}

func (e *CorruptError) Error() string {
	if e.Want == "" {
		return fmt.Sprintf("cache entry %s has no recorded sha256 (written by an older mcphost, or its write was cut short)", e.File)
	}
	return fmt.Sprintf("cache entry %s is corrupt: sha256 %s, recorded %s (truncated or changed on disk)", e.File, e.Got, e.Want)
}

// Sum returns the SHA-256 (hex) of data.
func Sum(data []byte) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:])
}

// SumOf returns the SHA-256 (hex) of file's content.
func SumOf(file string) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Record writes sum as the recorded SHA-256 of entry (which need not
// exist yet: writers record first and rename the entry into place last,
// so an entry is never visible without its record).
func Record(entry, sum string) error {
	return WriteFile(SumFile(entry), []byte(sum+"\n"))
}

// Recorded returns the recorded SHA-256 of entry, or "" when there is none.
func Recorded(entry string) string {
	sum, _ := recorded(entry)
	return sum
}

// recorded returns the recorded SHA-256 of entry and the metadata it had
// when [VerifyStat] last found it to hash to that (the zero Stat when
// none is recorded). A record is the sum on its first line, and, once
// verified, a second line "stat <size> <mod> <change> <inode> <device>".
func recorded(entry string) (string, Stat) {
	b, err := os.ReadFile(SumFile(entry))
	if err != nil {
		return "", Stat{}
	}
	sum, rest, _ := strings.Cut(string(b), "\n")
	var st Stat
	if _, err := fmt.Sscanf(rest, "stat %d %d %d %d %d\n", &st.Size, &st.Mod, &st.Change, &st.Inode, &st.Device); err != nil {
		st = Stat{}
	}
	return strings.TrimSpace(sum), st
}

// Check returns a *CorruptError unless sum is entry's recorded SHA-256.
func Check(entry, sum string) error {
	if want := Recorded(entry); want != sum {
		return &CorruptError{File: entry, Want: want, Got: sum}
	}
	return nil
}

// Verify hashes entry and checks it (see [Check]). A missing entry is an
// error satisfying errors.Is(err, fs.ErrNotExist).
func Verify(entry string) error {
	sum, err := SumOf(entry)
	if err != nil {
		return err
	}
	return Check(entry, sum)
}

// VerifyStat is [Verify] that trusts metadata ([Stat]) as a witness of
// content: it hashes entry only when its metadata is not what it was the
// last time VerifyStat found entry to hash to its record, and, after a
// hash that matches, records that metadata beside the sum (unless the
// file changed within w's racy window, whose times do not show a
// rewrite). What it trusts: that a file whose size, modification and
// change times, inode and device are unchanged holds the same bytes. A
// rewrite, a truncation or a replacement through the file system changes
// them (the change time cannot be set back); damage below the file
// system (a disk or memory flipping bits in place) does not, and is not
// caught once the entry was verified. The cost of a hash (≈ 15–20 ms for a
// 4 MB Go guest's 16 MB of compiled code) is paid once per entry rather
// than at every first load. Where no metadata is known (another OS) it
// always hashes.
func VerifyStat(entry string, w RacyWindows) error {
	st, ok := StatOf(entry) // before reading: a write after it shows
	sum0, st0 := recorded(entry)
	if ok && sum0 != "" && st0 == st {
		return nil
	}
	sum, err := SumOf(entry)
	if err != nil {
		return err
	}
	if sum != sum0 {
		return &CorruptError{File: entry, Want: sum0, Got: sum}
	}
	if ok && !w.Racy(st, time.Now()) {
		// A failure costs the next load a hash, nothing else.
		_ = WriteFile(SumFile(entry), []byte(fmt.Sprintf("%s\nstat %d %d %d %d %d\n", sum, st.Size, st.Mod, st.Change, st.Inode, st.Device)))
	}
	return nil
}

// Remove removes entry and its record; either may be missing already.
func Remove(entry string) error {
	err := os.Remove(entry)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	if rerr := os.Remove(SumFile(entry)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	return err
}

// WriteFile writes data to file through a temporary file in the same
// directory renamed into place, so that no reader (in this process or
// another) ever sees part of it. A failed write leaves nothing behind.
func WriteFile(file string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(file), ".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), file)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// IsLeftover reports whether a file or directory of a cache is a write in
// progress, or what remains of one after a crash: a name starting with "."
// (BuildGo's ".build-*" and ".modfile-*", downloads' ".dl-*", the SDK's
// ".sdk-*", [WriteFile]'s ".tmp-*") or ending in ".tmp" (wazero's
// compiled code).
func IsLeftover(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasSuffix(name, ".tmp")
}
