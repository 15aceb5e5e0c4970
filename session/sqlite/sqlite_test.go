package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/sqlite"
	"github.com/agentengine/agentengine/session/storetest"
)

func openTemp(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "ui", "sessions.sqlite"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return st
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) session.Store { return openTemp(t) })
}
