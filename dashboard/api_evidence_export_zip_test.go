package dashboard_test

import (
	"archive/zip"
	"bytes"
	"io"
	"testing"
)

func unzip(t *testing.T, b []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, _ := f.Open()
		out[f.Name], _ = io.ReadAll(rc)
		rc.Close()
	}
	return out
}

func rezipFlip(t *testing.T, b []byte, member string) []byte {
	t.Helper()
	zr, _ := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range zr.File {
		rc, _ := f.Open()
		data, _ := io.ReadAll(rc)
		rc.Close()
		if f.Name == member {
			data[len(data)/3] ^= 1
		}
		w, _ := zw.CreateHeader(&zip.FileHeader{Name: f.Name, Method: zip.Deflate, Modified: f.Modified})
		w.Write(data)
	}
	zw.Close()
	return buf.Bytes()
}
