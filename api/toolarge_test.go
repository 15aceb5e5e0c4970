package api

import (
	"strings"
	"testing"
)

// A 413 names the limit, whether Content-Length announced the size or not.
func TestTooLargeNamesTheLimit(t *testing.T) {
	r := newRouter(Config{Runtime: newRuntime(t), MaxBodyBytes: 1 << 10})
	body := `{"model":"echo","input":"` + strings.Repeat("x", 2000) + `"}`
	res := serve(t, r, "POST", "/v1/responses", body, "Content-Type", "application/json")
	msg, _ := res.body["error"].(map[string]any)["message"].(string)
	if res.status != 413 || !strings.Contains(msg, "limit of 1 KiB") {
		t.Errorf("%d %q", res.status, msg)
	}
}
