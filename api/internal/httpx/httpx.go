// Package httpx holds what every HTTP surface does the same way, so that each surface
// keeps only its translation: reading a JSON body within the one size limit, writing
// JSON, classifying the host runtime's errors into an HTTP status, and adapting a
// handler that returns its error to gin.
package httpx

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/limit"
	"github.com/agentengine/agentengine/host"
	"github.com/agentengine/agentengine/session"
)

// DefaultMaxBodyBytes is the body limit when none is configured.
const DefaultMaxBodyBytes = 32 << 20

// StatusClientGone is the status of a request whose client went away (nginx's 499);
// nothing reads the answer.
const StatusClientGone = 499

// Codes of body errors; each surface words them in its own error shape.
const (
	CodeMediaType  = "unsupported_media_type"
	CodeTooLarge   = "request_too_large"
	CodeUnreadable = "invalid_body"
)

// BodyError is a request body that cannot be read: status, a code above and a message
// written for the client.
type BodyError struct {
	Status  int
	Code    string
	Message string
	Err     error // log detail only
}

func (e *BodyError) Error() string { return e.Message }

const limitKey = "agentengine.httpx.body_limit"

// Limited marks every request as having its body limited to max bytes already (the
// router's body limit), so that ReadJSON does not limit it a second time.
func Limited(max int64) gin.HandlerFunc {
	return func(c *gin.Context) {
		c.Set(limitKey, max)
		c.Next()
	}
}

// BodyLimit is the body limit a request is held to: the router's (Limited) or, for a
// surface served on its own, max (default DefaultMaxBodyBytes).
func BodyLimit(c *gin.Context, max int64) int64 {
	if v, ok := c.Get(limitKey); ok {
		if n, ok := v.(int64); ok {
			return n
		}
	}
	if max <= 0 {
		max = DefaultMaxBodyBytes
	}
	return max
}

// FormOverhead is what a multipart upload's body holds besides the file's bytes, at
// most: its boundaries and part headers and the form fields sent beside the file (each
// at most 8 KiB). A file is within the body limit when it is within the limit less this.
const FormOverhead = 64 << 10

// ReadJSON reads a JSON request body. Bodies must be JSON or carry no Content-Type: a
// browser can send text/plain or form bodies cross-site without a preflight. The limit
// is the router's (Limited) or, for a surface served on its own, max (default
// DefaultMaxBodyBytes).
func ReadJSON(c *gin.Context, max int64) ([]byte, *BodyError) {
	if ct := c.GetHeader("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
			return nil, &BodyError{Status: http.StatusUnsupportedMediaType, Code: CodeMediaType,
				Message: "the request body must be JSON (Content-Type: application/json)"}
		}
	}
	body := c.Request.Body
	if _, limited := c.Get(limitKey); !limited {
		if max <= 0 {
			max = DefaultMaxBodyBytes
		}
		if c.Request.ContentLength > max {
			return nil, tooLarge(max)
		}
		body = http.MaxBytesReader(c.Writer, body, max)
	}
	b, err := readAll(body, c.Request.ContentLength)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, tooLarge(mbe.Limit)
	}
	if err != nil {
		return nil, &BodyError{Status: http.StatusBadRequest, Code: CodeUnreadable, Message: "could not read the request body", Err: err}
	}
	return b, nil
}

// readAll reads r to its end. A body of declared length is read into one buffer of
// that size instead of io.ReadAll's doubling ones, so a large input is held once, not
// about twice; the declared size is reserved only once a first part has arrived, so a
// client that declares much and sends little reserves little.
func readAll(r io.Reader, declared int64) ([]byte, error) {
	if declared <= 0 {
		return io.ReadAll(r)
	}
	b := make([]byte, 0, min(declared, firstPart)+1)
	for {
		if len(b) == cap(b) {
			size := 2 * cap(b)
			if int64(cap(b)) <= declared {
				size = int(declared) + 1
			}
			b = slices.Grow(b, size-len(b))
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if errors.Is(err, io.EOF) {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// firstPart is what a body's first read may reserve before its declared length is.
const firstPart = 1 << 20

func tooLarge(max int64) *BodyError {
	return &BodyError{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge, Message: limit.TooLarge(max)}
}

// WriteJSON writes v as the response body, without HTML escaping (text is data; the
// wire formats served here do not escape <, > and &).
func WriteJSON(c *gin.Context, status int, v any) {
	c.Render(status, jsonRender{v})
}

type jsonRender struct{ v any }

func (r jsonRender) Render(w http.ResponseWriter) error {
	r.WriteContentType(w)
	return NewEncoder(w).Encode(r.v)
}

func (r jsonRender) WriteContentType(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
}

// StoreUnavailableMessage is the client's answer while the session store is down.
const StoreUnavailableMessage = "the session store is unavailable at the moment; retry shortly"

// RetryAfter sets "Retry-After: 1" on a 429 answer and "Retry-After: 5" on a 503 (a
// store or runner that is down for a while) unless whoever refused the request has named
// its own wait (the rate limit names when the next request is due).
func RetryAfter(c *gin.Context, status int) {
	if c.Writer.Header().Get("Retry-After") != "" {
		return
	}
	switch status {
	case http.StatusTooManyRequests:
		c.Header("Retry-After", "1")
	case http.StatusServiceUnavailable:
		c.Header("Retry-After", "5")
	}
}

// NewEncoder is a JSON encoder that does not escape HTML.
func NewEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// HostError is a host.Runtime error classified for a client: the status, the kind
// (one of host's Err* kinds; nil for a failure of the server or a client gone away)
// and what the client may read.
type HostError struct {
	Status int
	// Kind is the host's error kind, for the surface's code.
	Kind error
	// Param is the request field at fault, if the host named one.
	Param string
	// Message is client-safe: the host's message for client errors, "" otherwise (the
	// surface writes its own generic text).
	Message string
}

// Internal reports a server failure, whose detail was logged and is not shown.
func (e HostError) Internal() bool { return e.Status >= 500 && e.Kind == nil }

// Gone reports a request whose client went away.
func (e HostError) Gone() bool { return e.Status == StatusClientGone }

// FromHost classifies an error of host.Runtime. Errors that are not host.ClientErrors
// are logged with their detail (op names the step) and classified as internal.
func FromHost(log hclog.Logger, op string, err error) HostError {
	var ce *host.ClientError
	if !errors.As(err, &ce) {
		if errors.Is(err, context.Canceled) {
			// The client went away; nobody reads this, but keep it out of the error log.
			return HostError{Status: StatusClientGone}
		}
		if session.IsUnavailable(err) {
			// A database that is down or restarting: the client may retry (Retry-After).
			log.Warn("session store unavailable", "op", op, "error", err)
			return HostError{Status: http.StatusServiceUnavailable, Kind: host.ErrUnavailable, Message: StoreUnavailableMessage}
		}
		log.Error("request failed", "op", op, "error", err)
		return HostError{Status: http.StatusInternalServerError}
	}
	e := HostError{Status: http.StatusBadRequest, Kind: ce.Kind, Param: ce.Param, Message: ce.Message}
	switch {
	case errors.Is(ce.Kind, host.ErrUnknownAgent), errors.Is(ce.Kind, host.ErrNotFound):
		e.Status = http.StatusNotFound
	case errors.Is(ce.Kind, host.ErrRunActive), errors.Is(ce.Kind, host.ErrRunNotActive):
		e.Status = http.StatusConflict
	case errors.Is(ce.Kind, host.ErrStateTooLarge):
		e.Status = http.StatusRequestEntityTooLarge
	case errors.Is(ce.Kind, host.ErrUnavailable):
		e.Status = http.StatusServiceUnavailable
	case errors.Is(ce.Kind, host.ErrTooManyRuns):
		e.Status = http.StatusTooManyRequests
	case errors.Is(ce.Kind, host.ErrInvalidInput), errors.Is(ce.Kind, host.ErrNoPendingApproval):
	default:
		log.Error("unmapped client error kind", "op", op, "error", err)
	}
	return e
}

// Handle adapts a handler that returns its error to gin: a non-nil error is written
// with write (each surface's shape), so that handlers return instead of writing and
// returning at every step.
func Handle[E any](write func(*gin.Context, *E), fn func(*gin.Context) *E) gin.HandlerFunc {
	return func(c *gin.Context) {
		if e := fn(c); e != nil {
			write(c, e)
		}
	}
}
