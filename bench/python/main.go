// Command python measures the Python bridge: the cost of a turn through agentengine's
// runner (the run lane, or gRPC Run calls, the bridge's event mapping, the host runtime) over calling the
// same graph in-process in Python, and a Python runner's cold start.
//
//	go run ./bench/python                        # examples/langgraph-chat, 200 turns
//	go run ./bench/python -project DIR -python PATH -turns 500 -cold 10
//
// Everything runs on this machine; numbers vary with its load, so each figure is a median
// over many turns and the in-process baseline runs in the same invocation.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	agentengine "github.com/agentengine/agentengine"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/host/project"
	"github.com/agentengine/agentengine/host/pybridge"
	"github.com/agentengine/agentengine/host/runnerproc"
	"github.com/agentengine/agentengine/internal/runnerplugin"
	"github.com/agentengine/agentengine/pluginsdk"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
	"github.com/agentengine/agentengine/session/memory"
)

type options struct {
	project, python, input      string
	turns, warmup, cold, rounds int
	profile, concurrency        int
	inProcessOnly, freeze       bool
	memory                      bool
}

func main() {
	var o options
	flag.StringVar(&o.project, "project", "examples/langgraph-chat", "Python agent project to measure")
	flag.StringVar(&o.python, "python", "", "interpreter (default: the project's, as agentengine discovers it)")
	flag.StringVar(&o.input, "input", "hello there", "the user input of every turn")
	flag.IntVar(&o.turns, "turns", 200, "measured turns per path")
	flag.IntVar(&o.warmup, "warmup", 20, "unmeasured turns first")
	flag.IntVar(&o.cold, "cold", 5, "cold starts to measure")
	flag.IntVar(&o.rounds, "rounds", 3, "rounds the run-lane and in-process turns are split into, taken in turn")
	flag.IntVar(&o.profile, "profile", 0, "print the top N functions (cProfile, cumulative) of each in-process path to stderr")
	flag.BoolVar(&o.inProcessOnly, "inprocess-only", false, "measure only the in-process paths and print their CPU per turn as JSON (for bench/peers.sh)")
	flag.IntVar(&o.concurrency, "concurrency", 1, "in-process paths: turns run at a time (asyncio.gather)")
	flag.BoolVar(&o.freeze, "freeze", false, "in-process paths: freeze the heap after the warm-up (gc.freeze), as a runner process does")
	flag.BoolVar(&o.memory, "memory", false, "print what a runner process's memory is made of, stage by stage (memory.py: the SDK, the agent, the first turn, -turns more at -concurrency), and nothing else")
	flag.Parse()
	if err := run(context.Background(), o, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bench/python:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, o options, out io.Writer) error {
	p, err := project.Load(o.project)
	if err != nil {
		return err
	}
	if !p.IsPython() {
		return fmt.Errorf("%s is a %s project, not a Python one", o.project, p.Framework)
	}
	if o.python != "" {
		p.Python = o.python
	}
	b, err := pybridge.Extract(agentengine.PythonBridge, pybridge.CacheRoot())
	if err != nil {
		return err
	}
	l, err := p.RunnerLaunch(ctx, project.BuildOptions{PythonPath: b.PythonPath()})
	if err != nil {
		return err
	}
	// Checkpoints of the measured turns go to a scratch state directory, not the project's.
	state, err := os.MkdirTemp("", "ae-pybench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(state)
	env := append(slices.Clone(l.Env), project.EnvStateDir+"="+state)
	v, _ := exec.Command(l.Python.Path, "-c", "import sys; print(sys.version.split()[0])").Output()
	fmt.Fprintf(os.Stderr, "project %s (%s), Python %s at %s\n", p.Name, p.Framework, trim(v), l.Python.Path)
	if o.inProcessOnly {
		return inProcessCPU(ctx, o, l, env, out)
	}
	if o.memory {
		return memoryStages(ctx, o, l, env, out)
	}

	cfg := runnerproc.Config{
		Name: p.Name, Command: l.Command, Dir: l.Dir, Env: env,
		StartTimeout: 2 * time.Minute, HealthInterval: -1,
		Logger: hclog.New(&hclog.LoggerOptions{Level: hclog.Warn, Output: os.Stderr}),
	}

	fmt.Fprintf(os.Stderr, "cold starts (%d)…\n", o.cold)
	var starts, firstTurns []time.Duration
	for range o.cold {
		s, f, err := coldStart(ctx, cfg, p, o.input)
		if err != nil {
			return err
		}
		starts, firstTurns = append(starts, s), append(firstTurns, f)
	}

	sup := runnerproc.New(cfg)
	defer sup.Close(context.Background())
	if err := sup.Start(ctx); err != nil {
		return err
	}
	// The bridge's overhead is a difference of two latencies measured apart; in rounds
	// that take the two paths in turn, a change of the machine's load between them moves
	// both sides of a round's difference alike.
	rounds, perRound := inRounds(o)
	var laneTurns, graphTurns, bridgeTurns, overheads []time.Duration
	var graphCPU, bridgeCPU []time.Duration // in-process CPU per turn, one per round
	for r := range rounds {
		fmt.Fprintf(os.Stderr, "round %d of %d: turns over the run lane (%d + %d warm-up)…\n", r+1, rounds, perRound.turns, o.warmup)
		lane, err := measure(perRound, func(i int) error {
			return rawTurn(ctx, sup, p.Name, fmt.Sprintf("lane-%d-%d", r, i), o.input)
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "round %d of %d: turns in-process in Python (%d + %d warm-up)…\n", r+1, rounds, perRound.turns, o.warmup)
		inproc, err := inProcess(ctx, perRound, l, env)
		if err != nil {
			return err
		}
		overheads = append(overheads, summarize(lane).p50-summarize(inproc["graph"]).p50)
		laneTurns = append(laneTurns, lane...)
		graphTurns = append(graphTurns, inproc["graph"]...)
		bridgeTurns = append(bridgeTurns, inproc["bridge"]...)
		if c := inproc["cpu"]; len(c) == 2 {
			graphCPU, bridgeCPU = append(graphCPU, c[0]), append(bridgeCPU, c[1])
		}
	}
	// The same runner told to offer no run lane: every run a gRPC Run call.
	callCfg := cfg
	callCfg.Env = append(slices.Clone(env), runnerplugin.RunLaneEnv+"=off")
	calls := runnerproc.New(callCfg)
	defer calls.Close(context.Background())
	if err := calls.Start(ctx); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "turns over gRPC Run calls (%d + %d warm-up)…\n", o.turns, o.warmup)
	callTurns, err := measure(o, func(i int) error { return rawTurn(ctx, calls, p.Name, fmt.Sprintf("grpc-%d", i), o.input) })
	if err != nil {
		return err
	}
	_ = calls.Close(ctx)
	fmt.Fprintf(os.Stderr, "turns through the host runtime, memory store (%d + %d warm-up)…\n", o.turns, o.warmup)
	hostTurns, err := hostRuntimeTurns(ctx, o, sup, p)
	if err != nil {
		return err
	}
	if len(bridgeTurns) == 0 {
		return errors.New("inprocess.py reported no bridge turns")
	}
	graph, bridge := summarize(graphTurns), summarize(bridgeTurns)
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", millis(d)) }
	fmt.Fprintf(out, "### Python bridge: %s (%s), %d turns, input %q\n\n", p.Name, p.Framework, o.turns, o.input)
	fmt.Fprintf(out, "Python %s, %s/%s, %d CPUs. Command: `go run ./bench/python -project %s -turns %d`\n\n",
		trim(v), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), o.project, o.turns)
	fmt.Fprintln(out, "| path | p50 per turn | mean | p90 |")
	fmt.Fprintln(out, "|---|---|---|---|")
	row := func(name string, s stats) {
		fmt.Fprintf(out, "| %s | %s | %s | %s |\n", name, ms(s.p50), ms(s.mean), ms(s.p90))
	}
	if p.Framework == "adk" {
		row("ADK Runner in-process (InMemorySessionService, a session per turn, SSE streaming)", graph)
		row("bridge runner in-process (session projection, ADK Runner, event mapping, no transport)", bridge)
	} else {
		row("graph.astream in-process (LangGraph InMemorySaver, same stream modes)", graph)
		row("bridge runner in-process (graph + event mapping, no transport)", bridge)
	}
	row("runner over the run lane (what the host calls)", summarize(laneTurns))
	row("runner over gRPC Run calls (AGENTENGINE_RUN_LANE=off)", summarize(callTurns))
	row("host runtime turn, memory store (request building, journal, store)", summarize(hostTurns))
	g, c := summarize(laneTurns), summarize(callTurns)
	roundsText := make([]string, len(overheads))
	for i, d := range overheads {
		roundsText[i] = ms(d)
	}
	fmt.Fprintf(out, "\nBridge overhead per turn (run-lane turn − in-process graph, p50s of the same round): %s, the median of %d rounds (%s) (target ≤ 1 ms); "+
		"over all turns: p50 %s, mean %s; with gRPC Run calls: p50 %s.\n",
		ms(summarize(overheads).p50), len(overheads), strings.Join(roundsText, ", "), ms(g.p50-graph.p50), ms(g.mean-graph.mean), ms(c.p50-graph.p50))
	if len(graphCPU) > 0 {
		fmt.Fprintf(out, "In-process CPU per turn (the Python process's, per round): framework %s, bridge runner %s.\n", joinMS(graphCPU), joinMS(bridgeCPU))
	}
	fmt.Fprintf(out, "Of which event mapping (bridge in-process − graph): p50 %s; transport and process hop: p50 %s (gRPC Run calls: %s).\n",
		ms(bridge.p50-graph.p50), ms(g.p50-bridge.p50), ms(c.p50-bridge.p50))
	sc, ft := summarize(starts), summarize(firstTurns)
	fmt.Fprintf(out, "\nCold start (spawn → framework import → handshake → health), %d starts: median %s (min %s, max %s); "+
		"plus the first turn: median %s (target ≤ 2 s).\n",
		len(starts), ms(sc.p50), ms(slices.Min(starts)), ms(slices.Max(starts)), ms(ft.p50))
	return nil
}

func trim(b []byte) string {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		return string(b[:n-1])
	}
	return string(b)
}

// coldStart starts a fresh runner process and runs its first turn.
func coldStart(ctx context.Context, cfg runnerproc.Config, p *project.Project, input string) (start, firstTurn time.Duration, err error) {
	sup := runnerproc.New(cfg)
	defer sup.Close(context.Background())
	t0 := time.Now()
	if err := sup.Start(ctx); err != nil {
		return 0, 0, err
	}
	start = time.Since(t0)
	if err := rawTurn(ctx, sup, p.Name, "cold-"+host.NewID("s"), input); err != nil {
		return 0, 0, err
	}
	return start, time.Since(t0), nil
}

type stats struct{ p50, p90, mean time.Duration }

func summarize(d []time.Duration) stats {
	s := slices.Clone(d)
	slices.Sort(s)
	var sum time.Duration
	for _, x := range s {
		sum += x
	}
	return stats{p50: s[len(s)/2], p90: s[len(s)*9/10], mean: sum / time.Duration(len(s))}
}

// measure runs warm-up turns, then the measured ones, each timed.
func measure(o options, turn func(i int) error) ([]time.Duration, error) {
	for i := range o.warmup {
		if err := turn(-1 - i); err != nil {
			return nil, err
		}
	}
	out := make([]time.Duration, 0, o.turns)
	for i := range o.turns {
		t := time.Now()
		if err := turn(i); err != nil {
			return nil, err
		}
		out = append(out, time.Since(t))
	}
	return out, nil
}

// rawTurn is one Run on the runner, read to its end; each turn is a new session, as each
// in-process turn is a new thread.
func rawTurn(ctx context.Context, r runnerv1.RunnerClient, app, sessionID, input string) error {
	text, _ := json.Marshal(input)
	payload, _ := json.Marshal(pluginsdk.Payload{
		Input: text, History: []session.Message{}, InputContent: []session.ContentBlock{{Type: "input_text", Text: input}},
		InputMessages: []json.RawMessage{}, InputParts: []json.RawMessage{}, Attachments: []json.RawMessage{},
		AttachmentResults: []json.RawMessage{}, CurrentAttachments: []json.RawMessage{}, CurrentAttachmentResults: []json.RawMessage{},
		Model: app, SessionID: sessionID, InvocationID: "inv-" + sessionID,
	})
	sctx, _ := json.Marshal(pluginsdk.SessionContext{
		History:         []session.Message{},
		PlatformContext: pluginsdk.PlatformContext{AgentID: app, AppName: app, UserID: "bench", SessionID: sessionID, InvocationID: "inv-" + sessionID},
		KBContext:       json.RawMessage("null"), MemoryContext: json.RawMessage("null"), State: map[string]any{},
	})
	st, err := r.Run(ctx, &runnerv1.RunRequest{AppName: app, UserId: "bench", SessionId: sessionID, InvocationId: "inv-" + sessionID, PayloadJson: payload, SessionContextJson: sctx})
	if err != nil {
		return err
	}
	texts := 0
	for {
		ev, err := st.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for _, ev := range ev.Events() {
			if e := ev.GetError(); e != nil {
				return fmt.Errorf("the runner failed the turn: %s", e.GetMessage())
			}
			if ev.GetTextDelta() != nil {
				texts++
			}
		}
	}
	if texts == 0 {
		return errors.New("the turn produced no text")
	}
	return nil
}

func hostRuntimeTurns(ctx context.Context, o options, sup *runnerproc.Supervisor, p *project.Project) ([]time.Duration, error) {
	rt, err := host.New(host.Config{Store: memory.New(), Agents: []host.Agent{{Name: p.Name, Framework: p.Framework, Runner: sup}}})
	if err != nil {
		return nil, err
	}
	defer rt.Close(context.Background())
	if err := rt.Recover(ctx); err != nil {
		return nil, err
	}
	return measure(o, func(int) error {
		run, err := rt.Start(ctx, host.TurnRequest{App: p.Name, Input: host.Input{Content: []session.ContentBlock{{Type: "input_text", Text: o.input}}}})
		if err != nil {
			return err
		}
		if _, err := run.Wait(ctx); err != nil {
			return err
		}
		if st := run.Status(); st != "completed" {
			return fmt.Errorf("host turn ended %s", st)
		}
		return nil
	})
}

// inRounds splits o's turns into its rounds: how many, and the options of each.
func inRounds(o options) (int, options) {
	rounds := max(1, min(o.rounds, o.turns))
	perRound := o
	perRound.turns = o.turns / rounds
	return rounds, perRound
}

// inProcessCPU prints, as JSON, the in-process paths' CPU per turn in milliseconds, one
// figure per round, and their median: the floor bench/peers.sh sets a whole server's
// CPU per turn against.
func inProcessCPU(ctx context.Context, o options, l project.Launch, env []string, out io.Writer) error {
	rounds, perRound := inRounds(o)
	var framework, bridge []time.Duration
	measured := 0
	for r := range rounds {
		fmt.Fprintf(os.Stderr, "round %d of %d: turns in-process in Python (%d + %d warm-up)…\n", r+1, rounds, perRound.turns, o.warmup)
		inproc, err := inProcess(ctx, perRound, l, env)
		if err != nil {
			return err
		}
		c := inproc["cpu"]
		if len(c) != 2 {
			return errors.New("inprocess.py reported no CPU time")
		}
		framework, bridge = append(framework, c[0]), append(bridge, c[1])
		measured += len(inproc["graph"])
	}
	msOf := func(ds []time.Duration) []float64 {
		f := make([]float64, len(ds))
		for i, d := range ds {
			f[i] = millis(d)
		}
		return f
	}
	return json.NewEncoder(out).Encode(map[string]any{
		"framework_cpu_ms": msOf(framework), "bridge_cpu_ms": msOf(bridge),
		"framework_cpu_ms_median": millis(summarize(framework).p50),
		"bridge_cpu_ms_median":    millis(summarize(bridge).p50),
		"turns":                   measured, // per path: whole groups of -concurrency turns
		"concurrency":             max(o.concurrency, 1),
		"freeze":                  o.freeze,
	})
}

// memoryStages runs memory.py with the runner's interpreter and environment; its
// markdown table goes to out.
func memoryStages(ctx context.Context, o options, l project.Launch, env []string, out io.Writer) error {
	script, err := filepath.Abs(filepath.Join("bench", "python", "memory.py"))
	if err != nil {
		return err
	}
	if _, err := os.Stat(script); err != nil {
		return fmt.Errorf("run from the repository root: %w", err)
	}
	cmd := exec.CommandContext(ctx, l.Python.Path, script, "--turns", fmt.Sprint(o.turns),
		"--concurrency", fmt.Sprint(o.concurrency), "--input", o.input)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = l.Dir, env, out, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("memory.py: %w", err)
	}
	return nil
}

// inProcess runs inprocess.py with the runner's interpreter and environment.
// It returns each path's per-turn times.
func inProcess(ctx context.Context, o options, l project.Launch, env []string) (map[string][]time.Duration, error) {
	script, err := filepath.Abs(filepath.Join("bench", "python", "inprocess.py"))
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("run from the repository root: %w", err)
	}
	args := []string{script, "--turns", fmt.Sprint(o.turns), "--warmup", fmt.Sprint(o.warmup), "--input", o.input,
		"--profile", fmt.Sprint(o.profile), "--concurrency", fmt.Sprint(o.concurrency)}
	if o.freeze {
		args = append(args, "--freeze")
	}
	cmd := exec.CommandContext(ctx, l.Python.Path, args...)
	cmd.Dir, cmd.Env, cmd.Stderr = l.Dir, env, os.Stderr
	raw, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("inprocess.py: %w", err)
	}
	var res map[string][]float64 // path → per-turn seconds
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("inprocess.py printed %q: %w", raw, err)
	}
	out := map[string][]time.Duration{}
	for k, secs := range res {
		if k == "cpu" { // [graph, bridge] CPU seconds per turn: kept as is, one value each
			if len(secs) != 2 {
				return nil, fmt.Errorf("inprocess.py printed cpu %v, want [graph, bridge]", secs)
			}
			out[k] = []time.Duration{time.Duration(secs[0] * float64(time.Second)), time.Duration(secs[1] * float64(time.Second))}
			continue
		}
		d := make([]time.Duration, len(secs))
		for i, s := range secs {
			d[i] = time.Duration(s * float64(time.Second))
		}
		if len(d) == 0 {
			return nil, fmt.Errorf("inprocess.py measured no %s turns", k)
		}
		out[k] = d
	}
	if _, ok := out["graph"]; !ok {
		return nil, errors.New("inprocess.py reported no graph turns")
	}
	return out, nil
}

// joinMS lists durations in milliseconds.
func joinMS(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.2f ms", millis(d))
	}
	return strings.Join(parts, ", ")
}

// millis is d in milliseconds, to the microsecond.
func millis(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
