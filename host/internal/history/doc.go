// Package history keeps the projected history of recently active sessions (Cache), so
// that a turn projects only what was stored since its session's previous turn, and
// bounds what a turn is sent (ForTurn's budget) and how large a history is estimated to be
// (EstimateTokens, Size). The session store stays the truth; the projection rules are
// session's (session.Project, session.ToolNames).
package history
