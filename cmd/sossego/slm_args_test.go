package main

import (
	"math"
	"strings"
	"testing"
)

func TestSLMArgsCheck(t *testing.T) {
	for _, tc := range []struct {
		name     string
		a        slmArgs
		wantMsg  string // prefix of the message; "" accepts
		wantFile string
	}{
		{name: "WAV", a: slmArgs{files: []string{"a.wav"}, channels: 1}, wantFile: "a.wav"},
		{name: "raw", a: slmArgs{files: []string{"-"}, raw: "S32_LE", rate: 48000, channels: 2}, wantFile: "-"},
		{name: "no file", a: slmArgs{channels: 1}, wantMsg: "informe exatamente um arquivo (ou - para a entrada padrão); recebi 0"},
		{name: "two files", a: slmArgs{files: []string{"a", "b"}, channels: 1}, wantMsg: "informe exatamente um arquivo (ou - para a entrada padrão); recebi 2"},
		{name: "NaN offset", a: slmArgs{files: []string{"a"}, offset: math.NaN(), channels: 1}, wantMsg: "--offset-db precisa ser um número"},
		{name: "infinite offset", a: slmArgs{files: []string{"a"}, offset: math.Inf(1), channels: 1}, wantMsg: "--offset-db precisa ser um número"},
		{name: "negative channel", a: slmArgs{files: []string{"a"}, channel: -2, channels: 1}, wantMsg: "--channel começa em 0; recebi -2"},
		{name: "channels without raw", a: slmArgs{files: []string{"a"}, channels: 2}, wantMsg: "--rate e --channels só valem com --raw"},
		{name: "raw without rate", a: slmArgs{files: []string{"-"}, raw: "s16le", channels: 1}, wantMsg: "com --raw informe a taxa de amostragem, por exemplo --rate 48000"},
		{name: "unknown raw format", a: slmArgs{files: []string{"-"}, raw: "mp3", rate: 48000, channels: 1}, wantMsg: `formato bruto "mp3" desconhecido`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := tc.a.check()
			if tc.wantMsg == "" {
				if msg != "" || tc.a.file != tc.wantFile {
					t.Errorf("check() = %q, file %q; want accepted, file %q", msg, tc.a.file, tc.wantFile)
				}
				return
			}
			if !strings.HasPrefix(msg, tc.wantMsg) {
				t.Errorf("check() = %q, want it to start with %q", msg, tc.wantMsg)
			}
		})
	}
}
