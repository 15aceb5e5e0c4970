package adkweb

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/httpx"
)

// httpError is an error in FastAPI's shape: {"detail": "text"}, or for request
// validation failures (422) {"detail": [{type, loc, msg}]} as pydantic reports them.
// Detail and Fields are written for the client; Err is log detail only.
type httpError struct {
	Status int
	Detail string
	Fields []fieldError
	Err    error
}

// fieldError is one pydantic validation error.
type fieldError struct {
	Type string `json:"type"`
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
}

func (e *httpError) Error() string {
	msg := e.Detail
	if len(e.Fields) > 0 {
		msg = fmt.Sprintf("%v: %s", e.Fields[0].Loc, e.Fields[0].Msg)
	}
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, msg, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, msg)
}

func (e *httpError) Unwrap() error { return e.Err }

// invalid is a 422 validation error at loc (pydantic's error type names).
func invalid(typ string, loc []any, format string, args ...any) *httpError {
	return &httpError{Status: http.StatusUnprocessableEntity,
		Fields: []fieldError{{Type: typ, Loc: loc, Msg: fmt.Sprintf(format, args...)}}}
}

// notAnObject is pydantic's error, as ADK's server answers it, for a request model at loc
// that is not a JSON object.
func notAnObject(loc ...any) *httpError {
	return invalid("model_attributes_type", loc, "Input should be a valid dictionary or object to extract fields from")
}

func detail(status int, format string, args ...any) *httpError {
	return &httpError{Status: status, Detail: fmt.Sprintf(format, args...)}
}

// sessionNotFound is ADK's answer for a session that does not exist for the caller,
// which includes another user's or another app's session.
func sessionNotFound(id string) *httpError {
	return detail(http.StatusNotFound, "Session not found: %s", id)
}

func appNotFound(app string) *httpError {
	return detail(http.StatusNotFound, "App not found: %s", app)
}

// fromHostError maps a host.Runtime error (httpx.FromHost logs what is not the
// client's to see). ClientErrors keep their message.
func fromHostError(log hclog.Logger, op string, err error) *httpError {
	he := httpx.FromHost(log, op, err)
	switch {
	case he.Gone():
		return &httpError{Status: he.Status, Detail: "the request was cancelled", Err: err}
	case he.Internal():
		return &httpError{Status: he.Status, Detail: "Internal Server Error", Err: err}
	}
	return &httpError{Status: he.Status, Detail: he.Message, Err: err}
}

// writeError writes e unless the response has started.
func writeError(c *gin.Context, e *httpError) {
	if c.Writer.Written() {
		return
	}
	httpx.RetryAfter(c, e.Status)
	var body any = struct {
		Detail string `json:"detail"`
	}{e.Detail}
	if len(e.Fields) > 0 {
		body = struct {
			Detail []fieldError `json:"detail"`
		}{e.Fields}
	}
	httpx.WriteJSON(c, e.Status, body)
	c.Abort()
}
