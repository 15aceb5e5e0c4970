package core

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentengine/agentengine/session"
)

// Summary limits, in runes.
const (
	MaxPromptRunes = 512
	MaxTitleRunes  = 80
	// MaxRenameRunes bounds a user-chosen title; longer is rejected, not cut.
	MaxRenameRunes = 512
)

// Truncate cuts s to at most n runes.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := 0
	for pos := range s {
		if i == n {
			return s[:pos]
		}
		i++
	}
	return s
}

// TitleFrom derives the automatic title from the first prompt: one line, truncated.
func TitleFrom(prompt string) string {
	return Truncate(strings.Join(strings.Fields(prompt), " "), MaxTitleRunes)
}

// Summarize updates the session row for stored events (same order as ps). renamed says
// whether the user chose the title, which then is never replaced by the prompt.
func Summarize(s *session.Session, renamed bool, ps []Pending, evs []session.Event, now time.Time) {
	for i, p := range ps {
		e := evs[i]
		s.LastSeq = e.Seq
		if p.hasPrompt {
			prompt := p.prompt // truncated by Prepare
			if s.FirstPrompt == "" {
				s.FirstPrompt = prompt
				if !renamed && s.Title == "" {
					s.Title = TitleFrom(prompt)
				}
			}
			s.LastPrompt = prompt
		}
		if p.checkpoint != nil {
			s.CheckpointSeq = e.Seq
		}
		if p.runStatus != "" {
			s.ActiveInvocationID, s.ActiveRunStatus = e.InvocationID, p.runStatus
		}
	}
	s.UpdatedAt = now
}

// Rename applies a rename to s and reports whether the title is now user-chosen. An
// empty (blank) title restores the automatic one.
func Rename(s *session.Session, title string) (renamed bool, err error) {
	title = strings.TrimSpace(title)
	if title == "" {
		s.Title = TitleFrom(s.FirstPrompt)
		return false, nil
	}
	if utf8.RuneCountInString(title) > MaxRenameRunes {
		return false, fmt.Errorf("%w: title longer than %d characters", session.ErrInvalid, MaxRenameRunes)
	}
	s.Title = title
	return true, nil
}
