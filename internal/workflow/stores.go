package workflow

import (
	"context"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/registry"
	"github.com/sossego/sossego/internal/store"
)

// AlertFinder finds an alert (internal/alertstore.Store satisfies it).
type AlertFinder interface {
	GetAlert(ctx context.Context, id string) (alerts.Alert, error)
}

// SensorRegistry answers sensor and gateway look-ups (*registry.Registry).
type SensorRegistry interface {
	Sensor(id string) (registry.Sensor, bool)
	Gateway(id string) (registry.Gateway, bool)
}

// SensorRegistryFunc adapts a live register (registry.Live.Current) to
// SensorRegistry.
type SensorRegistryFunc func() *registry.Registry

// Sensor looks the sensor up in the current register.
func (f SensorRegistryFunc) Sensor(id string) (registry.Sensor, bool) { return f().Sensor(id) }

// Gateway looks the gateway up in the current register.
func (f SensorRegistryFunc) Gateway(id string) (registry.Gateway, bool) { return f().Gateway(id) }

// Readings returns the stored 1-s records of a sensor in [from, to)
// (*sqlitestore.Store; limit 0 = all).
type Readings interface {
	Records(ctx context.Context, sensor string, from, to time.Time, limit int) ([]store.Record, error)
}

// RawBatches returns a stored signed batch (*sqlitestore.Store).
type RawBatches interface {
	RawBatch(ctx context.Context, gateway string, seq uint64) (body, sig []byte, verified bool, err error)
}

// CodeFinder finds a municipal code (*codes.Set).
type CodeFinder interface {
	Code(id string) (*codes.Code, bool)
}

// Calibrations decides whether a sensor's readings at an instant may found
// a constatação (*calibrationdb.Register satisfies it): the one rule the
// alert card's metrology note shows too (calibration.Decide).
type Calibrations interface {
	Decide(ctx context.Context, sensor string, m calibration.SensorMeter, at time.Time) calibration.Decision
}

// The case store (*casesdb.Store) is read and written through the five
// interfaces below; CaseStores groups them.

// Documents reads and creates the case's documents and their audit trail.
type Documents interface {
	Create(ctx context.Context, d notice.Draft, actor notice.Actor, at time.Time) (notice.Document, error)
	Get(ctx context.Context, id string) (notice.Document, error)
	ForAlert(ctx context.Context, alertID string) (notice.Document, error)
	Children(ctx context.Context, id string) ([]notice.Document, error)
	History(ctx context.Context, doc, codeID string, exclude ...string) ([]codes.PriorInfraction, error)
	Audit(ctx context.Context, id string) ([]cases.Entry, error)
}

// Steps changes a stored document: a workflow step (with the act's PDF
// rendered and stored in the same transaction), a draft's edit, the
// correction of an issued act.
type Steps interface {
	ApplyRender(ctx context.Context, c *codes.Code, id string, a notice.Action, render cases.Render) (doc notice.Document, auto *notice.Document, err error)
	Edit(ctx context.Context, c *codes.Code, id string, actor notice.Actor, at time.Time, changes []notice.FieldChange) (notice.Document, []notice.Edit, error)
	Correct(ctx context.Context, c *codes.Code, id string, actor notice.Actor, at time.Time, reason string) (old, corr notice.Document, err error)
}

// ConstatacaoStore keeps the fiscais' constatações (never changed).
type ConstatacaoStore interface {
	RecordConstatacao(ctx context.Context, k notice.Constatacao) (notice.Constatacao, error)
	Constatacao(ctx context.Context, id string) (notice.Constatacao, error)
	Constatacoes(ctx context.Context, alertID string) ([]notice.Constatacao, error)
}

// PDFStore gives the PDFs stored for each act (at issue, then at the
// ciente or recusa).
type PDFStore interface {
	PDF(ctx context.Context, id string) ([]byte, notice.StoredPDF, error)
	PDFVersion(ctx context.Context, id string, seq int) ([]byte, notice.StoredPDF, error)
}

// TriageStore keeps how the fiscais handle each alert.
type TriageStore interface {
	Ack(ctx context.Context, alertID string, actor notice.Actor, at time.Time) (t cases.Triage, changed bool, err error)
	Assign(ctx context.Context, alertID, assignee string, actor notice.Actor, at time.Time) (t cases.Triage, changed bool, err error)
	Triage(ctx context.Context, alertID string) (cases.Triage, error)
	Triages(ctx context.Context, limit int) ([]cases.Triage, error)
}

// CaseStores is the case store as the service uses it: the central service
// and the CLI set every field to the same *casesdb.Store.
type CaseStores struct {
	Documents    Documents
	Steps        Steps
	Constatacoes ConstatacaoStore
	PDFs         PDFStore
	Triage       TriageStore
}
