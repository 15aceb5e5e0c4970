// Package protolimit holds the runner protocol's size limits. They derive from one number,
// the host's default request body limit, so that whatever the HTTP surfaces accept fits
// through the runner transport: a RunRequest carries the input up to four times (content,
// messages, parts and the client's own items) plus the session's history, which the host
// keeps within HistoryBudgetBytes.
//
// It is a leaf (constants only) shared by the host and the Go runner SDK, which is why it
// is neither in wire (the documents) nor in the host.
package protolimit

const (
	// MaxRequestBytes is the host's default HTTP request body limit (32 MiB).
	MaxRequestBytes = 32 << 20
	// HistoryBudgetBytes is the default byte budget of the history sent with a turn;
	// older messages beyond it are truncated with a marker.
	HistoryBudgetBytes = 16 << 20
	// MaxMessageBytes is the largest gRPC message either side of the runner protocol
	// sends or accepts (the Python SDK uses the same number). gRPC's own default, 4 MiB,
	// would fail inputs over about 1 MiB.
	MaxMessageBytes = 4*MaxRequestBytes + HistoryBudgetBytes + 16<<20
)
