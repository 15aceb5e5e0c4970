package attach

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/go-hclog"
)

// DefaultMaxUploadBytes is the default per-file upload limit.
const DefaultMaxUploadBytes = 25 << 20

// Config configures a Store.
type Config struct {
	// Dir is the upload directory, created with mode 0700 if missing (see DefaultDir).
	Dir string
	// MaxUploadBytes is the per-file limit (default DefaultMaxUploadBytes).
	MaxUploadBytes int64
	// MaxTextChars caps extracted text (default DefaultMaxTextChars).
	MaxTextChars int
	// Workers is how many extractions run at once (default 2).
	Workers int
	// ExtractTimeout bounds one file's extraction (default 60 s).
	ExtractTimeout time.Duration
	// OCRLanguages is tesseract's -l value ("eng+deu"); empty uses tesseract's default.
	OCRLanguages string
	// IsolatePDF parses PDFs in a child process (this executable, which must call
	// RunWorkerIfRequested first in main) under a memory limit and the timeout.
	IsolatePDF bool
	// LookPath finds external tools (default exec.LookPath); tests replace it.
	LookPath func(file string) (string, error)
	Logger   hclog.Logger
}

// DefaultDir is the upload directory of a project.
func DefaultDir(projectDir string) string {
	return filepath.Join(projectDir, ".agentengine", "ui", "files")
}

// Meta describes a stored upload; it is the sidecar <id>.meta.json.
type Meta struct {
	ID   string `json:"file_id"`
	Name string `json:"display_name"`
	// MimeType and Kind come from the content; DeclaredMimeType is what the client said.
	MimeType         string    `json:"mime_type"`
	DeclaredMimeType string    `json:"declared_mime_type,omitempty"`
	Kind             string    `json:"kind"`
	SizeBytes        int64     `json:"size_bytes"`
	SHA256           string    `json:"sha256"`
	CreatedAt        time.Time `json:"created_at"`
	// Owner is the user the upload belongs to: its uploader, or the user of the turn that
	// carried it inline. Only the owner reads an owned upload back or uses it in a turn;
	// "" (uploads stored before owners were recorded) is anyone's who has the id.
	Owner string `json:"owner,omitempty"`
}

// URI is the upload's reference, ksadk-upload://<id>.
func (m Meta) URI() string { return Ref(m.ID) }

// Store keeps uploads and their extraction results. It is safe for concurrent use.
type Store struct {
	cfg  Config
	root *os.Root
	log  hclog.Logger
	exe  string

	pool *pool
}

// New opens (creating) the upload directory and starts the extraction workers.
func New(cfg Config) (*Store, error) {
	if cfg.Dir == "" {
		return nil, errors.New("attach: an upload directory is required")
	}
	if cfg.MaxUploadBytes <= 0 {
		cfg.MaxUploadBytes = DefaultMaxUploadBytes
	}
	if cfg.MaxTextChars <= 0 {
		cfg.MaxTextChars = DefaultMaxTextChars
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 2
	}
	if cfg.ExtractTimeout <= 0 {
		cfg.ExtractTimeout = 60 * time.Second
	}
	if cfg.LookPath == nil {
		cfg.LookPath = exec.LookPath
	}
	if cfg.Logger == nil {
		cfg.Logger = hclog.NewNullLogger()
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("attach: create upload directory: %w", err)
	}
	root, err := os.OpenRoot(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("attach: open upload directory: %w", err)
	}
	if err := root.MkdirAll(cacheDir, 0o700); err != nil {
		root.Close()
		return nil, fmt.Errorf("attach: create cache directory: %w", err)
	}
	s := &Store{cfg: cfg, root: root, log: cfg.Logger}
	if cfg.IsolatePDF {
		if s.exe, err = os.Executable(); err != nil {
			root.Close()
			return nil, fmt.Errorf("attach: find own executable for the PDF worker: %w", err)
		}
	}
	s.pool = newPool(s, cfg.Workers)
	return s, nil
}

// Close stops the extraction workers (running extractions are cancelled).
func (s *Store) Close() error {
	s.pool.close()
	return s.root.Close()
}

// MaxUploadBytes is the per-file limit.
func (s *Store) MaxUploadBytes() int64 { return s.cfg.MaxUploadBytes }

// Names of files in the upload directory; ids are validated hex, so none can collide
// with these.
const (
	metaSuffix = ".meta.json"
	tmpPrefix  = ".tmp-"
	cacheDir   = "cache"
)

// Put streams r into a new upload of at most limit bytes (the store's limit when
// limit <= 0 or larger). It writes to a temporary file and renames it into place, so
// a rejected or failed upload leaves nothing behind; over the limit it returns
// ErrTooLarge. Extraction is scheduled and runs in the background.
func (s *Store) Put(ctx context.Context, name, declaredMime string, r io.Reader, limit int64) (Meta, error) {
	return s.PutAs(ctx, "", name, declaredMime, r, limit)
}

// PutAs is Put for an upload owned by owner (Meta.Owner).
func (s *Store) PutAs(ctx context.Context, owner, name, declaredMime string, r io.Reader, limit int64) (Meta, error) {
	if limit <= 0 || limit > s.cfg.MaxUploadBytes {
		limit = s.cfg.MaxUploadBytes
	}
	id, err := newID()
	if err != nil {
		return Meta{}, err
	}
	tmp, f, err := s.createTemp(".")
	if err != nil {
		return Meta{}, err
	}
	committed := false
	defer func() {
		if !committed {
			f.Close()
			_ = s.root.Remove(tmp)
		}
	}()
	h := sha256.New()
	var head headBuf
	n, err := io.Copy(io.MultiWriter(f, h, &head), ctxReader{ctx, io.LimitReader(r, limit+1)})
	if err != nil {
		return Meta{}, fmt.Errorf("receive upload: %w", err)
	}
	if n > limit {
		return Meta{}, ErrTooLarge
	}
	mimeType, kind := sniff(head.b, f, n, name, declaredMime)
	m := Meta{
		ID: id, Name: displayName(name), MimeType: mimeType, DeclaredMimeType: clean(declaredMime, 128),
		Kind: kind, SizeBytes: n, SHA256: hex.EncodeToString(h.Sum(nil)), CreatedAt: time.Now().UTC(), Owner: owner,
	}
	if err := f.Close(); err != nil {
		return Meta{}, fmt.Errorf("write upload: %w", err)
	}
	if err := s.root.Rename(tmp, id); err != nil {
		return Meta{}, fmt.Errorf("store upload: %w", err)
	}
	committed = true
	// The sidecar goes last: an upload without one does not exist for Open.
	if err := s.writeJSON(id+metaSuffix, m); err != nil {
		_ = s.root.Remove(id)
		return Meta{}, fmt.Errorf("store upload metadata: %w", err)
	}
	_, _ = s.pool.schedule(ctx, m, false)
	return m, nil
}

// Stat returns an upload's metadata. The id is validated before anything touches the
// file system.
func (s *Store) Stat(id string) (Meta, error) {
	if !ValidID(id) {
		return Meta{}, ErrInvalidRef
	}
	b, err := s.root.ReadFile(id + metaSuffix)
	if errors.Is(err, fs.ErrNotExist) {
		return Meta{}, ErrNotFound
	}
	if err != nil {
		return Meta{}, fmt.Errorf("read upload metadata: %w", err)
	}
	var m Meta
	if err := json.Unmarshal(b, &m); err != nil || m.ID != id {
		return Meta{}, fmt.Errorf("upload %s has corrupt metadata", id)
	}
	return m, nil
}

// Open returns an upload's content and metadata; the caller closes the file.
func (s *Store) Open(id string) (*os.File, Meta, error) {
	m, err := s.Stat(id)
	if err != nil {
		return nil, m, err
	}
	f, err := s.root.Open(id)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, m, ErrNotFound
	}
	if err != nil {
		return nil, m, fmt.Errorf("open upload: %w", err)
	}
	return f, m, nil
}

// OpenRef is Open for a ksadk-upload:// reference.
func (s *Store) OpenRef(ref string) (*os.File, Meta, error) {
	id, err := ParseRef(ref)
	if err != nil {
		return nil, Meta{}, err
	}
	return s.Open(id)
}

// createTemp creates a temporary file in dir (relative to the store's root): next to
// its final name, so the rename is atomic and nothing transient shows among uploads.
func (s *Store) createTemp(dir string) (string, *os.File, error) {
	suffix, err := newID()
	if err != nil {
		return "", nil, err
	}
	name := path.Join(dir, tmpPrefix+suffix)
	f, err := s.root.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("create upload file: %w", err)
	}
	return name, f, nil
}

// writeJSON writes v to name in the store atomically.
func (s *Store) writeJSON(name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp, f, err := s.createTemp(path.Dir(name))
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = s.root.Rename(tmp, name)
	}
	if err != nil {
		_ = s.root.Remove(tmp)
	}
	return err
}

// headBuf keeps the first sniffLen bytes written to it.
type headBuf struct{ b []byte }

func (h *headBuf) Write(p []byte) (int, error) {
	if room := sniffLen - len(h.b); room > 0 {
		h.b = append(h.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// ctxReader stops a copy when ctx ends (a client that stalls mid-upload).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// displayName keeps a client's file name as a label only: its last path element,
// printable, at most 255 bytes. It is never used to build a path.
func displayName(name string) string {
	name = strings.ReplaceAll(name, "\\", "/")
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	name = clean(name, 255)
	if name == "" || name == "." || name == ".." {
		return "upload"
	}
	return name
}

// clean drops control characters and invalid UTF-8 and cuts s to at most n bytes.
func clean(s string, n int) string {
	s = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
	for len(s) > n {
		_, size := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-size]
	}
	return strings.TrimSpace(s)
}

// Delete removes an upload (its sidecar first, so it stops existing at once). Cached
// extraction results stay: they are keyed by content, not by upload.
func (s *Store) Delete(id string) error {
	if !ValidID(id) {
		return ErrInvalidRef
	}
	if err := s.root.Remove(id + metaSuffix); errors.Is(err, fs.ErrNotExist) {
		return ErrNotFound
	} else if err != nil {
		return fmt.Errorf("delete upload metadata: %w", err)
	}
	if err := s.root.Remove(id); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete upload: %w", err)
	}
	return nil
}
