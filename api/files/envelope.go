package files

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
)

// Error codes: the same strings as api/actions.
const (
	codeInvalidParameter = "InvalidParameter"
	codeMissingParameter = "MissingParameter"
	codeNotFound         = "ResourceNotFound"
	codeConflict         = "ResourceConflict"
	codeTooLarge         = "RequestTooLarge"
	codeMediaType        = "UnsupportedMediaType"
	codeInternal         = "InternalError"
)

const internalMessage = "internal error; see the server log"

// apiError is an error answer with a client-safe message.
type apiError struct {
	Status  int
	Code    string
	Message string
}

func (e *apiError) Error() string { return e.Code + ": " + e.Message }

func invalid(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: codeInvalidParameter, Message: fmt.Sprintf(format, args...)}
}

func missing(field string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Code: codeMissingParameter, Message: field + " is required"}
}

func notFound(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusNotFound, Code: codeNotFound, Message: fmt.Sprintf(format, args...)}
}

func tooLarge(format string, args ...any) *apiError {
	return &apiError{Status: http.StatusRequestEntityTooLarge, Code: codeTooLarge, Message: fmt.Sprintf(format, args...)}
}

var errInternal = &apiError{Status: http.StatusInternalServerError, Code: codeInternal, Message: internalMessage}

// envelope is the action API's answer, JSON-identical to api/actions' (Detail repeats
// Message on errors for clients that read FastAPI's {"detail": ...}).
type envelope struct {
	Code      any    `json:"Code"`
	Message   string `json:"Message"`
	RequestID string `json:"RequestId"`
	Action    string `json:"Action"`
	Data      any    `json:"Data"`
	Detail    string `json:"detail,omitempty"`
}

const ctxRequestID = "agentengine.actions.request_id"

// requestID returns the request's id ("req-<12 hex>"), minting it and the
// X-Request-Id header once (under the key api/actions uses, so both agree).
func requestID(c *gin.Context) string {
	if v, ok := c.Get(ctxRequestID); ok {
		if s, ok := v.(string); ok {
			return s
		}
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	id := "req-" + hex.EncodeToString(b[:])
	c.Set(ctxRequestID, id)
	c.Header("X-Request-Id", id)
	return id
}

func writeEnvelope(c *gin.Context, status int, env envelope) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(env); err != nil {
		panic("files: encode envelope: " + err.Error()) // plain structs only: a bug
	}
	c.Data(status, "application/json; charset=utf-8", buf.Bytes())
}

func ok(c *gin.Context, action string, data any) {
	writeEnvelope(c, http.StatusOK, envelope{Code: 0, Message: "Success", RequestID: requestID(c), Action: action, Data: data})
}

func fail(c *gin.Context, action string, e *apiError) {
	if c.Writer.Written() {
		c.Abort()
		return
	}
	writeEnvelope(c, e.Status, envelope{Code: e.Code, Message: e.Message, RequestID: requestID(c), Action: action, Detail: e.Message})
	c.Abort()
}
