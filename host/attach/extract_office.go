package attach

import (
	"archive/zip"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Bounds on zip-based files, against zip bombs: entries in the central directory,
// uncompressed bytes read from one part, and from all parts of one file.
const (
	maxZipEntries   = 5000
	maxPartBytes    = 20 << 20
	maxOfficeBytes  = 64 << 20
	maxSheetColumns = 1000
)

var errBudget = errors.New("the document expands to more data than allowed")

// zipLimits bound reading one zip file: entries, uncompressed bytes of one part and
// of all parts together.
type zipLimits struct {
	entries     int
	part, total int64
}

func officeLimits() zipLimits { return zipLimits{maxZipEntries, maxPartBytes, maxOfficeBytes} }

// zipParts reads parts of a zip file within an uncompressed byte budget.
type zipParts struct {
	files  map[string]*zip.File
	order  []*zip.File
	budget int64
	part   int64
}

func openZip(f io.ReaderAt, size int64, lim zipLimits) (*zipParts, error) {
	if n, ok := zipEntryCount(f, size); !ok || n > lim.entries {
		return nil, fmt.Errorf("the archive has too many entries (at most %d are read)", lim.entries)
	}
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return nil, fmt.Errorf("the archive is corrupt: %w", err)
	}
	z := &zipParts{files: make(map[string]*zip.File, len(zr.File)), order: zr.File, budget: lim.total, part: lim.part}
	for _, zf := range zr.File {
		z.files[zf.Name] = zf
	}
	return z, nil
}

// open returns a reader of the part that stops at the per-part limit and charges
// what it reads to the file's budget.
func (z *zipParts) open(zf *zip.File, limit int64) (io.ReadCloser, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	return &budgetReader{r: io.LimitReader(rc, limit), c: rc, z: z}, nil
}

type budgetReader struct {
	r io.Reader
	c io.Closer
	z *zipParts
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.z.budget <= 0 {
		return 0, errBudget
	}
	if int64(len(p)) > b.z.budget {
		p = p[:b.z.budget]
	}
	n, err := b.r.Read(p)
	b.z.budget -= int64(n)
	return n, err
}

func (b *budgetReader) Close() error { return b.c.Close() }

// walkXML streams the XML part name to fn until fn returns false.
func (z *zipParts) walkXML(ctx context.Context, name string, fn func(xml.Token) bool) error {
	zf, ok := z.files[name]
	if !ok {
		return fmt.Errorf("the document has no %s part", name)
	}
	rc, err := z.open(zf, z.part)
	if err != nil {
		return fmt.Errorf("open %s: %w", name, err)
	}
	defer rc.Close()
	d := xml.NewDecoder(rc)
	d.Strict = false
	for n := 0; ; n++ {
		if n%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read %s: %w", name, err)
		}
		if !fn(tok) {
			return nil
		}
	}
}

// extractOffice reads the text of a docx, xlsx or pptx file.
func extractOffice(ctx context.Context, f io.ReaderAt, size int64, mimeType string, tb *textBuf, lim zipLimits) extracted {
	method := map[string]string{mimeDocx: "docx", mimeXlsx: "xlsx", mimePptx: "pptx"}[mimeType]
	z, err := openZip(f, size, lim)
	if err != nil {
		return failed(method, "%v", err)
	}
	switch mimeType {
	case mimeDocx:
		err = z.walkXML(ctx, "word/document.xml", paragraphText(tb, "p"))
	case mimeXlsx:
		err = xlsxText(ctx, z, tb)
	default:
		err = pptxText(ctx, z, tb)
	}
	if err != nil {
		if tb.String() == "" {
			return failed(method, "the document could not be read: %v", err)
		}
		e := ok(method, tb, fmt.Sprintf("the document could only be read in part: %v", err))
		e.Status = StatusPartial
		return e
	}
	return ok(method, tb)
}

// paragraphText collects <t> text, with a line break after each paragraph element.
func paragraphText(tb *textBuf, para string) func(xml.Token) bool {
	inText := false
	return func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "t":
				inText = true
			case "tab":
				return tb.add("\t")
			case "br", "cr":
				return tb.add("\n")
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "t":
				inText = false
			case para:
				return tb.add("\n")
			}
		case xml.CharData:
			if inText {
				return tb.add(string(t))
			}
		}
		return true
	}
}

// pptxText reads the slides in order, each under a "## Slide N" heading.
func pptxText(ctx context.Context, z *zipParts, tb *textBuf) error {
	type slide struct {
		n    int
		name string
	}
	var slides []slide
	for name := range z.files {
		num, ok := strings.CutPrefix(name, "ppt/slides/slide")
		if num, ok2 := strings.CutSuffix(num, ".xml"); ok && ok2 {
			if n, err := strconv.Atoi(num); err == nil {
				slides = append(slides, slide{n, name})
			}
		}
	}
	sort.Slice(slides, func(i, j int) bool { return slides[i].n < slides[j].n })
	for _, s := range slides {
		if !tb.add(fmt.Sprintf("\n## Slide %d\n", s.n)) {
			return nil
		}
		if err := z.walkXML(ctx, s.name, paragraphText(tb, "p")); err != nil {
			return err
		}
	}
	return nil
}

// xlsxText reads every worksheet as tab-separated rows under a "## Sheet: name" heading.
func xlsxText(ctx context.Context, z *zipParts, tb *textBuf) error {
	var shared []string
	if _, ok := z.files["xl/sharedStrings.xml"]; ok {
		var cur strings.Builder
		inT := false
		err := z.walkXML(ctx, "xl/sharedStrings.xml", func(tok xml.Token) bool {
			switch t := tok.(type) {
			case xml.StartElement:
				if t.Name.Local == "t" {
					inT = true
				}
			case xml.EndElement:
				switch t.Name.Local {
				case "t":
					inT = false
				case "si":
					shared = append(shared, cur.String())
					cur.Reset()
				}
			case xml.CharData:
				if inT {
					cur.Write(t)
				}
			}
			return true
		})
		if err != nil {
			return err
		}
	}
	sheets, err := xlsxSheets(ctx, z)
	if err != nil {
		return err
	}
	for _, sh := range sheets {
		if !tb.add(fmt.Sprintf("\n## Sheet: %s\n", sh.name)) {
			return nil
		}
		if err := z.walkXML(ctx, sh.part, sheetRows(tb, shared)); err != nil {
			return err
		}
	}
	return nil
}

type sheetRef struct{ name, part string }

// xlsxSheets lists the workbook's sheets in order with the parts that hold them.
func xlsxSheets(ctx context.Context, z *zipParts) ([]sheetRef, error) {
	targets := map[string]string{}
	if _, ok := z.files["xl/_rels/workbook.xml.rels"]; ok {
		err := z.walkXML(ctx, "xl/_rels/workbook.xml.rels", func(tok xml.Token) bool {
			if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "Relationship" {
				targets[attr(t, "Id")] = attr(t, "Target")
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	var out []sheetRef
	err := z.walkXML(ctx, "xl/workbook.xml", func(tok xml.Token) bool {
		if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "sheet" {
			target := targets[attr(t, "id")]
			if target == "" {
				target = fmt.Sprintf("worksheets/sheet%d.xml", len(out)+1)
			}
			// Part names are looked up in the archive only, never on disk.
			part := strings.TrimPrefix(target, "/")
			if !strings.HasPrefix(part, "xl/") {
				part = path.Join("xl", part)
			}
			out = append(out, sheetRef{name: attr(t, "name"), part: part})
		}
		return true
	})
	return out, err
}

func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// sheetRows writes a worksheet's rows, cells separated by tabs at their columns.
func sheetRows(tb *textBuf, shared []string) func(xml.Token) bool {
	var row []string
	var cellType, cellRef string
	var val strings.Builder
	inVal := false
	return func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "row":
				row = row[:0]
			case "c":
				cellType, cellRef = attr(t, "t"), attr(t, "r")
				val.Reset()
			case "v", "t":
				inVal = true
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "v", "t":
				inVal = false
			case "c":
				v := val.String()
				if cellType == "s" {
					if i, err := strconv.Atoi(v); err == nil && i >= 0 && i < len(shared) {
						v = shared[i]
					}
				}
				if col := columnOf(cellRef); col > len(row) && col < maxSheetColumns {
					for len(row) < col {
						row = append(row, "")
					}
				}
				row = append(row, v)
			case "row":
				for len(row) > 0 && row[len(row)-1] == "" {
					row = row[:len(row)-1]
				}
				if len(row) > 0 {
					return tb.add(strings.Join(row, "\t") + "\n")
				}
			}
		case xml.CharData:
			if inVal {
				val.Write(t)
			}
		}
		return true
	}
}

// columnOf returns the zero-based column of a cell reference ("C7" is 2), or -1.
func columnOf(ref string) int {
	col := 0
	n := 0
	for _, r := range ref {
		if r < 'A' || r > 'Z' {
			break
		}
		col = col*26 + int(r-'A'+1)
		n++
		if n > 3 {
			return -1
		}
	}
	return col - 1
}
