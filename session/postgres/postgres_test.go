package postgres_test

import (
	"testing"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/postgres"
	"github.com/agentengine/agentengine/session/postgres/internal/pgtest"
	"github.com/agentengine/agentengine/session/storetest"
)

func open(t *testing.T, dsn string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	st, err := postgres.Open(t.Context(), dsn, append([]postgres.Option{postgres.WithMaxConns(4)}, opts...)...)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return st
}

func TestConformance(t *testing.T) {
	pgtest.ServerDSN(t)
	storetest.Run(t, func(t *testing.T) session.Store { return open(t, pgtest.Schema(t)) })
}

func TestConformanceWithoutCluster(t *testing.T) {
	pgtest.ServerDSN(t)
	storetest.Run(t, func(t *testing.T) session.Store { return open(t, pgtest.Schema(t), postgres.WithoutCluster()) })
}

var _ = time.Second
