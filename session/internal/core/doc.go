// Package core holds the backend-independent rules of the session store (validation,
// state-delta routing, session summary upkeep, copying, time) so that every backend
// applies exactly the same semantics and the conformance suite tests one behaviour.
package core
