package plugins

import (
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"sync"

	"github.com/mcphost/mcphost/plugins/config"
	"github.com/mcphost/mcphost/plugins/source"
)

// sourceOf returns spec's source. Exactly one of its Path, Source, URL and
// OCI is set (config.ParseConfig checks that; specs built in code may not).
func (l *Loader) sourceOf(server *config.ServerConfig, spec *config.Spec) (source.Source, error) {
	switch {
	case spec.Source != "":
		if err := sourceDir(spec); err != nil {
			return nil, err
		}
		l.busy.Store(spec.Name, "build")
		return source.NewGo(spec.Source, source.BuildOptions{CacheDir: l.cache.BuildDir(), Go: server.Go, Logger: l.log, Plugin: spec.Name,
			AfterBuild: l.embedBuilt(spec.Name)}), nil
	case spec.URL != "":
		return source.NewURL(spec.URL, spec.SHA256, l.cache.DownloadDir(), l.httpClient, spec.Signature), nil
	case spec.OCI != "":
		return source.NewOCI(spec.OCI, l.cache.DownloadDir(), l.httpClient, spec.Signature), nil
	case spec.Build != nil:
		l.busy.Store(spec.Name, "build")
		return source.NewCommand(source.CommandOptions{Argv: spec.Build, Dir: spec.BuildDir, Watch: spec.Watch,
			Artefact: spec.Path, Logger: l.log, Plugin: spec.Name}), nil
	case spec.Path != "":
		return source.File(spec.Path), nil
	}
	return nil, errors.New("no path, source, url, oci or native module")
}

// sourceDir checks that spec's source directory exists before the go
// command runs there: go, started in a missing directory, says only
// "fork/exec …: no such file or directory", naming neither the plugin's
// key nor the directory.
func sourceDir(spec *config.Spec) error {
	fi, err := os.Stat(spec.Source)
	where := `key "source"`
	if spec.Line > 0 {
		where = fmt.Sprintf(`key "source" of the [[plugin]] table at line %d`, spec.Line)
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s: directory %s does not exist: create it (mcphost new writes a plugin there) or correct the path, which is relative to the config file", where, spec.Source)
	case err != nil:
		return fmt.Errorf("%s: %w", where, err)
	case !fi.IsDir():
		return fmt.Errorf("%s: %s is not a directory: source names a Go package directory (a .wasm file goes in path)", where, spec.Source)
	}
	return nil
}

// fileSet collects the files a build used; safe for concurrent use.
type fileSet struct {
	mu    sync.Mutex
	files []string
}

func (s *fileSet) add(f string) {
	s.mu.Lock()
	s.files = append(s.files, f)
	s.mu.Unlock()
}

// newHTTPClient is the client url and oci sources use when the Loader was
// given none: its own, so nothing process-wide changes.
func newHTTPClient() *http.Client {
	return &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
}
