package workflow

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/codes"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/pdf"
	"github.com/sossego/sossego/internal/store"
)

// Config is what a Service is built from; New copies it.
type Config struct {
	Cases    CaseStores
	Alerts   AlertFinder
	Registry SensorRegistry
	Readings Readings
	Batches  RawBatches // nil: no signatures in the bag
	Codes    CodeFinder
	Key      ed25519.PrivateKey // evidence signing key (or Evidence.Keys')
	// Evidence holds the evidence export's optional sources (export.go).
	Evidence EvidenceSources
	// Margin before and after the alert window in the evidence and the
	// chart. Default 10 minutes.
	Margin time.Duration
	Now    func() time.Time
	Log    *slog.Logger
	// OnChange, if set, is told of every stored workflow change.
	OnChange func(Change)
	// Assignees, if set, lists the user ids an alert may be assigned to
	// (the active fiscais); nil accepts any user name.
	Assignees func(ctx context.Context) ([]string, error)
	// Calibrations, if set, says whether a sensor's meter was calibrated
	// at an instant; nil falls back to the register's meter grade and
	// calibration date (constatacao.go).
	Calibrations Calibrations
	// UnitValues, if set, gives the monetary units' values a draft's fine
	// is computed with (notice.ApplyFine; internal/monetary keeps them).
	UnitValues func(ctx context.Context) ([]notice.UnitValue, error)
}

// Service is the fiscal's workflow: it assembles notices, PDFs and
// evidence from its stores and records every step.
type Service struct {
	cases        CaseStores
	alerts       AlertFinder
	registry     SensorRegistry
	readings     Readings
	batches      RawBatches
	codes        CodeFinder
	key          ed25519.PrivateKey
	evidence     EvidenceSources
	margin       time.Duration
	clock        func() time.Time
	log          *slog.Logger
	onChange     func(Change)
	assignees    func(ctx context.Context) ([]string, error)
	calibrations Calibrations
	unitValues   func(ctx context.Context) ([]notice.UnitValue, error)
}

// New returns the service over c's stores.
func New(c Config) *Service {
	s := &Service{cases: c.Cases, alerts: c.Alerts, registry: c.Registry, readings: c.Readings, batches: c.Batches, codes: c.Codes,
		key: c.Key, evidence: c.Evidence, margin: c.Margin, clock: c.Now, log: c.Log, onChange: c.OnChange, assignees: c.Assignees,
		calibrations: c.Calibrations, unitValues: c.UnitValues}
	if s.margin <= 0 {
		s.margin = 10 * time.Minute
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Now is the service's clock.
func (s *Service) Now() time.Time { return s.clock() }

func (s *Service) now() time.Time { return s.clock() }

// Logger is the service's logger, for the errors its callers log.
func (s *Service) Logger() *slog.Logger { return s.log }

// AlertCase is everything known about an alert's case.
type AlertCase struct {
	Alert alerts.Alert
	Code  *codes.Code
	Party notice.Party
	Site  notice.Site
	Gate  string
}

// alert reads one alert: ErrNotFound (404) when the store holds none of
// that id, the store's error otherwise (a 500, never "não encontrado").
func (s *Service) alert(ctx context.Context, id string) (alerts.Alert, error) {
	a, err := s.alerts.GetAlert(ctx, id)
	switch {
	case errors.Is(err, alerts.ErrNotFound):
		return a, fmt.Errorf("%w: alerta %q", ErrNotFound, id)
	case err != nil:
		return a, fmt.Errorf("alerta %q: %w", id, err)
	}
	return a, nil
}

// Load gathers the alert, its code, the establishment and the site.
func (s *Service) Load(ctx context.Context, alertID string) (*AlertCase, error) {
	a, err := s.alert(ctx, alertID)
	if err != nil {
		return nil, err
	}
	if a.Kind != alerts.KindExceedance {
		return nil, fmt.Errorf("%w: o alerta %s é de falta de dados, não de excesso de ruído: não gera notificação", ErrNoNotice, a.ID)
	}
	cid := a.CodeID
	if cid == "" {
		cid = a.Code
	}
	c, ok := s.codes.Code(cid)
	if !ok {
		return nil, fmt.Errorf("o código municipal %q do alerta não está carregado", cid)
	}
	sn, ok := s.registry.Sensor(a.Sensor)
	if !ok {
		return nil, fmt.Errorf("%w: o sensor %q do alerta não está no cadastro", ErrNotFound, a.Sensor)
	}
	e, ok := sn.Primary()
	if !ok {
		return nil, fmt.Errorf("o sensor %s não tem estabelecimento no cadastro: cadastre quem ele monitora", sn.ID)
	}
	for _, x := range sn.Establishments {
		if x.Name == a.Establishment {
			e = x
		}
	}
	return &AlertCase{Alert: a, Code: c, Gate: sn.Gateway,
		Party: notice.Party{Name: e.Name, Document: e.Document, Address: e.Address, Type: e.Type},
		Site: notice.Site{Sensor: sn.ID, Address: sn.Address, Lat: sn.Location.Lat, Lon: sn.Location.Lon, Zone: sn.Zone,
			Grade: sn.Meter.Grade, MeterModel: sn.Meter.Model, MeterSerial: sn.Meter.Serial, CalibratedAt: sn.Meter.CalibratedAt,
			Certificate: sn.Meter.Certificate}}, nil
}

// Draft builds the first document for an alert with the party's history.
// It refuses an alert any of whose window readings (or any reading while it
// was open, Alert.UnsyncedRecords) came from a gateway whose clock was not
// synchronised: the period, and so the limit, of a
// reading depends on its time (22:00 in Lapa), and a notice must not rest
// on a time nobody can vouch for (docs/performance-goals.md).
func (s *Service) Draft(ctx context.Context, cs *AlertCase) (notice.Draft, error) {
	if cs.Alert.State != alerts.StateFiring && cs.Alert.State != alerts.StateResolved {
		return notice.Draft{}, fmt.Errorf("%w: o alerta %s está %s: só um alerta que disparou gera notificação", ErrNoNotice, cs.Alert.ID, cs.Alert.State)
	}
	rs, err := s.readings.Records(ctx, cs.Alert.Sensor, cs.Alert.WindowStart, cs.Alert.WindowEnd, 0)
	if err != nil {
		return notice.Draft{}, fmt.Errorf("leituras do sensor %s: %w", cs.Alert.Sensor, err)
	}
	unsynced := 0
	for _, r := range rs {
		if !r.Synced {
			unsynced++
		}
	}
	const why = "sem hora confiável não há como enquadrar o horário nem o limite. Corrija a sincronização (NTP) do " +
		"gateway ou faça a medição no local"
	if unsynced > 0 {
		loc := cs.Code.Location()
		return notice.Draft{}, fmt.Errorf("%w: %d de %d leituras da janela do alerta (%s a %s) vieram com o relógio do gateway %s "+
			"não sincronizado; "+why, ErrNoNotice, unsynced, len(rs),
			cs.Alert.WindowStart.In(loc).Format("02/01/2006 15:04:05"), cs.Alert.WindowEnd.In(loc).Format("02/01/2006 15:04:05"), cs.Gate)
	}
	if n := cs.Alert.UnsyncedRecords; n > 0 { // outside the window, while the alert was open
		return notice.Draft{}, fmt.Errorf("%w: %d leituras do alerta vieram com o relógio do gateway %s não sincronizado; "+why,
			ErrNoNotice, n, cs.Gate)
	}
	h, err := s.cases.Documents.History(ctx, cs.Party.Document, cs.Code.ID)
	if err != nil {
		return notice.Draft{}, err
	}
	d, err := notice.Build(cs.Code, notice.FromAlert(cs.Alert), cs.Party, cs.Site, h, s.now())
	if err != nil {
		return d, err
	}
	return d, s.applyFine(ctx, &d, cs.Code)
}

// applyFine values the fine of a draft on the day it was prepared with
// UnitValues (notice.ApplyFine). Every path that builds a first document
// calls it.
func (s *Service) applyFine(ctx context.Context, d *notice.Draft, c *codes.Code) error {
	var vs []notice.UnitValue
	if s.unitValues != nil {
		var err error
		if vs, err = s.unitValues(ctx); err != nil {
			return fmt.Errorf("valores das unidades monetárias: %w", err)
		}
	}
	notice.ApplyFine(d, c, vs, d.Prepared)
	return nil
}

// DraftFrom builds the first document for an alert from the constatação
// that confirms it (notice.BuildFrom), with the same checks as Draft and
// the history of the party the constatação names.
func (s *Service) DraftFrom(ctx context.Context, cs *AlertCase, k notice.Constatacao) (notice.Draft, error) {
	if k.Measurement.Kind == notice.MeasureSensor {
		if _, err := s.Draft(ctx, cs); err != nil { // the sensor's window must be one a notice may rest on
			return notice.Draft{}, err
		}
	} else if cs.Alert.State != alerts.StateFiring && cs.Alert.State != alerts.StateResolved {
		return notice.Draft{}, fmt.Errorf("%w: o alerta %s está %s: só um alerta que disparou gera notificação", ErrNoNotice, cs.Alert.ID, cs.Alert.State)
	}
	h, err := s.cases.Documents.History(ctx, k.Source.Document, cs.Code.ID)
	if err != nil {
		return notice.Draft{}, err
	}
	d, err := notice.BuildFrom(cs.Code, notice.FromAlert(cs.Alert), k, cs.Site, h, s.now())
	if err != nil {
		return d, err
	}
	return d, s.applyFine(ctx, &d, cs.Code)
}

func (s *Service) records(ctx context.Context, cs *AlertCase) ([]store.Record, time.Time, time.Time, error) {
	from := cs.Alert.WindowStart.Add(-s.margin)
	to := cs.Alert.WindowEnd.Add(s.margin)
	if !cs.Alert.ResolvedAt.IsZero() && cs.Alert.ResolvedAt.After(cs.Alert.WindowEnd) {
		to = cs.Alert.ResolvedAt.Add(s.margin)
	}
	rs, err := s.readings.Records(ctx, cs.Alert.Sensor, from, to, 0)
	if err != nil {
		return nil, from, to, fmt.Errorf("leituras do sensor %s: %w", cs.Alert.Sensor, err)
	}
	return rs, from, to, nil
}

// Chart draws the readings around the alert.
func (s *Service) Chart(ctx context.Context, cs *AlertCase) ([]byte, error) {
	rs, _, _, err := s.records(ctx, cs)
	if err != nil {
		return nil, err
	}
	return chart(cs, rs)
}

func chart(cs *AlertCase, rs []store.Record) ([]byte, error) {
	pts := make([]pdf.Point, len(rs))
	for i, r := range rs {
		pts[i] = pdf.Point{T: r.T, DurMs: r.DurMs, LAeq: r.LAeq, LAFmax: r.LAFmax}
	}
	return chartPoints(cs, pts)
}

// storedPDF returns the PDF of a document: the bytes stored at issue for
// an issued act (never a re-render), a fresh rendering for a draft or an
// act issued before PDFs were stored.
func (s *Service) storedPDF(ctx context.Context, doc notice.Document) ([]byte, error) {
	b, _, err := s.cases.PDFs.PDF(ctx, doc.ID)
	switch {
	case err == nil:
		return b, nil
	case errors.Is(err, cases.ErrNoPDF):
		return s.render(ctx, doc)
	}
	return nil, err
}

// render renders a stored document.
func (s *Service) render(ctx context.Context, doc notice.Document) ([]byte, error) {
	c, ok := s.codes.Code(doc.Draft.CodeID)
	if !ok {
		return nil, fmt.Errorf("o código %q do documento não está carregado", doc.Draft.CodeID)
	}
	var png []byte
	if cs, err := s.Load(ctx, doc.Draft.Finding.AlertID); err == nil {
		if png, err = s.Chart(ctx, cs); err != nil {
			s.log.Warn("fiscalização: gráfico não gerado", "doc", doc.ID, "erro", err)
		}
	}
	at := doc.Draft.Prepared
	if !doc.IssuedAt.IsZero() {
		at = doc.IssuedAt
	}
	return pdf.Render(pdf.Input{Doc: doc, Deadlines: notice.Deadlines(c, &doc, s.now()), Chart: png, Generated: at,
		EvidenceKey: s.KeyFingerprint()})
}
