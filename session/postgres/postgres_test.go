package postgres_test

import (
	"encoding/json"
	"fmt"
	"reflect"
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

// StartRunWithState reads the state tiers in the start's round trip, as the start left
// them (the host uses it instead of StartRun then State).
func TestStartRunWithStateReadsTheStateItLeaves(t *testing.T) {
	st := open(t, pgtest.Schema(t))
	ctx := t.Context()
	for _, create := range []bool{true, false} {
		k := session.Key{App: "app", User: "u", ID: fmt.Sprintf("s-%t", create)}
		if !create {
			if _, err := st.CreateSession(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		evs, got, err := st.StartRunWithState(ctx, session.Run{Key: k, InvocationID: "inv", CreateSession: create},
			session.NewEvent{Type: session.TypeUserMessage, Author: "user", Data: session.MustJSON(session.UserMessageData{Text: "hi"}),
				StateDelta: json.RawMessage(`{"color":"red","app:theme":"dark","user:lang":"nb"}`)})
		if err != nil || len(evs) != 1 {
			t.Fatalf("create=%t: %v %v", create, evs, err)
		}
		want, err := st.State(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) || got.Session["color"] != "red" || got.App["theme"] != "dark" || got.User["lang"] != "nb" {
			t.Errorf("create=%t: state %+v, State() %+v", create, got, want)
		}
	}
}
