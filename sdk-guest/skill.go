package guest

import (
	"fmt"
	"io/fs"

	"github.com/mcphost/mcphost/abi"
)

// AddSkills ships the skills in fsys with the plugin (the Skills
// extension, SEP-2640): every directory of fsys holding a SKILL.md is a
// skill, whose files are that directory's, subdirectories included.
// fsys is usually an embed.FS:
//
//	//go:embed skills
//	var skills embed.FS
//
//	func init() { guest.AddSkills(skills) }
//
// The files are read once, now; mcphost asks for them when it loads the
// plugin (the mcphost_list_skills export), checks each SKILL.md's
// frontmatter (name, the directory's name, and description), computes
// every file's digest and size, and serves the skill at
// skill://<plugin>/<name>/SKILL.md. Hidden files (".x") are left out.
// AddSkills panics when fsys cannot be read, as an embed.FS always can.
func AddSkills(fsys fs.FS) { std.addSkills(fsys) }

func (r *registry) addSkills(fsys fs.FS) {
	files, err := abi.ReadSkillFiles(fsys)
	if err != nil {
		panic(fmt.Sprintf("guest: AddSkills: %v", err))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.skills = append(r.skills, files...)
}

func (r *registry) listSkills() *abi.ListSkillsResult {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return &abi.ListSkillsResult{Files: append([]abi.SkillFile{}, r.skills...)}
}
