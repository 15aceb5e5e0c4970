package host

import (
	"errors"
	"fmt"
)

// Error kinds. Surfaces map them to their protocol's status codes; the wrapped
// ClientError carries the message that is safe to show a client.
var (
	ErrUnknownAgent      = errors.New("unknown agent")
	ErrNotFound          = errors.New("not found")
	ErrInvalidInput      = errors.New("invalid input")
	ErrNoPendingApproval = errors.New("no pending approval")
	ErrRunActive         = errors.New("run in progress")
	ErrRunNotActive      = errors.New("run not active")
	ErrUnavailable       = errors.New("unavailable")
	ErrTooManyRuns       = errors.New("too many runs")
	// ErrStateTooLarge: a state delta would grow a tier past its budget (413).
	ErrStateTooLarge = errors.New("state too large")
)

// ClientError is an error whose Message is written for the client; Kind is one of the
// sentinel errors above (errors.Is works through it) and Err, if any, is log detail.
type ClientError struct {
	Kind    error
	Message string
	// Param names the offending request field, when there is one.
	Param string
	Err   error
}

func (e *ClientError) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

// Unwrap exposes both the kind and the detail to errors.Is/As.
func (e *ClientError) Unwrap() []error {
	if e.Err != nil {
		return []error{e.Kind, e.Err}
	}
	return []error{e.Kind}
}

func clientErr(kind error, param, format string, args ...any) *ClientError {
	return &ClientError{Kind: kind, Param: param, Message: fmt.Sprintf(format, args...)}
}

// ClientMessage returns the client-safe message of err: the ClientError's message, or a
// generic one for anything else (whose detail belongs in the log, not in a response).
func ClientMessage(err error) string {
	var ce *ClientError
	if errors.As(err, &ce) {
		return ce.Message
	}
	return "internal error"
}
