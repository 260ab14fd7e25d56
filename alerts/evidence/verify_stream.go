package evidence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"hash"
	"io"
	"runtime"
	"slices"
	"sync"
)

// streamSegment is how many bytes of data/batches.txt (whole lines) go to
// a signature worker at a time: about verifyChunk batches of 10 records.
const streamSegment = 1 << 20

// prepare runs before the payload is hashed, names being the files that
// will be: it reads the gateway keys and, when data/batches.txt is among
// them, starts checking its signatures while it is read, so that both
// processors are busy the whole time.
func (b *bagFiles) prepare(names []string) {
	b.prepared = true
	b.gwKeys, b.gwKeysOK = b.gatewayKeys(slices.Contains(names, "data/keys/gateways.json"))
	if b.gwKeysOK && slices.Contains(names, "data/batches.txt") {
		b.stream = newBatchStream(b, b.gwKeys)
	}
}

// hashPayload hashes a payload file and returns its size and SHA-256;
// the files Verify checks the contents of are kept (data/batches.txt also
// fed to the signature workers as it is read).
func (b *bagFiles) hashPayload(name string) (int64, string, error) {
	var feed func([]byte)
	if name == "data/batches.txt" && b.stream != nil {
		defer b.stream.close()
		feed = b.stream.feed
	}
	rc, err := b.files[name]()
	if err != nil {
		return 0, "", err
	}
	defer rc.Close()
	h := sha256.New()
	left := maxTotal - b.total.Load()
	if !keptFiles[name] {
		c, err := io.Copy(h, io.LimitReader(rc, left))
		b.total.Add(c)
		return c, hex.EncodeToString(h.Sum(nil)), err
	}
	buf, err := readKept(rc, min(maxKeptFile, left), b.sizes[name], h, feed)
	b.total.Add(int64(len(buf)))
	if err != nil {
		return int64(len(buf)), "", err
	}
	b.mu.Lock()
	b.kept[name] = buf
	b.mu.Unlock()
	return int64(len(buf)), hex.EncodeToString(h.Sum(nil)), nil
}

// readKept reads r (at most limit bytes) into one buffer sized by hint,
// hashing each piece as it comes and handing feed (when not nil) the
// bytes read so far. The bytes feed was given are never written again
// (a growing buffer is copied), so it may keep slices of them.
func readKept(r io.Reader, limit, hint int64, h hash.Hash, feed func([]byte)) ([]byte, error) {
	buf := make([]byte, 0, min(max(hint, 0), limit)+bytes.MinRead)
	r = io.LimitReader(r, limit)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		if n > 0 {
			h.Write(buf[len(buf) : len(buf)+n])
			buf = buf[:len(buf)+n]
			if feed != nil {
				feed(buf)
			}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// batchStream checks the signed batches of data/batches.txt in segments
// of whole lines while the file is still being inflated and hashed: the
// reader feeds it, one worker per processor parses and verifies.
type batchStream struct {
	b    *bagFiles
	keys map[string]gwKey
	segs chan *streamSeg
	wg   sync.WaitGroup

	// The reader's side.
	buf  []byte       // the bytes read so far
	sent int          // how many of them went into segments
	line int          // lines in the segments sent
	all  []*streamSeg // the segments, in order
	mu   sync.Mutex   // panics
	pans []any
}

// streamSeg is a run of whole lines of data/batches.txt, the first being
// line first, with what checking them found.
type streamSeg struct {
	first    int
	data     []byte
	batches  []signedBatch
	verdicts []batchVerdict
}

func newBatchStream(b *bagFiles, keys map[string]gwKey) *batchStream {
	s := &batchStream{b: b, keys: keys, segs: make(chan *streamSeg, 64)}
	for range runtime.GOMAXPROCS(0) {
		s.wg.Go(s.work)
	}
	return s
}

// feed takes the bytes read so far and sends the whole lines past the
// last segment when there are enough of them.
func (s *batchStream) feed(buf []byte) {
	s.buf = buf
	if len(buf)-s.sent < streamSegment {
		return
	}
	if k := bytes.LastIndexByte(buf[s.sent:], '\n'); k >= 0 {
		s.send(buf[s.sent : s.sent+k+1])
	}
}

func (s *batchStream) send(data []byte) {
	seg := &streamSeg{first: s.line + 1, data: data}
	s.line += bytes.Count(data, []byte("\n"))
	s.sent += len(data)
	s.all = append(s.all, seg)
	s.segs <- seg
}

// close sends what is left: the file is read (or its reading failed).
func (s *batchStream) close() {
	if s.sent < len(s.buf) {
		s.send(s.buf[s.sent:])
	}
	close(s.segs)
}

// work checks segments until there are no more. A panic is a problem of
// the report, and the worker goes on with the next segment.
func (s *batchStream) work() {
	c := batchChecker{keys: s.keys, kind: batchKind}
	for seg := range s.segs {
		func() {
			defer func() {
				if p := recover(); p != nil {
					s.mu.Lock()
					s.pans = append(s.pans, p)
					s.mu.Unlock()
				}
			}()
			lines := splitLines(seg.data, seg.first)
			seg.batches, seg.verdicts = make([]signedBatch, len(lines)), make([]batchVerdict, len(lines))
			for start := 0; start < len(lines); start += verifyChunk {
				end := min(start+verifyChunk, len(lines))
				c.parse(lines[start:end], seg.batches[start:end], seg.verdicts[start:end])
				c.verify(seg.batches[start:end], seg.verdicts[start:end])
			}
		}()
	}
}

// wait returns every segment's batches and verdicts, in line order, once
// the workers are done.
func (s *batchStream) wait() []checkedPart {
	s.wg.Wait()
	for _, p := range s.pans {
		s.b.rep.add("erro interno ao conferir o pacote: %v", p)
	}
	parts := make([]checkedPart, len(s.all))
	for i, seg := range s.all {
		parts[i] = checkedPart{seg.batches, seg.verdicts}
	}
	return parts
}
