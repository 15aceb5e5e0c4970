// Package caller carries who the router identified a request as to the surfaces.
package caller

import "context"

type pinnedKey struct{}

// WithPinnedUser marks ctx as a request pinned to user by its API key: the caller is that
// user and nothing more (not the operator).
func WithPinnedUser(ctx context.Context, user string) context.Context {
	return context.WithValue(ctx, pinnedKey{}, user)
}

// PinnedUser returns the user a request's key pins it to, if any.
func PinnedUser(ctx context.Context) (string, bool) {
	u, ok := ctx.Value(pinnedKey{}).(string)
	return u, ok
}
