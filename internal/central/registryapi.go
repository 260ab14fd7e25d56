package central

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/sossego/sossego/dashboard"
	"github.com/sossego/sossego/internal/registry"
)

// registryAPI lets an admin read and replace the register over HTTP:
//
//	GET /api/v1/registry  the YAML file as it is on disk
//	PUT /api/v1/registry  a whole new YAML file: validated strictly first
//	                      (422 with every problem and its line), then
//	                      written atomically and reloaded.
//
// Mounted behind RequireRole(admin): only an admin edits the registry.
type registryAPI struct {
	reg *registry.Live
	log *slog.Logger
	mu  sync.Mutex // one writer at a time
}

func (h *registryAPI) get(w http.ResponseWriter, _ *http.Request) {
	data, err := os.ReadFile(h.reg.Path())
	if err != nil {
		writeErr(w, http.StatusInternalServerError, "não foi possível ler o cadastro: "+err.Error(), nil)
		return
	}
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	_, _ = w.Write(data)
}

func (h *registryAPI) put(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(io.LimitReader(r.Body, registry.MaxFileSize+1))
	if err != nil {
		writeErr(w, http.StatusBadRequest, "corpo ilegível: "+err.Error(), nil)
		return
	}
	if len(data) > registry.MaxFileSize {
		writeErr(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("cadastro maior que %d bytes", registry.MaxFileSize), nil)
		return
	}
	parsed, err := registry.Parse(data)
	if err != nil {
		var es registry.Errors
		var problems []string
		if errors.As(err, &es) {
			for _, e := range es {
				problems = append(problems, e.Error())
			}
		} else {
			problems = []string{err.Error()}
		}
		writeErr(w, http.StatusUnprocessableEntity, "cadastro recusado; nada foi alterado — corrija os problemas listados", problems)
		return
	}
	if err := h.reg.Check(parsed); err != nil {
		writeErr(w, http.StatusUnprocessableEntity, "cadastro recusado; nada foi alterado — "+err.Error(), nil)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := writeAtomic(h.reg.Path(), data); err != nil {
		writeErr(w, http.StatusInternalServerError, "não foi possível gravar o cadastro: "+err.Error(), nil)
		return
	}
	if err := h.reg.Reload(); err != nil {
		writeErr(w, http.StatusInternalServerError, "cadastro gravado mas não recarregado: "+err.Error(), nil)
		return
	}
	user := ""
	if s, ok := dashboard.SessionFrom(r.Context()); ok {
		user = s.User.Name
	}
	h.log.Info("cadastro substituído pela API", "usuario", user, "gateways", len(parsed.Gateways()), "sensores", len(parsed.Sensors()))
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]int{"gateways": len(parsed.Gateways()), "sensors": len(parsed.Sensors())})
}

// writeAtomic replaces path with data: temporary file in the same folder,
// fsync, rename, fsync of the folder.
func writeAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, ".registry-*.yaml")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o640); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func writeErr(w http.ResponseWriter, status int, msg string, problems []string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	body := map[string]any{"erro": msg}
	if len(problems) > 0 {
		body["problemas"] = problems
	}
	_ = json.NewEncoder(w).Encode(body)
}
