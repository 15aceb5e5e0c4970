package runnerv1

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"

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
	return AppendLaneFrame(nil, f, maxFrame)
}

// AppendLaneFrame appends f framed for the lane to dst (a buffer to reuse), or returns
// an error wrapping ErrLaneFrameTooLarge if f is over maxFrame bytes.
func AppendLaneFrame(dst []byte, f *LaneFrame, maxFrame int) ([]byte, error) {
	size := proto.Size(f)
	if size > maxFrame {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrLaneFrameTooLarge, size, maxFrame)
	}
	start := len(dst)
	buf := append(slices.Grow(dst, laneHeaderBytes+size), make([]byte, laneHeaderBytes)...)
	buf, err := proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(buf, f)
	if err != nil {
		return nil, fmt.Errorf("encode run lane frame: %w", err)
	}
	binary.BigEndian.PutUint32(buf[start:], uint32(len(buf)-start-laneHeaderBytes)) //nolint:gosec // G115: bounded by maxFrame
	return buf, nil
}

// LaneReader reads the frames of one lane connection.
type LaneReader struct {
	r        *bufio.Reader
	maxFrame int
	// buf is reused for frames up to its size; proto.Unmarshal keeps no reference to it.
	buf []byte
}

// laneReadBuffer sizes the socket's read buffer and the frame buffer first kept for
// reuse; laneKeptBuffer bounds what that buffer grows to.
const (
	laneReadBuffer = 64 << 10
	laneKeptBuffer = 1 << 20
)

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
		buf = make([]byte, n)
		// Kept up to a bound (a run request with a long history is hundreds of kilobytes,
		// every turn); one huge frame must not pin its size.
		if n <= laneKeptBuffer {
			lr.buf = buf
		}
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
