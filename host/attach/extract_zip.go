package attach

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path"
	"strings"
)

// Bounds on reading a zip archive's contents (KsADK's): entries listed and read, bytes
// read from one entry and from all of them.
const (
	archiveMaxEntries    = 50
	archiveMaxEntryBytes = 3 << 20
	archiveMaxBytes      = 12 << 20
)

// extractZip lists an archive and reads its text entries. Entries are never written
// anywhere, so unsafe names are only reported, not a risk; nested archives and
// executables are not opened.
func extractZip(ctx context.Context, f io.ReaderAt, size int64, tb *textBuf) extracted {
	z, err := openZip(f, size, zipLimits{maxZipEntries, archiveMaxEntryBytes, archiveMaxBytes})
	if err != nil {
		return failed("zip", "%v", err)
	}
	var warnings []string
	listed := 0
	tb.add("Archive entries:\n")
	for _, zf := range z.order {
		if zf.FileInfo().IsDir() {
			continue
		}
		if listed == archiveMaxEntries {
			warnings = append(warnings, fmt.Sprintf("only the first %d entries were read", archiveMaxEntries))
			break
		}
		listed++
		tb.add(fmt.Sprintf("- %s (%d bytes)\n", printable(zf.Name), zf.UncompressedSize64))
	}
	read := 0
	for _, zf := range z.order {
		if read == archiveMaxEntries || tb.full() {
			break
		}
		if ctx.Err() != nil {
			return failed("zip", "extraction was stopped: %v", ctx.Err())
		}
		name := zf.Name
		if zf.FileInfo().IsDir() {
			continue
		}
		read++
		switch {
		case unsafeEntryName(name):
			warnings = append(warnings, fmt.Sprintf("entry %q has an unsafe path and was not read", printable(name)))
			continue
		case nestedOrExecutable(name):
			warnings = append(warnings, fmt.Sprintf("entry %q is an archive or executable and was not read", printable(name)))
			continue
		case !textEntry(name):
			continue
		}
		rc, err := z.open(zf, z.part)
		if err != nil {
			warnings = append(warnings, fmt.Sprintf("entry %q could not be read", printable(name)))
			continue
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil && len(b) == 0 {
			warnings = append(warnings, fmt.Sprintf("entry %q could not be read: %v", printable(name), err))
			continue
		}
		if ct := http.DetectContentType(b); !strings.HasPrefix(ct, "text/") {
			continue
		}
		text := decodeText(b)
		if strings.HasSuffix(strings.ToLower(name), ".html") || strings.HasSuffix(strings.ToLower(name), ".htm") {
			sub := newTextBuf(tb.max)
			extractHTML(ctx, strings.NewReader(text), int64(len(text)), sub)
			text = sub.String()
		}
		tb.add(fmt.Sprintf("\n## %s\n%s\n", printable(name), text))
	}
	e := ok("zip", tb, warnings...)
	if len(warnings) > 0 {
		e.Status = StatusPartial
	}
	return e
}

func unsafeEntryName(name string) bool {
	if name == "" || strings.ContainsAny(name, "\\\x00") || strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':') {
		return true
	}
	for _, seg := range strings.Split(name, "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

func nestedOrExecutable(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".zip", ".gz", ".tgz", ".tar", ".bz2", ".xz", ".7z", ".rar", ".jar", ".war",
		".exe", ".dll", ".so", ".dylib", ".bin", ".msi", ".com", ".bat", ".cmd", ".ps1", ".sh", ".apk":
		return true
	}
	return false
}

func textEntry(name string) bool {
	ext := strings.ToLower(path.Ext(name))
	return textSubtype(ext) != "" || ext == ".html" || ext == ".htm"
}

// printable makes an entry name safe to show: control characters become '?'.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
