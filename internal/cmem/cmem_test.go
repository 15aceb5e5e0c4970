package cmem

import "testing"

func TestReleaseGivesFreedCMemoryBack(t *testing.T) {
	if !trims() {
		t.Skip("the C library here is not glibc: nothing to trim")
	}
	Release()
	churn(64<<10, 1024) // 64 MiB in small blocks, freed: it stays in glibc's arena
	if !Release() {
		t.Fatal("Release gave nothing back after 64 MiB were freed")
	}
}
