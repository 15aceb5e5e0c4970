package attach

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"strconv"
	"time"
)

// Worker process protocol: the parent runs its own executable with workerArg and
// workerEnv set, the PDF on stdin and the character cap in workerCharsEnv; the child
// answers one JSON pdfResult on stdout tagged with workerTag.
const (
	workerArg      = "__agentengine-attach-worker"
	workerEnv      = "AGENTENGINE_ATTACH_WORKER"
	workerCharsEnv = "AGENTENGINE_ATTACH_MAX_CHARS"
	workerTag      = "attach-pdf/1"
	// workerMemory caps the child's heap (RLIMIT_DATA on Linux): a PDF claiming
	// billions of objects kills the child, not the host.
	workerMemory = 1 << 30
	// workerOutput caps what is read back from the child.
	workerOutput = 4 << 20
)

// RunWorkerIfRequested turns this process into a PDF extraction worker, and exits,
// when a Store with IsolatePDF started it; otherwise it returns at once. Call it first
// in main (and in TestMain of tests that use IsolatePDF).
func RunWorkerIfRequested() {
	if len(os.Args) < 2 || os.Args[1] != workerArg || os.Getenv(workerEnv) != "pdf" {
		return
	}
	os.Exit(servePDFWorker(os.Stdin, os.Stdout, os.Getenv(workerCharsEnv)))
}

func servePDFWorker(in io.Reader, out io.Writer, maxChars string) int {
	limitResources(workerMemory)
	debug.SetMaxStack(64 << 20) // deep recursion on cyclic objects dies fast
	n, err := strconv.Atoi(maxChars)
	if err != nil || n <= 0 {
		n = DefaultMaxTextChars
	}
	b, err := io.ReadAll(io.LimitReader(in, workerMemory/4))
	if err != nil {
		return 2
	}
	res := pdfText(bytes.NewReader(b), int64(len(b)), n)
	if err := json.NewEncoder(out).Encode(struct {
		Tag string `json:"tag"`
		pdfResult
	}{workerTag, res}); err != nil {
		return 2
	}
	return 0
}

// pdfInWorker parses in a child process that is killed when ctx ends.
func (s *Store) pdfInWorker(ctx context.Context, f io.ReadSeeker, maxChars int) (pdfResult, error) {
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return pdfResult{}, fmt.Errorf("rewind upload: %w", err)
	}
	cmd := exec.CommandContext(ctx, s.exe, workerArg)
	// The child needs nothing of the host's environment (which may hold secrets).
	cmd.Env = []string{workerEnv + "=pdf", workerCharsEnv + "=" + strconv.Itoa(maxChars)}
	if v, ok := os.LookupEnv("GORACE"); ok {
		cmd.Env = append(cmd.Env, "GORACE="+v)
	}
	cmd.Stdin = f
	var stdout, stderr capped
	stdout.max, stderr.max = workerOutput, 8<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return pdfResult{}, ctx.Err()
		}
		return pdfResult{}, fmt.Errorf("pdf worker: %w (stderr: %.200s)", err, stderr.b.String())
	}
	var res struct {
		Tag string `json:"tag"`
		pdfResult
	}
	if err := json.Unmarshal(stdout.b.Bytes(), &res); err != nil || res.Tag != workerTag {
		return pdfResult{}, errors.New("pdf worker: unexpected output (is attach.RunWorkerIfRequested called first in main?)")
	}
	return res.pdfResult, nil
}

// capped is a writer that keeps at most max bytes and discards the rest.
type capped struct {
	b   bytes.Buffer
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}
