//go:build !cgo || !linux

package cmem

// Release does nothing here: without cgo there is no C heap, and other C libraries give
// freed memory back on their own.
func Release() bool { return false }

func trims() bool { return false }

func churn(int, int) {}
