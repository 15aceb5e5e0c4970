package actions

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/host"
)

// Error codes of the envelope. KsADK's clients test only Code != 0 and show Message,
// so the codes follow the cloud API style of KsADK's parent platform.
const (
	CodeInvalidParameter  = "InvalidParameter"
	CodeMissingParameter  = "MissingParameter"
	CodeInvalidAction     = "InvalidAction"
	CodeNotFound          = "ResourceNotFound"
	CodeConflict          = "ResourceConflict"
	CodeNoPendingApproval = "NoPendingApproval"
	CodeTooLarge          = "RequestTooLarge"
	CodeMediaType         = "UnsupportedMediaType"
	CodeMethod            = "MethodNotAllowed"
	CodeUnauthorized      = "Unauthorized"
	CodeForbidden         = "Forbidden"
	CodeUnavailable       = "ServiceUnavailable"
	CodeInternal          = "InternalError"
)

// internalMessage is what clients see of unexpected failures; the detail is logged.
const internalMessage = "internal error; see the server log"

// actionError is an error answer: status, code and a message written for the client.
type actionError struct {
	Status  int
	Code    string
	Message string
}

func (e *actionError) Error() string { return e.Code + ": " + e.Message }

func invalid(format string, args ...any) *actionError {
	return &actionError{Status: http.StatusBadRequest, Code: CodeInvalidParameter, Message: fmt.Sprintf(format, args...)}
}

func missing(field string) *actionError {
	return &actionError{Status: http.StatusBadRequest, Code: CodeMissingParameter, Message: field + " is required"}
}

func notFound(format string, args ...any) *actionError {
	return &actionError{Status: http.StatusNotFound, Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

func conflict(format string, args ...any) *actionError {
	return &actionError{Status: http.StatusConflict, Code: CodeConflict, Message: fmt.Sprintf(format, args...)}
}

// statusClientGone marks a request whose client went away: nothing is written.
const statusClientGone = 499

func clientGone() *actionError {
	return &actionError{Status: statusClientGone, Code: "ClientClosedRequest", Message: "the client closed the request"}
}

// envelope is KsADK's answer shape. Detail repeats Message on errors for clients that
// read FastAPI's {"detail": ...}.
type envelope struct {
	Code      any    `json:"Code"`
	Message   string `json:"Message"`
	RequestID string `json:"RequestId"`
	Action    string `json:"Action"`
	Data      any    `json:"Data"`
	Detail    string `json:"detail,omitempty"`
}

// requestID returns the request's id, minting it (and the X-Request-Id header) once.
func requestID(c *gin.Context) string {
	if v, ok := c.Get(ctxRequestID); ok {
		return v.(string)
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	id := "req-" + hex.EncodeToString(b[:])
	c.Set(ctxRequestID, id)
	c.Header("X-Request-Id", id)
	return id
}

const ctxRequestID = "agentengine.actions.request_id"

func writeEnvelope(c *gin.Context, status int, env envelope) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // text is data, not HTML
	if err := enc.Encode(env); err != nil {
		// Data is built from plain structs and valid RawMessages; this is a bug.
		panic("actions: encode envelope: " + err.Error())
	}
	c.Data(status, "application/json; charset=utf-8", buf.Bytes())
}

func ok(c *gin.Context, action string, data any) {
	writeEnvelope(c, http.StatusOK, envelope{Code: 0, Message: "Success", RequestID: requestID(c), Action: action, Data: data})
}

func fail(c *gin.Context, action string, e *actionError) {
	if e.Status == statusClientGone || c.Writer.Written() {
		c.Abort()
		return // a started stream can only end; nobody reads a closed request
	}
	writeEnvelope(c, e.Status, envelope{Code: e.Code, Message: e.Message, RequestID: requestID(c), Action: action, Detail: e.Message})
	c.Abort()
}

// fromHost maps a host.Runtime error to an answer. ClientErrors keep their message;
// anything else is logged with its detail and answered generically.
func (s *Surface) fromHost(action string, err error) *actionError {
	var ce *host.ClientError
	if !errors.As(err, &ce) {
		if errors.Is(err, context.Canceled) {
			return clientGone()
		}
		s.log.Error("action failed", "action", action, "error", err)
		return &actionError{Status: http.StatusInternalServerError, Code: CodeInternal, Message: internalMessage}
	}
	e := &actionError{Status: http.StatusBadRequest, Code: CodeInvalidParameter, Message: ce.Message}
	switch {
	case errors.Is(ce.Kind, host.ErrUnknownAgent), errors.Is(ce.Kind, host.ErrNotFound):
		e.Status, e.Code = http.StatusNotFound, CodeNotFound
	case errors.Is(ce.Kind, host.ErrNoPendingApproval):
		e.Code = CodeNoPendingApproval
	case errors.Is(ce.Kind, host.ErrRunActive), errors.Is(ce.Kind, host.ErrRunNotActive):
		e.Status, e.Code = http.StatusConflict, CodeConflict
	case errors.Is(ce.Kind, host.ErrUnavailable):
		e.Status, e.Code = http.StatusServiceUnavailable, CodeUnavailable
	case errors.Is(ce.Kind, host.ErrInvalidInput):
	default:
		s.log.Error("unmapped client error kind", "action", action, "error", err)
	}
	return e
}

// WriteError writes an error envelope for the router's middleware (api.ErrorWriter):
// unknown actions, wrong methods, auth, origin and size checks.
func (s *Surface) WriteError(c *gin.Context, status int, code, message string) {
	action := strings.TrimPrefix(c.Request.URL.Path, Prefix)
	if i := strings.IndexByte(action, '/'); i >= 0 {
		action = action[:i]
	}
	e := &actionError{Status: status, Code: CodeInternal, Message: message}
	switch status {
	case http.StatusNotFound:
		e.Code, e.Message = CodeInvalidAction, fmt.Sprintf("unknown action %q", action)
	case http.StatusMethodNotAllowed:
		e.Code = CodeMethod
		if m := methodOf(action); m != "" {
			e.Message = fmt.Sprintf("%s takes %s, not %s", action, m, c.Request.Method)
		}
	case http.StatusUnauthorized:
		e.Code = CodeUnauthorized
	case http.StatusForbidden:
		e.Code = CodeForbidden
	case http.StatusRequestEntityTooLarge:
		e.Code = CodeTooLarge
	case http.StatusBadRequest:
		e.Code = CodeInvalidParameter
	}
	if status >= 500 {
		e.Message = internalMessage
	}
	fail(c, action, e)
}
