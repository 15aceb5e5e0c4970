package runnerproc

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

const (
	// maxLineBytes bounds one logged line; the rest of a longer line is dropped.
	maxLineBytes = 16 << 10
	// maxFields bounds the key/value pairs taken from one JSON log line.
	maxFields = 32
	// tailLines and tailLineBytes bound what a start error quotes from stderr.
	tailLines     = 8
	tailLineBytes = 512
)

// lineLogger is an io.Writer that turns a runner's output into host log records, one per
// line. It replaces go-plugin's own stderr parser, which panics the host on JSON such as
// {"@message": 5} (go-plugin #38, research A.12): every field here is type-checked and
// anything unexpected is logged as a raw line instead.
type lineLogger struct {
	stream string
	// plain is the level of lines that are not hclog JSON and carry no level prefix.
	plain hclog.Level

	mu        sync.Mutex
	log       hclog.Logger
	buf       []byte
	truncated bool
	// inPanic: a Go panic or Python traceback started; its lines are errors.
	inPanic bool
	tail    []string
}

func newLineLogger(log hclog.Logger, stream string, plain hclog.Level) *lineLogger {
	return &lineLogger{log: log, stream: stream, plain: plain}
}

// setLogger swaps the destination, e.g. to add the pid once the process has started.
func (w *lineLogger) setLogger(l hclog.Logger) {
	w.mu.Lock()
	w.log = l
	w.mu.Unlock()
}

// Write accepts arbitrary chunks (go-plugin writes a line and its newline separately,
// GRPCStdio in 1 KiB pieces) and logs each complete line.
func (w *lineLogger) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		chunk := p
		if i >= 0 {
			chunk = p[:i]
		}
		if room := maxLineBytes - len(w.buf); len(chunk) > room {
			w.buf = append(w.buf, chunk[:room]...)
			w.truncated = true
		} else {
			w.buf = append(w.buf, chunk...)
		}
		if i < 0 {
			break
		}
		w.emit()
		p = p[i+1:]
	}
	return n, nil
}

// flush logs a final line that had no newline.
func (w *lineLogger) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 || w.truncated {
		w.emit()
	}
}

// lastLines returns the last lines seen, oldest first.
func (w *lineLogger) lastLines() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.tail...)
}

func (w *lineLogger) emit() {
	line := bytes.TrimRight(w.buf, "\r")
	truncated := w.truncated
	w.buf, w.truncated = w.buf[:0], false
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	log := w.log.With("stream", w.stream)
	if !truncated {
		if lvl, msg, args, ok := parseHCLogJSON(line); ok {
			log.Log(lvl, msg, args...)
			w.remember(msg)
			return
		}
	}
	text := sanitize(line)
	lvl := w.plain
	switch {
	case strings.HasPrefix(text, "panic: "), strings.HasPrefix(text, "fatal error: "),
		strings.HasPrefix(text, "Traceback (most recent call last):"):
		w.inPanic = true
		lvl = hclog.Error
	case w.inPanic:
		lvl = hclog.Error
	default:
		if l, ok := prefixLevel(text); ok {
			lvl = l
		}
	}
	if truncated {
		log.Log(lvl, text, "truncated_at_bytes", maxLineBytes)
	} else {
		log.Log(lvl, text)
	}
	w.remember(text)
}

func (w *lineLogger) remember(s string) {
	if len(s) > tailLineBytes {
		s = strings.ToValidUTF8(s[:tailLineBytes], "") + "…"
	}
	if len(w.tail) == tailLines {
		copy(w.tail, w.tail[1:])
		w.tail = w.tail[:tailLines-1]
	}
	w.tail = append(w.tail, s)
}

// prefixLevel reads the "[LEVEL]" prefix of plain-text logs (Go's log package style).
func prefixLevel(s string) (hclog.Level, bool) {
	if !strings.HasPrefix(s, "[") {
		return 0, false
	}
	end := strings.IndexByte(s, ']')
	if end < 0 {
		return 0, false
	}
	switch s[1:end] {
	case "TRACE":
		return hclog.Trace, true
	case "DEBUG":
		return hclog.Debug, true
	case "INFO":
		return hclog.Info, true
	case "WARN":
		return hclog.Warn, true
	case "ERROR":
		return hclog.Error, true
	}
	return 0, false
}

// jsonString decodes raw only when it is a JSON string (not null, not a number).
func jsonString(raw json.RawMessage) (string, bool) {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// parseHCLogJSON reads one hclog JSON line: an object with a string "@message", a string
// "@level" from trace to error, and any other fields. ok is false for anything else.
func parseHCLogJSON(line []byte) (lvl hclog.Level, msg string, args []any, ok bool) {
	line = bytes.TrimSpace(line)
	if len(line) < 2 || line[0] != '{' {
		return 0, "", nil, false
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return 0, "", nil, false
	}
	msg, okMsg := jsonString(m["@message"])
	level, okLevel := jsonString(m["@level"])
	if !okMsg || !okLevel {
		return 0, "", nil, false
	}
	switch lvl = hclog.LevelFromString(level); lvl {
	case hclog.Trace, hclog.Debug, hclog.Info, hclog.Warn, hclog.Error:
	default:
		return 0, "", nil, false
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		switch k {
		case "@message", "@level", "@timestamp":
			// The host stamps its own time; the plugin's would only duplicate it.
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) > maxFields {
		keys = keys[:maxFields]
	}
	for _, k := range keys {
		name := strings.TrimPrefix(k, "@")
		if name == "" || name == "stream" {
			name = "plugin_" + name
		}
		if s, isString := jsonString(m[k]); isString {
			args = append(args, sanitize([]byte(name)), sanitizeMultiline(s))
		} else {
			// Numbers, objects, arrays, null: keep the JSON text.
			args = append(args, sanitize([]byte(name)), sanitize(m[k]))
		}
	}
	// A multi-line message (a logged traceback, say) keeps its first line as the message
	// and the rest as a field, where line breaks are safe (see sanitizeMultiline).
	first, more, multi := strings.Cut(sanitizeMultiline(msg), "\n")
	if multi {
		args = append(args, moreField, more)
	}
	return lvl, first, args, true
}

// moreField holds the lines of a multi-line JSON log message after its first.
const moreField = "more"

// sanitize makes plugin output safe to put into the host's log: valid UTF-8 and no
// control characters (which could forge log lines or terminal escapes) except tab.
func sanitize(b []byte) string {
	s := string(b)
	if utf8.ValidString(s) && strings.IndexFunc(s, isUnsafe) < 0 {
		return s
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.Map(func(r rune) rune {
		if isUnsafe(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func isUnsafe(r rune) bool { return r != '\t' && unicode.IsControl(r) }

// sanitizeMultiline is sanitize for a field value, except that line breaks (\n, \r\n)
// are kept, without trailing ones: hclog writes a multi-line value as an indented block
// ("  | " before every line), so a value cannot forge a log line, and a Python traceback
// stays readable.
func sanitizeMultiline(s string) string {
	if !strings.Contains(s, "\n") {
		return sanitize([]byte(s))
	}
	lines := strings.Split(strings.TrimRight(strings.ReplaceAll(s, "\r\n", "\n"), "\n"), "\n")
	for i, l := range lines {
		lines[i] = sanitize([]byte(l))
	}
	return strings.Join(lines, "\n")
}
