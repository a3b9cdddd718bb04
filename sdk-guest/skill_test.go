package guest

import (
	"encoding/json"
	"reflect"
	"testing"
	"testing/fstest"

	"github.com/mcphost/mcphost/abi"
)

// TestAddSkills: the files registered are what mcphost_list_skills
// returns, every regular file once, hidden ones left out, bytes intact.
func TestAddSkills(t *testing.T) {
	useRegistry(t)
	out, err := Dispatch(abi.ExportListSkills, []byte(`{"context":{}}`))
	if err != nil || string(out) != `{"files":[]}` {
		t.Fatalf("no skills: %s, %v; want an empty list", out, err)
	}
	AddSkills(fstest.MapFS{
		"a/SKILL.md":        {Data: []byte("---\nname: a\n---\n")},
		"a/ref/x.bin":       {Data: []byte{0, 0xff}},
		"a/.hidden":         {Data: []byte("no")},
		".git/config":       {Data: []byte("no")},
		"b/nested/SKILL.md": {Data: []byte("b")},
	})
	out, err = Dispatch(abi.ExportListSkills, []byte(`{"context":{}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got abi.ListSkillsResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s: %v", out, err)
	}
	want := []abi.SkillFile{
		{Path: "a/SKILL.md", Data: []byte("---\nname: a\n---\n")},
		{Path: "a/ref/x.bin", Data: []byte{0, 0xff}},
		{Path: "b/nested/SKILL.md", Data: []byte("b")},
	}
	if !reflect.DeepEqual(got.Files, want) {
		t.Errorf("files = %+v; want %+v", got.Files, want)
	}
}
