package attach

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/agentengine/agentengine/host"
)

// ForHost adapts the store to host.Config.Attachments.
func (s *Store) ForHost() host.Attachments { return hostAdapter{s} }

type hostAdapter struct{ s *Store }

func (a hostAdapter) Put(ctx context.Context, owner, name, declaredMime string, r io.Reader) (host.AttachmentMeta, error) {
	m, err := a.s.PutAs(ctx, owner, name, declaredMime, r, 0)
	if err != nil {
		return host.AttachmentMeta{}, hostErr(err, name, a.s.cfg.MaxUploadBytes)
	}
	return hostMeta(m), nil
}

func (a hostAdapter) IsRef(uri string) bool { return IsRef(uri) }

func (a hostAdapter) Stat(_ context.Context, uri string) (host.AttachmentMeta, error) {
	id, err := ParseRef(uri)
	if err != nil {
		return host.AttachmentMeta{}, hostErr(err, uri, 0)
	}
	m, err := a.s.Stat(id)
	if err != nil {
		return host.AttachmentMeta{}, hostErr(err, uri, 0)
	}
	return hostMeta(m), nil
}

func (a hostAdapter) Result(ctx context.Context, uri string) (host.AttachmentResult, error) {
	r, err := a.s.ResultRef(ctx, uri)
	if err != nil {
		return host.AttachmentResult{}, hostErr(err, uri, 0)
	}
	return host.AttachmentResult(r), nil
}

func hostMeta(m Meta) host.AttachmentMeta {
	return host.AttachmentMeta{URI: m.URI(), Name: m.Name, MimeType: m.MimeType, Kind: m.Kind, SizeBytes: m.SizeBytes, Owner: m.Owner}
}

// hostErr turns the store's client errors into host.ClientErrors; what is the
// server's fault stays an ordinary (logged, not shown) error.
func hostErr(err error, subject string, limit int64) error {
	ce := &host.ClientError{Kind: host.ErrInvalidInput, Param: "input", Err: err}
	switch {
	case errors.Is(err, ErrInvalidRef):
		ce.Message = fmt.Sprintf("%.80q is not a valid upload reference (ksadk-upload:// followed by 32 lowercase hex characters)", subject)
	case errors.Is(err, ErrNotFound):
		ce.Kind, ce.Message = host.ErrNotFound, fmt.Sprintf("upload %.80q not found", subject)
	case errors.Is(err, ErrTooLarge):
		ce.Message = fmt.Sprintf("file %.80q is larger than the %d MiB upload limit", subject, limit>>20)
	default:
		return err
	}
	return ce
}
