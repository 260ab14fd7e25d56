package loadgen

import (
	"fmt"
	"strings"

	"golang.org/x/crypto/bcrypt"

	"github.com/sossego/sossego/internal/registry"
)

// RegistryYAML writes a register of n synthetic gateways lg-0001… in
// municipality, each with sensorsPer sensors (zone "other", class 2), keys
// and passwords derived from seed. Password hashes use bcrypt's minimum
// cost: this register is for load tests only.
func RegistryYAML(seed string, n, sensorsPer int, municipality string) ([]byte, error) {
	if sensorsPer <= 0 {
		sensorsPer = 1
	}
	var b strings.Builder
	b.WriteString("# Synthetic register written by `sossego loadgen --write-registry` (load tests only).\nversion: 1\ngateways:\n")
	for i := 1; i <= n; i++ {
		id := GatewayID(i)
		h, err := bcrypt.GenerateFromPassword([]byte(Password(seed, id)), bcrypt.MinCost)
		if err != nil {
			return nil, fmt.Errorf("loadgen: bcrypt: %w", err)
		}
		fmt.Fprintf(&b, "  - {id: %s, municipality: %s, public_key: %s, mqtt_password_hash: %q}\n",
			id, municipality, PublicKeyBase64(seed, id), h)
	}
	b.WriteString("sensors:\n")
	for i := 1; i <= n; i++ {
		for j := 1; j <= sensorsPer; j++ {
			fmt.Fprintf(&b, "  - {id: %s-s%d, gateway: %s, zone: other, location: {lat: -25.77, lon: -49.71}, address: Rua Simulada %d, meter: {grade: class2, calibrated_at: 2026-01-15}}\n",
				GatewayID(i), j, GatewayID(i), i)
		}
	}
	return []byte(b.String()), nil
}

// GatewayID is the id of synthetic gateway i (from 1).
func GatewayID(i int) string { return fmt.Sprintf("lg-%04d", i) }

// FromRegistry builds simulated gateways for every gateway of r that has
// sensors, with keys and passwords derived from seed.
func FromRegistry(r *registry.Registry, seed string) []Gateway {
	bySensor := map[string][]string{}
	for _, s := range r.Sensors() {
		bySensor[s.Gateway] = append(bySensor[s.Gateway], s.ID)
	}
	var out []Gateway
	for _, g := range r.Gateways() {
		if len(bySensor[g.ID]) == 0 {
			continue
		}
		gw := Gateway{ID: g.ID, Municipality: g.Municipality, Sensors: bySensor[g.ID], Password: Password(seed, g.ID)}
		if g.SignatureRequired() || len(g.Key()) > 0 {
			gw.Key = Key(seed, g.ID)
		}
		out = append(out, gw)
	}
	return out
}
