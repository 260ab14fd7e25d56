package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/internal/wire"
)

func TestCheckCommand(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		args     []string
		code     int
		out, err string
	}{
		{"recorded", []string{"--state-dir", dir, "--reference", "114", "--measured", "113.75", "--calibrator-model", "B&K 4231", "--calibrator-serial", "2671834"},
			0, "calibrador 114,0 dB, medido 113,75 dB, desvio -0,25 dB", ""},
		{"bad reference", []string{"--state-dir", dir, "--reference", "90", "--measured", "90", "--calibrator-model", "x", "--calibrator-serial", "y"},
			2, "", "verificação não registrada: check.reference_db=90: o calibrador acústico gera 94 ou 114 dB"},
		{"no state", []string{"--reference", "94", "--measured", "94"}, 2, "", "informe --config"},
		{"bad time", []string{"--state-dir", dir, "--at", "ontem"}, 2, "", "RFC 3339"},
		{"unknown flag", []string{"--nivel", "94"}, 2, "", "opção desconhecida"},
		{"help", []string{"-h"}, 0, "calibrador acústico", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"check"}, tc.args...), strings.NewReader(""), &out, &errb)
			if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errb.String(), tc.err) {
				t.Fatalf("exit %d (want %d), stdout %q (want %q), stderr %q (want %q)", code, tc.code, out.String(), tc.out, errb.String(), tc.err)
			}
		})
	}
	files, _ := filepath.Glob(filepath.Join(dir, gateway.CheckDir, "*.json"))
	if len(files) != 1 {
		t.Fatalf("recorded checks: %v", files)
	}
	data, _ := os.ReadFile(files[0])
	var c wire.Check
	if err := json.Unmarshal(data, &c); err != nil || c.ReferenceDB != 114 || c.MeasuredDB != 113.75 || c.CalibratorSerial != "2671834" {
		t.Fatalf("recorded %s: %v", data, err)
	}
}
