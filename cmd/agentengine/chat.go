package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

const chatHelp = `commands: /new starts a new session, /session shows its id, /exit quits (or Ctrl-D)`

// chat is `run -i`: a terminal conversation with the first agent through the same
// runtime and store as the HTTP API, streaming its output as it comes.
func chat(ctx context.Context, rt *host.Runtime, in io.Reader, out io.Writer, opt chatOptions) error {
	agents := rt.Agents()
	agent := agents[0].Name
	fmt.Fprintf(out, "chatting with %s — %s\n", agent, chatHelp)
	lines := bufio.NewScanner(in)
	lines.Buffer(make([]byte, 64<<10), 1<<20)
	var sessionID string
	for {
		fmt.Fprint(out, "\n> ")
		if !lines.Scan() {
			fmt.Fprintln(out)
			return lines.Err()
		}
		text := strings.TrimSpace(lines.Text())
		switch text {
		case "":
			continue
		case "/exit", "/quit":
			return nil
		case "/new":
			sessionID = ""
			fmt.Fprintln(out, "new session")
			continue
		case "/session":
			fmt.Fprintln(out, "session:", orDash(sessionID))
			continue
		case "/help":
			fmt.Fprintln(out, chatHelp)
			continue
		}
		req := host.TurnRequest{Surface: "cli", App: agent, SessionID: sessionID,
			Input: host.Input{Content: []session.ContentBlock{{Type: "input_text", Text: text}}}}
		for {
			r, err := rt.Start(ctx, req)
			if err != nil {
				fmt.Fprintln(out, "error:", host.ClientMessage(err))
				break
			}
			sessionID = r.Key.ID
			approvals, err := printRun(ctx, r, out, opt)
			if err != nil {
				return err
			}
			if len(approvals) == 0 {
				break
			}
			req = host.TurnRequest{Surface: "cli", App: agent, SessionID: sessionID}
			for _, a := range approvals {
				ok, err := askApproval(lines, out, a)
				if err != nil {
					return err
				}
				raw, _ := json.Marshal(map[string]any{"type": "mcp_approval_response", "approval_request_id": a.id, "approve": ok})
				req.Input.Resumes = append(req.Input.Resumes, host.Resume{ApprovalRequestID: a.id, Approve: ok, Raw: raw})
			}
		}
	}
}

type pendingApproval struct {
	id   string
	data session.ApprovalRequestData
}

// printRun streams a run to the terminal and returns its approval requests.
func printRun(ctx context.Context, r *host.Run, out io.Writer, opt chatOptions) ([]pendingApproval, error) {
	return printEvents(ctx, r.Subscribe(0).Next, out, opt)
}

// printEvents prints a run's events as next returns them, until io.EOF.
func printEvents(ctx context.Context, next func(context.Context) (host.Event, error), out io.Writer, opt chatOptions) ([]pendingApproval, error) {
	var approvals []pendingApproval
	inText, inThought := false, false
	for {
		ev, err := next(ctx)
		if errors.Is(err, io.EOF) {
			return approvals, nil
		}
		if err != nil {
			return nil, err
		}
		switch ev.Kind {
		case host.KindTextDelta:
			if opt.noStream {
				continue // printed whole from the assistant_message event
			}
			if inThought {
				fmt.Fprintln(out)
				inThought = false
			}
			inText = true
			fmt.Fprint(out, ev.Text)
		case host.KindReasoningDelta:
			if !opt.showThinking || opt.noStream {
				continue
			}
			if !inThought {
				fmt.Fprint(out, "(thinking) ")
				inThought = true
			}
			fmt.Fprint(out, ev.Text)
		case host.KindStored:
			e := ev.Stored
			switch e.Type {
			case session.TypeAssistantMessage, session.TypeReasoning:
				if opt.noStream {
					printWhole(out, e, opt.showThinking)
					continue
				}
				if inText || inThought {
					fmt.Fprintln(out)
				}
				inText, inThought = false, false
			case session.TypeToolCall:
				if d, ok := chatData[session.ToolCallData](out, e); ok {
					fmt.Fprintf(out, "[tool] %s(%s)\n", d.Name, d.Arguments)
				}
			case session.TypeToolResult:
				if d, ok := chatData[session.ToolResultData](out, e); ok {
					fmt.Fprintf(out, "[result] %s\n", d.Output)
				}
			case session.TypeApprovalRequest:
				if d, ok := chatData[session.ApprovalRequestData](out, e); ok {
					approvals = append(approvals, pendingApproval{id: e.ItemID, data: d})
				}
			case session.TypeRunStatus:
				d, ok := chatData[session.RunStatusData](out, e)
				if ok && (d.Status == session.StatusFailed || d.Status == session.StatusCancelled) {
					msg := d.Status
					if d.Error != nil {
						msg += ": " + d.Error.Message
					}
					fmt.Fprintln(out, "[run "+msg+"]")
				}
			}
		case host.KindToolArgsDelta, host.KindNative:
			// The terminal prints a call once, whole, from the stored tool_call.
		}
	}
}

func askApproval(lines *bufio.Scanner, out io.Writer, a pendingApproval) (bool, error) {
	msg := a.data.Message
	if msg == "" {
		msg = "the agent asks to run " + a.data.Name
	}
	fmt.Fprintf(out, "%s\n  %s(%s)\napprove? [y/N] ", msg, a.data.Name, a.data.Arguments)
	if !lines.Scan() {
		if err := lines.Err(); err != nil {
			return false, err
		}
		return false, io.EOF
	}
	ans := strings.ToLower(strings.TrimSpace(lines.Text()))
	return ans == "y" || ans == "yes", nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// chatData decodes a stored event's data; a damaged event is reported in the transcript
// instead of being shown with empty fields.
func chatData[T any](out io.Writer, e *session.Event) (T, bool) {
	d, err := session.DataOf[T](*e)
	if err != nil {
		fmt.Fprintf(out, "[%v]\n", err)
		return d, false
	}
	return d, true
}

// printWhole prints a complete answer or reasoning (run -i --no-stream).
func printWhole(out io.Writer, e *session.Event, showThinking bool) {
	d, ok := chatData[session.AssistantMessageData](out, e) // reasoning has the same shape
	switch {
	case !ok:
	case d.Text == "":
	case e.Type == session.TypeAssistantMessage:
		fmt.Fprintln(out, d.Text)
	case showThinking:
		fmt.Fprintln(out, "(thinking) "+d.Text)
	}
}
