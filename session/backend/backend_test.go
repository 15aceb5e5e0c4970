package backend

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
	"github.com/agentengine/agentengine/session/sqlite"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestSelect(t *testing.T) {
	proj := filepath.FromSlash("/proj")
	def := filepath.Join(proj, ".agentengine", "ui", "sessions.sqlite")
	cases := []struct {
		name    string
		cfg     Config
		env     map[string]string
		want    Selection
		wantErr string // substring; empty means success
	}{
		{name: "default is local under the project", cfg: Config{ProjectDir: proj},
			want: Selection{Backend: Local, Path: def, Source: "default"}},
		{name: "nil Getenv ignores the environment", cfg: Config{ProjectDir: proj, Getenv: nil},
			want: Selection{Backend: Local, Path: def, Source: "default"}},
		{name: "env memory", cfg: Config{ProjectDir: proj}, env: map[string]string{EnvBackend: "memory"},
			want: Selection{Backend: Memory, Source: EnvBackend}},
		{name: "alias env", cfg: Config{ProjectDir: proj}, env: map[string]string{EnvBackendAlias: " Memory "},
			want: Selection{Backend: Memory, Source: EnvBackendAlias}},
		{name: "both env agree", cfg: Config{ProjectDir: proj}, env: map[string]string{EnvBackend: "local", EnvBackendAlias: "sqlite"},
			want: Selection{Backend: Local, Path: def, Source: EnvBackend}},
		{name: "both env disagree", cfg: Config{ProjectDir: proj}, env: map[string]string{EnvBackend: "local", EnvBackendAlias: "memory"},
			wantErr: EnvBackendAlias},
		{name: "explicit wins over env", cfg: Config{Backend: "memory", ProjectDir: proj}, env: map[string]string{EnvBackend: "local"},
			want: Selection{Backend: Memory, Source: "Config.Backend"}},
		{name: "sqlite alias", cfg: Config{Backend: "SQLite", ProjectDir: proj},
			want: Selection{Backend: Local, Path: def, Source: "Config.Backend"}},
		{name: "env path", cfg: Config{ProjectDir: proj}, env: map[string]string{EnvPath: "/data/s.db"},
			want: Selection{Backend: Local, Path: "/data/s.db", Source: "default"}},
		{name: "env path alias", cfg: Config{}, env: map[string]string{EnvPathAlias: "/data/t.db"},
			want: Selection{Backend: Local, Path: "/data/t.db", Source: "default"}},
		{name: "path envs disagree", cfg: Config{ProjectDir: proj}, env: map[string]string{EnvPath: "/a.db", EnvPathAlias: "/b.db"},
			wantErr: EnvPathAlias},
		{name: "explicit path wins", cfg: Config{Path: "/x.db", ProjectDir: proj}, env: map[string]string{EnvPath: "/a.db"},
			want: Selection{Backend: Local, Path: "/x.db", Source: "default"}},
		{name: "local without any path", cfg: Config{}, wantErr: EnvPath},
		{name: "memory needs no path", cfg: Config{Backend: "memory"},
			want: Selection{Backend: Memory, Source: "Config.Backend"}},
		{name: "postgres", cfg: Config{}, env: map[string]string{EnvBackend: "postgres", EnvDSN: "postgres://h/db"},
			want: Selection{Backend: Postgres, DSN: "postgres://h/db", Source: EnvBackend, DSNSource: EnvDSN}},
		{name: "dsn alone means postgres", cfg: Config{ProjectDir: proj}, env: map[string]string{EnvDSN: "postgres://h/db"},
			want: Selection{Backend: Postgres, DSN: "postgres://h/db", Source: EnvDSN, DSNSource: EnvDSN}},
		{name: "explicit local beats a dsn", cfg: Config{Backend: "local", ProjectDir: proj}, env: map[string]string{EnvDSN: "postgres://h/db"},
			want: Selection{Backend: Local, Path: def, Source: "Config.Backend"}},
		{name: "postgres without dsn", cfg: Config{Backend: "postgres"}, wantErr: EnvDSN},
		{name: "postgres bad pool size", cfg: Config{Backend: "postgres"}, env: map[string]string{EnvDSN: "postgres://h/db", EnvMaxConns: "many"}, wantErr: EnvMaxConns},
		{name: "postgres bad statement timeout", cfg: Config{Backend: "postgres"}, env: map[string]string{EnvDSN: "postgres://h/db", EnvStatementTimeout: "-3s"}, wantErr: EnvStatementTimeout},
		{name: "unknown from env", cfg: Config{ProjectDir: proj}, env: map[string]string{EnvBackend: "redis"},
			wantErr: `session backend "redis" from KSADK_SESSION_BACKEND is unknown: use memory, local (or sqlite) or postgres`},
		{name: "unknown from config", cfg: Config{Backend: "mongo"}, wantErr: "Config.Backend"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := c.cfg
			if c.env != nil {
				cfg.Getenv = envOf(c.env)
			}
			got, err := Select(cfg)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("Select = %+v, %v; want error containing %q", got, err, c.wantErr)
				}
				return
			}
			if err != nil || got != c.want {
				t.Fatalf("Select = %+v, %v; want %+v", got, err, c.want)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	ctx := t.Context()
	st, err := Open(ctx, Config{Getenv: envOf(map[string]string{EnvBackend: "memory"})})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.(*memory.Store); !ok {
		t.Errorf("memory backend opened %T", st)
	}
	st.Close()

	proj := t.TempDir()
	st, err = Open(ctx, Config{ProjectDir: proj})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := st.(*sqlite.Store); !ok {
		t.Errorf("local backend opened %T", st)
	}
	if _, err := st.CreateSession(ctx, session.Key{App: "a", User: "u", ID: "s"}); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := os.Stat(filepath.Join(proj, ".agentengine", "ui", "sessions.sqlite")); err != nil {
		t.Errorf("default database not created: %v", err)
	}

	// An unreachable server is an error naming the variable, never another backend.
	_, err = Open(ctx, Config{Getenv: envOf(map[string]string{EnvDSN: "postgres://nobody@127.0.0.1:1/db?connect_timeout=2"})})
	if err == nil || !strings.Contains(err.Error(), EnvDSN) {
		t.Errorf("postgres Open of an unreachable server = %v", err)
	}
	_, err = Open(ctx, Config{Getenv: envOf(map[string]string{EnvDSN: "postgres://h:notaport/db"})})
	if err == nil || !strings.Contains(err.Error(), EnvDSN) || !strings.Contains(err.Error(), "invalid DSN") {
		t.Errorf("postgres Open of a malformed DSN = %v", err)
	}
	_, err = Open(ctx, Config{Backend: "nope"})
	if err == nil || !strings.Contains(err.Error(), "unknown") {
		t.Errorf("unknown backend Open = %v", err)
	}
}
