// Package pluginsdk is the runner side of agentengine's runner protocol and the Go SDK for
// writing agents. A Go agent implements Runner and calls Serve from its main package; the
// agentengine host starts that binary as a hashicorp/go-plugin subprocess and talks to it
// over gRPC (runner.proto, package runnerv1); Serve also opens the run lane, a unix socket
// beside go-plugin's on which the host sends every run as frames instead of a gRPC call
// each (set AGENTENGINE_RUN_LANE=off to do without it). What both sides must agree on (the
// handshake, the plugin, the protocol version and message limits) is not part of this API:
// the host and Serve share it through an internal package.
//
//	type agent struct{}
//
//	func (agent) Info() pluginsdk.Info { return pluginsdk.Info{Name: "hello"} }
//
//	func (agent) Run(ctx context.Context, req *pluginsdk.Request, emit *pluginsdk.Emitter) error {
//		return emit.Text("Hello, " + req.InputText())
//	}
//
//	func main() { pluginsdk.Serve(agent{}) }
package pluginsdk

import (
	"context"
	"errors"
	"strings"

	"github.com/hashicorp/go-hclog"
)

// Runner is a Go agent. Run executes one turn; it is called concurrently for concurrent
// turns, so it must be safe for concurrent use.
type Runner interface {
	// Info describes the agent. It is called once, when the runner starts serving.
	Info() Info
	// Run executes one turn, reporting what happens through emit. Returning an error
	// fails the run: the error's text becomes the run's error message (use *RunError to
	// choose the code and keep details out of it). Run must return when ctx is done.
	Run(ctx context.Context, req *Request, emit *Emitter) error
}

// Summarizer is implemented by runners that can summarise history for context compaction
// (the Summarize RPC). Runners without it answer Summarize with Unimplemented.
type Summarizer interface {
	Summarize(ctx context.Context, history []Message, instructions string) (string, error)
}

// Info describes an agent for the host (the Describe RPC).
type Info struct {
	Name string
	// Framework defaults to "go".
	Framework    string
	Description  string
	Capabilities Capabilities
}

// Capabilities tells the host what the runner supports. Summarize is also reported when
// the Runner implements Summarizer.
type Capabilities struct {
	// Resume: the runner can answer a resume turn (an approval's answer, a tool's output).
	Resume bool
	// Summarize: the runner summarises history for compaction (see Summarizer).
	Summarize bool
	// Checkpoints: the runner keeps its thread states with the host (Emitter.Checkpoint,
	// Request.Checkpoints).
	Checkpoints bool
}

// Request is one turn as the host sent it, with the JSON documents decoded.
type Request struct {
	AppName      string
	UserID       string
	SessionID    string
	InvocationID string
	Payload      Payload
	Context      SessionContext
	// Checkpoints are the session's saved checkpoints (latest per thread and namespace,
	// with their writes), sent when Capabilities.Checkpoints is set.
	Checkpoints []Checkpoint
	// Logger writes to the runner's stderr as hclog JSON, which the host forwards to its
	// own log. Never nil.
	Logger hclog.Logger
}

// InputText returns the turn's input text: Payload.Input when it is a string, else the
// text blocks of Payload.InputContent joined by newlines.
func (r *Request) InputText() string {
	if s := r.Payload.InputText(); s != "" {
		return s
	}
	var parts []string
	for _, b := range r.Payload.InputContent {
		if b.Text != "" && (b.Type == "" || b.Type == "input_text" || b.Type == "text") {
			parts = append(parts, b.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Error codes the SDK puts into runnerv1.Error events.
const (
	// CodeAgentError: Run returned an error that is not a *RunError with a code.
	CodeAgentError = "agent_error"
	// CodePanic: Run panicked. The message names the panic value; the stack is in detail.
	CodePanic = "agent_panic"
	// CodeInvalidRequest: the host's payload or session context could not be decoded.
	CodeInvalidRequest = "invalid_request"
)

// RunError is an error a Runner returns to control the Error event it becomes: Message is
// what clients may see, Detail goes to the host log only.
type RunError struct {
	Code    string
	Message string
	Detail  string
	// Err is the underlying cause, for errors.Is/As; it is not sent.
	Err error
}

func (e *RunError) Error() string {
	if e.Err != nil && e.Message == "" {
		return e.Err.Error()
	}
	return e.Message
}

func (e *RunError) Unwrap() error { return e.Err }

// ErrStreamClosed is returned (wrapped) by Emitter methods once the run's stream can no
// longer carry events: the run was cancelled, the host went away, or Run already returned.
var ErrStreamClosed = errors.New("pluginsdk: run stream closed")
