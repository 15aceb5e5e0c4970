package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// driver sends requests of one Config.
type driver struct {
	cfg    Config
	client *http.Client
	tr     *http.Transport
	url    string
	// langGraphBody is the body of every LangGraph run (APILangGraph).
	langGraphBody []byte
}

func newDriver(cfg Config) *driver {
	conns := cfg.Concurrency
	if cfg.Scenario == Streams {
		conns = max(conns, cfg.Streams)
	}
	tr := &http.Transport{
		Proxy:               nil, // never route a load test through a proxy
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
		WriteBufferSize:     16 << 10,
		ReadBufferSize:      32 << 10,
	}
	d := &driver{
		cfg:    cfg,
		client: &http.Client{Transport: tr},
		tr:     tr,
		url:    trimURL(cfg.URL, cfg.Path),
	}
	if cfg.API == APILangGraph || cfg.API == APIADK {
		d.url = strings.TrimRight(cfg.URL, "/")
		d.langGraphBody = langGraphRunBody(cfg.Model, cfg.Input, cfg.Scenario == Stream)
	}
	return d
}

func (d *driver) close() { d.tr.CloseIdleConnections() }

// body builds a request body. conversation "" omits the field.
func (d *driver) body(stream bool, conversation string, deltas, delayMS int) []byte {
	req := map[string]any{"model": d.cfg.Model, "input": d.cfg.Input, "stream": stream}
	opts := map[string]any{}
	if deltas > 0 {
		opts["deltas"] = deltas
	}
	if delayMS > 0 {
		opts["delay_ms"] = delayMS
	}
	if len(opts) > 0 {
		req["model_options"] = opts
	}
	if conversation != "" {
		req["conversation"] = conversation
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic("load: marshal request: " + err.Error()) // only plain values above
	}
	return b
}

// sample is the outcome of one request.
type sample struct {
	lat        time.Duration // request sent → response complete
	ttfb       time.Duration // request sent → first byte of the body (streams)
	firstDelta time.Duration // request sent → first *.delta event (streams)
	deltas     int           // response.output_text.delta events
	events     int           // SSE events
	bytes      int64         // response body bytes
	err        error
}

// worker holds one goroutine's reusable buffers.
type worker struct {
	buf bytes.Buffer
	rd  *bufio.Reader
	// line accumulates an SSE line longer than rd's buffer.
	line []byte
}

func newWorker() *worker { return &worker{rd: bufio.NewReaderSize(nil, 64<<10)} }

// onOpen is called once a stream's first event arrived (nil: nothing to do).
type onOpen func()

// do sends one turn and reads its response to the end.
func (d *driver) do(ctx context.Context, w *worker, body []byte, stream bool, opened onOpen) sample {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return sample{err: err}
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if d.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+d.cfg.Token)
	}
	start := time.Now()
	resp, err := d.client.Do(req)
	if err != nil {
		return sample{err: err, lat: time.Since(start)}
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		w.buf.Reset()
		_, _ = io.Copy(&w.buf, io.LimitReader(resp.Body, 512))
		return sample{lat: time.Since(start), err: fmt.Errorf("HTTP %d: %s", resp.StatusCode, clip(w.buf.Bytes(), 200))}
	}
	if !stream {
		w.buf.Reset()
		n, err := w.buf.ReadFrom(resp.Body)
		s := sample{lat: time.Since(start), bytes: n, err: err}
		if err == nil {
			if st := topStatus(w.buf.Bytes()); st != "completed" {
				s.err = fmt.Errorf("response status %q, want completed: %s", st, clip(w.buf.Bytes(), 200))
			} else if d.cfg.Expect != "" && !bytes.Contains(w.buf.Bytes(), []byte(d.cfg.Expect)) {
				s.err = fmt.Errorf("response lacks %q: %s", d.cfg.Expect, clip(w.buf.Bytes(), 200))
			}
		}
		return s
	}
	s := d.readSSE(w, resp.Body, start, opened)
	s.lat = time.Since(start)
	return s
}

const (
	prefixEvent = "event:"
	prefixData  = "data:"
	typeKey     = `"type":"`
)

// readSSE reads a Responses API event stream and checks that it ends with
// response.completed.
func (d *driver) readSSE(w *worker, body io.Reader, start time.Time, opened onOpen) sample {
	var s sample
	w.rd.Reset(body)
	var name []byte
	var data bool
	var failure string
	found := d.cfg.Expect == ""
	for {
		line, err := w.readLine()
		s.bytes += int64(len(line)) + 1
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = errors.New("stream ended without response.completed")
			}
			s.err = err
			return s
		}
		if s.events == 0 && s.ttfb == 0 {
			s.ttfb = time.Since(start)
		}
		switch {
		case len(line) == 0: // end of an event
			if len(name) == 0 && !data {
				continue
			}
			s.events++
			if s.events == 1 && opened != nil {
				opened()
			}
			if bytes.HasSuffix(name, []byte(".delta")) && s.firstDelta == 0 {
				s.firstDelta = time.Since(start)
			}
			switch string(name) {
			case "response.output_text.delta":
				s.deltas++
			case "response.completed":
				if !found {
					s.err = fmt.Errorf("stream completed without %q", d.cfg.Expect)
				}
				return s
			case "response.failed", "response.incomplete", "error":
				if failure == "" {
					failure = string(name)
				}
				s.err = fmt.Errorf("stream ended with %s", failure)
				return s
			}
			name, data = name[:0], false
		case bytes.HasPrefix(line, []byte(prefixEvent)):
			name = append(name[:0], bytes.TrimSpace(line[len(prefixEvent):])...)
		case bytes.HasPrefix(line, []byte(prefixData)):
			data = true
			if !found && bytes.Contains(line, []byte(d.cfg.Expect)) {
				found = true
			}
			if len(name) == 0 {
				// No event: line; take the name from the JSON "type".
				if i := bytes.Index(line, []byte(typeKey)); i >= 0 {
					rest := line[i+len(typeKey):]
					if j := bytes.IndexByte(rest, '"'); j >= 0 {
						name = append(name[:0], rest[:j]...)
					}
				}
			}
			if bytes.Equal(bytes.TrimSpace(line[len(prefixData):]), []byte("[DONE]")) {
				s.err = errors.New("stream ended with [DONE] but without response.completed")
				return s
			}
		}
	}
}

// readLine returns the next line without its line ending; the slice is valid until the
// next call.
func (w *worker) readLine() ([]byte, error) {
	line, err := w.rd.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		w.line = append(w.line[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = w.rd.ReadSlice('\n')
			w.line = append(w.line, line...)
		}
		line = w.line
	}
	if err != nil {
		if len(line) > 0 && errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	line = line[:len(line)-1]
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line, nil
}

const statusKey = `"status":`

// topStatus returns the value of the first "status" key of a response object: the
// object's own status, which the Responses API writes before its output items.
func topStatus(b []byte) string {
	i := bytes.Index(b, []byte(statusKey))
	if i < 0 {
		return ""
	}
	rest := bytes.TrimLeft(b[i+len(statusKey):], " \t\r\n")
	if len(rest) == 0 || rest[0] != '"' {
		return ""
	}
	rest = rest[1:]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

func clip(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// newSmallReader is the reader of a streams-scenario worker: thousands of them are
// alive at once, and readLine handles lines longer than the buffer.
func newSmallReader() *bufio.Reader { return bufio.NewReaderSize(nil, 4<<10) }
