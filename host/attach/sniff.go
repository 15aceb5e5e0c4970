package attach

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"net/http"
	"path"
	"strings"
)

// Kinds of attachments.
const (
	KindImage    = "image"
	KindText     = "text"
	KindDocument = "document"
	KindArchive  = "archive"
	KindBinary   = "binary"
)

// Media types the sniffer assigns beyond net/http's.
const (
	mimePDF  = "application/pdf"
	mimeZip  = "application/zip"
	mimeDocx = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
	mimeXlsx = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	mimePptx = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
	mimeHTML = "text/html"
	mimeBin  = "application/octet-stream"
)

// sniffLen is how much of a file's head the sniffer reads.
const sniffLen = 1024

// textSubtype refines plain text by extension. Only text labels are chosen this way:
// a name or declared type never turns binary content into text or an image.
func textSubtype(ext string) string {
	switch strings.ToLower(ext) {
	case ".md", ".markdown":
		return "text/markdown"
	case ".csv":
		return "text/csv"
	case ".tsv":
		return "text/tab-separated-values"
	case ".json":
		return "application/json"
	case ".ndjson":
		return "application/x-ndjson"
	case ".yaml", ".yml":
		return "application/yaml"
	case ".xml":
		return "text/xml"
	case ".txt", ".log":
		return "text/plain"
	}
	return ""
}

// sniff decides an upload's media type and kind from its content. name and declared
// are advisory: they only pick among text subtypes.
func sniff(head []byte, f io.ReaderAt, size int64, name, declared string) (mimeType, kind string) {
	if i := bytes.Index(head, []byte("%PDF-")); i >= 0 && i < sniffLen {
		return mimePDF, KindDocument
	}
	if bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")) {
		return sniffZip(f, size)
	}
	detected := http.DetectContentType(head)
	base, _, _ := strings.Cut(detected, ";")
	switch {
	case strings.HasPrefix(base, "image/"):
		return base, KindImage
	case base == mimeHTML:
		return mimeHTML, KindDocument
	case base == "text/plain" || base == "text/xml":
		if sub := textSubtype(path.Ext(name)); sub != "" {
			return sub, KindText
		}
		if d, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(declared)), ";"); isTextLabel(d) {
			return d, KindText
		}
		return base, KindText
	}
	return base, KindBinary
}

func isTextLabel(m string) bool {
	switch m {
	case "text/markdown", "text/csv", "text/tab-separated-values", "application/json",
		"application/x-ndjson", "application/yaml", "text/xml", "text/plain":
		return true
	}
	return false
}

// sniffZip tells office documents from other zip archives by their part names. The
// central directory is read only when the entry count is sane.
func sniffZip(f io.ReaderAt, size int64) (string, string) {
	if n, ok := zipEntryCount(f, size); !ok || n > maxZipEntries {
		return mimeZip, KindArchive
	}
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return mimeZip, KindArchive
	}
	for _, zf := range zr.File {
		switch zf.Name {
		case "word/document.xml":
			return mimeDocx, KindDocument
		case "xl/workbook.xml":
			return mimeXlsx, KindDocument
		case "ppt/presentation.xml":
			return mimePptx, KindDocument
		}
	}
	return mimeZip, KindArchive
}

// zipEntryCount reads the entry count from the end-of-central-directory record, before
// archive/zip allocates a File per entry (a zip bomb can claim millions). Zip64
// archives (count 0xFFFF) report ok=false: no office file or legitimate upload within
// the size limit needs them.
func zipEntryCount(f io.ReaderAt, size int64) (int, bool) {
	const eocdLen, maxComment = 22, 0xFFFF
	n := int64(eocdLen + maxComment)
	if n > size {
		n = size
	}
	if n < eocdLen {
		return 0, false
	}
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, size-n); err != nil && err != io.EOF {
		return 0, false
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	if i < 0 || len(buf)-i < eocdLen {
		return 0, false
	}
	count := binary.LittleEndian.Uint16(buf[i+10:])
	if count == 0xFFFF {
		return 0, false
	}
	return int(count), true
}
