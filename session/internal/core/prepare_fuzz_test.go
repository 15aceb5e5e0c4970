package core

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/agentengine/agentengine/session"
)

// FuzzPrepare: any client-supplied event either fails with ErrInvalid or yields valid
// JSON, a stored delta without temp keys, and the same tier routing as SplitStateDelta.
func FuzzPrepare(f *testing.F) {
	f.Add(session.TypeUserMessage, []byte(`{"text":"hi"}`), []byte(`{"a":1,"temp:t":2,"app:x":null}`))
	f.Add(session.TypeRunStatus, []byte(`{"status":""}`), []byte(``))
	f.Add(session.TypeContextCheckpoint, []byte(`{"from_seq":2,"until_seq":1}`), []byte(`null`))
	f.Add("x", []byte(``), []byte(`{"temp:only":1}`))
	f.Add("", []byte(`{`), []byte(`[]`))
	f.Fuzz(func(t *testing.T, typ string, data, delta []byte) {
		ps, err := Prepare([]session.NewEvent{{Type: typ, Data: data, StateDelta: delta}}, "")
		if err != nil {
			if !errors.Is(err, session.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		e := ps[0].Event
		if !json.Valid(e.Data) {
			t.Fatalf("stored data %q is not JSON", e.Data)
		}
		if len(e.StateDelta) > 0 {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(e.StateDelta, &m); err != nil || m == nil {
				t.Fatalf("stored delta %q is not an object: %v", e.StateDelta, err)
			}
			for k := range m {
				if strings.HasPrefix(k, session.TierTempPrefix) {
					t.Fatalf("stored delta keeps temp key %q", k)
				}
			}
		}
		app, user, sess, err := session.SplitStateDelta(delta)
		if err != nil {
			t.Fatalf("Prepare accepted a delta SplitStateDelta rejects: %v", err)
		}
		if !reflect.DeepEqual(app, ps[0].App) || !reflect.DeepEqual(user, ps[0].User) || !reflect.DeepEqual(sess, ps[0].Sess) {
			t.Fatal("tier routing differs from SplitStateDelta")
		}
		// Stored delta routes the same as the original, minus temp keys.
		if len(e.StateDelta) > 0 {
			a2, u2, s2, err := session.SplitStateDelta(e.StateDelta)
			if err != nil || !reflect.DeepEqual(a2, app) || !reflect.DeepEqual(u2, user) || !reflect.DeepEqual(s2, sess) {
				t.Fatalf("stored delta %q routes differently: %v", e.StateDelta, err)
			}
		}
	})
}
