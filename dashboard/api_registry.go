package dashboard

// Register routes (docs/api.md): only an admin reads or replaces the
// register of gateways, sensors and establishments.

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"github.com/sossego/sossego/internal/registry"
)

// RegistryFile is the live register file the routes read and replace
// (*registry.Live).
type RegistryFile interface {
	Path() string
	// Check refuses a parsed register the service must not load (demo
	// keys on a real deployment).
	Check(*registry.Registry) error
	Reload() error
}

// RegistryAPI lets an admin read and replace the register over HTTP:
//
//	GET /api/v1/registry  the YAML file as it is on disk
//	PUT /api/v1/registry  a whole new YAML file: validated strictly first
//	                      (422 with every problem and its line), then
//	                      written atomically and reloaded.
type RegistryAPI struct {
	reg RegistryFile
	log *slog.Logger
	mu  sync.Mutex // one writer at a time
}

// NewRegistryAPI returns the register routes.
func NewRegistryAPI(reg RegistryFile, log *slog.Logger) *RegistryAPI {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &RegistryAPI{reg: reg, log: log}
}

func (h *RegistryAPI) get(w http.ResponseWriter, _ *http.Request) {
	data, err := os.ReadFile(h.reg.Path())
	if err != nil {
		serverError(w, h.log, "cadastro", fmt.Errorf("ler o cadastro: %w", err))
		return
	}
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	_, _ = w.Write(data)
}

func (h *RegistryAPI) put(w http.ResponseWriter, r *http.Request) {
	data, err := io.ReadAll(io.LimitReader(r.Body, registry.MaxFileSize+1))
	if err != nil {
		apiError(w, http.StatusBadRequest, "corpo ilegível: "+err.Error())
		return
	}
	if len(data) > registry.MaxFileSize {
		apiError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("cadastro maior que %d bytes", registry.MaxFileSize))
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
		apiProblems(w, http.StatusUnprocessableEntity, "cadastro recusado; nada foi alterado — corrija os problemas listados", problems)
		return
	}
	if err := h.reg.Check(parsed); err != nil {
		apiError(w, http.StatusUnprocessableEntity, "cadastro recusado; nada foi alterado — "+err.Error())
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := writeAtomic(h.reg.Path(), data); err != nil {
		serverError(w, h.log, "cadastro", fmt.Errorf("gravar o cadastro (nada foi alterado): %w", err))
		return
	}
	if err := h.reg.Reload(); err != nil {
		// The file is written; the service keeps the register it had and
		// its watcher reads the file again on its next look.
		ref := logFailure(h.log, "cadastro", fmt.Errorf("recarregar o cadastro gravado: %w", err))
		apiJSON(w, http.StatusInternalServerError, map[string]string{
			"erro": "o cadastro foi gravado, mas o serviço não conseguiu relê-lo e segue com o anterior; ele tenta de novo " +
				"na próxima verificação do arquivo. Se persistir, o administrador encontra os detalhes no log do serviço pela referência " + ref,
			"referencia": ref})
		return
	}
	user := ""
	if s, ok := SessionFrom(r.Context()); ok {
		user = s.User.Name
	}
	h.log.Info("cadastro substituído pela API", "usuario", user, "gateways", len(parsed.Gateways()), "sensores", len(parsed.Sensors()))
	apiJSON(w, http.StatusOK, map[string]int{"gateways": len(parsed.Gateways()), "sensors": len(parsed.Sensors())})
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
