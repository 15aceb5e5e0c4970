package pluginsdk

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"

	"github.com/hashicorp/go-hclog"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/internal/runnerplugin"
	"github.com/agentengine/agentengine/pluginsdk/internal/service"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/wire"
)

// runnerServer adapts a Runner to the generated gRPC service. A runner subprocess (Serve)
// and an in-process server (package inprocess, through service.New) both register exactly
// this.
type runnerServer struct {
	runnerv1.UnimplementedRunnerServer
	runner Runner
	info   Info
	log    hclog.Logger
	// runLane is the run lane's socket path once it serves, for Describe.
	runLane string
}

func newRunnerServer(r Runner, log hclog.Logger) *runnerServer {
	if log == nil {
		log = hclog.NewNullLogger()
	}
	info := r.Info()
	if info.Framework == "" {
		info.Framework = "go"
	}
	if _, ok := r.(Summarizer); ok {
		info.Capabilities.Summarize = true
	}
	return &runnerServer{runner: r, info: info, log: log}
}

func init() {
	service.New = func(r any) runnerv1.RunnerServer { return newRunnerServer(r.(Runner), nil) }
}

func (s *runnerServer) Describe(context.Context, *runnerv1.DescribeRequest) (*runnerv1.DescribeResponse, error) {
	c := s.info.Capabilities
	return &runnerv1.DescribeResponse{
		ProtocolVersion: runnerplugin.Protocol(),
		Framework:       s.info.Framework,
		AgentName:       s.info.Name,
		Description:     s.info.Description,
		Capabilities: &runnerv1.Capabilities{
			Resume: c.Resume, Summarize: c.Summarize, Checkpoints: c.Checkpoints,
			// decodeRequest expands every request (wire.Expand).
			ExpandsPayload: true,
		},
		RunLane: s.runLane,
	}, nil
}

func (s *runnerServer) Run(in *runnerv1.RunRequest, stream grpc.ServerStreamingServer[runnerv1.RunEvent]) error {
	return s.serveRun(stream.Context(), in, stream.Send)
}

// serveRun runs one request, sending its events with send: what Run and the run lane
// both serve. Its error is the call's status (nil after a run that failed cleanly, with an
// Error event).
func (s *runnerServer) serveRun(ctx context.Context, in *runnerv1.RunRequest, send func(*runnerv1.RunEvent) error) error {
	log := s.log.With("invocation_id", in.GetInvocationId(), "session_id", in.GetSessionId())
	if tc := in.GetTraceContext(); len(tc) > 0 {
		// The turn's trace: spans the agent makes from ctx (with any OpenTelemetry
		// tracer provider) are children of the host's runner call.
		ctx = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier(tc))
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			log = log.With("trace_id", sc.TraceID().String(), "span_id", sc.SpanID().String())
		}
	}
	emit := newEmitter(ctx, s.info.Framework, send)

	req, err := decodeRequest(in, log)
	if err == nil {
		err = s.call(ctx, req, emit)
	}
	// From here on only this goroutine sends: late Emitter calls from goroutines the
	// agent left behind get ErrStreamClosed instead of racing the final Send.
	emit.close()

	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		// The host cancelled the run; there is nobody to tell.
		log.Debug("run cancelled", "error", err)
		return status.FromContextError(ctx.Err()).Err()
	}
	ev := errorEvent(err)
	log.Error("run failed", "code", ev.Code, "error", ev.Message, "detail", ev.Detail)
	// Ending the stream normally after the Error event lets the host record a clean
	// failed run instead of a transport error.
	return send(&runnerv1.RunEvent{Event: &runnerv1.RunEvent_Error{Error: ev}})
}

// call runs the agent, turning a panic into an error so that one bad turn cannot take the
// whole runner (and every other turn in it) down. Panics in goroutines the agent starts
// itself cannot be caught here.
func (s *runnerServer) call(ctx context.Context, req *Request, emit *Emitter) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = &panicError{value: p, stack: debug.Stack()}
		}
	}()
	return s.runner.Run(ctx, req, emit)
}

func (s *runnerServer) Summarize(ctx context.Context, in *runnerv1.SummarizeRequest) (resp *runnerv1.SummarizeResponse, err error) {
	sum, ok := s.runner.(Summarizer)
	if !ok {
		return nil, status.Error(codes.Unimplemented, "runner does not implement Summarize")
	}
	var history []Message
	if len(in.GetHistoryJson()) > 0 {
		if err := json.Unmarshal(in.GetHistoryJson(), &history); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "decode history_json: %v", err)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("summarize panicked", "panic", fmt.Sprint(p), "detail", string(debug.Stack()))
			resp, err = nil, status.Error(codes.Internal, "agent panicked in Summarize")
		}
	}()
	text, err := sum.Summarize(ctx, history, in.GetInstructions())
	if err != nil {
		if ctx.Err() != nil {
			return nil, status.FromContextError(ctx.Err()).Err()
		}
		ev := errorEvent(err)
		s.log.Error("summarize failed", "code", ev.Code, "error", ev.Message, "detail", ev.Detail)
		return nil, status.Error(codes.Unknown, ev.Message)
	}
	return &runnerv1.SummarizeResponse{Summary: text}, nil
}

func decodeRequest(in *runnerv1.RunRequest, log hclog.Logger) (*Request, error) {
	req := &Request{
		AppName:      in.GetAppName(),
		UserID:       in.GetUserId(),
		SessionID:    in.GetSessionId(),
		InvocationID: in.GetInvocationId(),
		Logger:       log,
	}
	if b := in.GetPayloadJson(); len(b) > 0 {
		if err := wire.UnmarshalPayload(b, &req.Payload); err != nil {
			return nil, &RunError{Code: CodeInvalidRequest, Message: "runner could not decode the run payload (payload_json): " + err.Error(), Err: err}
		}
	}
	if b := in.GetSessionContextJson(); len(b) > 0 {
		if err := json.Unmarshal(b, &req.Context); err != nil {
			return nil, &RunError{Code: CodeInvalidRequest, Message: "runner could not decode the session context (session_context_json): " + err.Error(), Err: err}
		}
	}
	// The host sends derived fields once; runner code sees the documents in full.
	wire.Expand(&req.Payload, &req.Context)
	for _, c := range in.GetCheckpoints() {
		cp := Checkpoint{ThreadID: c.ThreadId, Namespace: c.Namespace, ID: c.CheckpointId, ParentID: c.ParentId, Data: c.Data}
		for _, w := range c.Writes {
			cp.Writes = append(cp.Writes, CheckpointWrite{ThreadID: w.ThreadId, Namespace: w.Namespace,
				CheckpointID: w.CheckpointId, TaskID: w.TaskId, Index: w.Index, Channel: w.Channel, TaskPath: w.TaskPath, Data: w.Data})
		}
		req.Checkpoints = append(req.Checkpoints, cp)
	}
	return req, nil
}

type panicError struct {
	value any
	stack []byte
}

func (e *panicError) Error() string { return fmt.Sprintf("agent panicked: %v", e.value) }

// errorEvent maps a Run error to the protocol's Error event.
func errorEvent(err error) *runnerv1.Error {
	var pe *panicError
	if errors.As(err, &pe) {
		return &runnerv1.Error{Code: CodePanic, Message: pe.Error(), Detail: string(pe.stack)}
	}
	var re *RunError
	if errors.As(err, &re) {
		ev := &runnerv1.Error{Code: re.Code, Message: re.Error(), Detail: re.Detail}
		if ev.Code == "" {
			ev.Code = CodeAgentError
		}
		if ev.Message == "" {
			ev.Message = "the agent failed"
		}
		return ev
	}
	return &runnerv1.Error{Code: CodeAgentError, Message: err.Error()}
}
