package attach

import "syscall"

// limitResources caps the worker's data segment, which on Linux bounds the Go heap.
func limitResources(bytes uint64) {
	lim := syscall.Rlimit{Cur: bytes, Max: bytes}
	_ = syscall.Setrlimit(syscall.RLIMIT_DATA, &lim)
}
