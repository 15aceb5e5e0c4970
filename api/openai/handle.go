package openai

import "github.com/gin-gonic/gin"

// namesUsers is a parsed request body that may name its user: safety_identifier, then
// the deprecated user.
type namesUsers interface{ users() []string }

func (r *responsesRequest) users() []string { return []string{r.SafetyIdentifier, r.User} }
func (r *chatRequest) users() []string      { return []string{r.SafetyIdentifier, r.User} }

// handleBody adapts a handler of a JSON request body: the body is read, parsed and its
// caller's user resolved before fn runs with them; any error is written as an envelope.
func handleBody[T namesUsers](h *Handler, parse func([]byte) (T, *apiError), fn func(c *gin.Context, req T, user string) *apiError) gin.HandlerFunc {
	return handle(func(c *gin.Context) *apiError {
		body, aerr := h.readJSON(c)
		if aerr != nil {
			return aerr
		}
		req, aerr := parse(body)
		if aerr != nil {
			return aerr
		}
		user, aerr := h.user(c, req.users()...)
		if aerr != nil {
			return aerr
		}
		return fn(c, req, user)
	})
}
