// Command loadgen drives an OpenAI Responses API server (agentengine, a floor of
// bench/floor, or another runtime) with one scenario and reports turns/s, latency
// percentiles, time to first byte, errors and, with -pid, the server's CPU per turn and
// per delta and its RSS.
//
//	loadgen -url http://127.0.0.1:8080 -scenario nonstream -c 16 -d 5s -pid 1234
//	loadgen -url http://127.0.0.1:8080 -scenario stream -deltas 1000 -c 2 -d 5s
//	loadgen -url http://127.0.0.1:8080 -scenario history -history 10000 -n 100
//	loadgen -url http://127.0.0.1:8080 -scenario streams -streams 1000 -deltas 20 -delay-ms 200
//	loadgen -url http://127.0.0.1:8080 -follow-url http://127.0.0.1:8081 -scenario follow -deltas 50 -delay-ms 10 -n 20
//	loadgen -scenario idle -pid 1234 -d 2s
//	loadgen -url http://127.0.0.1:2024 -api langgraph -model echo -expect "you said" -c 16 -d 5s
//	loadgen -url http://127.0.0.1:8000 -api adk -model echo_adk -scenario stream -expect "You said" -c 16 -d 5s
//
// It only targets loopback addresses unless -allow-remote is given, and it stops by
// itself: after -n requests or -d, and in any case after -timeout.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/agentengine/agentengine/bench/load"
)

func main() {
	os.Exit(run())
}

func run() int {
	var cfg load.Config
	var scenario, api string
	var asJSON bool
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.StringVar(&cfg.URL, "url", "http://127.0.0.1:8080", "server base URL")
	fs.StringVar(&cfg.FollowURL, "follow-url", "", "follow scenario: base URL of the replica that follows each turn")
	fs.StringVar(&cfg.Path, "path", "/v1/responses", "endpoint path")
	fs.StringVar(&api, "api", string(load.APIResponses), fmt.Sprintf("protocol of nonstream and stream turns, one of %v (langgraph: a thread per turn, then runs/wait or runs/stream; adk: a session per turn, then /run or /run_sse)", load.APIs()))
	fs.StringVar(&cfg.Expect, "expect", "", "nonstream and stream: text every answer must contain")
	fs.StringVar(&cfg.Model, "model", "echo-go", "model (agent) name; the assistant id (langgraph) or app name (adk)")
	fs.StringVar(&cfg.Input, "input", "hello there", "input text of every turn")
	fs.StringVar(&cfg.Token, "token", os.Getenv("AGENTENGINE_TOKEN"), "bearer token (default $AGENTENGINE_TOKEN)")
	fs.StringVar(&cfg.Label, "label", "", "label stored in the result (for bench/cmd/benchreport)")
	fs.StringVar(&scenario, "scenario", "nonstream", fmt.Sprintf("one of %v", load.Scenarios()))
	fs.IntVar(&cfg.Concurrency, "c", 1, "requests in flight")
	fs.IntVar(&cfg.Requests, "n", 0, "measured requests (0: run for -d)")
	fs.Float64Var(&cfg.Rate, "rate", 0, "requests per second in all, sent on a fixed schedule (0: as fast as -c allows)")
	fs.DurationVar(&cfg.Duration, "d", 0, "measured duration when -n is 0 (default 5s)")
	fs.IntVar(&cfg.Warmup, "warmup", 0, "warmup requests, not measured (default 2×c, at least 10; -1: none)")
	fs.IntVar(&cfg.Deltas, "deltas", 0, "text deltas per turn (model_options.deltas; 0: the agent's default)")
	fs.IntVar(&cfg.DelayMS, "delay-ms", 0, "runner pause before each delta (model_options.delay_ms)")
	fs.IntVar(&cfg.History, "history", 0, "history scenario: events of history each measured turn's conversation holds (seeded by sending turns)")
	fs.IntVar(&cfg.EventsPerTurn, "events-per-turn", load.DefaultEventsPerTurn, "history scenario: session events one seeding turn stores on the target server")
	fs.IntVar(&cfg.Streams, "streams", 1000, "streams scenario: streams held open at once")
	fs.IntVar(&cfg.PID, "pid", 0, "server process to sample from /proc (CPU, RSS)")
	fs.DurationVar(&cfg.Timeout, "timeout", 5*time.Minute, "hard limit for the whole run")
	fs.DurationVar(&cfg.RequestTimeout, "request-timeout", time.Minute, "limit for one request")
	fs.BoolVar(&cfg.AllowRemote, "allow-remote", false, "allow a non-loopback -url")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	if err := fs.Parse(os.Args[1:]); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "loadgen: unexpected arguments %v\n", fs.Args())
		return 2
	}
	cfg.Scenario = load.Scenario(scenario)
	cfg.API = load.API(api)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := load.Run(ctx, cfg)
	if res != nil {
		if asJSON {
			enc := json.NewEncoder(os.Stdout)
			enc.SetIndent("", "  ")
			if err := enc.Encode(res); err != nil {
				fmt.Fprintln(os.Stderr, "loadgen:", err)
				return 1
			}
		} else {
			res.WriteText(os.Stdout)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		return 1
	}
	if res.Errors > 0 {
		return 3
	}
	return 0
}
