package slm

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata files")

// The WAV under testdata is used by the CLI test (cmd/sossego). It is
// regenerated with `go test ./firmware-bridge/slm -run TestTestdataWAV -update`
// and otherwise must equal what this generator writes.
const testdataTone = "testdata/tone-1k-m20dbfs-48k-s16.wav"

func TestTestdataWAV(t *testing.T) {
	want := encodeWAV(t, wavSpec{format: S16LE, channels: 1, rate: 48000}, sine(48000, 1000, ampFor(-20), 0.5))
	path := filepath.FromSlash(testdataTone)
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from the generator; run with -update", path)
	}
	s, h, err := OpenWAV(bytes.NewReader(got), 0)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := Analyze(s, Options{SampleRate: h.SampleRate})
	if err != nil {
		t.Fatal(err)
	}
	if !near(sum.LAeq, -20, 0.05) || sum.DurationS != 0.5 {
		t.Errorf("testdata tone: LAeq %.3f over %v s", sum.LAeq, sum.DurationS)
	}
}
