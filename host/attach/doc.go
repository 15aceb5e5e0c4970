// Package attach stores uploaded files and extracts their text for agents.
//
// Uploads live under one directory (by default <project>/.agentengine/ui/files, mode
// 0700) as <id> plus a sidecar <id>.meta.json, where id is 32 lowercase hex characters
// from crypto/rand. Clients name an upload only as ksadk-upload://<id>; the id is
// validated before any file system call, and every call goes through an os.Root, so
// no client input ever becomes a path. Put streams to a temporary file and renames it
// into place: a rejected upload (over the limit, cut short) leaves nothing behind.
//
// The content decides the kind (image, text, document, archive, binary); the name and
// declared type only choose among text subtypes. Extraction runs in a bounded worker
// pool, off the request path: Put schedules it and returns, Result waits for it.
// Results are cached on disk by content hash (results that depend on the machine, such
// as "tesseract is not installed", are not cached). Extractors: text (UTF-8 with
// replacement, UTF-16 with a BOM), HTML (x/net/html, scripts and styles dropped), PDF
// (github.com/ledongthuc/pdf), docx/xlsx/pptx and zip (archive/zip + encoding/xml,
// bounded in entries and uncompressed bytes), images (the tesseract binary when it is
// on PATH). Every extractor's panic becomes a failed result with a warning.
//
// The PDF parser is fed untrusted bytes and can loop or allocate without bound on
// crafted files. The page tree is walked with bounds and absurd object counts are
// refused up front, and with Config.IsolatePDF the parser runs in a child process
// (this executable, which must call RunWorkerIfRequested first in main) under a
// memory limit and the extraction timeout, so a hostile PDF cannot take the host down.
//
// ForHost adapts a Store to host.Config.Attachments: the runtime then stores a turn's
// inline files, resolves ksadk-upload:// references, waits for the text and hands it
// to the runner in attachment_results; the input text itself stays as the user typed
// it (as in KsADK: runners and their hooks append attachment text themselves).
package attach
