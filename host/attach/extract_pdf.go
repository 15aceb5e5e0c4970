package attach

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ledongthuc/pdf"
)

// maxPDFPages bounds the pages read from one PDF.
const maxPDFPages = 200

// pdfResult is what PDF parsing yields, in process or from a worker.
type pdfResult struct {
	Text      string   `json:"text"`
	Truncated bool     `json:"truncated,omitempty"`
	Warnings  []string `json:"warnings,omitempty"`
	// Error is a client-safe reason the PDF could not be read at all.
	Error string `json:"error,omitempty"`
}

// extractPDF reads a PDF's text. The parser is a third-party library fed untrusted
// input whose failure modes include panics, runaway loops and huge allocations, so with
// IsolatePDF it runs in a child process under a timeout and memory limit; in process a
// panic is recovered but a runaway parse can only be abandoned.
func (s *Store) extractPDF(ctx context.Context, f fileReader, size int64, tb *textBuf) extracted {
	var res pdfResult
	var err error
	if s.cfg.IsolatePDF {
		res, err = s.pdfInWorker(ctx, f, tb.max)
	} else {
		res, err = pdfInProcess(ctx, f, size, tb.max)
	}
	if err != nil {
		s.log.Warn("pdf extraction failed", "error", err)
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			e := failed("pdf", "PDF text extraction did not finish in time")
			e.Transient = true
			return e
		}
		return failed("pdf", "the PDF could not be parsed within the extractor's limits")
	}
	if res.Error != "" {
		return failed("pdf", "%s", res.Error)
	}
	tb.add(res.Text)
	tb.truncated = tb.truncated || res.Truncated
	e := ok("pdf", tb, res.Warnings...)
	if strings.TrimSpace(res.Text) == "" {
		e.Warnings = append(e.Warnings, "the PDF has no extractable text (it may be scanned images)")
	}
	return e
}

// pdfInProcess parses on a goroutine so that the caller's deadline holds even when the
// parser does not return.
func pdfInProcess(ctx context.Context, r io.ReaderAt, size int64, maxChars int) (pdfResult, error) {
	done := make(chan pdfResult, 1)
	go func() { done <- pdfText(r, size, maxChars) }()
	select {
	case res := <-done:
		return res, nil
	case <-ctx.Done():
		return pdfResult{}, ctx.Err()
	}
}

// pdfText extracts up to maxChars characters from the first maxPDFPages pages.
func pdfText(r io.ReaderAt, size int64, maxChars int) (res pdfResult) {
	defer func() {
		if v := recover(); v != nil {
			res = pdfResult{Error: "the PDF is corrupt or uses features the extractor does not support"}
		}
	}()
	if err := pdfPrecheck(r, size); err != nil {
		return pdfResult{Error: err.Error()}
	}
	pr, err := pdf.NewReader(r, size)
	if err != nil {
		if errors.Is(err, pdf.ErrInvalidPassword) || strings.Contains(err.Error(), "encrypt") {
			return pdfResult{Error: "the PDF is encrypted; text cannot be extracted"}
		}
		return pdfResult{Error: "the PDF is corrupt or unsupported: " + clip(err.Error(), 120)}
	}
	pages, complete := pdfPages(pr, maxPDFPages)
	switch {
	case len(pages) == 0:
		return pdfResult{Error: "the PDF has no readable pages"}
	case !complete:
		res.Warnings = append(res.Warnings, "the PDF's page tree is malformed; some pages may be missing")
	case pr.NumPage() > maxPDFPages:
		res.Warnings = append(res.Warnings, fmt.Sprintf("only the first %d of %d pages were read", maxPDFPages, pr.NumPage()))
	}
	tb := newTextBuf(maxChars)
	bad := 0
	for _, p := range pages {
		if tb.full() {
			break
		}
		text, err := p.GetPlainText(nil)
		if err != nil {
			bad++
			continue
		}
		tb.add(text)
		tb.add("\n\n")
	}
	if bad > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d page(s) could not be read", bad))
	}
	res.Text, res.Truncated = tb.String(), tb.truncated
	return res
}

// maxPDFObjects bounds the object count a PDF may declare: the parser allocates its
// cross-reference table from /Size up front, and no file within the upload limit
// holds millions of objects (each takes a dozen bytes at least).
const maxPDFObjects = 1 << 22

// pdfPrecheck refuses PDFs whose declared /Size would make the parser allocate
// gigabytes before reading anything.
func pdfPrecheck(r io.ReaderAt, size int64) error {
	b, err := io.ReadAll(io.NewSectionReader(r, 0, size))
	if err != nil {
		return errors.New("the PDF could not be read")
	}
	for rest := b; ; {
		i := bytes.Index(rest, []byte("/Size"))
		if i < 0 {
			return nil
		}
		rest = rest[i+len("/Size"):]
		j := 0
		for j < len(rest) && (rest[j] == ' ' || rest[j] == '\t' || rest[j] == '\r' || rest[j] == '\n') {
			j++
		}
		n := int64(0)
		for ; j < len(rest) && rest[j] >= '0' && rest[j] <= '9'; j++ {
			if n = n*10 + int64(rest[j]-'0'); n > maxPDFObjects {
				return fmt.Errorf("the PDF declares more than %d objects", maxPDFObjects)
			}
		}
	}
}

// pdfPages lists up to max pages by walking the page tree depth first, bounded in
// depth and visited nodes: the library's own page lookup loops forever on a cyclic
// tree. complete is false when a bound cut the walk short.
func pdfPages(pr *pdf.Reader, max int) (pages []pdf.Page, complete bool) {
	const maxDepth = 32
	nodes, budget := 0, 4*max+64
	var walk func(v pdf.Value, depth int) bool
	walk = func(v pdf.Value, depth int) bool {
		nodes++
		if depth > maxDepth || nodes > budget {
			return false
		}
		switch v.Key("Type").Name() {
		case "Pages":
			kids := v.Key("Kids")
			for i := 0; i < kids.Len() && len(pages) < max; i++ {
				if !walk(kids.Index(i), depth+1) {
					return false
				}
			}
		case "Page":
			pages = append(pages, pdf.Page{V: v})
		}
		return true
	}
	complete = walk(pr.Trailer().Key("Root").Key("Pages"), 0)
	return pages, complete
}

// clip shortens library error text for clients.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return prefix(s, n) + "…"
}
