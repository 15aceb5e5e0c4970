package attach_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/attach"
	"github.com/agentengine/agentengine/pluginsdk"
	"github.com/agentengine/agentengine/pluginsdk/inprocess"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

// recorder is an agent that answers "ok" and keeps the payloads it was sent.
type recorder struct {
	mu       sync.Mutex
	payloads []pluginsdk.Payload
}

func (r *recorder) Info() pluginsdk.Info { return pluginsdk.Info{Name: "rec", Framework: "go"} }

func (r *recorder) Run(_ context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	r.mu.Lock()
	r.payloads = append(r.payloads, req.Payload)
	r.mu.Unlock()
	return emit.Text("ok")
}

func (r *recorder) last() pluginsdk.Payload {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.payloads[len(r.payloads)-1]
}

type turnFixture struct {
	rt    *host.Runtime
	store session.Store
	files *attach.Store
	dir   string
	agent *recorder
}

func newTurnFixture(t *testing.T) *turnFixture {
	t.Helper()
	f := &turnFixture{store: memory.New(), agent: &recorder{}, dir: filepath.Join(t.TempDir(), "files")}
	var err error
	f.files, err = attach.New(attach.Config{Dir: f.dir, MaxUploadBytes: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	client, stop := inprocess.Serve(f.agent)
	f.rt, err = host.New(host.Config{Store: f.store, Agents: []host.Agent{{Name: "rec", Runner: client}},
		Attachments: f.files.ForHost(), AttachmentWait: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = f.rt.Close(ctx)
		stop()
		_ = f.files.Close()
	})
	return f
}

func (f *turnFixture) turn(t *testing.T, sessionID string, blocks ...session.ContentBlock) (*host.Run, error) {
	t.Helper()
	r, err := f.rt.Start(context.Background(), host.TurnRequest{App: "rec", SessionID: sessionID, Input: host.Input{Content: blocks}})
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

func text(s string) session.ContentBlock { return session.ContentBlock{Type: "input_text", Text: s} }

func dataURL(mime string, b []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b)
}

type payloadResult struct {
	FileURI, Name, Status, Text, TextExcerpt, Kind string
	ExtractionMethod                               string   `json:"extraction_method"`
	Warnings                                       []string `json:"warnings"`
}

func decodeResults(t *testing.T, raws []json.RawMessage) []payloadResult {
	t.Helper()
	out := make([]payloadResult, len(raws))
	for i, r := range raws {
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"file_uri", "name", "mime_type", "kind", "status", "extraction_method", "text", "text_excerpt", "warnings"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("result %s lacks %q", r, k)
			}
		}
		out[i] = payloadResult{FileURI: m["file_uri"].(string), Name: m["name"].(string), Status: m["status"].(string),
			Text: m["text"].(string), TextExcerpt: m["text_excerpt"].(string), Kind: m["kind"].(string)}
	}
	return out
}

// KsADK's documented attachment flow: "summarize this PDF", then "expand the second risk" without the
// file — the follow-up still sees the PDF's text, as effective (not current) context.
func TestEffectiveAttachmentsAcrossTurns(t *testing.T) {
	f := newTurnFixture(t)
	pdf := minimalPDF("Risk one: supply. Risk two: churn.")
	r1, err := f.turn(t, "", text("summarize this PDF"),
		session.ContentBlock{Type: "input_file", Filename: "risks.pdf", FileData: dataURL("application/pdf", pdf)})
	if err != nil {
		t.Fatal(err)
	}
	p1 := f.agent.last()
	if !p1.HasCurrentFiles || len(p1.CurrentAttachments) != 1 || len(p1.CurrentAttachmentResults) != 1 {
		t.Fatalf("turn 1 current: has=%v %s %s", p1.HasCurrentFiles, p1.CurrentAttachments, p1.CurrentAttachmentResults)
	}
	res := decodeResults(t, p1.CurrentAttachmentResults)[0]
	if res.Status != "ok" || !strings.Contains(res.Text, "Risk two: churn") || res.Name != "risks.pdf" || !strings.HasPrefix(res.FileURI, attach.Scheme) {
		t.Fatalf("turn 1 result %+v", res)
	}
	if string(mustJSON(p1.Attachments)) != string(mustJSON(p1.CurrentAttachments)) ||
		string(mustJSON(p1.AttachmentResults)) != string(mustJSON(p1.CurrentAttachmentResults)) {
		t.Fatal("turn 1: effective attachments must be the current ones")
	}
	if p1.InputText() != "summarize this PDF" {
		t.Fatalf("input %q: extracted text goes to attachment_results, not input", p1.InputText())
	}

	// The log carries the reference, with the extraction summary but not the full text.
	refs, err := f.store.Events(context.Background(), r1.Key, session.EventQuery{Types: []string{session.TypeAttachmentRef}})
	if err != nil || len(refs) != 1 || refs[0].InvocationID != r1.InvocationID {
		t.Fatalf("attachment_ref events %v, %v", refs, err)
	}
	var ref map[string]any
	_ = json.Unmarshal(refs[0].Data, &ref)
	if ref["file_uri"] != res.FileURI || ref["status"] != "ok" || ref["transport"] != "inline" || ref["text"] != nil ||
		!strings.Contains(fmt.Sprint(ref["text_excerpt"]), "Risk one") {
		t.Fatalf("attachment_ref data %s", refs[0].Data)
	}

	if _, err := f.turn(t, r1.Key.ID, text("expand the second risk")); err != nil {
		t.Fatal(err)
	}
	p2 := f.agent.last()
	if p2.HasCurrentFiles || len(p2.CurrentAttachments) != 0 || len(p2.CurrentAttachmentResults) != 0 {
		t.Fatalf("turn 2 current: has=%v %s %s", p2.HasCurrentFiles, p2.CurrentAttachments, p2.CurrentAttachmentResults)
	}
	if len(p2.Attachments) != 1 || len(p2.AttachmentResults) != 1 {
		t.Fatalf("turn 2 effective: %s %s", p2.Attachments, p2.AttachmentResults)
	}
	if got := decodeResults(t, p2.AttachmentResults)[0]; got.FileURI != res.FileURI || !strings.Contains(got.Text, "Risk two: churn") {
		t.Fatalf("turn 2 restored result %+v", got)
	}
	if string(mustJSON(p2.CurrentAttachments)) != "[]" || string(mustJSON(p2.CurrentAttachmentResults)) != "[]" {
		t.Fatal("turn 2: current fields must be empty lists, not null")
	}

	// A third turn with another file replaces the context.
	if _, err := f.turn(t, r1.Key.ID, text("and this"), session.ContentBlock{Type: "input_file", Filename: "n.txt", FileData: dataURL("text/plain", []byte("fresh notes"))}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.turn(t, r1.Key.ID, text("follow up")); err != nil {
		t.Fatal(err)
	}
	p4 := f.agent.last()
	if got := decodeResults(t, p4.AttachmentResults); len(got) != 1 || got[0].Text != "fresh notes" {
		t.Fatalf("turn 4 effective %+v", got)
	}
}

func TestUploadRefsAndImages(t *testing.T) {
	f := newTurnFixture(t)
	m, err := f.files.Put(context.Background(), "notes.md", "text/markdown", strings.NewReader("# Plan\nship it"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.turn(t, "", text("read"),
		session.ContentBlock{Type: "input_file", FileURL: m.URI()},
		session.ContentBlock{Type: "input_image", ImageURL: "https://example.com/cat.png"},
	); err != nil {
		t.Fatal(err)
	}
	p := f.agent.last()
	got := decodeResults(t, p.CurrentAttachmentResults)
	if len(got) != 2 || got[0].Text != "# Plan\nship it" || got[0].Name != "notes.md" || got[1].Status != "skipped" {
		t.Fatalf("results %+v", got)
	}
	var atts []map[string]any
	_ = json.Unmarshal(mustJSON(p.CurrentAttachments), &atts)
	if atts[0]["transport"] != "reference" || atts[0]["kind"] != "text" || atts[1]["file_uri"] != "https://example.com/cat.png" {
		t.Fatalf("attachments %v", atts)
	}
}

func TestBadFilesStoreNothing(t *testing.T) {
	for _, tc := range []struct {
		name  string
		block session.ContentBlock
		kind  error
	}{
		{"unknown upload", session.ContentBlock{Type: "input_file", FileURL: "ksadk-upload://0123456789abcdef0123456789abcdef"}, host.ErrNotFound},
		{"traversal", session.ContentBlock{Type: "input_file", FileURL: "ksadk-upload://../../../../etc/hostname"}, host.ErrInvalidInput},
		{"encoded traversal", session.ContentBlock{Type: "input_file", FileURL: "ksadk-upload://%2e%2e%2f%2e%2e%2fetc%2fpasswd"}, host.ErrInvalidInput},
		{"absolute", session.ContentBlock{Type: "input_image", ImageURL: "ksadk-upload:///etc/passwd"}, host.ErrInvalidInput},
		{"NUL", session.ContentBlock{Type: "input_file", FileID: "ksadk-upload://0123456789abcdef0123456789abcde\x00"}, host.ErrInvalidInput},
		{"over the limit", session.ContentBlock{Type: "input_file", Filename: "big.txt", FileData: dataURL("text/plain", bytes.Repeat([]byte("a"), 65<<10))}, host.ErrInvalidInput},
		{"bad base64", session.ContentBlock{Type: "input_file", Filename: "x.txt", FileData: "data:text/plain;base64,!!!notbase64!!!"}, host.ErrInvalidInput},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTurnFixture(t)
			_, err := f.turn(t, "", text("hi"), tc.block)
			var ce *host.ClientError
			if !errors.As(err, &ce) || !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want a client error of kind %v", err, tc.kind)
			}
			if strings.Contains(ce.Message, "/tmp") || strings.Contains(ce.Message, f.dir) {
				t.Fatalf("message leaks a path: %q", ce.Message)
			}
			if _, n, _ := f.store.ListSessions(context.Background(), "rec", "user", session.ListQuery{Limit: 10}); n != 0 {
				t.Fatalf("a rejected turn created %d sessions", n)
			}
			ents, _ := os.ReadDir(f.dir)
			for _, e := range ents {
				if e.Name() != "cache" {
					t.Fatalf("a rejected turn left %s in the upload store", e.Name())
				}
			}
		})
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// minimalPDF is a one-page PDF showing text.
func minimalPDF(text string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	content := fmt.Sprintf("BT /F1 24 Tf 72 700 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	var offs []int
	for i, o := range objs {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}
