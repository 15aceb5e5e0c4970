// Package wire holds the JSON documents that cross the runner boundary: the payload and
// session context the host sends with every run (RunRequest.payload_json and
// session_context_json), the history messages and content blocks inside them, the usage a
// runner reports and the checkpoints it keeps with the host, and the functions that derive
// the payload's fields from one another (Expand). It holds nothing else: a Go agent project
// carries a copy of it.
//
// It is a leaf: the standard library and internal/jsonscan (the scanning steps of its
// history decoder) only. The host, the session store and the Go runner SDK
// (pluginsdk) all build on it, so the host does not link the runner SDK (go-plugin's
// server side) just to build a payload, and a Go agent project does not carry the session
// store's code just to read its history.
package wire
