package a2a

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentengine/agentengine/session"
)

// contentBlocks maps a message's parts to the turn's content: text as text, a data part
// as its JSON text, a file (bytes or uri) as an input file, which the runtime stores and
// extracts like an upload (a uri is passed on as a reference, never fetched).
func contentBlocks(parts a2a.ContentParts) ([]session.ContentBlock, error) {
	out := make([]session.ContentBlock, 0, len(parts))
	for i, p := range parts {
		switch p := p.(type) {
		case a2a.TextPart:
			out = append(out, session.ContentBlock{Type: "input_text", Text: p.Text})
		case a2a.DataPart:
			b, err := json.Marshal(dataValue(p))
			if err != nil {
				return nil, fmt.Errorf("message.parts[%d]: the data is not JSON: %w", i, a2a.ErrInvalidParams)
			}
			out = append(out, session.ContentBlock{Type: "input_text", Text: string(b)})
		case a2a.FilePart:
			b, err := fileBlock(p)
			if err != nil {
				return nil, fmt.Errorf("message.parts[%d]: %s: %w", i, err.Error(), a2a.ErrInvalidParams)
			}
			out = append(out, b)
		default:
			return nil, fmt.Errorf("message.parts[%d]: unsupported part: %w", i, a2a.ErrInvalidParams)
		}
	}
	return out, nil
}

func fileBlock(p a2a.FilePart) (session.ContentBlock, error) {
	var meta a2a.FileMeta
	src := ""
	switch f := p.File.(type) {
	case a2a.FileBytes:
		meta = f.FileMeta
		mime := f.MimeType
		if mime == "" {
			mime = "application/octet-stream"
		}
		src = "data:" + mime + ";base64," + f.Bytes
	case a2a.FileURI:
		meta, src = f.FileMeta, f.URI
	default:
		return session.ContentBlock{}, fmt.Errorf("a file needs bytes or a uri")
	}
	if strings.HasPrefix(meta.MimeType, "image/") {
		return session.ContentBlock{Type: "input_image", ImageURL: src, Filename: meta.Name}, nil
	}
	b := session.ContentBlock{Type: "input_file", Filename: meta.Name}
	if strings.HasPrefix(src, "data:") {
		b.FileData = src
	} else {
		b.FileURL = src
	}
	return b, nil
}

// verdict is an answer to approval requests.
type verdict struct {
	approve bool
	reason  string
}

// verdictOf reads an approval answer from a message: a data part {"approve": bool,
// "reason": "..."}, else text "approve" (also "approved", "yes") or "reject" ("rejected",
// "deny", "no"), optionally followed by ":" and a reason.
func verdictOf(parts a2a.ContentParts) (verdict, bool) {
	var text []string
	for _, p := range parts {
		switch p := p.(type) {
		case a2a.DataPart:
			if a, ok := p.Data["approve"].(bool); ok {
				r, _ := p.Data["reason"].(string)
				return verdict{approve: a, reason: r}, true
			}
		case a2a.TextPart:
			text = append(text, p.Text)
		}
	}
	t := strings.TrimSpace(strings.Join(text, "\n"))
	word, rest := t, ""
	if i := strings.IndexAny(t, ": \n"); i >= 0 {
		word, rest = t[:i], strings.TrimSpace(strings.TrimLeft(t[i:], ": \n"))
	}
	switch strings.ToLower(strings.TrimRight(word, ".!")) {
	case "approve", "approved", "yes":
		return verdict{approve: true, reason: rest}, true
	case "reject", "rejected", "deny", "no":
		return verdict{reason: rest}, true
	}
	return verdict{}, false
}

// resumeValue is the JSON text of a message's first data part, for an answer that is no
// verdict: a tool's output or an interrupt's value.
func resumeValue(parts a2a.ContentParts) (string, bool) {
	for _, p := range parts {
		if d, ok := p.(a2a.DataPart); ok {
			b, err := json.Marshal(dataValue(d))
			if err != nil {
				return "", false
			}
			return string(b), true
		}
	}
	return "", false
}
