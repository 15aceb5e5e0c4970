package pluginsdk

import (
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// unixPair returns both ends of a real unix socket (the lane's transport: writev).
func unixPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("unix", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server = <-accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// frame is a test frame: 4 bytes of length, then the sender and its sequence number.
func frame(sender, seq uint32, pad int) []byte {
	b := make([]byte, 12+pad)
	binary.BigEndian.PutUint32(b, uint32(8+pad))
	binary.BigEndian.PutUint32(b[4:], sender)
	binary.BigEndian.PutUint32(b[8:], seq)
	return b
}

// Concurrent senders' frames arrive whole, each sender's in its order, none lost.
func TestLaneWriterSendsEveryFrameWholeAndInOrder(t *testing.T) {
	out, in := unixPair(t)
	w := newLaneWriter(out)
	defer w.close()
	const senders, frames = 8, 2000
	var wg sync.WaitGroup
	for s := range uint32(senders) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range uint32(frames) {
				if err := w.send(frame(s, i, int(i%7)*100)); err != nil {
					t.Errorf("send: %v", err)
					return
				}
			}
		}()
	}
	next := make([]uint32, senders)
	for range senders * frames {
		var head [4]byte
		if _, err := io.ReadFull(in, head[:]); err != nil {
			t.Fatal(err)
		}
		body := make([]byte, binary.BigEndian.Uint32(head[:]))
		if _, err := io.ReadFull(in, body); err != nil {
			t.Fatal(err)
		}
		s, seq := binary.BigEndian.Uint32(body), binary.BigEndian.Uint32(body[4:])
		if s >= senders || seq != next[s] || len(body) != 8+int(seq%7)*100 {
			t.Fatalf("frame from sender %d seq %d (%d bytes); want seq %d", s, seq, len(body), next[s])
		}
		next[s]++
	}
	wg.Wait()
}

// A host that stops reading holds the senders back (the queue is bounded); they go on
// when it reads again.
func TestLaneWriterQueueIsBounded(t *testing.T) {
	out, in := unixPair(t)
	w := newLaneWriter(out)
	defer w.close()
	sent := make(chan int, 1)
	go func() {
		n := 0
		for ; n < 64; n++ {
			if w.send(frame(0, uint32(n), 1<<20)) != nil {
				break
			}
		}
		sent <- n
	}()
	select {
	case n := <-sent:
		t.Fatalf("all %d frames of 1 MiB were queued while nobody read", n)
	case <-time.After(300 * time.Millisecond):
	}
	if _, err := io.Copy(io.Discard, io.LimitReader(in, 64*(12+1<<20))); err != nil {
		t.Fatal(err)
	}
	if n := <-sent; n != 64 {
		t.Fatalf("sent %d frames, want 64", n)
	}
}

// Sends fail once the connection is closed or broken.
func TestLaneWriterFailsAfterTheConnectionEnds(t *testing.T) {
	out, in := unixPair(t)
	w := newLaneWriter(out)
	in.Close()
	deadline := time.Now().Add(10 * time.Second)
	for w.send(frame(0, 0, 1024)) == nil {
		if time.Now().After(deadline) {
			t.Fatal("sends still succeed long after the host's end closed")
		}
		time.Sleep(time.Millisecond)
	}
	w.close()
	if err := w.send(frame(0, 1, 0)); err == nil {
		t.Fatalf("send after close: %v", err)
	}
}
