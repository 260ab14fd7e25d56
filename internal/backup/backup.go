// Package backup copies the central service's data folder while the service
// runs: every SQLite database as a consistent snapshot (internal/sqlitedb's
// Snapshot, checked after it is written), every other file as it is (the
// evidence signing key and its public history, the register, the exported
// bags' ledger, the outgoing mail spool), and a SHA256SUMS that
// `sha256sum -c` checks. The copy is written into a hidden folder beside
// the destination and renamed into place only when it is whole, so a copy
// that failed (a full disk, Ctrl-C) never looks like a backup.
//
// Its errors are in pt-BR: they are the message the command prints.
//
// Overview of its parts: `sossego backup`'s engine: the data folder copied
// while the service runs — each SQLite file found by its header as an
// `internal/sqlitedb.Snapshot`, the other files as they are with their mode
// (the evidence key, its history, the bags' ledger, the register), SQLite's
// side files, reserves and temporary files left out and listed, a
// `SHA256SUMS`; written into a hidden folder beside the destination and
// renamed only when whole; errors in pt-BR; docs/operations.md.
package backup

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/sossego/sossego/internal/sqlitedb"
)

// SumsFile is the checksum list written at the top of a backup.
const SumsFile = "SHA256SUMS"

// sqliteHeader opens every SQLite database file (the file format's magic).
var sqliteHeader = []byte("SQLite format 3\x00")

// Skipped is a file of the data folder the backup leaves out, and why.
type Skipped struct {
	Path   string // relative to the data folder
	Reason string // pt-BR
}

// Summary says what a backup holds.
type Summary struct {
	Dir       string    // the backup folder
	Databases []string  // relative paths of the SQLite snapshots
	Files     []string  // relative paths of the files copied as they are
	Bytes     int64     // total size of what was written, SHA256SUMS aside
	Skipped   []Skipped // what was left out, with the reason
}

// Run copies dataDir into dest, which must not exist yet (or be an empty
// folder) and must lie outside dataDir.
func Run(ctx context.Context, dataDir, dest string) (*Summary, error) {
	src, err := filepath.Abs(dataDir)
	if err != nil {
		return nil, fmt.Errorf("pasta de dados %q: %w", dataDir, err)
	}
	dst, err := filepath.Abs(dest)
	if err != nil {
		return nil, fmt.Errorf("destino %q: %w", dest, err)
	}
	if err := checkPlaces(src, dst); err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".parcial-")
	if err != nil {
		return nil, fmt.Errorf("não foi possível criar a cópia ao lado de %q: %w", dst, err)
	}
	sum, err := copyTree(ctx, src, tmp)
	if err == nil {
		err = writeSums(tmp, sum)
	}
	if err == nil {
		err = syncDir(tmp)
	}
	if err == nil {
		os.Remove(dst) // an empty folder checkPlaces accepted
		if err = os.Rename(tmp, dst); err != nil {
			err = fmt.Errorf("não foi possível dar à cópia o nome %q: %w", dst, err)
		}
	}
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	if err := syncDir(filepath.Dir(dst)); err != nil {
		return nil, err
	}
	sum.Dir = dst
	return sum, nil
}

// checkPlaces refuses a data folder that is not one, and a destination
// that holds something or lies inside the data folder (the copy would copy
// itself).
func checkPlaces(src, dst string) error {
	st, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("pasta de dados: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("pasta de dados %q não é uma pasta", src)
	}
	if inside(dst, src) || inside(resolved(dst), resolved(src)) {
		return fmt.Errorf("o destino %q está dentro da pasta de dados %q: escolha uma pasta fora dela (de preferência em outro disco)", dst, src)
	}
	if st, err := os.Stat(dst); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("o destino %q já existe e não é uma pasta: escolha um nome novo", dst)
		}
		ents, err := os.ReadDir(dst)
		if err != nil {
			return fmt.Errorf("destino: %w", err)
		}
		if len(ents) > 0 {
			return fmt.Errorf("o destino %q já existe e não está vazio: escolha um nome novo (uma cópia nunca é gravada sobre outra)", dst)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("destino: %w", err)
	}
	return nil
}

// inside reports whether p is dir or lies under it.
func inside(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}

// resolved is p with its symbolic links followed, as far as the path
// exists: the part that does not exist yet is kept as written.
func resolved(p string) string {
	rest := ""
	for {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(r, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// copyTree walks src and writes its copy under tmp.
func copyTree(ctx context.Context, src, tmp string) (*Summary, error) {
	sum := &Summary{}
	dirs := []string{tmp}
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if why := skip(d); why != "" {
			sum.Skipped = append(sum.Skipped, Skipped{Path: filepath.ToSlash(rel), Reason: why})
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		out := filepath.Join(tmp, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, out)
			return os.Mkdir(out, info.Mode().Perm()|0o700)
		}
		db, err := isSQLite(p)
		if err != nil {
			return err
		}
		if db {
			if err := sqlitedb.Snapshot(ctx, p, out); err != nil {
				return dbError(rel, err)
			}
			if err := os.Chmod(out, info.Mode().Perm()); err != nil {
				return err
			}
			sum.Databases = append(sum.Databases, filepath.ToSlash(rel))
		} else {
			if err := copyFile(p, out, info.Mode().Perm()); err != nil {
				return fmt.Errorf("arquivo %s: %w", rel, err)
			}
			sum.Files = append(sum.Files, filepath.ToSlash(rel))
		}
		st, err := os.Stat(out)
		if err != nil {
			return err
		}
		sum.Bytes += st.Size()
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(sum.Databases)+len(sum.Files) == 0 {
		return nil, fmt.Errorf("a pasta de dados %q não tem nada a copiar: é a pasta do serviço central (--data-dir)?", src)
	}
	for _, d := range dirs[1:] {
		if err := syncDir(d); err != nil {
			return nil, err
		}
	}
	return sum, nil
}

// dbError says why the database rel could not be copied.
func dbError(rel string, err error) error {
	var d *sqlitedb.DamagedError
	if errors.As(err, &d) {
		return fmt.Errorf("o banco %s está danificado e não pôde ser copiado (SQLite: %q): "+
			"restaure-o de uma cópia anterior; as cópias anteriores continuam valendo", rel, d.Detail)
	}
	return fmt.Errorf("banco %s: %w", rel, err)
}

// skip says why an entry of the data folder stays out of the copy ("" to
// copy it): SQLite's own side files, which the snapshot already reads
// through, the disk-full reserve, and temporary files.
func skip(d fs.DirEntry) string {
	name := d.Name()
	switch {
	case strings.HasSuffix(name, "-wal"), strings.HasSuffix(name, "-shm"), strings.HasSuffix(name, "-journal"):
		return "arquivo auxiliar do SQLite (o conteúdo entra na cópia do banco)"
	case strings.HasSuffix(name, ".reserve"):
		return "reserva de espaço para disco cheio (recriada ao iniciar)"
	case strings.HasPrefix(name, "."):
		return "arquivo temporário"
	case d.Type()&fs.ModeSymlink != 0:
		return "link simbólico (copie o destino dele à parte)"
	case !d.IsDir() && !d.Type().IsRegular():
		return "não é um arquivo comum"
	}
	return ""
}

// isSQLite reports whether the file at p starts with SQLite's header.
func isSQLite(p string) (bool, error) {
	f, err := os.Open(p)
	if err != nil {
		return false, err
	}
	defer f.Close()
	head := make([]byte, len(sqliteHeader))
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	return bytes.Equal(head[:n], sqliteHeader), nil
}

// copyFile copies src to a new file dst with mode perm and syncs it.
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	return writeNew(dst, perm, func(w io.Writer) error {
		_, err := io.Copy(w, in)
		return err
	})
}

// writeNew creates dst (which must not exist) with mode perm, fills it
// with fill and syncs it to the disk.
func writeNew(dst string, perm fs.FileMode, fill func(io.Writer) error) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if err := fill(out); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// writeSums writes SHA256SUMS over every file of the copy, in sha256sum's
// format and in path order, and syncs it.
func writeSums(dir string, sum *Summary) error {
	names := append(append([]string(nil), sum.Databases...), sum.Files...)
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		h, err := hashFile(filepath.Join(dir, filepath.FromSlash(n)))
		if err != nil {
			return fmt.Errorf("arquivo %s: %w", n, err)
		}
		fmt.Fprintf(&b, "%s  %s\n", h, n)
	}
	return writeNew(filepath.Join(dir, SumsFile), 0o600, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String())
		return err
	})
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// syncDir makes a folder's entries durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("não foi possível gravar no disco a pasta %q: %w", dir, err)
	}
	return nil
}
