// Package evidence writes and verifies the evidence package of an alert: a
// zipped BagIt bag (RFC 8493) that an independent perito can check alone,
// with the sossego CLI or with standard tools (sha256sum, openssl).
//
// Layout (everything under one top directory, evidencia-<alert>/):
//
//	bagit.txt                   BagIt-Version 1.0, UTF-8
//	bag-info.txt                who, what, when; the chain of custody; the signing key and its fingerprint;
//	                            the margin; the hash of the earlier bag of the same case, if any
//	manifest-sha256.txt         SHA-256 of every payload file
//	tagmanifest-sha256.txt      SHA-256 of every tag file (bagit.txt, bag-info.txt, manifest-sha256.txt, VERIFICAR.txt)
//	tagmanifest-sha256.txt.sig  ed25519 signature (base64) over tagmanifest-sha256.txt
//	VERIFICAR.txt               how to check the bag, with the exact commands (pt-BR)
//	data/LEIAME.txt             what each file is (pt-BR)
//	data/METODO.txt             how the measurement was made and what it does and does not establish (pt-BR)
//	data/readings.csv           every 1-s record of the window ± the margin
//	data/env.csv                temperature, humidity and pressure readings of the same span
//	data/summary.json           energy-correct summary: LAeq, LAFmax, L10, L90, limit, margin, exceedance
//	data/rule.json              the rule: code version, article, quoted text, limit
//	data/device.json            measuring point; the meter (model, serial, grade, calibration, field check)
//	                            as registered and as the signed batches report it; clock-sync state
//	data/batches.ndjson         one line per signed batch: received_at, key, verdicts, device, clock
//	data/batches.txt            "gateway seq received_at key-file signature-base64 body", one per batch (the body as signed, or "base64:" and its base64)
//	data/keys/service.json      the service's public key, fingerprint and key history
//	data/keys/service.pem       the service's public key for openssl
//	data/keys/gateways.json     every gateway key as registered when the batches were received, with validity
//	data/keys/<gateway>-<n>.pem each gateway key for openssl
//	data/verificar-lotes.sh     re-checks every batch signature with openssl (POSIX sh, ≤ 20 lines)
//	data/custody.json           the audit trail of the case (who, when, what)
//	data/acts/index.json        the acts of the case as issued (id, kind, issue time, SHA-256)
//	data/acts/<name>.pdf        each act's stored PDF, byte for byte
//	data/constatacoes/<id>.json each constatação record
//	data/calibration/<file>     the calibration certificate, when uploaded
//	data/notice.pdf             only when the case has no stored act: the draft as rendered (marked so)
//	data/chart.png              the readings around the event with the limit line
//
// The signature covers the tag manifest, which covers bag-info.txt and the
// payload manifest, which covers every payload byte. The zip is
// deterministic: members in a fixed order, every time the bag's date (the
// case's last act), no zip comment; the same case state gives the same bytes.
//
// Where each concern lives:
//
//   - evidence.go: what a bag is built from (Package and its parts) and the
//     bag's fixed names; summary.go: the energy-correct Summary.
//   - export.go: Export, the zip writer and its order; export_readings.go:
//     readings.csv and env.csv; export_signed.go: batches.txt and
//     checks.txt with the gateway keys in force; export_docs.go: the JSON
//     documents (keys, acts, device) and bag-info.txt; text.go: the pt-BR
//     texts (VERIFICAR.txt, LEIAME.txt, METODO.txt, verificar-lotes.sh).
//   - key.go: the service's signing key and its history; ledger.go: the
//     bags exported per alert.
//   - verify.go: Verify, the Report, trust, a bag from a zip or a directory,
//     and the order of the checks; verify_zip.go: the zip's structure (local
//     headers against the central directory, members back to back);
//     verify_manifest.go: bagit.txt, the tag and payload manifests and the
//     Payload-Oxum; verify_keys.go: the service's signature and key, the
//     gateway keys, and what the payload says (checkContents);
//     verify_batches.go: every gateway signature of batches.txt and
//     checks.txt, and readings.csv against the signed batches;
//     verify_stream.go: batches.txt checked while it is inflated and
//     hashed; body.go, csvtext.go: the one-pass decoder of signed batch
//     bodies and its CSV text.
package evidence
