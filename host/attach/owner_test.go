package attach_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// An upload belongs to its user: a turn of another user that references it is refused
// as not found (nothing is stored), the owner's own turn uses it, and a file a turn
// carries inline becomes an upload of that turn's user.
func TestTurnsUseOnlyTheirUsersUploads(t *testing.T) {
	f := newTurnFixture(t)
	m, err := f.files.PutAs(context.Background(), "alice", "notes.txt", "text/plain", strings.NewReader("alice's notes"), 0)
	if err != nil {
		t.Fatal(err)
	}
	start := func(user string, blocks ...session.ContentBlock) (*host.Run, error) {
		r, err := f.rt.Start(context.Background(), host.TurnRequest{App: "rec", User: user, Input: host.Input{Content: blocks}})
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		if _, err := r.Wait(ctx); err != nil {
			t.Fatal(err)
		}
		return r, nil
	}
	ref := session.ContentBlock{Type: "input_file", FileURL: m.URI()}
	if _, err := start("bob", text("read it"), ref); !errors.Is(err, host.ErrNotFound) {
		t.Fatalf("bob's turn with alice's upload: %v", err)
	}
	if list, _, _ := f.store.ListSessions(context.Background(), "rec", "bob", session.ListQuery{}); len(list) != 0 {
		t.Errorf("bob's refused turn stored %d sessions", len(list))
	}
	if _, err := start("alice", text("read it"), ref); err != nil {
		t.Fatalf("alice's turn: %v", err)
	}
	if p := f.agent.last(); len(p.CurrentAttachments) != 1 {
		t.Fatalf("alice's turn attachments: %s", p.CurrentAttachments)
	}
	// An inline file is stored as the turn user's upload.
	if _, err := start("carol", text("keep"), session.ContentBlock{Type: "input_file", Filename: "c.txt", FileData: dataURL("text/plain", []byte("carol's"))}); err != nil {
		t.Fatal(err)
	}
	var att struct {
		FileURI string `json:"file_uri"`
	}
	if cur := f.agent.last().CurrentAttachments; len(cur) != 1 || json.Unmarshal(cur[0], &att) != nil {
		t.Fatalf("carol's attachments: %s", cur)
	}
	uri := att.FileURI
	id := strings.TrimPrefix(uri, "ksadk-upload://")
	if meta, err := f.files.Stat(id); err != nil || meta.Owner != "carol" {
		t.Errorf("inline upload %q: owner %q, %v", uri, meta.Owner, err)
	}
}
