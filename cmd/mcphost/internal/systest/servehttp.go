package systest

import (
	"bufio"
	"io"
	"regexp"
)

// ListeningAddr sends the URL of the first listening line of a server's
// stderr (r) for path, reading r to its end.
func ListeningAddr(r io.Reader, path string) <-chan string {
	addr := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`msg=listening addr=(http://127\.0\.0\.1:[0-9]+` + regexp.QuoteMeta(path) + `)`)
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	return addr
}
