// Package envelope writes the Web UI action API's answers in KsADK's envelope
// {Code, Message, RequestId, Action, Data}, for every surface mounted under the action
// prefix (api/actions, api/files).
package envelope

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/internal/httpx"
)

// Error codes. KsADK's clients test only Code != 0 and show Message, so the codes follow
// the cloud API style of KsADK's parent platform.
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
	CodeTooManyRequests   = "TooManyRequests"
	CodeInternal          = "InternalError"
)

// InternalMessage is what clients see of unexpected failures; the detail is logged.
const InternalMessage = "internal error; see the server log"

// StatusClientGone marks a request whose client went away: nothing is written.
const StatusClientGone = 499

// Error is an error answer: status, code and a message written for the client.
type Error struct {
	Status  int
	Code    string
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Invalid is a 400 for a malformed parameter.
func Invalid(format string, args ...any) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeInvalidParameter, Message: fmt.Sprintf(format, args...)}
}

// Missing is a 400 for a required parameter that is absent.
func Missing(field string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeMissingParameter, Message: field + " is required"}
}

// NotFound is a 404.
func NotFound(format string, args ...any) *Error {
	return &Error{Status: http.StatusNotFound, Code: CodeNotFound, Message: fmt.Sprintf(format, args...)}
}

// Conflict is a 409.
func Conflict(format string, args ...any) *Error {
	return &Error{Status: http.StatusConflict, Code: CodeConflict, Message: fmt.Sprintf(format, args...)}
}

// TooLarge is a 413.
func TooLarge(format string, args ...any) *Error {
	return &Error{Status: http.StatusRequestEntityTooLarge, Code: CodeTooLarge, Message: fmt.Sprintf(format, args...)}
}

// Internal is a 500 with the generic message.
func Internal() *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeInternal, Message: InternalMessage}
}

// ClientGone marks a request whose client closed it.
func ClientGone() *Error {
	return &Error{Status: StatusClientGone, Code: "ClientClosedRequest", Message: "the client closed the request"}
}

// body is the envelope. Detail repeats Message on errors for clients that read FastAPI's
// {"detail": ...}.
type body struct {
	Code      any    `json:"Code"`
	Message   string `json:"Message"`
	RequestID string `json:"RequestId"`
	Action    string `json:"Action"`
	Data      any    `json:"Data"`
	Detail    string `json:"detail,omitempty"`
}

const ctxRequestID = "agentengine.actions.request_id"

// RequestID returns the request's id ("req-<12 hex>"), minting it and the X-Request-Id
// header once.
func RequestID(c *gin.Context) string {
	if v, ok := c.Get(ctxRequestID); ok {
		if s, ok := v.(string); ok {
			return s
		}
	}
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand does not fail on supported platforms
	id := "req-" + hex.EncodeToString(b[:])
	c.Set(ctxRequestID, id)
	c.Header("X-Request-Id", id)
	return id
}

func write(c *gin.Context, status int, b body) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // text is data, not HTML
	if err := enc.Encode(b); err != nil {
		// Data is built from plain structs and valid RawMessages; this is a bug.
		panic("envelope: encode: " + err.Error())
	}
	c.Data(status, "application/json; charset=utf-8", buf.Bytes())
}

// OK answers an action with Data.
func OK(c *gin.Context, action string, data any) {
	write(c, http.StatusOK, body{Code: 0, Message: "Success", RequestID: RequestID(c), Action: action, Data: data})
}

// Fail answers an action with an error and aborts the handler chain. A response that has
// started (a stream) can only end, and a closed request gets nothing.
func Fail(c *gin.Context, action string, e *Error) {
	if e.Status == StatusClientGone || c.Writer.Written() {
		c.Abort()
		return
	}
	httpx.RetryAfter(c, e.Status)
	write(c, e.Status, body{Code: e.Code, Message: e.Message, RequestID: RequestID(c), Action: action, Detail: e.Message})
	c.Abort()
}
