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
// the files Verify checks the contents of are kept, but data/batches.txt,
// when its signatures are checked as it is read, goes to the signature
// workers in recycled buffers instead.
func (b *bagFiles) hashPayload(name string) (int64, string, error) {
	rc, err := b.files[name]()
	if err != nil {
		if name == "data/batches.txt" && b.stream != nil {
			b.stream.close()
		}
		return 0, "", err
	}
	defer rc.Close()
	h := sha256.New()
	left := maxTotal - b.total.Load()
	if name == "data/batches.txt" && b.stream != nil {
		n, err := b.stream.read(rc, min(maxKeptFile, left), h)
		b.total.Add(n)
		if err != nil {
			return n, "", err
		}
		b.mu.Lock()
		b.streamed = true
		b.mu.Unlock()
		return n, hex.EncodeToString(h.Sum(nil)), nil
	}
	if !keptFiles[name] {
		c, err := io.Copy(h, io.LimitReader(rc, left))
		b.total.Add(c)
		return c, hex.EncodeToString(h.Sum(nil)), err
	}
	buf, err := readKept(rc, min(maxKeptFile, left), b.sizes[name], h)
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
// hashing each piece as it comes.
func readKept(r io.Reader, limit, hint int64, h hash.Hash) ([]byte, error) {
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
// reader fills a buffer, sends its whole lines to the workers (one per
// processor), which parse and verify them and hand the buffer back. A
// handful of buffers serve the whole file, however long: the reader waits
// for one when the workers are behind.
type batchStream struct {
	b    *bagFiles
	keys map[string]gwKey
	segs chan *streamSeg
	free chan []byte // buffers the workers are done with
	wg   sync.WaitGroup

	// The reader's side.
	made   int          // buffers made so far (at most streamBuffers)
	line   int          // lines in the segments sent
	all    []*streamSeg // the segments, in order
	closed bool
	mu     sync.Mutex // panics
	pans   []any
}

// streamSeg is a run of whole lines of data/batches.txt, the first being
// line first, with what checking them found. buf is the buffer data is
// in, given back when the segment is checked.
type streamSeg struct {
	first    int
	data     []byte
	buf      []byte
	batches  []signedBatch
	verdicts []batchVerdict
}

// streamBuffers is how many buffers of streamSegment bytes a stream uses:
// one being filled, one per worker, and one waiting.
func streamBuffers() int { return runtime.GOMAXPROCS(0) + 2 }

func newBatchStream(b *bagFiles, keys map[string]gwKey) *batchStream {
	n := streamBuffers()
	s := &batchStream{b: b, keys: keys, segs: make(chan *streamSeg, n), free: make(chan []byte, n)}
	for range runtime.GOMAXPROCS(0) {
		s.wg.Go(s.work)
	}
	return s
}

// buffer returns an empty buffer of at least streamSegment bytes: a new
// one while fewer than streamBuffers were made, else the next one a
// worker gives back.
func (s *batchStream) buffer() []byte {
	select {
	case b := <-s.free:
		return b[:0]
	default:
	}
	if s.made < streamBuffers() {
		s.made++
		return make([]byte, 0, streamSegment)
	}
	return (<-s.free)[:0]
}

// read reads r (at most limit bytes), hashing it, and sends its lines to
// the workers in segments; it closes the stream. A line longer than a
// buffer grows that buffer.
func (s *batchStream) read(r io.Reader, limit int64, h hash.Hash) (int64, error) {
	defer s.close()
	r = io.LimitReader(r, limit)
	var n int64
	buf := s.buffer()
	for {
		if len(buf) == cap(buf) {
			k := bytes.LastIndexByte(buf, '\n')
			if k < 0 {
				buf = slices.Grow(buf, cap(buf)) // one line fills the buffer
				continue
			}
			next := s.buffer()
			next = append(next, buf[k+1:]...)
			s.send(buf[:k+1], buf)
			buf = next
		}
		m, err := r.Read(buf[len(buf):cap(buf)])
		if m > 0 {
			h.Write(buf[len(buf) : len(buf)+m])
			buf = buf[:len(buf)+m]
			n += int64(m)
		}
		if err == io.EOF {
			if len(buf) > 0 {
				s.send(buf, buf)
			}
			return n, nil
		}
		if err != nil {
			if len(buf) > 0 {
				s.send(buf, buf)
			}
			return n, err
		}
	}
}

func (s *batchStream) send(data, buf []byte) {
	seg := &streamSeg{first: s.line + 1, data: data, buf: buf}
	s.line += bytes.Count(data, []byte("\n"))
	s.all = append(s.all, seg)
	s.segs <- seg
}

// close ends the stream: the file is read, or its reading failed.
func (s *batchStream) close() {
	if !s.closed {
		s.closed = true
		close(s.segs)
	}
}

// work checks segments until there are no more, giving each segment's
// buffer back once it is checked: the bodies are read only here, and the
// segment's batches then keep no slice of the buffer. A panic is a
// problem of the report, and the worker goes on with the next segment.
func (s *batchStream) work() {
	c := batchChecker{keys: s.keys, kind: batchKind}
	for seg := range s.segs {
		func() {
			defer func() {
				for i := range seg.batches {
					seg.batches[i].body, seg.batches[i].sig = nil, nil
				}
				seg.data = nil
				s.free <- seg.buf
				if p := recover(); p != nil {
					s.mu.Lock()
					s.pans = append(s.pans, p)
					s.mu.Unlock()
				}
			}()
			c.lines = splitLines(c.lines, seg.data, seg.first)
			lines := c.lines
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
