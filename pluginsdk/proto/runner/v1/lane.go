package runnerv1

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"
)

// The run lane's framing (see LaneFrame): each frame is its length, 4 bytes big-endian,
// then the LaneFrame. Both ends of a lane in Go (the host and the Go SDK) use these.

// LaneFrameOverhead is the most a frame adds to the message it carries (the run id, its
// tags and lengths): a frame limit is the message limit plus this.
const LaneFrameOverhead = 64

const laneHeaderBytes = 4

// ErrLaneFrameTooLarge: a frame over the lane's limit, to send or received.
var ErrLaneFrameTooLarge = errors.New("run lane frame too large")

// EncodeLaneFrame returns f framed for the lane, or an error wrapping
// ErrLaneFrameTooLarge if f is over maxFrame bytes.
func EncodeLaneFrame(f *LaneFrame, maxFrame int) ([]byte, error) {
	size := proto.Size(f)
	if size > maxFrame {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrLaneFrameTooLarge, size, maxFrame)
	}
	buf := make([]byte, laneHeaderBytes, laneHeaderBytes+size)
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, f)
	if err != nil {
		return nil, fmt.Errorf("encode run lane frame: %w", err)
	}
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-laneHeaderBytes)) //nolint:gosec // G115: bounded by maxFrame
	return buf, nil
}

// LaneReader reads the frames of one lane connection.
type LaneReader struct {
	r        *bufio.Reader
	maxFrame int
	// buf is reused for frames up to its size; proto.Unmarshal keeps no reference to it.
	buf []byte
}

// laneReadBuffer sizes the socket's read buffer and the frame buffer kept for reuse.
const laneReadBuffer = 64 << 10

// NewLaneReader reads frames from r, refusing any over maxFrame bytes.
func NewLaneReader(r io.Reader, maxFrame int) *LaneReader {
	return &LaneReader{r: bufio.NewReaderSize(r, laneReadBuffer), maxFrame: maxFrame, buf: make([]byte, laneReadBuffer)}
}

// Next returns the next frame: io.EOF when the connection ended between frames, an error
// wrapping ErrLaneFrameTooLarge for a frame over the limit (not read), or the read or
// decoding error. After an error the connection is not in step any more: close it.
func (lr *LaneReader) Next() (*LaneFrame, error) {
	var head [laneHeaderBytes]byte
	if _, err := io.ReadFull(lr.r, head[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if int64(n) > int64(lr.maxFrame) {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrLaneFrameTooLarge, n, lr.maxFrame)
	}
	buf := lr.buf
	if int(n) > len(buf) {
		buf = make([]byte, n) // not kept: one huge frame must not pin its size
	}
	buf = buf[:n]
	if _, err := io.ReadFull(lr.r, buf); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	var f LaneFrame
	if err := proto.Unmarshal(buf, &f); err != nil {
		return nil, fmt.Errorf("decode run lane frame: %w", err)
	}
	return &f, nil
}
