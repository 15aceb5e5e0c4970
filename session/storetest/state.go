package storetest

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentengine/agentengine/session"
)

func testStateTiers(t *testing.T, st session.Store) {
	a := key("app", "u1", "a")
	b := key("app", "u1", "b")       // same user
	c := key("app", "u2", "c")       // same app, other user
	d := key("other-app", "u1", "d") // other app
	for _, k := range []session.Key{a, b, c, d} {
		mustCreate(t, st, k)
	}
	evs := mustAppend(t, st, a, withDelta(userMsg("x"),
		`{"app:theme":"dark","user:lang":"en","color":"red","temp:scratch":1,"nested":{"l":[1,"two",null]}}`))
	jsonEqual(t, "stored delta drops temp keys", evs[0].StateDelta,
		[]byte(`{"app:theme":"dark","user:lang":"en","color":"red","nested":{"l":[1,"two",null]}}`))
	onlyTemp := mustAppend(t, st, a, withDelta(assistantMsg("y"), `{"temp:x":1}`))
	if len(onlyTemp[0].StateDelta) != 0 {
		t.Errorf("temp-only delta stored as %s", onlyTemp[0].StateDelta)
	}
	mustAppend(t, st, a, withDelta(assistantMsg("z"), `null`))

	app := map[string]any{"theme": "dark"}
	user := map[string]any{"lang": "en"}
	sess := map[string]any{"color": "red", "nested": map[string]any{"l": []any{1.0, "two", nil}}}
	empty := map[string]any{}
	for _, c := range []struct {
		name string
		k    session.Key
		want session.State
	}{
		{"writer", a, session.State{App: app, User: user, Session: sess}},
		{"same user", b, session.State{App: app, User: user, Session: empty}},
		{"other user", c, session.State{App: app, User: empty, Session: empty}},
		{"other app", d, session.State{App: empty, User: empty, Session: empty}},
	} {
		if got := mustState(t, st, c.k); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: State = %+v, want %+v", c.name, got, c.want)
		}
	}

	// Writes from another session of the same user land in the shared tiers; null deletes.
	mustAppend(t, st, b, withDelta(assistantMsg("w"), `{"user:lang":null,"app:theme":"light","color":"blue","gone":null}`))
	if got := mustState(t, st, a); got.App["theme"] != "light" || len(got.User) != 0 || got.Session["color"] != "red" {
		t.Errorf("after b's delta, a sees %+v", got)
	}
	if got := mustState(t, st, c); got.App["theme"] != "light" {
		t.Errorf("other user sees app tier %+v", got.App)
	}
	if got := mustState(t, st, b); !reflect.DeepEqual(got.Session, map[string]any{"color": "blue"}) {
		t.Errorf("b's session tier = %+v", got.Session)
	}
}

func testStateMerged(t *testing.T, st session.Store) {
	k := key("app", "u1", "s")
	mustCreate(t, st, k)
	steps := []struct {
		delta string
		want  any
	}{
		{`{"app:k":1}`, 1.0},
		{`{"user:k":2}`, 2.0},
		{`{"k":3}`, 3.0},
		{`{"app:k":10}`, 3.0}, // lower tiers never shadow higher ones
		{`{"k":null}`, 2.0},
		{`{"user:k":null}`, 10.0},
		{`{"app:k":null}`, nil},
	}
	for i, s := range steps {
		mustAppend(t, st, k, session.NewEvent{Type: session.TypeStateDelta, StateDelta: json.RawMessage(s.delta)})
		if got := mustState(t, st, k).Merged()["k"]; got != s.want {
			t.Errorf("step %d (%s): merged k = %v, want %v", i, s.delta, got, s.want)
		}
	}
	// Several deltas in one batch apply in order.
	mustAppend(t, st, k,
		session.NewEvent{Type: session.TypeStateDelta, StateDelta: json.RawMessage(`{"n":1,"user:m":1}`)},
		session.NewEvent{Type: session.TypeStateDelta, StateDelta: json.RawMessage(`{"n":2,"user:m":null}`)})
	if got := mustState(t, st, k); got.Session["n"] != 2.0 || len(got.User) != 0 {
		t.Errorf("batch deltas: %+v", got)
	}
}
