package history

import (
	"fmt"
	"unicode"
	"unicode/utf8"

	"github.com/agentengine/agentengine/session"
)

// EstimateTokens is a tokenizer-free estimate: CJK characters count one token each,
// everything else four characters per token.
func EstimateTokens(s string) int {
	cjk, other := 0, 0
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			cjk++
		} else {
			other++
		}
	}
	return cjk + (other+3)/4
}

// truncatedKeep is what a message that does not fit the history budget keeps of each of
// its fields, at least: the start of it, then the marker.
const truncatedKeep = 2 << 10

// withinBudget keeps msgs within budget bytes (of content, arguments, outputs and
// blocks), newest first: messages that fit stay whole; the first that does not and every
// older one are cut to what is left of the budget (at least truncatedKeep per field),
// with a marker saying how much was left out. msgs is not modified.
func withinBudget(msgs []session.Message, budget int) []session.Message {
	total := 0
	for _, m := range msgs {
		total += messageBytes(m)
	}
	if budget <= 0 || total <= budget {
		return msgs
	}
	out := make([]session.Message, len(msgs))
	copy(out, msgs)
	left := budget
	for i := len(out) - 1; i >= 0; i-- {
		if n := messageBytes(out[i]); n <= left {
			left -= n
			continue
		}
		out[i] = truncateMessage(out[i], max(left, truncatedKeep))
		left = max(0, left-messageBytes(out[i]))
	}
	return out
}

func messageBytes(m session.Message) int {
	n := len(m.Content) + len(m.Arguments) + len(m.Output)
	for _, b := range m.Blocks {
		n += len(b.Text) + len(b.ImageURL) + len(b.FileData) + len(b.FileURL)
	}
	return n
}

// truncateMessage cuts each large field of m to about keep bytes. Arguments and outputs
// must stay valid JSON, so they are replaced by a JSON string of their truncated text;
// images and files are replaced by a text block naming what was left out.
func truncateMessage(m session.Message, keep int) session.Message {
	m.Content = truncateText(m.Content, keep)
	if len(m.Arguments) > keep {
		m.Arguments = string(session.MustJSON(truncateText(m.Arguments, keep)))
	}
	if len(m.Output) > keep {
		m.Output = session.MustJSON(truncateText(string(m.Output), keep))
	}
	if len(m.Blocks) > 0 {
		blocks := make([]session.ContentBlock, 0, len(m.Blocks))
		for _, b := range m.Blocks {
			data := len(b.ImageURL) + len(b.FileData) + len(b.FileURL)
			switch {
			case data > keep:
				name := b.Filename
				if name == "" {
					name = b.Type
				}
				blocks = append(blocks, session.ContentBlock{Type: "input_text",
					Text: fmt.Sprintf("[%s of %d bytes left out of the history: over its size budget]", name, data)})
			default:
				b.Text = truncateText(b.Text, keep)
				blocks = append(blocks, b)
			}
		}
		m.Blocks = blocks
	}
	return m
}

// truncateText keeps the start of s within keep bytes (on a rune boundary) and marks the cut.
func truncateText(s string, keep int) string {
	if len(s) <= keep {
		return s
	}
	cut := keep
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("\n[… %d more bytes truncated: over the history size budget]", len(s)-cut)
}
