package wire

import (
	"encoding/json"
	"strings"
)

// Expand fills in what a compact request leaves out, as a runner that expands payloads
// (Capabilities.expands_payload) must before its code sees them: the payload's Input
// (the input's text; a resume turn's is always sent), InputMessages and InputParts,
// derived from InputItems and InputContent, and the session context's History, the
// payload's. Fields that are set are kept, so a request sent in full is unchanged.
func Expand(p *Payload, sc *SessionContext) {
	if p.Input == nil {
		p.Input = mustJSON(InputText(p.InputContent))
	}
	if p.InputMessages == nil {
		p.InputMessages = InputMessagesOf(p.InputItems, p.InputContent)
	}
	if p.InputParts == nil {
		p.InputParts = InputPartsOf(p.InputContent)
	}
	if sc != nil && sc.History == nil {
		sc.History = p.History
	}
}

// InputText is the text of a turn's input: its text blocks, one per line.
func InputText(content []ContentBlock) string {
	only, n := "", 0
	for _, c := range content {
		if c.Type == "input_text" {
			only, n = c.Text, n+1
		}
	}
	if n <= 1 {
		return only // as it is: a text of megabytes is not copied
	}
	var b strings.Builder
	for _, c := range content {
		if c.Type != "input_text" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text)
	}
	return b.String()
}

// InputMessagesOf is a turn's input as Responses-style items: the earlier items a client
// sent, as sent, then one user message with the content blocks (none without content).
func InputMessagesOf(items []json.RawMessage, content []ContentBlock) []json.RawMessage {
	out := make([]json.RawMessage, 0, len(items)+1)
	out = append(out, items...)
	if len(content) > 0 {
		out = append(out, mustJSON(map[string]any{"type": "message", "role": "user", "content": content}))
	}
	return out
}

// InputPartsOf is the legacy normalized parts list KsADK's OpenAI-compatible API gives
// runners: {text}, or {inline_data} for a data URL and {file_data} for any other URL.
func InputPartsOf(blocks []ContentBlock) []json.RawMessage {
	out := []json.RawMessage{}
	for _, b := range blocks {
		switch b.Type {
		case "input_text":
			out = append(out, mustJSON(map[string]any{"text": b.Text}))
		case "input_image":
			out = append(out, mustJSON(partOf(b.ImageURL, b.Filename)))
		case "input_file":
			src := b.FileData
			if src == "" {
				src = b.FileURL
			}
			out = append(out, mustJSON(partOf(src, b.Filename)))
		}
	}
	return out
}

func partOf(url, name string) map[string]any {
	if mime, data, ok := splitDataURL(url); ok {
		return map[string]any{"inline_data": map[string]any{"mime_type": mime, "data": data, "display_name": name}}
	}
	return map[string]any{"file_data": map[string]any{"file_uri": url, "display_name": name}}
}

// splitDataURL splits "data:<mime>[;params],<data>".
func splitDataURL(u string) (mime, data string, ok bool) {
	rest, found := strings.CutPrefix(u, "data:")
	if !found {
		return "", "", false
	}
	meta, data, found := strings.Cut(rest, ",")
	if !found {
		return "", "", false
	}
	mime, _, _ = strings.Cut(meta, ";")
	return mime, data, true
}

// mustJSON encodes values that cannot fail to encode (maps of strings and blocks).
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("wire: encode: " + err.Error())
	}
	return b
}
