package evidence

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"strings"

	"github.com/sossego/sossego/internal/wire/signature"
)

// checkSignature checks the signature over the tag manifest with the key
// the bag names, and that the key is one the verifier trusts.
func (b *bagFiles) checkSignature(fields map[string][]string, tagm, sig []byte, t Trust) {
	rep := b.rep
	keys := fields["Sossego-Signing-Key"]
	var pub ed25519.PublicKey
	if len(keys) == 1 {
		if k, err := base64.StdEncoding.DecodeString(keys[0]); err == nil && len(k) == ed25519.PublicKeySize {
			pub = k
		}
	}
	s, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(sig)))
	switch {
	case pub == nil:
		rep.add("bag-info.txt não traz uma chave pública ed25519 válida em Sossego-Signing-Key")
		return
	case err != nil || len(s) != ed25519.SignatureSize || string(sig) != base64.StdEncoding.EncodeToString(s)+"\n":
		rep.add("%s não contém uma assinatura ed25519 válida (base64)", sigName)
		return
	case !ed25519.Verify(pub, tagm, s):
		rep.add("a assinatura ed25519 de %s não confere com tagmanifest-sha256.txt: o pacote foi alterado depois de assinado", sigName)
		return
	}
	fp := Fingerprint(pub)
	rep.KeyFingerprint = fp
	if v := fields["Sossego-Signing-Key-Fingerprint"]; len(v) != 1 || v[0] != fp {
		rep.add("bag-info.txt: Sossego-Signing-Key-Fingerprint não corresponde à chave que assinou (%s)", fp)
	}
	if t.empty() {
		rep.add("a assinatura confere com a chave que vem no próprio pacote (%s), mas nenhuma chave confiável foi informada: "+
			"sem comparar com a impressão digital impressa na notificação (--impressao) ou com a chave publicada pelo serviço "+
			"(--chave-publica, GET /api/v1/evidence/key), não se sabe QUEM assinou", fp)
		return
	}
	for _, k := range t.Keys {
		if k.Fingerprint != fp {
			continue
		}
		if k.Revoked {
			rep.add("o pacote foi assinado pela chave %s, REVOGADA em %s (%s): nada assinado por ela é confiável", fp,
				k.ValidUntil.In(saoPaulo).Format("02/01/2006 15:04"), dash(k.Reason))
			return
		}
		rep.Trusted = true
		if !k.ValidUntil.IsZero() {
			rep.TrustNote = "chave anterior do serviço, substituída em " + k.ValidUntil.In(saoPaulo).Format("02/01/2006 15:04")
		} else {
			rep.TrustNote = "chave atual do serviço"
		}
		return
	}
	for _, f := range t.Fingerprints {
		if f == fp {
			rep.Trusted = true
			rep.TrustNote = "impressão digital informada"
			return
		}
	}
	var want []string
	for _, k := range t.Keys {
		want = append(want, k.Fingerprint)
	}
	want = append(want, t.Fingerprints...)
	rep.add("o pacote foi assinado pela chave %s, que não é uma chave confiável do serviço (%s): foi assinado de novo por outra chave", fp, strings.Join(want, ", "))
}

// checkContents re-checks what the payload says: the service key file
// matches the signing key, every gateway batch signature with the key in
// force when it was received, and every readings.csv row against the
// signed batch it names.
func (b *bagFiles) checkContents() {
	rep := b.rep
	if sj, ok := b.kept["data/keys/service.json"]; ok && rep.KeyFingerprint != "" {
		var doc struct {
			Fingerprint string `json:"fingerprint"`
		}
		if json.Unmarshal(sj, &doc) != nil || doc.Fingerprint != rep.KeyFingerprint {
			rep.add("data/keys/service.json não traz a chave que assinou o pacote (%s)", rep.KeyFingerprint)
		}
	}
	if !b.prepared {
		b.prepare(nil)
	}
	keys, ok := b.gwKeys, b.gwKeysOK
	if !ok {
		return
	}
	bt, ok := b.kept["data/batches.txt"]
	var bodies map[BatchKey][]recLine
	switch {
	case b.stream != nil && b.streamed:
		bodies = b.collectBatches(b.stream.wait()...)
	case b.stream != nil:
		b.stream.wait() // read in part, then unreadable: reported with its hash
		return
	case !ok:
		if b.files["data/batches.txt"] == nil {
			rep.add("falta o arquivo data/batches.txt (os lotes assinados pelos gateways)")
		}
		return
	default:
		bodies = b.checkBatches(bt, keys)
	}
	if ct, ok := b.kept["data/checks.txt"]; ok {
		b.checkChecks(ct, keys)
	}
	if rc, ok := b.kept["data/readings.csv"]; ok {
		b.checkReadings(rc, bodies)
	} else if b.files["data/readings.csv"] == nil {
		rep.add("falta o arquivo data/readings.csv")
	}
}

type gwKey struct {
	keyDoc
	pub  ed25519.PublicKey
	wire *signature.PublicKey
}

// gatewayKeys reads data/keys/gateways.json when the payload manifest
// lists it (hashed: it is hashed with the payload) and the PEM files it
// names.
func (b *bagFiles) gatewayKeys(hashed bool) (map[string]gwKey, bool) {
	rep := b.rep
	if !hashed {
		if b.files["data/keys/gateways.json"] == nil {
			rep.add("falta o arquivo data/keys/gateways.json (as chaves dos gateways)")
		}
		return nil, false
	}
	gj, err := b.read("data/keys/gateways.json", maxKeptFile)
	if err != nil {
		rep.add("data/keys/gateways.json ilegível: %v", err)
		return nil, false
	}
	var docs []keyDoc
	if err := json.Unmarshal(gj, &docs); err != nil {
		rep.add("data/keys/gateways.json ilegível: %v", err)
		return nil, false
	}
	out := map[string]gwKey{}
	for i, d := range docs {
		k, err := base64.StdEncoding.DecodeString(d.PublicKey)
		if err != nil || len(k) != ed25519.PublicKeySize || Fingerprint(k) != d.Fingerprint {
			rep.add("data/keys/gateways.json, item %d (gateway %s): chave ou impressão digital inválida", i+1, d.Gateway)
			continue
		}
		file := strings.TrimPrefix(d.File, "data/keys/")
		if b.files[d.File] == nil || file == d.File || strings.Contains(file, "/") {
			rep.add("data/keys/gateways.json, item %d: falta o arquivo %s da chave do gateway %s", i+1, d.File, d.Gateway)
			continue
		}
		if pb, err := b.read(d.File, 4096); err != nil || !pemIs(pb, k) {
			rep.add("%s não contém a chave do gateway %s que data/keys/gateways.json informa (%s)", d.File, d.Gateway, d.Fingerprint)
			continue
		}
		wk, _ := signature.NewPublicKey(k)
		out[file] = gwKey{keyDoc: d, pub: k, wire: wk}
	}
	return out, true
}

func pemIs(b []byte, want ed25519.PublicKey) bool {
	blk, _ := pem.Decode(b)
	if blk == nil || blk.Type != "PUBLIC KEY" {
		return false
	}
	k, err := x509.ParsePKIXPublicKey(blk.Bytes)
	if err != nil {
		return false
	}
	pk, ok := k.(ed25519.PublicKey)
	return ok && pk.Equal(want)
}
