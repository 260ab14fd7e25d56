package reports

import "testing"

func TestExportFormat(t *testing.T) {
	for _, tc := range []struct {
		res, format         string
		wantRes, wantFormat string
		wantMsg             string
	}{
		{"", "", "1min", "csv", ""},
		{"1s", "", "1s", "csv", ""},
		{"", "json", "1min", "json", ""},
		{"1s", "json", "1s", "json", ""},
		{"1h", "csv", "", "", `res "1h" inválido; use 1s (registros de 1 s) ou 1min (agregados de 1 min)`},
		{"1min", "xml", "", "", `format "xml" inválido; use csv ou json`},
		{"5s", "xml", "", "", `res "5s" inválido; use 1s (registros de 1 s) ou 1min (agregados de 1 min)`},
	} {
		res, format, msg := ExportFormat(tc.res, tc.format)
		if res != tc.wantRes || format != tc.wantFormat || msg != tc.wantMsg {
			t.Errorf("ExportFormat(%q, %q) = %q, %q, %q; want %q, %q, %q", tc.res, tc.format, res, format, msg, tc.wantRes, tc.wantFormat, tc.wantMsg)
		}
	}
}
