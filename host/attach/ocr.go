package attach

import (
	"context"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // decoders for the pixel-count check
	_ "image/jpeg"
	_ "image/png"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	_ "golang.org/x/image/bmp"
	_ "golang.org/x/image/webp"
)

// Bounds on OCR: pixels of an image (a decompression bomb is small on disk) and
// characters read back from tesseract.
const (
	maxOCRPixels = 50_000_000
	ocrOutput    = 1 << 20
)

// TesseractMissing is the warning of images skipped because tesseract is absent.
const TesseractMissing = "tesseract is not installed; install tesseract-ocr to extract text from images"

// ocr reads an image's text with the tesseract binary, when one is on PATH.
func (s *Store) ocr(ctx context.Context, f fileReader, m Meta, tb *textBuf) extracted {
	bin, err := s.cfg.LookPath("tesseract")
	if err != nil {
		return skipped("ocr", TesseractMissing, true)
	}
	if cfg, _, err := image.DecodeConfig(f); err == nil {
		if int64(cfg.Width)*int64(cfg.Height) > maxOCRPixels {
			return skipped("tesseract", fmt.Sprintf("the image is too large for OCR (%dx%d pixels)", cfg.Width, cfg.Height), false)
		}
	} else if !errors.Is(err, image.ErrFormat) {
		return failed("tesseract", "the image is corrupt: it could not be decoded")
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return failed("tesseract", "the image could not be read")
	}
	args := []string{"stdin", "stdout"}
	if s.cfg.OCRLanguages != "" {
		args = append(args, "-l", s.cfg.OCRLanguages)
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = f
	// One thread: the pool already bounds how many run at once.
	cmd.Env = append(toolEnv(), "OMP_THREAD_LIMIT=1")
	var stdout, stderr capped
	stdout.max, stderr.max = ocrOutput, 8<<10
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 2 * time.Second // a grandchild holding the pipes must not hang us
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			e := failed("tesseract", "OCR did not finish in time")
			e.Transient = true
			return e
		}
		s.log.Warn("tesseract failed", "upload", m.ID, "error", err, "stderr", strings.TrimSpace(stderr.b.String()))
		return failed("tesseract", "OCR failed: tesseract could not read the image")
	}
	tb.add(stdout.b.String())
	if stdout.b.Len() >= ocrOutput {
		tb.truncated = true
	}
	e := ok("tesseract", tb)
	if e.Text == "" {
		e.Warnings = append(e.Warnings, "OCR found no text in the image")
	}
	return e
}

// toolEnv is the environment of external tools: what they need to run and find their
// data, nothing else of the host's (which may hold secrets).
func toolEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "TESSDATA_PREFIX"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
