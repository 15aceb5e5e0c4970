//go:build !linux

package runnerproc

// defunct reports false where waitid is not available: exit detection stays with
// go-plugin.
func defunct(int) bool { return false }
