// Package caller carries who the router identified a request as to the surfaces: every
// surface asks the Identity the router stored, never a header or body of its own.
package caller

import "context"

// Identity is who a request comes from.
type Identity struct {
	// User is the caller's user id when Bound.
	User string
	// Bound: the request acts as User and nobody else. A tokens-file key binds its user;
	// so does the trusted user header (when one is configured). A request that is not
	// bound is the operator's (no key configured, the shared token, a login cookie): it
	// acts as the user it names (an ADK path, a body's user field), else the default user.
	Bound bool
}

type key struct{}

// With stores id in ctx.
func With(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, key{}, id)
}

// From returns the identity the router stored; a request it did not identify is the
// operator's.
func From(ctx context.Context) Identity {
	id, _ := ctx.Value(key{}).(Identity)
	return id
}

// Resolve returns the user a request acts as: a bound caller's own user (whatever the
// request names); else the first non-empty named user; else def.
func (id Identity) Resolve(def string, named ...string) string {
	if id.Bound {
		return id.User
	}
	for _, u := range named {
		if u != "" {
			return u
		}
	}
	return def
}

// May reports whether the request may act for user, named by a path or body: a bound
// caller only for itself, the operator for anyone.
func (id Identity) May(user string) bool {
	return !id.Bound || id.User == user
}
