package load

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// FollowInfo describes the follow scenario: turns streamed on one replica (URL) and
// followed live on another (FollowURL) with GET /v1/responses/{id}?stream=true.
type FollowInfo struct {
	FollowURL string `json:"follow_url"`
	// Latency is, per text delta, the time from the streaming client receiving it
	// to the follower's client receiving it, over deltas the streaming client received
	// after the follower's first event (earlier ones reach the follower as a replay).
	Latency *Percentiles `json:"latency_ms,omitempty"`
	// Join is POST sent → the follower's first event.
	Join *Percentiles `json:"join_ms,omitempty"`
	// Missing counts text deltas the streaming client received and the follower did
	// not (Extra the other way round), over all turns.
	Missing int `json:"missing"`
	Extra   int `json:"extra"`
}

// follow runs turns on URL and follows each from FollowURL.
func (d *driver) follow(ctx context.Context) (*Result, error) {
	body := d.body(true, "", d.cfg.Deltas, d.cfg.DelayMS)
	var mu sync.Mutex
	var lat, join []time.Duration
	info := &FollowInfo{FollowURL: d.cfg.FollowURL}
	measuring := false
	fn := func(ctx context.Context, w *worker) sample {
		s, t := d.followTurn(ctx, body)
		mu.Lock()
		defer mu.Unlock()
		if !measuring {
			return s
		}
		info.Missing += t.missing
		info.Extra += t.extra
		if t.join > 0 {
			join = append(join, t.join)
		}
		lat = append(lat, t.lat...)
		return s
	}
	if err := d.warm(ctx, fn); err != nil {
		return nil, err
	}
	mu.Lock()
	measuring = true
	mu.Unlock()
	s := newSampler(d.cfg.PID)
	s.start(ctx, true)
	ss := d.fixed(ctx, d.cfg.Requests, d.cfg.Duration, fn)
	s.end()
	r := d.result(ss, s)
	info.Latency, info.Join = percentiles(lat), percentiles(join)
	r.Follow = info
	return r, ctx.Err()
}

// followed is what one followed turn measured.
type followed struct {
	lat            []time.Duration
	join           time.Duration
	missing, extra int
}

// sseEvent is called with each event's name and data and the time it was complete.
type sseEvent func(name string, data []byte, at time.Time)

// readEvents reads an event stream to its end, calling fn for each event; it returns
// the name of the last event.
func readEvents(body io.Reader, fn sseEvent) (string, error) {
	rd := bufio.NewReaderSize(body, 64<<10)
	var name string
	var data []byte
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			if errors.Is(err, io.EOF) {
				return name, nil
			}
			return name, err
		}
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0:
			if name != "" || data != nil {
				fn(name, data, time.Now())
				if name == "response.completed" || name == "response.failed" || name == "response.incomplete" || name == "error" {
					return name, nil
				}
				data = nil
			}
		case bytes.HasPrefix(line, []byte(prefixEvent)):
			name = string(bytes.TrimSpace(line[len(prefixEvent):]))
		case bytes.HasPrefix(line, []byte(prefixData)):
			data = append(data, bytes.TrimSpace(line[len(prefixData):])...)
		}
	}
}

// followTurn streams one turn on URL and follows it on FollowURL once its id is known.
func (d *driver) followTurn(ctx context.Context, body []byte) (sample, followed) {
	var f followed
	ctx, cancel := context.WithTimeout(ctx, d.cfg.RequestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.url, bytes.NewReader(body))
	if err != nil {
		return sample{err: err}, f
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	d.auth(req)
	start := time.Now()
	resp, err := d.client.Do(req)
	if err != nil {
		return sample{err: err, lat: time.Since(start)}, f
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sample{err: fmt.Errorf("HTTP %d", resp.StatusCode), lat: time.Since(start)}, f
	}
	var a, b []time.Time
	var attached time.Time
	var fwg sync.WaitGroup
	var ferr error
	s := sample{}
	last, err := readEvents(resp.Body, func(name string, data []byte, at time.Time) {
		s.events++
		switch name {
		case "response.created":
			if s.ttfb == 0 {
				s.ttfb = at.Sub(start)
			}
			var ev struct {
				Response struct {
					ID string `json:"id"`
				} `json:"response"`
			}
			if json.Unmarshal(data, &ev) != nil || ev.Response.ID == "" {
				ferr = errors.New("response.created without a response id")
				return
			}
			fwg.Go(func() {
				var fb []time.Time
				fb, attached, ferr = d.followOne(ctx, ev.Response.ID)
				b = fb
			})
		case "response.output_text.delta":
			s.deltas++
			if s.firstDelta == 0 {
				s.firstDelta = at.Sub(start)
			}
			a = append(a, at)
		}
	})
	fwg.Wait()
	s.lat = time.Since(start)
	switch {
	case err != nil:
		s.err = err
	case last != "response.completed":
		s.err = fmt.Errorf("stream ended with %q", last)
	case ferr != nil:
		s.err = fmt.Errorf("follower: %w", ferr)
	}
	if s.err != nil {
		return s, f
	}
	if !attached.IsZero() {
		f.join = attached.Sub(start)
	}
	// Aligned from the end: both streams end with the same deltas.
	if len(a) > len(b) {
		f.missing = len(a) - len(b)
	} else {
		f.extra = len(b) - len(a)
	}
	for k := 1; k <= min(len(a), len(b)); k++ {
		ta, tb := a[len(a)-k], b[len(b)-k]
		if ta.After(attached) {
			f.lat = append(f.lat, tb.Sub(ta))
		}
	}
	if f.missing > 0 || f.extra > 0 {
		s.err = fmt.Errorf("the follower received %d text deltas, the streaming client %d", len(b), len(a))
	}
	return s, f
}

// followOne follows response id on FollowURL: the receive time of each text delta and
// of the first event.
func (d *driver) followOne(ctx context.Context, id string) ([]time.Time, time.Time, error) {
	u := strings.TrimRight(d.cfg.FollowURL, "/") + "/v1/responses/" + url.PathEscape(id) + "?stream=true"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, time.Time{}, err
	}
	req.Header.Set("Accept", "text/event-stream")
	d.auth(req)
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
		return nil, time.Time{}, fmt.Errorf("HTTP %d: %s", resp.StatusCode, clip(b, 200))
	}
	var times []time.Time
	var first time.Time
	last, err := readEvents(resp.Body, func(name string, _ []byte, at time.Time) {
		if first.IsZero() {
			first = at
		}
		if name == "response.output_text.delta" {
			times = append(times, at)
		}
	})
	if err == nil && last != "response.completed" {
		err = fmt.Errorf("stream ended with %q", last)
	}
	return times, first, err
}

func (d *driver) auth(req *http.Request) {
	if d.cfg.Token != "" {
		req.Header.Set("Authorization", "Bearer "+d.cfg.Token)
	}
}
