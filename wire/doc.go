// Package wire holds the JSON documents that cross the runner boundary: the payload and
// session context the host sends with every run (RunRequest.payload_json and
// session_context_json), the history messages and content blocks inside them, the usage a
// runner reports and the checkpoints it keeps with the host, and the protocol's size
// limits.
//
// It is a leaf: standard library only. The host, the session store and the Go runner SDK
// (pluginsdk) all build on it, so the host does not link the runner SDK (go-plugin's
// server side) just to build a payload, and a Go agent project does not carry the session
// store's code just to read its history.
package wire
