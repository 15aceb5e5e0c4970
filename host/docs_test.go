package host_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

func TestDocsAreScopedToHostedAppsAndMapStoreErrors(t *testing.T) {
	ctx := context.Background()
	rt := startRuntime(t, host.Config{Store: memory.New(), Agents: []host.Agent{{Name: "ckpt", Runner: serve(t, threadAgent{})}}})
	k := session.DocKey{App: "ckpt", User: "u", Session: "s", Kind: session.DocADKArtifact, Name: "a.txt"}
	if v, err := rt.PutDoc(ctx, session.Doc{Key: k, Data: []byte("one")}); err != nil || v != 0 {
		t.Fatalf("PutDoc = %d, %v", v, err)
	}
	if d, err := rt.GetDoc(ctx, k, -1); err != nil || string(d.Data) != "one" {
		t.Fatalf("GetDoc = %+v, %v", d, err)
	}
	if names, err := rt.DocNames(ctx, "ckpt", "u", "s", session.DocADKArtifact); err != nil || len(names) != 1 {
		t.Fatalf("DocNames = %v, %v", names, err)
	}
	for name, c := range map[string]struct {
		err  error
		kind error
	}{
		"unknown app": {err: func() error {
			_, err := rt.PutDoc(ctx, session.Doc{Key: session.DocKey{App: "nope", Kind: "k", Name: "n"}})
			return err
		}(), kind: host.ErrUnknownAgent},
		"missing version":  {err: func() error { _, err := rt.GetDoc(ctx, k, 3); return err }(), kind: host.ErrNotFound},
		"missing document": {err: rt.DeleteDoc(ctx, session.DocKey{App: "ckpt", Kind: "k", Name: "gone"}), kind: host.ErrNotFound},
		"malformed key": {err: func() error {
			_, err := rt.DocVersions(ctx, session.DocKey{App: "ckpt", Session: "s", Kind: "k", Name: "n"})
			return err
		}(), kind: host.ErrInvalidInput},
	} {
		var ce *host.ClientError
		if !errors.As(c.err, &ce) || !errors.Is(ce.Kind, c.kind) {
			t.Errorf("%s: %v, want a %v ClientError", name, c.err, c.kind)
		}
	}
	var ce *host.ClientError
	_, err := rt.GetDoc(ctx, k, 3)
	if errors.As(err, &ce) && ce.Message != `adk_artifact "a.txt" version 3 not found` {
		t.Errorf("message = %q", ce.Message)
	}
}
