package host_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// FuzzStateBudget: whatever state deltas a client writes, one after another, a write is
// either stored or refused as the client's error (too large, or not a JSON object), never
// a server failure; a refused write changes nothing; and no tier that a stored write grew
// is over its budget.
func FuzzStateBudget(f *testing.F) {
	for _, s := range [][2]string{
		{`{"user:a":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`, `{"user:a":null}`},
		{`{"app:k":[1,2,3],"k":{"n":1}}`, `{"temp:t":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}`},
		{`{"a":"\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"}`, `{"a":"<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&<>&"}`},
		{`[1]`, `null`}, {`{"a":`, `{}`}, {`{"user:":1,"app:":2}`, `{"x":1e308,"y":-0}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	const budget = 96
	store := memory.New()
	rt, err := host.New(host.Config{Store: store, StateBudget: host.StateBudget{App: budget, User: budget, Session: budget}})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = rt.Close(context.Background()) })
	ctx := context.Background()
	size := func(m map[string]any) int {
		b, _ := json.Marshal(m)
		return len(b)
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		key := session.Key{App: "a", User: "u", ID: host.NewID("s_")}
		if _, err := store.CreateSession(ctx, key); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = store.DeleteSession(ctx, key) }()
		for _, d := range [][]byte{first, second} {
			before, err := store.State(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			_, err = rt.AppendEvents(ctx, key, session.NewEvent{Type: session.TypeStateDelta, Author: "user", Data: d, StateDelta: d})
			after, serr := store.State(ctx, key)
			if serr != nil {
				t.Fatal(serr)
			}
			tiers := [][2]map[string]any{{before.App, after.App}, {before.User, after.User}, {before.Session, after.Session}}
			if err != nil {
				var ce *host.ClientError
				if !errors.As(err, &ce) || !(errors.Is(err, host.ErrStateTooLarge) || errors.Is(err, host.ErrInvalidInput)) {
					t.Fatalf("delta %q: %v is not the client's error", d, err)
				}
				for i, tt := range tiers {
					if size(tt[0]) != size(tt[1]) {
						t.Fatalf("delta %q was refused (%v) but tier %d changed", d, err, i)
					}
				}
				continue
			}
			for i, tt := range tiers {
				if n := size(tt[1]); n > size(tt[0]) && n > budget {
					t.Fatalf("delta %q grew tier %d to %d bytes, over the budget of %d", d, i, n, budget)
				}
			}
		}
	})
}
