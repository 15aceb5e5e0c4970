package files

import (
	"github.com/gin-gonic/gin"

	"github.com/agentengine/agentengine/api/envelope"
)

// The action API's envelope and error codes, shared with api/actions.
const (
	codeInvalidParameter = envelope.CodeInvalidParameter
	codeMissingParameter = envelope.CodeMissingParameter
	codeNotFound         = envelope.CodeNotFound
	codeConflict         = envelope.CodeConflict
	codeTooLarge         = envelope.CodeTooLarge
	codeMediaType        = envelope.CodeMediaType
	codeInternal         = envelope.CodeInternal
)

type apiError = envelope.Error

func invalid(format string, args ...any) *apiError    { return envelope.Invalid(format, args...) }
func missing(field string) *apiError                  { return envelope.Missing(field) }
func notFound(format string, args ...any) *apiError   { return envelope.NotFound(format, args...) }
func tooLarge(format string, args ...any) *apiError   { return envelope.TooLarge(format, args...) }
func ok(c *gin.Context, action string, data any)      { envelope.OK(c, action, data) }
func fail(c *gin.Context, action string, e *apiError) { envelope.Fail(c, action, e) }
func requestID(c *gin.Context) string                 { return envelope.RequestID(c) }
