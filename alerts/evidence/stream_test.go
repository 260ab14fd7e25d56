package evidence_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestBatchesCheckedWhileRead: a batches.txt of several segments (checked
// while it is still being read) gives the verdicts of each line with its
// own number, wherever the segments split the file.
func TestBatchesCheckedWhileRead(t *testing.T) {
	service := testKey(1)
	b, _ := export(t, goodPackage(140*time.Minute), service)
	if rep := verify(b, pubOf(service)); !rep.OK || rep.Batches < 1000 || rep.BatchesVerified != rep.Batches {
		t.Fatalf("%d of %d batches: %v", rep.BatchesVerified, rep.Batches, rep.Problems)
	}
	root, files := bagFiles(t, b)
	if n := len(files["data/batches.txt"]); n < 2<<20 {
		t.Fatalf("batches.txt has %d bytes: too few for several segments", n)
	}
	lines := strings.Split(string(files["data/batches.txt"]), "\n")
	seqOf := func(i int) string { return strings.Fields(lines[i-1])[1] }
	badSig, garbled, last := 700, 1000, len(lines)-1 // line numbers
	cases := []struct {
		name string
		line int
		edit func(string) string
		want string
	}{
		{"signature in a middle segment", badSig, func(l string) string {
			head, sig, body := signedLineParts(t, l)
			return signedLineJoin(head, strings.Repeat("A", len(sig)-2)+"==", body)
		}, fmt.Sprintf("lote %s do gateway lapa-centro-01: a assinatura ed25519 não confere", seqOf(badSig))},
		{"line in a later segment", garbled, func(string) string { return "lixo" },
			fmt.Sprintf("data/batches.txt, linha %d: formato inválido", garbled)},
		{"last line", last, func(string) string { return "lixo" },
			fmt.Sprintf("data/batches.txt, linha %d: formato inválido", last)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := clone(files)
			ls := bytes.Split(f["data/batches.txt"], []byte("\n"))
			ls[c.line-1] = []byte(c.edit(string(ls[c.line-1])))
			f["data/batches.txt"] = bytes.Join(ls, []byte("\n"))
			reseal(f, service)
			rep := verify(zipBag(t, root, f), pubOf(service))
			all := strings.Join(rep.Problems, "\n")
			if rep.OK || !strings.Contains(all, c.want) {
				t.Fatalf("problems do not say %q:\n%s", c.want, all)
			}
		})
	}
}
