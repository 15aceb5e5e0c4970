package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/agentengine/agentengine/host/internal/history"
	"github.com/agentengine/agentengine/internal/protolimit"
	runnerv1 "github.com/agentengine/agentengine/pluginsdk/proto/runner/v1"
	"github.com/agentengine/agentengine/session"
)

// CompactionPolicy decides when a session's history is compacted (KsADK's context
// compaction): the transcript since the latest checkpoint is summarised into a new
// context_checkpoint, so that a turn reads and sends a bounded history however long the
// event log grows. The log itself is never rewritten.
type CompactionPolicy struct {
	// Disabled turns automatic compaction off.
	Disabled bool
	// MaxMessages and MaxTokens trigger compaction when the projected history since the
	// latest checkpoint exceeds either (defaults 200 messages, 60,000 estimated tokens).
	MaxMessages int
	MaxTokens   int
	// KeepMessages is how many of the newest messages stay verbatim (default 20).
	KeepMessages int
	// SummaryChars caps an extractive summary (default 4,000 characters).
	SummaryChars int
	// MaxHistoryBytes is the byte budget of the history sent with a turn (default
	// protolimit.HistoryBudgetBytes), applied whether or not compaction is on: compaction
	// keeps the newest messages verbatim, so a few huge ones would otherwise be resent,
	// and fail the runner transport, on every later turn. Messages that do not fit,
	// oldest first, are truncated with a marker.
	MaxHistoryBytes int
}

func (p CompactionPolicy) withDefaults() CompactionPolicy {
	if p.MaxMessages <= 0 {
		p.MaxMessages = 200
	}
	if p.MaxTokens <= 0 {
		p.MaxTokens = 60000
	}
	if p.KeepMessages <= 0 {
		p.KeepMessages = 20
	}
	if p.KeepMessages >= p.MaxMessages {
		p.KeepMessages = p.MaxMessages / 2
	}
	if p.SummaryChars <= 0 {
		p.SummaryChars = 4000
	}
	if p.MaxHistoryBytes <= 0 {
		p.MaxHistoryBytes = protolimit.HistoryBudgetBytes
	}
	return p
}

// EstimateTokens is a tokenizer-free estimate: CJK characters count one token each,
// everything else four characters per token.
func EstimateTokens(s string) int { return history.EstimateTokens(s) }

// maybeCompact compacts the session when its history since the latest checkpoint is over
// the policy's limits. It runs after a run has ended, off the turn's critical path, and
// at most once at a time per session.
func (rt *Runtime) maybeCompact(ctx context.Context, ag Agent, key session.Key, size history.Size) {
	if rt.compaction.Disabled {
		return
	}
	id := key.App + "\x00" + key.User + "\x00" + key.ID
	rt.mu.Lock()
	if _, running := rt.compacting[id]; running {
		// The running compaction checks again when it is done: this run's events may
		// have pushed the history over the limits after it looked.
		rt.compacting[id] = true
		rt.mu.Unlock()
		return
	}
	rt.compacting[id] = false
	rt.mu.Unlock()
	for {
		if err := rt.compact(ctx, ag, key, size); err != nil && !errors.Is(err, session.ErrNotFound) && ctx.Err() == nil {
			rt.log.Warn("compaction failed; history stays uncompacted", "session", key.ID, "error", err)
		}
		rt.mu.Lock()
		again := rt.compacting[id]
		if !again || ctx.Err() != nil {
			delete(rt.compacting, id)
			rt.mu.Unlock()
			return
		}
		rt.compacting[id] = false
		rt.mu.Unlock()
		size = history.Size{} // another run ended meanwhile: the check reads the store
	}
}

// compact summarises the session's history except its newest messages, when the
// history is over the policy's limits. size is the history's size when the run that has
// just ended knew it (zero: unknown, read from the cache or the store).
func (rt *Runtime) compact(ctx context.Context, ag Agent, key session.Key, size history.Size) error {
	p := rt.compaction
	n, tokens, err := rt.hist.SizeOf(ctx, key, size)
	if err != nil {
		return err
	}
	if n <= p.MaxMessages && tokens <= p.MaxTokens {
		return nil
	}
	if n-min(p.KeepMessages, n-1) < 2 {
		// Too few messages to summarise any (a few huge ones): not worth reading them.
		return nil
	}
	hist, sess, err := session.LoadHistory(ctx, rt.store, key)
	if err != nil {
		return err
	}
	if sess.ActiveRunStatus == session.StatusInProgress {
		return nil // the next run's end will try again
	}
	tokens = 0
	for _, m := range hist {
		tokens += history.EstimateTokens(m.Content)
	}
	if len(hist) <= p.MaxMessages && tokens <= p.MaxTokens {
		return nil
	}
	keep := min(p.KeepMessages, len(hist)-1)
	if keep < 0 || len(hist)-keep < 2 {
		return nil
	}
	old := hist[:len(hist)-keep]
	until := old[len(old)-1].Seq
	// Messages of one event share its seq (a client transcript): never cut inside one.
	for keep > 0 && hist[len(hist)-keep].Seq == until {
		keep--
	}
	old = hist[:len(hist)-keep]
	from := old[0].Seq
	if old[0].Type == session.TypeContextCheckpoint && len(old) > 1 {
		from = old[1].Seq
	}
	if from > until {
		return nil
	}
	summary, strategy := rt.summarize(ctx, ag, old)
	if ctx.Err() != nil {
		// Shutting down: a later run will compact with the runner's summary.
		return ctx.Err()
	}
	start := time.Now()
	cp := session.ContextCheckpointData{Summary: summary, FromSeq: from, UntilSeq: until}
	_, err = rt.store.Append(context.WithoutCancel(ctx), key,
		session.NewEvent{Type: session.TypeCompactionBound, Author: "agentengine",
			Data: session.MustJSON(session.CompactionBoundaryData{CompactedUntilSeq: until})},
		session.NewEvent{Type: session.TypeContextCheckpoint, Author: "agentengine", Data: session.MustJSON(cp)},
	)
	if err != nil {
		return fmt.Errorf("append checkpoint: %w", err)
	}
	rt.log.Debug("compacted session history", "session", key.ID, "messages", len(old), "until_seq", until,
		"strategy", strategy, "tokens_before", tokens, "append_ms", time.Since(start).Milliseconds())
	return nil
}

// summarize asks the runner for a summary when it can give one, else builds an
// extractive summary that needs no model.
func (rt *Runtime) summarize(ctx context.Context, ag Agent, msgs []session.Message) (string, string) {
	if rt.canSummarize(ag.Name) {
		hist, _ := json.Marshal(msgs)
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		res, err := ag.Runner.Summarize(sctx, &runnerv1.SummarizeRequest{
			HistoryJson:  hist,
			Instructions: "Summarize this conversation so it can replace it as context: keep facts, decisions, open questions and the user's goals.",
		})
		switch {
		case err == nil && strings.TrimSpace(res.Summary) != "":
			return res.Summary, "runner"
		case status.Code(err) == codes.Unimplemented:
			rt.mu.Lock()
			rt.noSummarize[ag.Name] = true
			rt.mu.Unlock()
		case err != nil:
			rt.log.Warn("runner summary failed; using an extractive summary", "agent", ag.Name, "error", err)
		}
	}
	return extractiveSummary(msgs, rt.compaction.SummaryChars), "extractive"
}

func (rt *Runtime) canSummarize(agent string) bool {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	return !rt.noSummarize[agent]
}

// extractiveSummary keeps the start of every message, newest last, within limit
// characters; when over, the oldest lines go first (recent context matters most).
func extractiveSummary(msgs []session.Message, limit int) string {
	const perMessage = 180
	lines := make([]string, 0, len(msgs))
	for _, m := range msgs {
		text := strings.Join(strings.Fields(m.Content), " ")
		if utf8.RuneCountInString(text) > perMessage {
			text = string([]rune(text)[:perMessage]) + "…"
		}
		lines = append(lines, m.Role+": "+text)
	}
	const head = "Summary of the earlier conversation (extractive):\n"
	total := len(head)
	first := len(lines)
	for first > 0 && total+len(lines[first-1])+1 <= limit {
		first--
		total += len(lines[first]) + 1
	}
	return head + strings.Join(lines[first:], "\n")
}
