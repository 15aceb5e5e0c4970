package sse

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
)

// An open stream holds a write buffer only for a burst: none after a flush, and the
// buffer it hands back carries nothing into the next stream that borrows it.
func TestWriterBorrowsItsBufferPerBurst(t *testing.T) {
	gin.SetMode(gin.TestMode)
	for _, name := range []string{"a", "b"} {
		rec := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(rec)
		c.Request = httptest.NewRequest(http.MethodGet, "/", nil)
		s := Start(c)
		if s.buf != nil {
			t.Fatal("a new stream holds a buffer")
		}
		if err := s.Event("1", "delta", []byte(`{"x":"`+name+`"}`)); err != nil {
			t.Fatal(err)
		}
		if err := s.EventFrom("", "done", func(w io.Writer) error { _, err := io.WriteString(w, "{}"); return err }); err != nil {
			t.Fatal(err)
		}
		if s.buf == nil {
			t.Fatal("a burst without a buffer")
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if s.buf != nil {
			t.Fatal("a flushed stream still holds its buffer")
		}
		if err := s.Comment("ping"); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		want := "id: 1\nevent: delta\ndata: {\"x\":\"" + name + "\"}\n\nevent: done\ndata: {}\n\n: ping\n\n"
		if got := rec.Body.String(); got != want {
			t.Fatalf("stream %s:\n%q\nwant\n%q", name, got, want)
		}
		if !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/event-stream") {
			t.Fatalf("content type %q", rec.Header().Get("Content-Type"))
		}
	}
}
