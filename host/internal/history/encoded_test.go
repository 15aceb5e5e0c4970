package history

import (
	"encoding/json"
	"fmt"
	"testing"
)

// An encoded history's size is the length of the array it writes, whatever its pieces.
func TestEncodedHistorySize(t *testing.T) {
	for _, joined := range []string{"", `{"a":1}`, `{"a":1},{"b":2}`} {
		for n := range 3 {
			var elems []json.RawMessage
			for i := range n {
				elems = append(elems, json.RawMessage(fmt.Sprintf(`{"item":%d}`, i)))
			}
			h := NewEncoded([]byte(joined), elems)
			got := h.AppendTo(nil)
			if len(got) != h.size || !json.Valid(got) {
				t.Errorf("joined %q, %d items: %s is %d bytes, size says %d", joined, n, got, len(got), h.size)
			}
		}
	}
}
