package workspace

import (
	"archive/zip"
	"context"
	"io"
	"io/fs"
	"path"
	"strings"
)

// ExportZip writes a zip of the file or directory at a client path to out. Only
// regular files are included: symlinks are skipped wherever they point, so an export
// never carries anything from outside the workspace.
func (w *Workspace) ExportZip(ctx context.Context, p string, out io.Writer) error {
	if w.users != nil {
		return errPerUser
	}
	rel, err := Clean(p)
	if err != nil {
		return err
	}
	fi, err := w.root.Lstat(rel)
	if err != nil {
		return mapErr(err)
	}
	zw := zip.NewWriter(out)
	if fi.Mode().IsRegular() {
		if err := w.addFile(zw, rel, path.Base(rel), fi); err != nil {
			return err
		}
		return zw.Close()
	}
	if !fi.IsDir() {
		return notAFile(rel)
	}
	err = fs.WalkDir(w.root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == rel || strings.HasPrefix(d.Name(), tmpPrefix) || !d.Type().IsRegular() {
			return nil // directories are implied by their files; links and devices are skipped
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		name := p
		if rel != "." {
			name = strings.TrimPrefix(p, rel+"/")
		}
		return w.addFile(zw, p, name, info)
	})
	if err != nil {
		return mapErr(err)
	}
	return zw.Close()
}

func (w *Workspace) addFile(zw *zip.Writer, rel, name string, fi fs.FileInfo) error {
	f, err := openRegular(w.root, rel)
	if err != nil {
		return err
	}
	defer f.Close()
	hdr, err := zip.FileInfoHeader(fi)
	if err != nil {
		return err
	}
	hdr.Name, hdr.Method, hdr.Modified = name, zip.Deflate, fi.ModTime()
	dst, err := zw.CreateHeader(hdr)
	if err != nil {
		return err
	}
	_, err = io.Copy(dst, f)
	return err
}
