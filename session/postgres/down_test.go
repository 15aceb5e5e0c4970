package postgres_test

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"

	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/postgres/internal/pgtest"
)

// proxy forwards a local port to the server of dsn and returns a DSN through it and a
// function that cuts it: open connections are reset and new ones refused, as when the
// database goes down.
func proxy(t *testing.T, dsn string) (string, func()) {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil || u.Host == "" {
		t.Skipf("the test server's DSN is not a URL: %v", err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
	)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, c, up)
			mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	cut := func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
	t.Cleanup(cut)
	u.Host = ln.Addr().String()
	return u.String(), cut
}

// With the database gone, the store's errors say it is unavailable (so that a turn can
// be answered 503, to retry), not that the request failed.
func TestDatabaseDownIsUnavailable(t *testing.T) {
	dsn, cut := proxy(t, pgtest.Schema(t))
	st := open(t, dsn)
	defer st.Close()
	k := session.Key{App: "a", User: "u", ID: "s"}
	if _, err := st.CreateSession(t.Context(), k); err != nil {
		t.Fatal(err)
	}
	cut()
	for name, call := range map[string]func() error{
		"get":   func() error { _, err := st.GetSession(t.Context(), k); return err },
		"state": func() error { _, err := st.State(t.Context(), k); return err },
		"start": func() error {
			_, err := st.StartRun(t.Context(), session.Run{InvocationID: "i", Key: k, Status: session.StatusInProgress},
				session.NewEvent{Type: session.TypeRunStatus, Data: session.MustJSON(session.RunStatusData{Status: session.StatusInProgress})})
			return err
		},
		"create": func() error {
			_, err := st.CreateSession(t.Context(), session.Key{App: "a", User: "u", ID: "s2"})
			return err
		},
	} {
		err := call()
		if err == nil || !session.IsUnavailable(err) {
			t.Errorf("%s with the database down: %v (unavailable: %v)", name, err, session.IsUnavailable(err))
		}
		if errors.Is(err, session.ErrNotFound) {
			t.Errorf("%s: not found", name)
		}
	}
}
