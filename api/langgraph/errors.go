package langgraph

import (
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"github.com/hashicorp/go-hclog"

	"github.com/agentengine/agentengine/api/internal/httpx"
)

// apiError is an error in LangGraph's (FastAPI's) shape: {"detail": "text"}. Detail is
// written for the client; Err is log detail only.
type apiError struct {
	Status int
	Detail string
	Err    error
}

func (e *apiError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Detail, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Detail)
}

func detail(status int, format string, args ...any) *apiError {
	return &apiError{Status: status, Detail: fmt.Sprintf(format, args...)}
}

func invalid(format string, args ...any) *apiError {
	return detail(http.StatusUnprocessableEntity, format, args...)
}

func threadNotFound(id string) *apiError {
	return detail(http.StatusNotFound, "Thread with ID %s not found", id)
}

func runNotFound(id string) *apiError {
	return detail(http.StatusNotFound, "Run with ID %s not found", id)
}

func assistantNotFound(id string) *apiError {
	return detail(http.StatusNotFound, "Assistant %s not found", id)
}

// fromHost maps a host.Runtime error; ClientErrors keep their message.
func fromHost(log hclog.Logger, op string, err error) *apiError {
	he := httpx.FromHost(log, op, err)
	switch {
	case he.Gone():
		return &apiError{Status: he.Status, Detail: "the request was cancelled", Err: err}
	case he.Internal():
		return &apiError{Status: he.Status, Detail: "Internal Server Error", Err: err}
	}
	return &apiError{Status: he.Status, Detail: he.Message, Err: err}
}

func writeError(c *gin.Context, e *apiError) {
	if c.Writer.Written() {
		return
	}
	httpx.RetryAfter(c, e.Status)
	httpx.WriteJSON(c, e.Status, gin.H{"detail": e.Detail})
	c.Abort()
}
