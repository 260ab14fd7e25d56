package evidence_test

import (
	"archive/zip"
	"bytes"
	"encoding/binary"
	"io"
	"strings"
	"testing"
	"time"
)

// localHeaders returns the offset of each member's local header by name
// (the members lie in central directory order, as Export writes them).
func localHeaders(t testing.TB, b []byte) map[string]int {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	pos := 0
	le := binary.LittleEndian
	for _, f := range zr.File {
		out[f.Name] = pos
		descriptor := le.Uint16(b[pos+6:])&0x8 != 0
		pos += 30 + int(le.Uint16(b[pos+26:])) + int(le.Uint16(b[pos+28:])) + int(f.CompressedSize64)
		if descriptor {
			pos += 16 // signature, CRC-32, two 32-bit sizes
		}
	}
	return out
}

// withoutDescriptors rewrites a bag zip with the CRC-32 and sizes in each
// local header instead of a data descriptor (the same compressed bytes).
func withoutDescriptors(t testing.TB, b []byte) []byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range zr.File {
		raw, err := f.OpenRaw()
		if err != nil {
			t.Fatal(err)
		}
		h := f.FileHeader
		h.Flags &^= 0x8
		w, err := zw.CreateRaw(&h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.Copy(w, raw); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestLocalHeaderAgrees: a member's local header (and data descriptor)
// must say what the central directory says: a streaming unzip reads the
// local headers, so a member named or sized differently there is refused.
func TestLocalHeaderAgrees(t *testing.T) {
	key := testKey(1)
	good, _ := export(t, goodPackage(20*time.Second), key)
	plain := withoutDescriptors(t, good)
	root := strings.SplitN(firstName(t, good), "/", 2)[0]
	target := root + "/data/readings.csv"
	le := binary.LittleEndian
	edit := func(b []byte, fn func(b []byte, h int)) []byte {
		c := bytes.Clone(b)
		fn(c, localHeaders(t, c)[target])
		return c
	}
	descriptor := func(b []byte) int { // offset of target's data descriptor
		zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
		for _, f := range zr.File {
			if f.Name == target {
				off, _ := f.DataOffset()
				return int(off) + int(f.CompressedSize64)
			}
		}
		t.Fatal("no " + target)
		return 0
	}
	cases := []struct {
		name string
		zip  []byte
		want string // "" = verifies
	}{
		{"as exported", good, ""},
		{"without data descriptors", plain, ""},
		{"local name differs", edit(good, func(b []byte, h int) {
			i := h + 30 + bytes.Index(b[h+30:], []byte("readings.csv"))
			b[i+7] = 'z' // readingz.csv
		}), `o cabeçalho local do membro "` + target + `" o chama de "` + root + `/data/readingz.csv"`},
		{"local method differs", edit(good, func(b []byte, h int) { le.PutUint16(b[h+8:], 0) }), "método de compressão"},
		{"local flags differ", edit(good, func(b []byte, h int) { b[h+6] |= 0x2 }), "opções"},
		{"local CRC-32 set beside a data descriptor", edit(good, func(b []byte, h int) { le.PutUint32(b[h+14:], 0x12345678) }), "CRC-32 ou tamanhos"},
		{"local CRC-32 differs", edit(plain, func(b []byte, h int) { b[h+14] ^= 1 }), "CRC-32 ou tamanhos"},
		{"local compressed size differs", edit(plain, func(b []byte, h int) { le.PutUint32(b[h+18:], le.Uint32(b[h+18:])-1) }), "CRC-32 ou tamanhos"},
		{"local size differs", edit(plain, func(b []byte, h int) { le.PutUint32(b[h+22:], le.Uint32(b[h+22:])+1) }), "CRC-32 ou tamanhos"},
		{"data descriptor size differs", edit(good, func(b []byte, _ int) {
			d := descriptor(b) + 4 + 8 // after the signature and CRC-32 and compressed size
			le.PutUint32(b[d:], le.Uint32(b[d:])+1)
		}), "o descritor de dados de " + target + " difere"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rep := verify(c.zip, pubOf(key))
			all := strings.Join(rep.Problems, "\n")
			if c.want == "" {
				if !rep.OK {
					t.Fatalf("a sound zip is refused:\n%s", all)
				}
				return
			}
			if rep.OK || !strings.Contains(all, c.want) {
				t.Fatalf("problems do not say %q:\n%s", c.want, all)
			}
		})
	}
}

func firstName(t testing.TB, b []byte) string {
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil || len(zr.File) == 0 {
		t.Fatal("not a zip", err)
	}
	return zr.File[0].Name
}
