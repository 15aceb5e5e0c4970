// Package load is agentengine's load driver: it sends OpenAI Responses API turns
// (POST {base}/v1/responses) to any base URL, so the same scenario runs against
// agentengine, against the floors of package bench/floor and against another runtime.
//
// Scenarios:
//   - nonstream: one non-streamed turn per request ("stream": false).
//   - stream: a streamed turn with N text deltas (echo-go's model_options.deltas).
//   - history: turns on conversations that already hold N events of history; the
//     conversations are seeded by sending turns first (EventsPerTurn events each).
//   - streams: N streams opened at once and held open by a per-delta delay; reports
//     whether all of them completed and how many were open at the same time.
//   - follow: a streamed turn on URL, followed live on FollowURL (another replica) with
//     GET /v1/responses/{id}?stream=true; reports how long each text delta takes to
//     reach the follower after it reached the streaming client.
//   - idle: sends nothing; samples the server process (RSS, CPU) for Duration.
//
// Every run is bounded by Requests or Duration and by Timeout, and targets only
// loopback addresses unless AllowRemote is set. With PID set it samples the server's
// /proc/<pid>/stat (utime+stime) and /proc/<pid>/status (VmRSS) around the measured
// phase, which gives host CPU per turn and per delta.
package load

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"
)

// Scenario names a load shape.
type Scenario string

// The scenarios.
const (
	NonStream Scenario = "nonstream"
	Stream    Scenario = "stream"
	History   Scenario = "history"
	Streams   Scenario = "streams"
	Idle      Scenario = "idle"
	Follow    Scenario = "follow"
)

// Scenarios lists every scenario, for flag help.
func Scenarios() []Scenario { return []Scenario{NonStream, Stream, History, Streams, Follow, Idle} }

// DefaultEventsPerTurn is how many session events one plain echo-go turn stores in
// agentengine: user_message, run_status in_progress, reasoning, assistant_message and
// the terminal run_status.
const DefaultEventsPerTurn = 5

// Config describes one load run.
type Config struct {
	// URL is the server's base URL, e.g. http://127.0.0.1:8080.
	URL string
	// FollowURL is the base URL of the replica that follows the turns of the follow
	// scenario.
	FollowURL string
	// Path is the endpoint (default /v1/responses; APIResponses only).
	Path string
	// API is the protocol of nonstream and stream turns (default APIResponses).
	API API
	// Expect, when set, is text every answer of a nonstream or stream turn must contain.
	Expect string
	// Model is the "model" of every request (default echo-go).
	Model string
	// Input is the user input of every turn (default "hello there").
	Input string
	// Token, when set, is sent as "Authorization: Bearer <token>".
	Token string
	// Label tags the result (for reports).
	Label    string
	Scenario Scenario
	// Concurrency is the number of requests in flight (default 1).
	Concurrency int
	// Rate, when positive, paces the requests: at most Rate a second in all, sent on a
	// fixed schedule (as long as a worker is free), to compare servers at the same load
	// rather than each at its most.
	Rate float64
	// Requests is the number of measured requests; 0 means run for Duration.
	Requests int
	// Duration bounds the measured phase (default 5s when Requests is 0).
	Duration time.Duration
	// Warmup requests are sent before measuring and not counted (default 2×Concurrency,
	// at least 10; negative disables).
	Warmup int
	// Deltas asks the runner for exactly this many text deltas (model_options.deltas);
	// 0 sends no model_options.deltas.
	Deltas int
	// DelayMS asks the runner to pause before each delta (model_options.delay_ms).
	DelayMS int
	// History is the number of session events each measured turn's conversation holds.
	History int
	// EventsPerTurn is how many events one seeding turn stores (default
	// DefaultEventsPerTurn); used to compute how many turns seed History events.
	EventsPerTurn int
	// Streams is the number of concurrently open streams of the streams scenario.
	Streams int
	// PID is the server process to sample (0: none). Its direct children (the runner
	// subprocesses) are sampled too and reported separately.
	PID int
	// Timeout bounds the whole run, seeding included (default 5m).
	Timeout time.Duration
	// RequestTimeout bounds one request (default 60s).
	RequestTimeout time.Duration
	// AllowRemote permits a non-loopback URL.
	AllowRemote bool
}

func (c *Config) setDefaults() {
	if c.Path == "" {
		c.Path = "/v1/responses"
	}
	if c.Model == "" {
		c.Model = "echo-go"
	}
	if c.Input == "" {
		c.Input = "hello there"
	}
	if c.Scenario == "" {
		c.Scenario = NonStream
	}
	if c.API == "" {
		c.API = APIResponses
	}
	if c.Concurrency <= 0 {
		c.Concurrency = 1
	}
	if c.Requests <= 0 && c.Duration <= 0 {
		if c.Scenario == History {
			c.Requests = 100
		} else {
			c.Duration = 5 * time.Second
		}
	}
	if c.Warmup == 0 {
		c.Warmup = max(2*c.Concurrency, 10)
	}
	if c.EventsPerTurn <= 0 {
		c.EventsPerTurn = DefaultEventsPerTurn
	}
	if c.Scenario == Streams && c.Streams <= 0 {
		c.Streams = 1000
	}
	if c.Timeout <= 0 {
		c.Timeout = 5 * time.Minute
	}
	if c.RequestTimeout <= 0 {
		c.RequestTimeout = time.Minute
	}
}

func (c *Config) validate() error {
	switch c.Scenario {
	case NonStream, Stream, History, Streams, Idle, Follow:
	default:
		return fmt.Errorf("unknown scenario %q (use one of %v)", c.Scenario, Scenarios())
	}
	switch c.API {
	case APIResponses:
	case APILangGraph, APIADK:
		if c.Scenario != NonStream && c.Scenario != Stream {
			return fmt.Errorf("the %s API has the nonstream and stream scenarios only", c.API)
		}
	default:
		return fmt.Errorf("unknown api %q (use one of %v)", c.API, APIs())
	}
	if c.Scenario == Idle {
		if c.PID <= 0 {
			return errors.New("the idle scenario samples a process: set the server's pid")
		}
		return nil
	}
	u, err := url.Parse(c.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("base URL %q: want http://host:port", c.URL)
	}
	if !c.AllowRemote && !isLoopback(u.Hostname()) {
		return fmt.Errorf("base URL %q is not a loopback address; load tests target 127.0.0.1 unless remote targets are explicitly allowed", c.URL)
	}
	if c.Scenario == Follow {
		f, err := url.Parse(c.FollowURL)
		if err != nil || (f.Scheme != "http" && f.Scheme != "https") || f.Host == "" {
			return fmt.Errorf("follow URL %q: want http://host:port", c.FollowURL)
		}
		if !c.AllowRemote && !isLoopback(f.Hostname()) {
			return fmt.Errorf("follow URL %q is not a loopback address", c.FollowURL)
		}
	}
	if c.Scenario == History && c.Requests <= 0 {
		return errors.New("the history scenario needs a request count")
	}
	if c.Deltas < 0 || c.DelayMS < 0 || c.History < 0 || c.Streams < 0 || c.Rate < 0 {
		return errors.New("deltas, delay, history, streams and rate must not be negative")
	}
	return nil
}

func isLoopback(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Run executes the scenario and returns its measurements. Request failures are counted
// in the result, not returned; an error means the run could not be carried out.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	defer cancel()
	d := newDriver(cfg)
	defer d.close()
	switch cfg.Scenario {
	case Idle:
		return d.idle(ctx)
	case Streams:
		return d.streams(ctx)
	case History:
		return d.history(ctx)
	case Follow:
		return d.follow(ctx)
	default:
		return d.throughput(ctx)
	}
}

// runID returns a short random id that keeps conversation ids of separate runs apart.
func runID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// trimURL joins the base URL and the path.
func trimURL(base, path string) string {
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/")
}
