package evidence_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestBatchesCheckedWhileRead: a batches.txt of several segments (checked
// while it is still being read) gives the verdicts of each line with its
// own number, wherever the segments split the file. With two processors
// the stream has four buffers of 1 MiB: a file of more than five makes
// the reader wait for the workers to give buffers back.
func TestBatchesCheckedWhileRead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	service := testKey(1)
	b, _ := export(t, goodPackage(5*time.Hour), service)
	if rep := verify(b, pubOf(service)); !rep.OK || rep.Batches < 1000 || rep.BatchesVerified != rep.Batches {
		t.Fatalf("%d of %d batches: %v", rep.BatchesVerified, rep.Batches, rep.Problems)
	}
	root, files := bagFiles(t, b)
	if n := len(files["data/batches.txt"]); n < 5<<20 {
		t.Fatalf("batches.txt has %d bytes: too few for more segments than buffers", n)
	}
	lines := strings.Split(string(files["data/batches.txt"]), "\n")
	seqOf := func(i int) string { return strings.Fields(lines[i-1])[1] }
	badSig, garbled, last := 700, 1000, len(lines)-1 // line numbers
	type edit struct {
		line int
		to   func(string) string
		want string // what the problems must say
	}
	junk := func(string) string { return "lixo" }
	long := func(string) string { return strings.Repeat("x", 3<<20) } // longer than a segment's buffer
	cases := []struct {
		name  string
		edits []edit
	}{
		{"signature in a middle segment", []edit{{badSig, func(l string) string {
			head, sig, body := signedLineParts(t, l)
			return signedLineJoin(head, strings.Repeat("A", len(sig)-2)+"==", body)
		}, fmt.Sprintf("lote %s do gateway lapa-centro-01: a assinatura ed25519 não confere", seqOf(badSig))}}},
		{"line in a later segment", []edit{{garbled, junk, fmt.Sprintf("data/batches.txt, linha %d: formato inválido", garbled)}}},
		{"last line", []edit{{last, junk, fmt.Sprintf("data/batches.txt, linha %d: formato inválido", last)}}},
		{"a line longer than a segment, then others", []edit{
			{badSig, long, fmt.Sprintf("data/batches.txt, linha %d: formato inválido", badSig)},
			{garbled, junk, fmt.Sprintf("data/batches.txt, linha %d: formato inválido", garbled)},
			{last, junk, fmt.Sprintf("data/batches.txt, linha %d: formato inválido", last)},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := clone(files)
			ls := bytes.Split(f["data/batches.txt"], []byte("\n"))
			for _, e := range c.edits {
				ls[e.line-1] = []byte(e.to(string(ls[e.line-1])))
			}
			f["data/batches.txt"] = bytes.Join(ls, []byte("\n"))
			reseal(f, service)
			rep := verify(zipBag(t, root, f), pubOf(service))
			all := strings.Join(rep.Problems, "\n")
			for _, e := range c.edits {
				if rep.OK || !strings.Contains(all, e.want) {
					t.Fatalf("problems do not say %q:\n%s", e.want, all)
				}
			}
			if n := strings.Count(all, "data/batches.txt, linha"); n != len(c.edits) && !strings.Contains(c.name, "signature") {
				t.Fatalf("%d line problems, want %d:\n%s", n, len(c.edits), all)
			}
		})
	}
	t.Run("no final line break", func(t *testing.T) {
		f := clone(files)
		f["data/batches.txt"] = bytes.TrimSuffix(f["data/batches.txt"], []byte("\n"))
		reseal(f, service)
		if rep := verify(zipBag(t, root, f), pubOf(service)); !rep.OK || rep.BatchesVerified != rep.Batches || rep.Batches != len(lines)-1 {
			t.Fatalf("%d of %d batches (want %d): %v", rep.BatchesVerified, rep.Batches, len(lines)-1, rep.Problems)
		}
	})
}
