// Package cmem gives memory that C code (SQLite, through cgo) has freed back to the
// operating system. glibc's allocator keeps freed memory in its arenas, one per thread
// that allocated, and cgo calls run on many threads: after a busy spell that memory
// stays in the process's RSS indefinitely unless it is trimmed.
package cmem
