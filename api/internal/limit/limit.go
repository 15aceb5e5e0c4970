// Package limit words the size limits the HTTP surfaces enforce, so that every 413 names
// the limit the same way.
package limit

import "fmt"

// TooLarge is the message of a 413 for a body over max bytes.
func TooLarge(max int64) string {
	return fmt.Sprintf("the request body is larger than the server's limit of %s", Bytes(max))
}

// Bytes writes n bytes in the largest binary unit that divides it (32 MiB), else exactly.
func Bytes(n int64) string {
	for _, u := range []struct {
		size int64
		name string
	}{{1 << 30, "GiB"}, {1 << 20, "MiB"}, {1 << 10, "KiB"}} {
		if n >= u.size && n%u.size == 0 {
			return fmt.Sprintf("%d %s", n/u.size, u.name)
		}
	}
	return fmt.Sprintf("%d bytes", n)
}
