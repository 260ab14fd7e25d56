package loadgen

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// DefaultSeed is the seed of the demonstration register
// (docs/registry.example.yaml). Keys derived from a public seed protect
// nothing: use them to try Sossego out, never in production.
const DefaultSeed = "sossego-demo"

// Key derives a gateway's ed25519 signing key from seed.
func Key(seed, gateway string) ed25519.PrivateKey {
	s := sha256.Sum256([]byte("sossego-loadgen/key/v1|" + seed + "|" + gateway))
	return ed25519.NewKeyFromSeed(s[:])
}

// PublicKeyBase64 is the registry form of Key(seed, gateway)'s public key.
func PublicKeyBase64(seed, gateway string) string {
	return base64.StdEncoding.EncodeToString(Key(seed, gateway).Public().(ed25519.PublicKey))
}

// Password derives a gateway's MQTT password from seed.
func Password(seed, gateway string) string {
	s := sha256.Sum256([]byte("sossego-loadgen/password/v1|" + seed + "|" + gateway))
	return hex.EncodeToString(s[:12])
}
