package openai

import (
	"testing"

	"github.com/agentengine/agentengine/host"
)

// BenchmarkResponseDelta measures encoding one streamed text delta (the budget in
// docs/PERFORMANCE.md is 10 µs of host CPU per delta, all layers included).
func BenchmarkResponseDelta(b *testing.B) {
	enc := newResponseEncoder(testBase(), encodeOptions{}, true)
	enc.Start()
	ev := host.Event{Kind: host.KindTextDelta, ItemID: "msg_1", Text: "token "}
	enc.Add(ev) // opens the item
	b.ReportAllocs()
	for b.Loop() {
		if len(enc.Add(ev)) != 1 {
			b.Fatal("no event")
		}
	}
}

func BenchmarkChatDelta(b *testing.B) {
	enc := newChatEncoder("chatcmpl-test", "echo", "sess_test", 0, chatOptions{}, true)
	enc.Start()
	ev := host.Event{Kind: host.KindTextDelta, ItemID: "msg_1", Text: "token "}
	b.ReportAllocs()
	for b.Loop() {
		if len(enc.Add(ev)) != 1 {
			b.Fatal("no chunk")
		}
	}
}
