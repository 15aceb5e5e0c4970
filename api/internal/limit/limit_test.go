package limit

import "testing"

func TestBytes(t *testing.T) {
	for n, want := range map[int64]string{32 << 20: "32 MiB", 64: "64 bytes", 1 << 30: "1 GiB", 1536: "1536 bytes", 3 << 10: "3 KiB"} {
		if got := Bytes(n); got != want {
			t.Errorf("Bytes(%d) = %q, want %q", n, got, want)
		}
	}
}
