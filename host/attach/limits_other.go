//go:build !linux

package attach

import "runtime/debug"

// limitResources sets a soft heap goal where no hard limit is portable; the parent's
// timeout still ends a runaway worker.
func limitResources(bytes uint64) { debug.SetMemoryLimit(int64(bytes)) }
