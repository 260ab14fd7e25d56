package central

import (
	"testing"

	"github.com/sossego/sossego/internal/registry"
)

// The registry refuses a gateway whose id is the central service's MQTT
// user; it keeps its own copy of the name (it must not import central).
func TestRegistryReservesServiceUser(t *testing.T) {
	if registry.ServiceUser != ServiceUser {
		t.Fatalf("registry.ServiceUser = %q, central.ServiceUser = %q: keep them equal", registry.ServiceUser, ServiceUser)
	}
	yaml := "version: 1\ngateways:\n  - {id: " + ServiceUser + ", municipality: lapa, require_signature: false}\n"
	if _, err := registry.Parse([]byte(yaml)); err == nil {
		t.Fatalf("a gateway named %q was accepted", ServiceUser)
	}
}
