package attach_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api"
	"github.com/agentengine/agentengine/api/openai"
)

// /v1/responses needs no change of its own: input_file.file_url reaches the host,
// which resolves ksadk-upload:// references through the store.
func TestResponsesSurfaceResolvesUploads(t *testing.T) {
	f := newTurnFixture(t)
	m, err := f.files.Put(context.Background(), "memo.txt", "", strings.NewReader("launch moves to May"), 0)
	if err != nil {
		t.Fatal(err)
	}
	gin.SetMode(gin.TestMode)
	r := api.NewRouter(api.Config{Runtime: f.rt, Surfaces: []api.Surface{openai.New(openai.Config{Runtime: f.rt})}})
	for _, tc := range []struct {
		ref    string
		status int
		code   string
	}{
		{m.URI(), 200, ""},
		{"ksadk-upload://0123456789abcdef0123456789abcdef", 404, `"code":"not_found"`},
		{"ksadk-upload://../../etc/passwd", 400, `"code":"invalid_value"`},
	} {
		body := `{"model":"rec","input":[{"role":"user","content":[{"type":"input_text","text":"hi"},{"type":"input_file","file_url":"` + tc.ref + `"}]}]}`
		req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/v1/responses", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		r.ServeHTTP(w, req)
		if w.Code != tc.status || !strings.Contains(w.Body.String(), tc.code) {
			t.Fatalf("%s: %d %s", tc.ref, w.Code, w.Body)
		}
	}
	got := decodeResults(t, f.agent.last().CurrentAttachmentResults)
	if len(got) != 1 || got[0].Text != "launch moves to May" {
		t.Fatalf("results %+v", got)
	}
}
