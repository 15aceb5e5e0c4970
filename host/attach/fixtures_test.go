package attach

import (
	"archive/zip"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"sort"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// makePDF writes a one-page PDF showing text, with a correct xref table.
func makePDF(text string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	content := fmt.Sprintf("BT /F1 24 Tf 72 700 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
	}
	var offs []int
	for i, o := range objs {
		offs = append(offs, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// makeZip builds a zip archive of name → content (in name order).
func makeZip(t testing.TB, files map[string]string) []byte {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, n := range names {
		w, err := zw.Create(n)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(files[n])); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

const wNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`

func makeDocx(t testing.TB, paras ...string) []byte {
	var body string
	for _, p := range paras {
		body += `<w:p><w:r><w:t>` + p + `</w:t></w:r></w:p>`
	}
	return makeZip(t, map[string]string{
		"[Content_Types].xml": `<Types/>`,
		"word/document.xml":   `<?xml version="1.0"?><w:document ` + wNS + `><w:body>` + body + `</w:body></w:document>`,
	})
}

func makeXlsx(t testing.TB) []byte {
	const ns = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"`
	return makeZip(t, map[string]string{
		"[Content_Types].xml":        `<Types/>`,
		"xl/workbook.xml":            `<workbook ` + ns + `><sheets><sheet name="Budget" sheetId="1" r:id="rId1"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels": `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>`,
		"xl/sharedStrings.xml":       `<sst ` + ns + `><si><t>Item</t></si><si><t>Cost</t></si><si><r><t>Ser</t></r><r><t>vers</t></r></si></sst>`,
		"xl/worksheets/sheet1.xml": `<worksheet ` + ns + `><sheetData>` +
			`<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>` +
			`<row r="2"><c r="A2" t="s"><v>2</v></c><c r="C2"><v>1200</v></c></row>` +
			`<row r="3"><c r="A3" t="inlineStr"><is><t>Total</t></is></c></row>` +
			`</sheetData></worksheet>`,
	})
}

func makePptx(t testing.TB) []byte {
	const ns = `xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="http://schemas.openxmlformats.org/presentationml/2006/main"`
	slide := func(text string) string {
		return `<p:sld ` + ns + `><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>` + text + `</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`
	}
	return makeZip(t, map[string]string{
		"ppt/presentation.xml":   `<p:presentation ` + ns + `/>`,
		"ppt/slides/slide1.xml":  slide("Intro slide"),
		"ppt/slides/slide2.xml":  slide("Second slide"),
		"ppt/slides/slide10.xml": slide("Tenth slide"),
	})
}

// renderPNG draws text in black on white, scaled up so that OCR can read the small
// bitmap font.
func renderPNG(t testing.TB, text string) []byte {
	t.Helper()
	const scale = 5
	w, h := 7*len(text)+20, 30
	small := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(small, small.Bounds(), image.White, image.Point{}, draw.Src)
	d := font.Drawer{Dst: small, Src: image.NewUniform(color.Black), Face: basicfont.Face7x13, Dot: fixed.P(10, 20)}
	d.DrawString(text)
	big := image.NewGray(image.Rect(0, 0, w*scale, h*scale))
	for y := 0; y < h*scale; y++ {
		for x := 0; x < w*scale; x++ {
			big.Set(x, y, small.At(x/scale, y/scale))
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, big); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
