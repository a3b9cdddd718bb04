package abi

import (
	"io/fs"
	"strings"
)

// ExportListSkills is mcphost's optional addition for the Skills
// extension (SEP-2640): an export, with the Extism input and output of
// list_tools, whose output is a [ListSkillsResult]. The host calls it once
// when the plugin loads (like the list exports) and serves what it returns
// as the plugin's skills; a guest without it ships none (a plugins.toml
// `skills` key can still give it some). Guests built with sdk-guest export
// it, answering with what guest.AddSkills registered.
const ExportListSkills = "mcphost_list_skills"

// ListSkillsResult is the output of [ExportListSkills]: the files of the
// guest's skills. Every directory holding a SKILL.md is a skill; the host
// reads its frontmatter, names it and computes each file's digest.
type ListSkillsResult struct {
	Files []SkillFile `json:"files"`
}

// SkillFile is one file of a skill: its slash-separated path (relative,
// as in an fs.FS: "skills/pdf-processing/SKILL.md") and its bytes
// (base64 in JSON).
type SkillFile struct {
	Path string `json:"path"`
	Data []byte `json:"data"`
}

// ReadSkillFiles reads every regular file of fsys as a [SkillFile] (for
// a guest's mcphost_list_skills, or a host reading skill directories),
// leaving out hidden files and directories (".name").
func ReadSkillFiles(fsys fs.FS) ([]SkillFile, error) {
	var files []SkillFile
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != "." && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, SkillFile{Path: p, Data: data})
		return nil
	})
	return files, err
}
