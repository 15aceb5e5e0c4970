package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/host"
)

func TestReadJSON(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, tc := range []struct {
		name        string
		body, ctype string
		chunked     bool
		routerLimit int64 // 0: served without the router's limit
		max         int64
		status      int
		code, msg   string
	}{
		{name: "json", body: `{"a":1}`, ctype: "application/json; charset=utf-8", max: 64},
		{name: "no content type", body: `{}`, max: 64},
		{name: "a +json type", body: `{}`, ctype: "application/merge-patch+json", max: 64},
		{name: "text is refused", body: `{}`, ctype: "text/plain", max: 64, status: 415, code: CodeMediaType},
		{name: "a bad content type", body: `{}`, ctype: "application/", max: 64, status: 415, code: CodeMediaType},
		{name: "over the limit by length", body: strings.Repeat("x", 65), max: 64, status: 413, code: CodeTooLarge,
			msg: "the request body is larger than the server's limit of 64 bytes"},
		{name: "over the limit while read", body: strings.Repeat("x", 65), chunked: true, max: 64, status: 413, code: CodeTooLarge},
		{name: "at the limit", body: strings.Repeat("x", 64), chunked: true, max: 64},
		{name: "default limit", body: strings.Repeat("x", 1024), max: 0},
		{name: "the router's limit is not applied twice", body: strings.Repeat("x", 100), routerLimit: 1 << 10, max: 64},
		{name: "the router's limit names itself", body: strings.Repeat("x", 2048), chunked: true, routerLimit: 1 << 10, max: 64,
			status: 413, code: CodeTooLarge, msg: "the request body is larger than the server's limit of 1 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(w)
			var body io.Reader = strings.NewReader(tc.body)
			if tc.chunked {
				body = io.MultiReader(body) // no length known
			}
			req := httptest.NewRequest(http.MethodPost, "/", body)
			if tc.ctype != "" {
				req.Header.Set("Content-Type", tc.ctype)
			}
			if tc.routerLimit > 0 {
				req.Body = http.MaxBytesReader(w, req.Body, tc.routerLimit)
				Limited(tc.routerLimit)(c)
			}
			c.Request = req
			got, e := ReadJSON(c, tc.max)
			if tc.status == 0 {
				if e != nil || string(got) != tc.body {
					t.Fatalf("ReadJSON = %q, %v", got, e)
				}
				return
			}
			if e == nil || e.Status != tc.status || e.Code != tc.code || (tc.msg != "" && e.Message != tc.msg) {
				t.Fatalf("ReadJSON error = %+v, want %d %s %q", e, tc.status, tc.code, tc.msg)
			}
		})
	}
}

func TestFromHost(t *testing.T) {
	client := func(kind error) error {
		return fmt.Errorf("wrapped: %w", &host.ClientError{Kind: kind, Param: "p", Message: "for the client"})
	}
	for _, tc := range []struct {
		name     string
		err      error
		status   int
		internal bool
		message  string
	}{
		{"unknown agent", client(host.ErrUnknownAgent), 404, false, "for the client"},
		{"not found", client(host.ErrNotFound), 404, false, "for the client"},
		{"invalid input", client(host.ErrInvalidInput), 400, false, "for the client"},
		{"no pending approval", client(host.ErrNoPendingApproval), 400, false, "for the client"},
		{"run active", client(host.ErrRunActive), 409, false, "for the client"},
		{"run not active", client(host.ErrRunNotActive), 409, false, "for the client"},
		{"unavailable", client(host.ErrUnavailable), 503, false, "for the client"},
		{"too many runs", client(host.ErrTooManyRuns), 429, false, "for the client"},
		{"an unmapped kind", client(errors.New("new kind")), 400, false, "for the client"},
		{"a server failure", errors.New("disk on fire"), 500, true, ""},
		{"the client went away", fmt.Errorf("wait: %w", context.Canceled), StatusClientGone, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := FromHost(hclog.NewNullLogger(), "op", tc.err)
			if e.Status != tc.status || e.Internal() != tc.internal || e.Message != tc.message || e.Gone() != (tc.status == StatusClientGone) {
				t.Errorf("FromHost = %+v (internal %v)", e, e.Internal())
			}
			if e.Kind != nil && e.Param != "p" {
				t.Errorf("param = %q", e.Param)
			}
		})
	}
}

func TestHandleWritesTheReturnedError(t *testing.T) {
	gin.SetMode(gin.TestMode)
	type failure struct{ msg string }
	write := func(c *gin.Context, e *failure) { c.String(http.StatusTeapot, e.msg) }
	r := gin.New()
	r.GET("/fail", Handle(write, func(*gin.Context) *failure { return &failure{"no"} }))
	r.GET("/ok", Handle(write, func(c *gin.Context) *failure { WriteJSON(c, http.StatusOK, map[string]string{"a": "<b>"}); return nil }))
	for path, want := range map[string]string{"/fail": "418 no", "/ok": "200 {\"a\":\"<b>\"}\n"} {
		w := httptest.NewRecorder()
		r.ServeHTTP(w, httptest.NewRequest(http.MethodGet, path, nil))
		if got := fmt.Sprintf("%d %s", w.Code, w.Body.String()); got != want {
			t.Errorf("GET %s = %q, want %q", path, got, want)
		}
	}
}

func TestReadAllByDeclaredLength(t *testing.T) {
	big := strings.Repeat("x", 3<<20)
	for _, tc := range []struct {
		name     string
		body     string
		declared int64
		maxCap   int
	}{
		{"unknown length", "{}", -1, 1 << 10},
		{"exact", big, int64(len(big)), len(big) + 64<<10}, // one allocation (size-class rounding), not doubling
		{"declares more than it sends", "{}", 100 << 20, 1<<20 + 64<<10},
		{"declares less than it sends", big, 10, 8 << 20},
	} {
		got, err := readAll(iotest.HalfReader(strings.NewReader(tc.body)), tc.declared)
		if err != nil || string(got) != tc.body {
			t.Errorf("%s: %d bytes, %v", tc.name, len(got), err)
		}
		if cap(got) > tc.maxCap {
			t.Errorf("%s: reserved %d bytes, want at most %d", tc.name, cap(got), tc.maxCap)
		}
	}
}
