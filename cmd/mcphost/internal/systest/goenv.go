package systest

import (
	"os/exec"
	"strings"
)

func GoEnv(key string) (string, error) {
	out, err := exec.Command("go", "env", key).Output()
	return strings.TrimSpace(string(out)), err
}
