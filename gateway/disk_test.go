package gateway

import (
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/sossego/sossego/internal/testenv"
)

// fill creates (or grows) a file in dir until the file system has no room
// left, and returns its path.
func fill(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4096)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill: %v", err)
			}
			return path
		}
	}
}

func freeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	n, err := availBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// payload is an incompressible stand-in for a sealed batch of size bytes.
func payload(seq uint64, size int) []byte {
	r := rand.New(rand.NewPCG(seq, 9))
	b := make([]byte, size)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestOutboxFullDiskRealFS fills a real 2 MiB file system with batches, then
// to the last byte with another file, and checks that a full disk is a
// state: inserts are refused with a *StorageError and nothing else breaks,
// drop counts are kept and written later, acks (deletes) still succeed
// thanks to the reserve, the outbox reopens on the full disk (a restart),
// and once room comes back it stores again.
func TestOutboxFullDiskRealFS(t *testing.T) {
	ctx := context.Background()
	dir := testenv.SmallFS(t, "2m")
	path := filepath.Join(dir, "outbox.db")
	opts := OutboxOptions{CapacityRecords: 1_000_000, Reserve: 256 << 10}
	o, err := OpenOutboxOptions(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(path + ".reserve"); err != nil || st.Size() != 256<<10 {
		t.Fatalf("reserve file: %v %v", st, err)
	}
	put := func(o *Outbox, seq uint64) (uint64, error) {
		return o.Store(ctx, t0, Put{Topic: "t", Records: 10, Seal: func(s uint64) ([]byte, error) { return payload(s, 2500), nil }})
	}
	// 1. The outbox fills the volume until the free space is below what an
	// insert may need: refused, as a state.
	stored := 0
	for {
		_, err := put(o, uint64(stored+1))
		if err != nil {
			var se *StorageError
			if !errors.As(err, &se) || !errors.Is(err, ErrStorage) || !se.DiskFull {
				t.Fatalf("after %d batches: %v, want a disk-full *StorageError", stored, err)
			}
			break
		}
		stored++
		if stored > 2000 {
			t.Fatal("a 2 MiB volume took 2000 batches of 2.5 kB")
		}
	}
	if stored < 200 {
		t.Fatalf("only %d batches of 2.5 kB fit in 2 MiB", stored)
	}
	st := o.Stats()
	if !st.Full || st.StorageError == "" || st.Pending != 10*stored {
		t.Fatalf("stats on a full disk %+v (stored %d)", st, stored)
	}
	t.Logf("%d batches stored before the disk refused (%d bytes free)", stored, freeBytes(t, dir))

	// 2. Another file takes the rest, to the last byte.
	filler := fill(t, dir, "filler")
	if n := freeBytes(t, dir); n != 0 {
		t.Fatalf("%d bytes still free", n)
	}
	if _, err := put(o, 0); !errors.Is(err, ErrStorage) {
		t.Fatalf("insert on a 100%% full disk: %v", err)
	}
	if err := o.Drop(ctx, 7); err != nil {
		t.Fatalf("Drop on a full disk: %v", err)
	}
	if st := o.Stats(); st.Dropped != 7 {
		t.Fatalf("dropped %d, want 7 (counted in memory)", st.Dropped)
	}

	// 3. A restart on the full disk: the open outbox closes (its drop count
	// written from the reserve) and a new one opens.
	if err := o.Close(); err != nil {
		t.Fatal(err)
	}
	o, err = OpenOutboxOptions(path, opts)
	if err != nil {
		t.Fatalf("reopen on a full disk: %v", err)
	}
	defer func() { o.Close() }()
	if st := o.Stats(); st.Dropped != 7 || st.Pending != 10*stored || o.LastSeq() != uint64(stored) {
		t.Fatalf("after reopening on a full disk: %+v, last seq %d", st, o.LastSeq())
	}

	// 4. Acks free the outbox although the disk is full.
	half := uint64(stored / 2)
	if n, err := o.Ack(ctx, half); err != nil || n != int(half) {
		t.Fatalf("Ack(%d) on a full disk = %d, %v", half, n, err)
	}
	if n, err := o.Ack(ctx, uint64(stored)); err != nil || n != stored-int(half) {
		t.Fatalf("second Ack on a full disk = %d, %v", n, err)
	}
	if st := o.Stats(); st.Pending != 0 {
		t.Fatalf("pending %d after acking everything", st.Pending)
	}

	// 5. Room comes back: inserts succeed, the alarm clears, the drop count
	// is durable, the sequence goes on, and the reserve is rebuilt.
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	seq, err := put(o, 0)
	if err != nil || seq != uint64(stored+1) {
		t.Fatalf("insert after room came back = %d, %v (want seq %d)", seq, err, stored+1)
	}
	if st := o.Stats(); st.Full || st.StorageError != "" || st.Pending != 10 {
		t.Fatalf("stats after recovery %+v", st)
	}
	if rs, err := os.Stat(path + ".reserve"); err != nil || rs.Size() != 256<<10 {
		t.Fatalf("reserve not rebuilt: %v %v", rs, err)
	}
	o.Close()
	o, err = OpenOutboxOptions(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	if st := o.Stats(); st.Dropped != 7 || st.Pending != 10 {
		t.Fatalf("after recovery and reopen %+v", st)
	}
}

// TestOutboxWALStaysBounded checks on a real small volume that the WAL does
// not grow with the outbox: it is checkpointed at its bound.
func TestOutboxWALStaysBounded(t *testing.T) {
	ctx := context.Background()
	dir := testenv.SmallFS(t, "8m")
	path := filepath.Join(dir, "outbox.db")
	o, err := OpenOutboxOptions(path, OutboxOptions{CapacityRecords: 1_000_000, Reserve: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	for i := range 1000 {
		if _, err := o.Store(ctx, t0, Put{Topic: "t", Records: 10, Seal: func(s uint64) ([]byte, error) { return payload(s, 2500), nil }}); err != nil {
			t.Fatalf("batch %d: %v", i, err)
		}
		if i%100 == 99 {
			if _, err := o.Ack(ctx, o.LastSeq()-50); err != nil {
				t.Fatal(err)
			}
		}
	}
	st, err := os.Stat(path + "-wal")
	if err != nil {
		t.Fatal(err)
	}
	if limit := o.walLimit + 32*o.pageSize; st.Size() > limit {
		t.Errorf("WAL is %d bytes after 1000 batches; bound %d", st.Size(), limit)
	}
	if _, err := os.Stat(path + ".reserve"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Reserve -1 made a reserve file: %v", err)
	}
	t.Logf("WAL %d bytes (bound %d), db pages of %d bytes", st.Size(), o.walLimit, o.pageSize)
}
