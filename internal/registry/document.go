package registry

import "github.com/sossego/sossego/internal/docid"

// CheckDocument validates a Brazilian CPF (11 digits) or CNPJ (14
// characters, numeric or the alphanumeric form in use from July 2026),
// with or without punctuation, by its check digits (internal/docid).
func CheckDocument(doc string) error { return docid.Check(doc) }
