package systest

import (
	"encoding/json"
)

func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
