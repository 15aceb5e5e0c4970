package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/agentengine/agentengine/session"
)

type replayOptions struct {
	sessionsOptions
	after, before int64
	format        string
	// spansFrom is a running server to read the session's recent spans from.
	spansFrom, token string
}

func newReplayCmd() *cobra.Command {
	var o replayOptions
	cmd := &cobra.Command{
		Use:   "replay SESSION_ID",
		Short: "Replay a stored session's events, in order",
		Long: `Print the events of a stored session in the order they happened: messages,
reasoning, tool calls and results, approvals and each run's status. Read only.

The store is chosen as "run" chooses it (--session-backend/--session-path, then
KSADK_SESSION_BACKEND/KSADK_STM_PATH, then DIR/.agentengine/ui/sessions.sqlite).
Sessions imported from KsADK replay like any other.

--after-seq-id and --before-seq-id bound the events by sequence number, both
exclusive. --format json writes one event per line as JSON.

--spans-from URL also prints the span tree of each of the session's turns that the
server at URL still keeps in memory (its recent traces; see docs/OBSERVABILITY.md).`,
		Example: `  agentengine replay conv-1
  agentengine replay conv-1 --after-seq-id 10 --format json
  agentengine replay conv-1 --spans-from http://127.0.0.1:8080`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd, args[0], &o)
		},
	}
	f := cmd.Flags()
	f.Int64Var(&o.after, "after-seq-id", 0, "replay only events after this sequence number (exclusive)")
	f.Int64Var(&o.before, "before-seq-id", 0, "replay only events before this sequence number (exclusive; 0: to the end)")
	f.StringVar(&o.format, "format", "text", "output format: text or json")
	f.StringVar(&o.spansFrom, "spans-from", "", "also print the span trees of the session's turns, read from the running server at this URL")
	f.StringVar(&o.token, "token", "", "bearer token for --spans-from; also AGENTENGINE_TOKEN")
	f.StringVarP(&o.dir, "dir", "C", ".", "project directory")
	f.StringVar(&o.app, "app", "", "agent name (default: the project's name)")
	f.StringVar(&o.user, "user", "user", "user id")
	f.StringVar(&o.store.backend, "session-backend", "", "session backend: memory or local")
	f.StringVar(&o.store.path, "session-path", "", "SQLite session file")
	return cmd
}

func runReplay(cmd *cobra.Command, id string, o *replayOptions) error {
	format := strings.ToLower(o.format)
	if format != "text" && format != "json" {
		return fmt.Errorf("--format %q: use text or json", o.format)
	}
	if o.after < 0 || o.before < 0 {
		return fmt.Errorf("--after-seq-id and --before-seq-id are sequence numbers (0 or more)")
	}
	return withStore(cmd.Context(), &o.sessionsOptions, func(ctx context.Context, st session.Store) error {
		key := session.Key{App: o.app, User: o.user, ID: id}
		if _, err := st.GetSession(ctx, key); err != nil {
			return sessionErr(key, err)
		}
		evs, err := st.Events(ctx, key, session.EventQuery{AfterSeq: o.after, BeforeSeq: o.before})
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if format == "json" {
			enc := json.NewEncoder(out)
			for _, e := range evs {
				if err := enc.Encode(e); err != nil {
					return err
				}
			}
			return nil
		}
		for _, e := range evs {
			replayLine(out, e)
		}
		if o.spansFrom == "" {
			return nil
		}
		spans, err := fetchSpans(ctx, o.spansFrom, cmp.Or(o.token, envOr("AGENTENGINE_TOKEN", "")), id)
		if err != nil {
			return err
		}
		fmt.Fprintln(out)
		printSpanTrees(out, spans)
		return nil
	})
}

// replayLine prints one event for a reader: seq, time, who, and what happened.
func replayLine(out io.Writer, e session.Event) {
	fmt.Fprintf(out, "%5d  %s  %-18s %s\n", e.Seq, e.Time.Local().Format(time.DateTime), e.Type, describeEvent(e))
}

func describeEvent(e session.Event) string {
	switch e.Type {
	case session.TypeUserMessage:
		return described(e, func(d session.UserMessageData) string { return "user: " + oneLine(d.Text) })
	case session.TypeAssistantMessage:
		return described(e, func(d session.AssistantMessageData) string { return author(e) + ": " + oneLine(d.Text) })
	case session.TypeReasoning:
		return described(e, func(d session.ReasoningData) string { return author(e) + " (thinking): " + oneLine(d.Text) })
	case session.TypeToolCall:
		return described(e, func(d session.ToolCallData) string {
			return fmt.Sprintf("%s(%s) [%s]", d.Name, oneLine(d.Arguments), d.CallID)
		})
	case session.TypeToolResult:
		return described(e, func(d session.ToolResultData) string {
			s := fmt.Sprintf("%s → %s [%s]", d.Name, oneLine(d.Output), d.CallID)
			if d.IsError {
				s += " (error)"
			}
			return s
		})
	case session.TypeApprovalRequest:
		return described(e, func(d session.ApprovalRequestData) string {
			return fmt.Sprintf("approve %s(%s)? [%s]", d.Name, oneLine(d.Arguments), e.ItemID)
		})
	case session.TypeApprovalResponse:
		return described(e, func(d session.ApprovalResponseData) string {
			verdict := "rejected"
			if d.Approve {
				verdict = "approved"
			}
			return fmt.Sprintf("%s [%s]", verdict, d.ApprovalRequestID)
		})
	case session.TypeRunStatus:
		return described(e, func(d session.RunStatusData) string {
			s := d.Status + " (run " + e.InvocationID + ")"
			if d.Error != nil {
				s += ": " + oneLine(d.Error.Message)
			}
			return s
		})
	}
	return oneLine(string(e.Data))
}

// described shows an event whose data decodes as T with show; a damaged event shows its
// raw data instead of a line of zero values.
func described[T any](e session.Event, show func(T) string) string {
	d, err := session.DataOf[T](e)
	if err != nil {
		return "(undecodable data) " + oneLine(string(e.Data))
	}
	return show(d)
}

func author(e session.Event) string {
	if e.Author == "" {
		return "assistant"
	}
	return e.Author
}

// oneLine keeps a replay line a line: newlines are shown escaped, long text is cut.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", "")
	s = strings.ReplaceAll(s, "\n", `\n`)
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}
