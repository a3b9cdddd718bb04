package config

import (
	"reflect"
	"strings"
	"testing"
)

// TestParseConfigBuild: build as a string (split into words, quotes
// honoured) or an array, watch globs and dir resolved, and WatchPaths
// naming the globs instead of the artefact the build writes.
func TestParseConfigBuild(t *testing.T) {
	for _, tt := range []struct {
		name, src        string
		build            []string
		dir              string
		watch, watchPath []string
	}{
		{"string", `build = "sh build.sh"
watch = ["*.c", "include/*.h"]`, []string{"sh", "build.sh"}, "/etc/m",
			[]string{"/etc/m/*.c", "/etc/m/include/*.h"}, []string{"/etc/m/*.c", "/etc/m/include/*.h", "/etc/m/plugins.toml"}},
		{"quotes", `build = "sh -c 'make all && echo \"done here\"'"`, []string{"sh", "-c", `make all && echo "done here"`}, "/etc/m",
			nil, []string{"/etc/m/h.wasm", "/etc/m/plugins.toml"}},
		{"array", `build = ["npm", "run", "build"]
watch = ["src/*.ts"]`, []string{"npm", "run", "build"}, "/etc/m", []string{"/etc/m/src/*.ts"}, []string{"/etc/m/plugins.toml", "/etc/m/src/*.ts"}},
		{"dir", `build = "sh build.sh"
dir = "sub"
watch = ["*.c", "/abs/x.h"]`, []string{"sh", "build.sh"}, "/etc/m/sub", []string{"/etc/m/sub/*.c", "/abs/x.h"}, []string{"/abs/x.h", "/etc/m/plugins.toml", "/etc/m/sub/*.c"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := ParseConfig("/etc/m/plugins.toml", []byte("[[plugin]]\nname = \"h\"\npath = \"h.wasm\"\n"+tt.src+"\n"))
			if err != nil {
				t.Fatal(err)
			}
			s := cfg.Plugins[0]
			if !reflect.DeepEqual(s.Build, tt.build) || s.BuildDir != tt.dir || !reflect.DeepEqual(s.Watch, tt.watch) {
				t.Errorf("got build %q in %q watching %q; want %q in %q watching %q", s.Build, s.BuildDir, s.Watch, tt.build, tt.dir, tt.watch)
			}
			if s.Path != "/etc/m/h.wasm" {
				t.Errorf("path: got %q; want it relative to the config as always", s.Path)
			}
			if got := cfg.WatchPaths(); !reflect.DeepEqual(got, tt.watchPath) {
				t.Errorf("WatchPaths: got %q; want %q", got, tt.watchPath)
			}
		})
	}
}

func TestParseConfigBuildErrors(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []string
	}{
		{"build with source", `source = "src"
build = "make"`, []string{`4: plugin "h": key "build": build needs path (the file the build writes); source plugins are built by mcphost itself`}},
		{"watch without build", `path = "h.wasm"
watch = ["*.c"]`, []string{`4: plugin "h": key "watch": watch needs build (the command that writes path)`}},
		{"dir without build", `path = "h.wasm"
dir = "x"`, []string{`4: plugin "h": key "dir": dir needs build (the command that writes path)`}},
		{"unterminated quote", `path = "h.wasm"
build = "sh -c 'make"`, []string{`4: plugin "h": key "build": "sh -c 'make": unterminated ' quote`}},
		{"empty build", `path = "h.wasm"
build = []`, []string{`4: plugin "h": key "build": names no command`}},
		{"build not a command", `path = "h.wasm"
build = 3`, []string{`4: plugin "h": key "build": want a string or an array of strings, got integer`}},
		{"glob in a directory", `path = "h.wasm"
build = "make"
watch = ["ok/*.c", "*/x.c", "["]`, []string{
			`5: plugin "h": key "watch": element 1 "*/x.c": only the file name may hold *, ? or [ (list each directory as a glob of its own)`,
			`5: plugin "h": key "watch": element 2 "[": bad glob pattern`}},
		{"sha256 with build", `path = "h.wasm"
build = "make"
sha256 = "` + strings.Repeat("ab", 32) + `"`, []string{`5: plugin "h": key "sha256": sha256 pins a file as it is; a built path changes with every build (leave one of them out)`}},
		{"did you mean", `path = "h.wasm"
biuld = "make"
wach = ["*.c"]`, []string{`4: plugin "h": key "biuld": unknown key (did you mean "build"?)`, `5: plugin "h": key "wach": unknown key (did you mean "watch"?)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseConfig("p.toml", []byte("[[plugin]]\nname = \"h\"\n"+tt.src+"\n"))
			if err == nil {
				t.Fatal("got no error")
			}
			var got []string
			for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
				got = append(got, strings.TrimPrefix(e.Error(), "p.toml:"))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestSplitWords(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want []string
		bad  bool
	}{
		{"sh build.sh", []string{"sh", "build.sh"}, false},
		{"  a\tb \n c ", []string{"a", "b", "c"}, false},
		{`a "b c" 'd "e"' f\ g`, []string{"a", "b c", `d "e"`, "f g"}, false},
		{`"" x ''`, []string{"", "x", ""}, false},
		{`a"b"'c'`, []string{"abc"}, false},
		{`"a \"q\" \\ \n"`, []string{`a "q" \ \n`}, false},
		{`echo $HOME; ls | wc > f`, []string{"echo", "$HOME;", "ls", "|", "wc", ">", "f"}, false},
		{"", nil, false},
		{`"open`, nil, true},
		{`'open`, nil, true},
		{`trailing\`, nil, true},
	} {
		got, err := SplitWords(tt.in)
		if (err != nil) != tt.bad || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, %v; want %q (error %v)", tt.in, got, err, tt.want, tt.bad)
		}
	}
}

// FuzzSplitWords: any line splits or fails without panicking, and a split
// line's words, each quoted again, split back to the same words.
func FuzzSplitWords(f *testing.F) {
	for _, s := range []string{"sh build.sh", `a "b c" 'd'`, `x\ y`, `"\""`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		words, err := SplitWords(line)
		if err != nil {
			return
		}
		var quoted []string
		for _, w := range words {
			quoted = append(quoted, "'"+strings.ReplaceAll(w, "'", `'\''`)+"'")
		}
		again, err := SplitWords(strings.Join(quoted, " "))
		if err != nil || !reflect.DeepEqual(again, words) {
			t.Errorf("SplitWords(%q) = %q; quoted again it splits to %q, %v", line, words, again, err)
		}
	})
}
