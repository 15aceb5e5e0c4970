package runnerv1

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"google.golang.org/protobuf/proto"
)

func TestLaneFramesRoundTrip(t *testing.T) {
	frames := []*LaneFrame{
		{Run: 1, Body: &LaneFrame_Start{Start: &RunRequest{InvocationId: "i", PayloadJson: []byte(`{"input":"hi"}`)}}},
		{Run: 1 << 40, Body: &LaneFrame_Event{Event: &RunEvent{Event: &RunEvent_TextDelta{TextDelta: &TextDelta{Text: string(make([]byte, 100<<10))}}}}},
		{Run: 7, Body: &LaneFrame_Cancel{Cancel: &LaneCancel{}}},
		{Run: 7, Body: &LaneFrame_End{End: &LaneEnd{Error: "boom"}}},
	}
	// Half the frames encoded alone, half appended to one reused buffer (as the host's
	// lane writes them), all after a few bytes already there.
	var wire bytes.Buffer
	buf := []byte("xyz")
	for i, f := range frames {
		if i%2 == 0 {
			b, err := EncodeLaneFrame(f, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			wire.Write(b)
			continue
		}
		b, err := AppendLaneFrame(buf[:3], f, 1<<20)
		if err != nil || string(b[:3]) != "xyz" {
			t.Fatalf("frame %d appended: %q..., %v", i, b[:min(3, len(b))], err)
		}
		wire.Write(b[3:])
		buf = b
	}
	lr := NewLaneReader(&wire, 1<<20)
	for i, want := range frames {
		got, err := lr.Next()
		if err != nil || !proto.Equal(got, want) {
			t.Fatalf("frame %d: %v, %v", i, got, err)
		}
	}
	if _, err := lr.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
}

func TestLaneFramesOverTheLimitOrCut(t *testing.T) {
	big := &LaneFrame{Run: 1, Body: &LaneFrame_End{End: &LaneEnd{Error: string(make([]byte, 200))}}}
	if _, err := EncodeLaneFrame(big, 100); !errors.Is(err, ErrLaneFrameTooLarge) {
		t.Fatalf("encode over the limit: %v", err)
	}
	b, err := EncodeLaneFrame(big, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewLaneReader(bytes.NewReader(b), 100).Next(); !errors.Is(err, ErrLaneFrameTooLarge) {
		t.Fatalf("read over the limit: %v", err)
	}
	if _, err := NewLaneReader(bytes.NewReader(b[:len(b)-1]), 1000).Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read of a cut frame: %v, want io.ErrUnexpectedEOF", err)
	}
	if _, err := NewLaneReader(bytes.NewReader([]byte{0, 0, 0, 2, 0xff, 0xff}), 1000).Next(); err == nil {
		t.Fatal("an undecodable frame decoded")
	}
}
