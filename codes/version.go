package codes

import (
	"fmt"
	"regexp"
	"strings"
)

// A code's version is the label alerts, notices, e-mails and the dashboard
// cite: the law and the revision of its encoding, "lei-1783-2004/v2". It is
// shown to users as is, so it carries only those words and fits a line.

// maxVersionLen bounds a version label so that "versão …" fits any line the
// product prints it on.
const maxVersionLen = 40

var versionRE = regexp.MustCompile(`^[a-z0-9][a-z0-9.-]*(/v[0-9]+)?$`)

// checkVersion says what is wrong with a version label, or "".
func checkVersion(v string) string {
	switch {
	case v == "":
		return "falta version (rótulo estável citado nos alertas, ex.: \"lei-1783-2004/v2\")"
	case strings.Contains(v, "seed"):
		return fmt.Sprintf("version %q: o rótulo é mostrado ao usuário; use a lei e a revisão, ex.: \"lei-1783-2004/v2\"", v)
	case len(v) > maxVersionLen || !versionRE.MatchString(v):
		return fmt.Sprintf("version %q inválida: use a lei e a revisão, em minúsculas, ex.: \"lei-1783-2004/v2\" (até %d caracteres)", v, maxVersionLen)
	}
	return ""
}

// legacyVersion matches the labels earlier releases stored with alerts and
// notices ("lei-1783-2004/seed-004").
var legacyVersion = regexp.MustCompile(`^(.+)/seed-[0-9]+$`)

// VersionLabel is the version label to show for v, which may have been
// stored by an earlier release: a label of the first encoding
// ("lei-1783-2004/seed-004") is shown as its first revision
// ("lei-1783-2004/v1"); any other label is returned unchanged.
func VersionLabel(v string) string {
	if m := legacyVersion.FindStringSubmatch(v); m != nil {
		return m[1] + "/v1"
	}
	return v
}
