package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// LedgerEntry is one exported bag of a case: the case state it shows, the
// zip's SHA-256, its date and the earlier bag it names.
type LedgerEntry struct {
	State    string    `json:"state"`
	SHA256   string    `json:"sha256"`
	Date     time.Time `json:"date"`
	Previous *Previous `json:"previous,omitempty"`
}

// FileLedger keeps the bags exported per alert in Dir (one small JSON file
// per alert), so that a later export after new acts names the earlier
// bag's hash, and an export of an unchanged state names the same one (and
// so has the same bytes).
type FileLedger struct {
	Dir string
	mu  sync.Mutex
}

// LedgerDir is the ledger's folder in the data directory.
const LedgerDir = "evidence-bags"

func (l *FileLedger) path(alertID string) string {
	return filepath.Join(l.Dir, safeName(alertID)+".json")
}

// Entries returns the alert's exported bags, oldest first.
func (l *FileLedger) Entries(alertID string) ([]LedgerEntry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.entries(alertID)
}

func (l *FileLedger) entries(alertID string) ([]LedgerEntry, error) {
	b, err := os.ReadFile(l.path(alertID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("evidence: registro de pacotes: %w", err)
	}
	var es []LedgerEntry
	if err := json.Unmarshal(b, &es); err != nil {
		return nil, fmt.Errorf("evidence: registro de pacotes %s ilegível: %w", l.path(alertID), err)
	}
	return es, nil
}

// PreviousFor is the earlier bag an export of state must name: for the
// state of the last export, the bag that one named (same bytes again);
// for a new state, the last export.
func PreviousFor(es []LedgerEntry, state string) *Previous {
	if len(es) == 0 {
		return nil
	}
	last := es[len(es)-1]
	if last.State == state {
		return last.Previous
	}
	return &Previous{SHA256: last.SHA256, Date: last.Date}
}

// Record notes an export: a new entry for a new state, or the latest bytes
// of the last state.
func (l *FileLedger) Record(alertID string, e LedgerEntry) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	es, err := l.entries(alertID)
	if err != nil {
		return err
	}
	if n := len(es); n > 0 && es[n-1].State == e.State {
		if es[n-1].SHA256 == e.SHA256 {
			return nil
		}
		es[n-1] = e
	} else {
		es = append(es, e)
	}
	if err := os.MkdirAll(l.Dir, 0o700); err != nil {
		return fmt.Errorf("evidence: registro de pacotes: %w", err)
	}
	b, err := json.MarshalIndent(es, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(l.path(alertID), append(b, '\n'), 0o600)
}
