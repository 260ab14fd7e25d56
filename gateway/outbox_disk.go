package gateway

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// errNoRoom is the cause of a StorageError raised before writing.
var errNoRoom = errors.New("free space on the volume is below what the write needs")

// roomLocked checks, before an insert of n payload bytes, that the volume
// has what the insert may need: database pages beyond the free ones inside
// the file, WAL growth up to its bound, and the reserve when it was given
// up. An insert that needs no new disk space is always allowed.
func (o *Outbox) roomLocked(ctx context.Context, n int64) error {
	o.ensureReserveLocked()
	var free int64
	if err := o.db.QueryRowContext(ctx, "PRAGMA freelist_count").Scan(&free); err != nil {
		return &StorageError{Err: fmt.Errorf("free pages: %w", err)}
	}
	grow := int64(0)
	if free*o.pageSize < n+2*o.pageSize {
		grow = n + 2*o.pageSize // the row, a new leaf and an interior page
	}
	var wal int64
	if st, err := os.Stat(o.path + "-wal"); err == nil {
		wal = st.Size()
	}
	// The WAL is reused after each checkpoint: once it has reached its
	// bound it needs no more room.
	need := grow + max(o.walLimit+4*o.pageSize-wal, 0)
	if need == 0 {
		return nil
	}
	if grow > 0 {
		// A database that grows keeps the room: the reserve comes first
		// (and is rebuilt first, ensureReserveLocked, when there is room).
		need += o.reserveWant - o.reserve + 2*reserveMargin
	}
	avail, err := availBytes(filepath.Dir(o.path))
	if err != nil {
		return nil // cannot tell: let SQLite try
	}
	if avail < need {
		return &StorageError{DiskFull: true, Err: fmt.Errorf("%w (%d bytes free, %d needed)", errNoRoom, avail, need)}
	}
	return nil
}

func availBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// isDiskFull reports SQLITE_FULL or ENOSPC.
func isDiskFull(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_FULL {
		return true
	}
	var st *StorageError
	if errors.As(err, &st) && st.DiskFull {
		return true
	}
	return errors.Is(err, syscall.ENOSPC)
}

// reserveMargin is the free space left over when the reserve is rebuilt.
const reserveMargin = 64 << 10

// ensureReserveLocked grows the ballast file to its wanted size when the
// volume has room for it (and some to spare); it is best effort.
func (o *Outbox) ensureReserveLocked() {
	if o.reserve >= o.reserveWant {
		return
	}
	avail, err := availBytes(filepath.Dir(o.path))
	if err != nil || avail < o.reserveWant-o.reserve+reserveMargin {
		return
	}
	f, err := os.OpenFile(o.reservePath, os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	// Zeros written, not a sparse truncate: the blocks must be allocated
	// to be worth anything when they are given back.
	zero := make([]byte, 64<<10)
	size := o.reserve
	for size < o.reserveWant {
		k, err := f.WriteAt(zero[:min(int64(len(zero)), o.reserveWant-size)], size)
		size += int64(k)
		if err != nil {
			break
		}
	}
	if f.Sync() == nil {
		o.reserve = size
	}
}

// releaseReserve truncates the ballast file to give its space to the
// database; it reports whether there was anything to give.
func (o *Outbox) releaseReserve() bool {
	if o.reserve <= 0 {
		return false
	}
	if err := os.Truncate(o.reservePath, 0); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	o.reserve, o.released = 0, true
	return true
}

// Drop adds n records to the drop counter (used by the stop-sampling
// policy for the seconds it did not measure, and for batches the gateway
// could keep neither on disk nor in memory). The count is written at once
// when the disk takes it, otherwise with the next successful write; it
// never fails for lack of space.
func (o *Outbox) Drop(ctx context.Context, n int) error {
	if n <= 0 {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	o.countDropLocked(ctx, n)
	return nil
}

func (o *Outbox) countDropLocked(ctx context.Context, n int) {
	o.dropped += uint64(n)
	o.unsaved += uint64(n)
	_ = o.saveDropsLocked(ctx)
}

// saveDropsLocked writes the drop counts held in memory.
func (o *Outbox) saveDropsLocked(ctx context.Context) error {
	if o.unsaved == 0 {
		return nil
	}
	if _, err := o.db.ExecContext(ctx, `UPDATE meta SET v = v + ? WHERE k='dropped'`, int64(o.unsaved)); err != nil {
		return err
	}
	o.unsaved = 0
	return nil
}
