package load

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"
)

// API names the wire protocol of a nonstream or stream turn, so that the same work runs
// against the servers a user would otherwise run on the same agent code.
type API string

// The APIs.
const (
	// APIResponses is POST {url}/v1/responses (agentengine, KsADK, the floors).
	APIResponses API = "responses"
	// APILangGraph is the LangGraph server's (`langgraph dev`): a thread per turn
	// (POST /threads), then POST /threads/{id}/runs/wait (nonstream) or
	// /threads/{id}/runs/stream with stream_mode "values" (stream); Model is the
	// assistant id.
	APILangGraph API = "langgraph"
	// APIADK is ADK's web server's (`adk api_server`, and agentengine's ADK-web
	// surface): a session per turn (POST /apps/{app}/users/{user}/sessions), then
	// POST /run (nonstream: a JSON array of events) or /run_sse (stream); Model is the app.
	APIADK API = "adk"
)

// APIs lists every API, for flag help.
func APIs() []API { return []API{APIResponses, APILangGraph, APIADK} }

// benchUser is the user id of every ADK session the generator creates.
const benchUser = "bench"

// peerTurn returns the turn of a nonstream or stream scenario over the LangGraph or
// ADK API. Every answer is checked: a 2xx status, no error in the body or stream, and
// (with Expect set) the expected text somewhere in the answer.
func (d *driver) peerTurn(stream bool) turnFunc {
	return func(ctx context.Context, w *worker) sample {
		ctx, cancel := context.WithTimeout(ctx, d.cfg.RequestTimeout)
		defer cancel()
		start := time.Now()
		run, body, err := d.peerOpen(ctx, w)
		if err != nil {
			return sample{err: err, lat: time.Since(start)}
		}
		resp, err := d.post(ctx, run, body, stream)
		if err != nil {
			return sample{err: err, lat: time.Since(start)}
		}
		defer resp.Body.Close()
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			return sample{lat: time.Since(start), err: statusErr(w, resp)}
		}
		var s sample
		if stream {
			s = d.readPeerSSE(w, resp.Body, start)
		} else {
			w.buf.Reset()
			s.bytes, s.err = w.buf.ReadFrom(resp.Body)
			if s.err == nil {
				s.err = d.checkPeerAnswer(w.buf.Bytes())
			}
		}
		s.lat = time.Since(start)
		return s
	}
}

// peerOpen creates the turn's thread or session and returns the run URL and body.
func (d *driver) peerOpen(ctx context.Context, w *worker) (string, []byte, error) {
	switch d.cfg.API {
	case APILangGraph:
		var th struct {
			ThreadID string `json:"thread_id"`
		}
		if err := d.postJSON(ctx, w, d.url+"/threads", []byte(`{}`), &th); err != nil {
			return "", nil, fmt.Errorf("create thread: %w", err)
		}
		if th.ThreadID == "" {
			return "", nil, errors.New("create thread: no thread_id in the answer")
		}
		return d.url + "/threads/" + url.PathEscape(th.ThreadID) + "/runs/" + map[bool]string{false: "wait", true: "stream"}[d.cfg.Scenario == Stream],
			d.langGraphBody, nil
	case APIADK:
		var ss struct {
			ID string `json:"id"`
		}
		u := d.url + "/apps/" + url.PathEscape(d.cfg.Model) + "/users/" + benchUser + "/sessions"
		if err := d.postJSON(ctx, w, u, []byte(`{}`), &ss); err != nil {
			return "", nil, fmt.Errorf("create session: %w", err)
		}
		if ss.ID == "" {
			return "", nil, errors.New("create session: no id in the answer")
		}
		b, err := json.Marshal(map[string]any{
			"app_name": d.cfg.Model, "user_id": benchUser, "session_id": ss.ID,
			"new_message": map[string]any{"role": "user", "parts": []any{map[string]any{"text": d.cfg.Input}}},
		})
		if err != nil {
			return "", nil, err
		}
		path := "/run"
		if d.cfg.Scenario == Stream {
			path = "/run_sse"
		}
		return d.url + path, b, nil
	case APIResponses:
	}
	return "", nil, fmt.Errorf("api %q has no peer turn", d.cfg.API)
}

// langGraphRunBody is a LangGraph run's body: the input as one user message.
func langGraphRunBody(assistant, input string, stream bool) []byte {
	req := map[string]any{
		"assistant_id": assistant,
		"input":        map[string]any{"messages": []any{map[string]any{"role": "user", "content": input}}},
	}
	if stream {
		req["stream_mode"] = []string{"values"}
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic("load: marshal request: " + err.Error()) // only plain values above
	}
	return b
}

func (d *driver) post(ctx context.Context, u string, body []byte, stream bool) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if d.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+d.cfg.Token)
	}
	return d.client.Do(req)
}

// postJSON posts body and decodes a 2xx JSON answer into out.
func (d *driver) postJSON(ctx context.Context, w *worker, u string, body []byte, out any) error {
	resp, err := d.post(ctx, u, body, false)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return statusErr(w, resp)
	}
	w.buf.Reset()
	if _, err := w.buf.ReadFrom(resp.Body); err != nil {
		return err
	}
	if err := json.Unmarshal(w.buf.Bytes(), out); err != nil {
		return fmt.Errorf("answer is not JSON: %w: %s", err, clip(w.buf.Bytes(), 200))
	}
	return nil
}

func statusErr(w *worker, resp *http.Response) error {
	w.buf.Reset()
	_, _ = io.Copy(&w.buf, io.LimitReader(resp.Body, 512))
	return fmt.Errorf("HTTP %d: %s", resp.StatusCode, clip(w.buf.Bytes(), 200))
}

// checkPeerAnswer checks a non-stream answer: runs/wait's final values (an
// "__error__" key when the run failed) or /run's JSON array of events.
func (d *driver) checkPeerAnswer(b []byte) error {
	switch d.cfg.API {
	case APILangGraph:
		var v map[string]json.RawMessage
		if err := json.Unmarshal(b, &v); err != nil {
			return fmt.Errorf("runs/wait answer is not a JSON object: %s", clip(b, 200))
		}
		if e, ok := v["__error__"]; ok {
			return fmt.Errorf("run failed: %s", clip(e, 200))
		}
	case APIADK:
		var evs []map[string]json.RawMessage
		if err := json.Unmarshal(b, &evs); err != nil {
			return fmt.Errorf("/run answer is not a JSON array: %s", clip(b, 200))
		}
		if len(evs) == 0 {
			return errors.New("/run answered no events")
		}
		for _, e := range evs {
			if m, ok := e["errorMessage"]; ok {
				return fmt.Errorf("event with error: %s", clip(m, 200))
			}
		}
	case APIResponses: // checked by the Responses path, not here
	}
	if d.cfg.Expect != "" && !bytes.Contains(b, []byte(d.cfg.Expect)) {
		return fmt.Errorf("answer lacks %q: %s", d.cfg.Expect, clip(b, 200))
	}
	return nil
}

// readPeerSSE reads a LangGraph or ADK event stream to its end. An "error" event
// (LangGraph) or a data line with an "error" key (ADK) fails the turn, as does a
// stream without the expected text; ttfb is the first event line.
func (d *driver) readPeerSSE(w *worker, body io.Reader, start time.Time) sample {
	var s sample
	w.rd.Reset(body)
	found := d.cfg.Expect == ""
	var name []byte
	var data bool
	for {
		line, err := w.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				switch {
				case s.events == 0:
					s.err = errors.New("stream ended without an event")
				case !found:
					s.err = fmt.Errorf("stream ended without %q", d.cfg.Expect)
				}
				return s
			}
			s.err = err
			return s
		}
		s.bytes += int64(len(line)) + 1
		switch {
		case len(line) == 0:
			if len(name) > 0 || data {
				s.events++
			}
			name, data = name[:0], false
		case bytes.HasPrefix(line, []byte(prefixEvent)):
			name = append(name[:0], bytes.TrimSpace(line[len(prefixEvent):])...)
			if string(name) == "error" {
				s.err = errors.New("stream sent an error event")
				return s
			}
		case bytes.HasPrefix(line, []byte(prefixData)):
			if !data && s.ttfb == 0 {
				s.ttfb = time.Since(start)
			}
			data = true
			payload := bytes.TrimSpace(line[len(prefixData):])
			if d.cfg.API == APIADK && bytes.HasPrefix(payload, []byte(`{"error"`)) {
				s.err = fmt.Errorf("stream sent an error: %s", clip(payload, 200))
				return s
			}
			if !found && bytes.Contains(payload, []byte(d.cfg.Expect)) {
				found = true
				s.firstDelta = time.Since(start)
			}
		}
	}
}
