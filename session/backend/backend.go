// Package backend chooses and opens the session store from explicit configuration or
// the environment variables KsADK uses to choose a session backend. It lives outside package
// session because it imports the backends, which import session.
package backend

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
	"github.com/agentengine/agentengine/session/postgres"
	"github.com/agentengine/agentengine/session/sqlite"
)

// Backend names. "sqlite" is accepted as an alias of Local.
const (
	Memory   = "memory"
	Local    = "local"
	Postgres = "postgres"
)

// Environment variables, named as in KsADK.
const (
	EnvBackend      = "KSADK_SESSION_BACKEND"
	EnvBackendAlias = "AGENTENGINE_SESSION_BACKEND"
	EnvDSN          = "KSADK_SESSION_DSN"
	EnvPath         = "KSADK_STM_PATH"
	EnvPathAlias    = "KSADK_STM_DB_PATH"
	// Postgres pool and replica settings (agentengine's own).
	EnvMaxConns         = "AGENTENGINE_SESSION_MAX_CONNS"
	EnvStatementTimeout = "AGENTENGINE_SESSION_STATEMENT_TIMEOUT"
	EnvLeaseTTL         = "AGENTENGINE_REPLICA_LEASE"
	EnvReplicaID        = "AGENTENGINE_REPLICA_ID"
)

// DefaultPath is the local database's path relative to the project directory.
const DefaultPath = ".agentengine/ui/sessions.sqlite"

// ErrUnavailable: the selected backend is not compiled into this build.
var ErrUnavailable = errors.New("session backend not available in this build")

// Config selects a backend. Explicit fields win over the environment.
type Config struct {
	// Backend is memory, local (or sqlite) or postgres; empty consults the environment,
	// then defaults to local (or postgres when a DSN is configured).
	Backend string
	// Path is the local database file; empty consults the environment, then uses
	// DefaultPath under ProjectDir.
	Path string
	// DSN is the postgres connection string; empty consults KSADK_SESSION_DSN.
	DSN string
	// MaxConns bounds the postgres connection pool (0: AGENTENGINE_SESSION_MAX_CONNS,
	// else postgres.DefaultMaxConns).
	MaxConns int
	// StatementTimeout bounds every postgres statement (0: the environment's
	// AGENTENGINE_SESSION_STATEMENT_TIMEOUT, else postgres.DefaultStatementTimeout).
	StatementTimeout time.Duration
	// Tool opens a postgres store for a command that serves no runs (migrate, sessions):
	// it takes no replica lease.
	Tool       bool
	ProjectDir string
	// Getenv reads the environment (pass os.Getenv); nil ignores it, so tests and
	// embedders decide exactly what is visible.
	Getenv func(string) string
}

// Selection is the resolved choice.
type Selection struct {
	Backend string // Memory, Local or Postgres
	Path    string // Local only
	DSN     string // Postgres only
	// Source says where Backend came from (a field, an env var or "default"), for errors.
	Source string
	// DSNSource says where DSN came from (Config.DSN or KSADK_SESSION_DSN).
	DSNSource string
	// Postgres options resolved from Config and the environment.
	MaxConns         int
	StatementTimeout time.Duration
	LeaseTTL         time.Duration
	ReplicaID        string
}

// Select resolves cfg without opening anything.
func Select(cfg Config) (Selection, error) {
	getenv := cfg.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	name, source, err := pick("Config.Backend", cfg.Backend, getenv, EnvBackend, EnvBackendAlias, normalize)
	if err != nil {
		return Selection{}, err
	}
	dsn, dsnSource := strings.TrimSpace(cfg.DSN), "Config.DSN"
	if dsn == "" {
		dsn, dsnSource = strings.TrimSpace(getenv(EnvDSN)), EnvDSN
	}
	if name == "" {
		// A configured DSN means a shared store was intended: falling back to a local
		// file would silently split the sessions.
		if dsn != "" {
			name, source = Postgres, EnvDSN
		} else {
			name, source = Local, "default"
		}
	}
	sel := Selection{Backend: normalize(name), Source: source}
	switch sel.Backend {
	case Memory:
	case Local:
		path, _, err := pick("Config.Path", cfg.Path, getenv, EnvPath, EnvPathAlias, filepath.Clean)
		if err != nil {
			return Selection{}, err
		}
		if path == "" {
			if cfg.ProjectDir == "" {
				return Selection{}, fmt.Errorf("local session backend needs a database path: set %s or a project directory", EnvPath)
			}
			path = filepath.Join(cfg.ProjectDir, filepath.FromSlash(DefaultPath))
		}
		sel.Path = path
	case Postgres:
		if dsn == "" {
			return Selection{}, fmt.Errorf("session backend postgres (from %s) needs a DSN: set %s", source, EnvDSN)
		}
		sel.DSN, sel.DSNSource = dsn, dsnSource
		if err := pgOptions(cfg, getenv, &sel); err != nil {
			return Selection{}, err
		}
	default:
		return Selection{}, fmt.Errorf("session backend %q from %s is unknown: use %s, %s (or sqlite) or %s",
			name, source, Memory, Local, Postgres)
	}
	return sel, nil
}

// pgOptions resolves the postgres pool and replica settings; a malformed value is an
// error naming its variable.
func pgOptions(cfg Config, getenv func(string) string, sel *Selection) error {
	sel.MaxConns, sel.StatementTimeout = cfg.MaxConns, cfg.StatementTimeout
	if v := strings.TrimSpace(getenv(EnvMaxConns)); v != "" && sel.MaxConns == 0 {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%s=%q: want a positive number of connections", EnvMaxConns, v)
		}
		sel.MaxConns = n
	}
	dur := func(name string, dst *time.Duration) error {
		v := strings.TrimSpace(getenv(name))
		if v == "" || *dst != 0 {
			return nil
		}
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return fmt.Errorf("%s=%q: want a positive duration such as 30s", name, v)
		}
		*dst = d
		return nil
	}
	if err := dur(EnvStatementTimeout, &sel.StatementTimeout); err != nil {
		return err
	}
	if err := dur(EnvLeaseTTL, &sel.LeaseTTL); err != nil {
		return err
	}
	sel.ReplicaID = strings.TrimSpace(getenv(EnvReplicaID))
	return nil
}

// pick returns the explicit value if set, else the first env var that is set; two
// env vars that disagree (after norm) are an error rather than a silent preference.
func pick(field, explicit string, getenv func(string) string, env, alias string, norm func(string) string) (string, string, error) {
	if v := strings.TrimSpace(explicit); v != "" {
		return v, field, nil
	}
	a, b := strings.TrimSpace(getenv(env)), strings.TrimSpace(getenv(alias))
	switch {
	case a != "" && b != "" && norm(a) != norm(b):
		return "", "", fmt.Errorf("%s=%q and %s=%q disagree: unset one", env, a, alias, b)
	case a != "":
		return a, env, nil
	case b != "":
		return b, alias, nil
	}
	return "", "", nil
}

func normalize(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "sqlite" {
		return Local
	}
	return name
}

// Open selects and opens the session store.
func Open(ctx context.Context, cfg Config) (session.Store, error) {
	sel, err := Select(cfg)
	if err != nil {
		return nil, err
	}
	switch sel.Backend {
	case Memory:
		return memory.New(), nil
	case Local:
		st, err := sqlite.Open(ctx, sel.Path)
		if err != nil {
			return nil, fmt.Errorf("local session backend: %w", err)
		}
		return st, nil
	default: // Postgres; Select rejects anything else
		opts := []postgres.Option{postgres.WithMaxConns(sel.MaxConns), postgres.WithStatementTimeout(sel.StatementTimeout),
			postgres.WithLeaseTTL(sel.LeaseTTL), postgres.WithReplicaID(sel.ReplicaID)}
		if cfg.Tool {
			opts = append(opts, postgres.WithoutCluster())
		}
		st, err := postgres.Open(ctx, sel.DSN, opts...)
		if err != nil {
			// Never a fall back to another backend: the sessions would silently split.
			return nil, fmt.Errorf("postgres session backend (DSN from %s): %w", sel.DSNSource, err)
		}
		return st, nil
	}
}
