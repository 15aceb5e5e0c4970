package wire

// Size limits of the runner protocol. They derive from one number, the host's default
// request body limit, so that whatever the HTTP surfaces accept fits through the runner
// transport: a RunRequest carries the input up to four times (content, messages, parts and
// the client's own items) plus the session's history, which the host keeps within
// HistoryBudgetBytes.
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
