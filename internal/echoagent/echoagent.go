// Package echoagent is an offline agent that exercises everything the runner protocol
// carries, driven by the user's input text (see examples/echo-go/README.md for what each
// input does). The API, host and runner tests run it in-process (pluginsdk/inprocess);
// examples/echo-go and the conformance suites build it into a runner binary.
package echoagent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentengine/agentengine/pluginsdk"
)

// Environment variables that shape the reply for load tests.
const (
	EnvDelayMS = "ECHO_DELAY_MS" // pause before each delta, in milliseconds
	EnvDeltas  = "ECHO_DELTAS"   // number of text deltas of a default reply
)

// Model names the echo agent's "model" in its usage reports.
const Model = "echo"

// MaxDeltas bounds the deltas of a reply: a client-chosen count must not make the agent
// allocate without limit.
const MaxDeltas = 10000

// Options shape a reply. Zero values mean "one delta per word, no delay".
type Options struct {
	Delay  time.Duration
	Deltas int
}

// Agent is the echo agent.
type Agent struct {
	opts Options
}

// New returns an agent configured from ECHO_DELAY_MS and ECHO_DELTAS.
func New() *Agent {
	var o Options
	if ms, err := strconv.Atoi(os.Getenv(EnvDelayMS)); err == nil && ms > 0 {
		o.Delay = time.Duration(ms) * time.Millisecond
	}
	if n, err := strconv.Atoi(os.Getenv(EnvDeltas)); err == nil && n > 0 {
		o.Deltas = min(n, MaxDeltas)
	}
	return NewWithOptions(o)
}

// NewWithOptions returns an agent with explicit defaults (model_options still override).
func NewWithOptions(o Options) *Agent { return &Agent{opts: o} }

// Info implements pluginsdk.Runner.
func (a *Agent) Info() pluginsdk.Info {
	return pluginsdk.Info{
		Name:         "echo-go",
		Framework:    "go",
		Description:  "Offline echo agent: streams your input back and demonstrates tools, approvals, state, errors and usage.",
		Capabilities: pluginsdk.Capabilities{Resume: true, Summarize: true},
	}
}

// Run implements pluginsdk.Runner.
func (a *Agent) Run(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
	t := &turn{ctx: ctx, req: req, emit: emit, opts: a.options(req)}
	if req.Context.IsResume {
		return t.resume()
	}
	in := strings.TrimSpace(req.InputText())
	lower := strings.ToLower(in)
	switch {
	case lower == "fail":
		return errors.New("echo: failing because the input was \"fail\"")
	case lower == "panic":
		panic("echo: panicking because the input was \"panic\"")
	case strings.HasPrefix(lower, "state:"):
		return t.state(in[len("state:"):])
	case lower == "history":
		return t.history()
	case strings.Contains(lower, "approve"):
		return t.askApproval(in)
	case strings.Contains(lower, "tool"):
		return t.useTool(in)
	}
	return t.echo(in)
}

// Summarize implements pluginsdk.Summarizer with a deterministic offline summary.
func (a *Agent) Summarize(_ context.Context, history []pluginsdk.Message, instructions string) (string, error) {
	var users, assistants int
	var first, last string
	for _, m := range history {
		switch m.Role {
		case "user":
			users++
			if first == "" {
				first = m.Content
			}
		case "assistant":
			assistants++
		}
		if m.Content != "" {
			last = m.Content
		}
	}
	s := fmt.Sprintf("Summary of %d messages (%d user, %d assistant).", len(history), users, assistants)
	if first != "" {
		s += " The conversation began with: " + clip(first, 120) + "."
	}
	if last != "" {
		s += " Latest: " + clip(last, 120) + "."
	}
	if instructions != "" {
		s += " (Instructions: " + clip(instructions, 80) + ")"
	}
	return s, nil
}

// options merges model_options {"delay_ms": …, "deltas": …} over the agent's defaults.
func (a *Agent) options(req *pluginsdk.Request) Options {
	o := a.opts
	if len(req.Payload.ModelOptions) == 0 {
		return o
	}
	var mo struct {
		DelayMS *int `json:"delay_ms"`
		Deltas  *int `json:"deltas"`
	}
	if json.Unmarshal(req.Payload.ModelOptions, &mo) != nil {
		return o
	}
	if mo.DelayMS != nil && *mo.DelayMS >= 0 {
		o.Delay = time.Duration(*mo.DelayMS) * time.Millisecond
	}
	if mo.Deltas != nil && *mo.Deltas >= 0 {
		o.Deltas = min(*mo.Deltas, MaxDeltas)
	}
	return o
}

type turn struct {
	ctx  context.Context
	req  *pluginsdk.Request
	emit *pluginsdk.Emitter
	opts Options
}

// pause waits the configured per-delta delay, returning early when the run is cancelled.
func (t *turn) pause() error {
	if t.opts.Delay <= 0 {
		return t.ctx.Err()
	}
	timer := time.NewTimer(t.opts.Delay)
	defer timer.Stop()
	select {
	case <-t.ctx.Done():
		return t.ctx.Err()
	case <-timer.C:
		return nil
	}
}

// stream sends deltas as text (one per element) and ends the message with the full text.
func (t *turn) stream(deltas []string) (string, error) {
	for _, d := range deltas {
		if err := t.pause(); err != nil {
			return "", err
		}
		if err := t.emit.Text(d); err != nil {
			return "", err
		}
	}
	full := strings.Join(deltas, "")
	return full, t.emit.MessageDone(full)
}

// filesNote describes the attachments' extracted text the runner was given (the
// effective attachment_results of KsADK's agent context), so a client can see that its upload was
// read; empty without attachments.
func (t *turn) filesNote() string {
	var parts []string
	for _, raw := range t.req.Payload.AttachmentResults {
		var r struct {
			Name    string `json:"name"`
			Status  string `json:"status"`
			Excerpt string `json:"text_excerpt"`
		}
		if json.Unmarshal(raw, &r) != nil || r.Name == "" {
			continue
		}
		note := r.Name + " (" + r.Status + ")"
		if r.Excerpt != "" {
			note += ": " + clip(strings.Join(strings.Fields(r.Excerpt), " "), 120)
		}
		parts = append(parts, note)
	}
	if len(parts) == 0 {
		return ""
	}
	return " [files: " + strings.Join(parts, "; ") + "]"
}

// history reports what the runner was given as history, so clients can verify that
// multi-turn conversations reach the agent.
func (t *turn) history() error {
	h := t.req.Payload.History
	var firstUser string
	for _, m := range h {
		if m.Role == "user" {
			firstUser = m.Content
			break
		}
	}
	reply := fmt.Sprintf("History: %d messages.", len(h))
	if firstUser != "" {
		reply += " First user message: " + clip(firstUser, 200)
	}
	_, err := t.stream(words(reply))
	return err
}

func (t *turn) echo(in string) error {
	if in == "" {
		in = "(empty input)"
	}
	if err := t.emit.Native("echo.options", map[string]any{"delay_ms": t.opts.Delay.Milliseconds(), "deltas": t.opts.Deltas}); err != nil {
		return err
	}
	thought := []string{"Thinking about: ", clip(in, 200)}
	for _, d := range thought {
		if err := t.pause(); err != nil {
			return err
		}
		if err := t.emit.Reasoning(d); err != nil {
			return err
		}
	}
	deltas := shape(words("Echo: "+in+t.filesNote()), t.opts.Deltas)
	if _, err := t.stream(deltas); err != nil {
		return err
	}
	return t.emit.UsageOf(Model, pluginsdk.Usage{
		InputTokens: int64(len(strings.Fields(in)) + historyWords(t.req.Payload.History)),
		// As in OpenAI's usage, output tokens include the reasoning tokens.
		OutputTokens:    int64(len(deltas) + len(strings.Fields(strings.Join(thought, "")))),
		ReasoningTokens: int64(len(strings.Fields(strings.Join(thought, "")))),
	})
}

func (t *turn) useTool(in string) error {
	query := in
	if i := strings.LastIndex(strings.ToLower(in), " on "); i >= 0 && strings.TrimSpace(in[i+4:]) != "" {
		query = strings.TrimSpace(in[i+4:])
	}
	callID := "call_" + randomHex()
	args, _ := json.Marshal(map[string]string{"query": query})
	// Stream the arguments in two pieces; the first delta carries the tool name.
	cut := len(args) / 2
	if err := t.emit.ToolCallDelta(callID, "lookup", string(args[:cut])); err != nil {
		return err
	}
	if err := t.pause(); err != nil {
		return err
	}
	if err := t.emit.ToolCallDelta(callID, "", string(args[cut:])); err != nil {
		return err
	}
	if err := t.emit.ToolCall(callID, "lookup", string(args)); err != nil {
		return err
	}
	result := lookup(query)
	out, _ := json.Marshal(result)
	if err := t.emit.ToolResult(callID, "lookup", string(out), false); err != nil {
		return err
	}
	reply := fmt.Sprintf("The lookup tool says %q has %d characters and %d words.", result.Query, result.Characters, result.Words)
	deltas := words(reply)
	if _, err := t.stream(deltas); err != nil {
		return err
	}
	return t.emit.UsageOf(Model, pluginsdk.Usage{InputTokens: int64(len(strings.Fields(in))), OutputTokens: int64(len(deltas))})
}

type lookupResult struct {
	Query      string `json:"query"`
	Characters int    `json:"characters"`
	Words      int    `json:"words"`
	Upper      string `json:"upper"`
}

// lookup is the "tool": deterministic and local.
func lookup(q string) lookupResult {
	return lookupResult{Query: q, Characters: len([]rune(q)), Words: len(strings.Fields(q)), Upper: strings.ToUpper(q)}
}

type deleteArgs struct {
	Path string `json:"path"`
}

func (t *turn) askApproval(in string) error {
	path := "scratch.txt"
	if f := strings.Fields(in); len(f) > 1 {
		last := strings.Trim(f[len(f)-1], ".,;:!?\"'")
		if last != "" && !strings.EqualFold(last, "approve") {
			path = last
		}
	}
	callID := "call_" + randomHex()
	args, _ := json.Marshal(deleteArgs{Path: path})
	if _, err := t.stream(words(fmt.Sprintf("I need your approval to delete %s.", path))); err != nil {
		return err
	}
	// The call is made now and executed (or skipped) when the decision arrives, as with a
	// LangGraph interrupt before a tool node.
	if err := t.emit.ToolCall(callID, "delete_file", string(args)); err != nil {
		return err
	}
	return t.emit.ApprovalRequest(pluginsdk.ApprovalRequest{
		ID:        "apr_" + randomHex(),
		CallID:    callID,
		Name:      "delete_file",
		Arguments: string(args),
		Message:   fmt.Sprintf("Delete %s?", path),
		Detail:    json.RawMessage(fmt.Sprintf(`{"risk":"destructive","path":%q}`, path)),
	})
}

func (t *turn) resume() error {
	r := t.req.Payload.Resume
	if r == nil {
		return &pluginsdk.RunError{Code: "nothing_to_resume", Message: "echo: this resume turn carries no approval decision"}
	}
	var args deleteArgs
	_ = json.Unmarshal([]byte(r.Arguments), &args)
	if args.Path == "" {
		args.Path = "scratch.txt"
	}
	callID, name := r.CallID, r.Name
	if name == "" {
		name = "delete_file"
	}
	if callID == "" {
		// The approval guarded no recorded call: make one so the result has a home.
		callID = "call_" + randomHex()
		if err := t.emit.ToolCall(callID, name, r.Arguments); err != nil {
			return err
		}
	}
	var output, reply string
	if r.Approve {
		// Simulated: the echo agent never touches the file system.
		b, _ := json.Marshal(map[string]any{"deleted": args.Path, "simulated": true})
		output = string(b)
		reply = fmt.Sprintf("Approved: deleted %s.", args.Path)
	} else {
		b, _ := json.Marshal(map[string]any{"skipped": args.Path, "reason": r.Reason})
		output = string(b)
		reply = fmt.Sprintf("Rejected: kept %s.", args.Path)
		if r.Reason != "" {
			reply = fmt.Sprintf("Rejected: kept %s (%s).", args.Path, r.Reason)
		}
	}
	if r.Output != "" {
		// The client answered with a function_call_output: that is the tool's output.
		output = r.Output
	}
	if err := t.emit.ToolResult(callID, name, output, false); err != nil {
		return err
	}
	_, err := t.stream(words(reply))
	return err
}

// state handles "state:key=value[,key2=value2]"; an empty value deletes the key.
func (t *turn) state(spec string) error {
	delta := map[string]any{}
	for _, kv := range strings.Split(spec, ",") {
		k, v, _ := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if v = strings.TrimSpace(v); v == "" {
			delta[k] = nil
		} else {
			delta[k] = v
		}
	}
	if len(delta) == 0 {
		return &pluginsdk.RunError{Code: "bad_input", Message: `echo: use "state:key=value" (an empty value deletes the key)`}
	}
	if err := t.emit.StateDelta(delta); err != nil {
		return err
	}
	// Report the state the turn started with merged with the change, sorted for stable output.
	merged := map[string]any{}
	for k, v := range t.req.Context.State {
		merged[k] = v
	}
	for k, v := range delta {
		if v == nil {
			delete(merged, k)
		} else {
			merged[k] = v
		}
	}
	keys := make([]string, 0, len(merged))
	for k := range merged {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%v", k, merged[k]))
	}
	_, err := t.stream(words("State updated: " + strings.Join(parts, ", ")))
	return err
}

// words splits s into deltas that concatenate back to s: each word keeps its trailing space.
func words(s string) []string {
	f := strings.Fields(s)
	out := make([]string, len(f))
	for i, w := range f {
		if i < len(f)-1 {
			w += " "
		}
		out[i] = w
	}
	return out
}

// shape returns exactly n deltas (n > 0) from ws: it repeats the words when there are
// too few and merges them when there are too many; n == 0 keeps ws.
func shape(ws []string, n int) []string {
	if n <= 0 || n == len(ws) || len(ws) == 0 {
		return ws
	}
	out := make([]string, n)
	if n > len(ws) {
		for i := range out {
			w := ws[i%len(ws)]
			if i%len(ws) == len(ws)-1 && i < n-1 {
				w += " "
			}
			out[i] = w
		}
		return out
	}
	per := len(ws) / n
	for i := range out {
		lo, hi := i*per, (i+1)*per
		if i == n-1 {
			hi = len(ws)
		}
		out[i] = strings.Join(ws[lo:hi], "")
	}
	return out
}

func historyWords(h []pluginsdk.Message) int {
	n := 0
	for _, m := range h {
		n += len(strings.Fields(m.Content))
	}
	return n
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func randomHex() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
