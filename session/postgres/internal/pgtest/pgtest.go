// Package pgtest gives tests a fresh, empty PostgreSQL schema on the server named by
// AGENTENGINE_TEST_PG_DSN (scripts/pg-test.sh starts one). Without it, tests skip,
// saying so, unless AGENTENGINE_TEST_PG_REQUIRED is set: then they fail (CI sets it, so
// a missing server is never a silent pass).
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvDSN names the test server; EnvRequired makes its absence a failure.
const (
	EnvDSN      = "AGENTENGINE_TEST_PG_DSN"
	EnvRequired = "AGENTENGINE_TEST_PG_REQUIRED"
)

// ServerDSN returns the test server's DSN, or skips (fails when required) without one.
func ServerDSN(t testing.TB) string {
	t.Helper()
	dsn := strings.TrimSpace(os.Getenv(EnvDSN))
	if dsn == "" {
		msg := "no PostgreSQL test server: set " + EnvDSN + " (scripts/pg-test.sh run go test ...)"
		if os.Getenv(EnvRequired) != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dsn
}

// Schema creates an empty schema, dropped when the test ends, and returns a DSN whose
// connections use it.
func Schema(t testing.TB) string {
	t.Helper()
	dsn := ServerDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to the test server (%s): %v", EnvDSN, err)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	_, _ = rand.Read(b[:])
	name := "t_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+name); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("drop schema %s: %v", name, err)
			return
		}
		defer c.Close(context.Background())
		if _, err := c.Exec(ctx, `DROP SCHEMA `+name+` CASCADE`); err != nil {
			t.Logf("drop schema %s: %v", name, err)
		}
	})
	return WithParam(dsn, "search_path", name)
}

// WithParam sets a connection parameter in a URL or keyword/value DSN.
func WithParam(dsn, key, value string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set(key, value)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " " + key + "=" + value
}
