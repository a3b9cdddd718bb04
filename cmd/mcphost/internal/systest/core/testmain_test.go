package core

import (
	"os"
	"testing"

	"github.com/mcphost/mcphost/cmd/mcphost/internal/systest"
)

func TestMain(m *testing.M) { os.Exit(systest.Main(m)) }
