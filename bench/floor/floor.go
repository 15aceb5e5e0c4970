// Package floor holds the performance floors (docs/PERFORMANCE.md): the least a
// server can do to answer the same Responses API requests as agentengine, measured in the
// same run as agentengine so every figure can be reported as a ratio to them.
//
//   - Gin: a bare gin handler that answers POST /v1/responses with a JSON body of the
//     same size as agentengine's non-stream response (or, with "stream": true, the same
//     number of text deltas as SSE events).
//   - Hop: gin → one go-plugin gRPC stream to a tiny Go plugin (hopplugin) that streams
//     the same events as an echo-go turn; deltas are relayed as SSE events (one flush
//     each) or collected into the JSON body.
//   - Hop + SQLite: the hop plus one 5-row SQLite WAL transaction per request.
//   - Hop + Postgres: the hop plus one 5-row Postgres transaction per request.
//
// All four speak the subset of the Responses API that bench/load uses, so the same
// load driver measures them and agentengine.
package floor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"

	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
)

// Config configures a floor handler.
type Config struct {
	// BodyBytes pads non-stream responses (and the response of response.completed) to
	// this many bytes; 0 leaves them at their natural size (about 1.3 kB).
	BodyBytes int
	// Runner is the go-plugin runner of the hop floors (required by NewHop).
	Runner runnerv1.RunnerClient
	// DB, when set, makes NewHop the hop + database floor (*SQLite or *Postgres).
	DB Writer
}

// request is the part of a Responses API request the floors look at.
type request struct {
	Model        string          `json:"model"`
	Input        json.RawMessage `json:"input"`
	Stream       bool            `json:"stream"`
	ModelOptions struct {
		Deltas  int `json:"deltas"`
		DelayMS int `json:"delay_ms"`
	} `json:"model_options"`
}

func (r *request) inputText() string {
	var s string
	if json.Unmarshal(r.Input, &s) == nil {
		return s
	}
	return string(r.Input)
}

type handler struct {
	cfg Config
	ids atomic.Uint64
}

func (h *handler) id() string { return strconv.FormatUint(h.ids.Add(1), 16) }

// newHandler starts the ids at a random point, so that two floors on one database (two
// "replicas") do not write the same sessions.
func newHandler(cfg Config) *handler {
	h := &handler{cfg: cfg}
	h.ids.Store(rand.Uint64() >> 8)
	return h
}

// engine returns a gin engine without middleware: POST /v1/responses and GET /health.
func engine(post gin.HandlerFunc) *gin.Engine {
	r := gin.New()
	r.POST("/v1/responses", post)
	r.GET("/health", func(c *gin.Context) { c.Data(http.StatusOK, "application/json", []byte(`{"status":"ok"}`)) })
	return r
}

func decode(c *gin.Context) (*request, []byte, bool) {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		c.AbortWithStatus(http.StatusBadRequest)
		return nil, nil, false
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		c.Data(http.StatusBadRequest, "application/json", []byte(`{"error":{"message":"invalid JSON"}}`))
		return nil, nil, false
	}
	return &req, body, true
}

// NewGin returns the bare gin floor.
func NewGin(cfg Config) http.Handler {
	h := newHandler(cfg)
	return engine(h.bare)
}

func (h *handler) bare(c *gin.Context) {
	req, _, ok := decode(c)
	if !ok {
		return
	}
	id := h.id()
	in := req.inputText()
	text := "Echo: " + in
	if !req.Stream {
		c.Data(http.StatusOK, "application/json", appendResponse(make([]byte, 0, max(h.cfg.BodyBytes, 1536)), id, "Thinking about: "+in, text, time.Now().Unix(), h.cfg.BodyBytes))
		return
	}
	sw := startSSE(c)
	n := req.ModelOptions.Deltas
	if n <= 0 {
		n = 3
	}
	sw.created(id)
	for range n {
		sw.delta("response.output_text.delta", id, "word ")
	}
	sw.completed(appendResponse(nil, id, "Thinking about: "+in, text, time.Now().Unix(), h.cfg.BodyBytes))
}

// NewHop returns the gin → go-plugin hop floor (with cfg.DB, the hop + database floor).
func NewHop(cfg Config) (http.Handler, error) {
	if cfg.Runner == nil {
		return nil, errors.New("floor: the hop floor needs a runner")
	}
	h := newHandler(cfg)
	return engine(h.hop), nil
}

func (h *handler) hop(c *gin.Context) {
	req, body, ok := decode(c)
	if !ok {
		return
	}
	id := h.id()
	ctx := c.Request.Context()
	st, err := h.cfg.Runner.Run(ctx, &runnerv1.RunRequest{
		AppName: "floor", UserId: "user", SessionId: "sess_" + id, InvocationId: "inv_" + id, PayloadJson: body,
	})
	if err != nil {
		c.Data(http.StatusBadGateway, "application/json", []byte(`{"error":{"message":"runner unavailable"}}`))
		return
	}
	var sw *sseWriter
	if req.Stream {
		sw = startSSE(c)
		sw.created(id)
	}
	var reasoning, text []byte
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			h.fail(c, sw, id, err)
			return
		}
		switch e := ev.Event.(type) {
		case *runnerv1.RunEvent_TextDelta:
			text = append(text, e.TextDelta.Text...)
			if sw != nil {
				sw.delta("response.output_text.delta", id, e.TextDelta.Text)
			}
		case *runnerv1.RunEvent_ReasoningDelta:
			reasoning = append(reasoning, e.ReasoningDelta.Text...)
			if sw != nil {
				sw.delta("response.reasoning_summary_text.delta", id, e.ReasoningDelta.Text)
			}
		case *runnerv1.RunEvent_Error:
			h.fail(c, sw, id, fmt.Errorf("runner error: %s", e.Error.Message))
			return
		}
	}
	if h.cfg.DB != nil {
		if err := h.cfg.DB.Write5(context.WithoutCancel(ctx), "sess_"+id, req.inputText(), string(text)); err != nil {
			h.fail(c, sw, id, err)
			return
		}
	}
	out := appendResponse(make([]byte, 0, max(h.cfg.BodyBytes, 1536)), id, string(reasoning), string(text), time.Now().Unix(), h.cfg.BodyBytes)
	if sw == nil {
		c.Data(http.StatusOK, "application/json", out)
		return
	}
	sw.completed(out)
}

func (h *handler) fail(c *gin.Context, sw *sseWriter, id string, err error) {
	msg := appendJSONString(nil, err.Error())
	if sw == nil {
		c.Data(http.StatusInternalServerError, "application/json", append(append([]byte(`{"error":{"message":`), msg...), "}}"...))
		return
	}
	sw.event("response.failed", append(append([]byte(`{"type":"response.failed","response":{"id":"resp_`+id+`","status":"failed","error":{"message":`), msg...), "}}}"...))
}

// sseWriter writes one event per Write and flushes it, as a live relay does.
type sseWriter struct {
	c   *gin.Context
	seq int
	buf []byte
}

func startSSE(c *gin.Context) *sseWriter {
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	c.Writer.WriteHeader(http.StatusOK)
	c.Writer.WriteHeaderNow()
	return &sseWriter{c: c, buf: make([]byte, 0, 512)}
}

func (s *sseWriter) event(name string, data []byte) {
	s.buf = append(s.buf[:0], "event: "...)
	s.buf = append(s.buf, name...)
	s.buf = append(s.buf, "\ndata: "...)
	s.buf = append(s.buf, data...)
	s.buf = append(s.buf, "\n\n"...)
	_, _ = s.c.Writer.Write(s.buf)
	s.c.Writer.Flush()
	s.seq++
}

func (s *sseWriter) created(id string) {
	s.event("response.created", []byte(`{"type":"response.created","sequence_number":0,"response":{"id":"resp_`+id+`","object":"response","status":"in_progress","model":"echo-go","output":[]}}`))
}

func (s *sseWriter) delta(name, id, text string) {
	d := make([]byte, 0, 160+len(text))
	d = append(d, `{"type":"`...)
	d = append(d, name...)
	d = append(d, `","sequence_number":`...)
	d = strconv.AppendInt(d, int64(s.seq), 10)
	d = append(d, `,"item_id":"msg_`...)
	d = append(d, id...)
	d = append(d, `","output_index":1,"content_index":0,"delta":`...)
	d = appendJSONString(d, text)
	d = append(d, '}')
	s.event(name, d)
}

func (s *sseWriter) completed(resp []byte) {
	d := make([]byte, 0, len(resp)+80)
	d = append(d, `{"type":"response.completed","sequence_number":`...)
	d = strconv.AppendInt(d, int64(s.seq), 10)
	d = append(d, `,"response":`...)
	d = append(d, resp...)
	d = append(d, '}')
	s.event("response.completed", d)
}
