package notice_test

import (
	"os"
	"testing"
)

func readLapa(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../codes/data/lapa.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
