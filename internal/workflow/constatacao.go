package workflow

// Constatações: what the fiscal found on site or confirmed from the
// sensor, the ground of every notice.

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/calibration"
	"github.com/sossego/sossego/internal/cases"
	"github.com/sossego/sossego/internal/docid"
	"github.com/sossego/sossego/internal/registry"
)

// calibration is the calibration decision of a sensor's meter at at: the
// calibration register's when wired, else calibration.Decide on the
// register of sensors' meter alone.
func (s *Service) calibration(sn registry.Sensor, at time.Time) (bool, string) {
	m := sn.Meter.Calibration()
	if s.calibrations == nil {
		d := calibration.Decide(calibration.Facts{}, m, at)
		return d.OK, d.Why
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	d := s.calibrations.Decide(ctx, sn.ID, m, at)
	return d.OK, d.Why
}

// SourceRequest names the source of the noise a constatação found.
type SourceRequest struct {
	Kind notice.SourceKind
	// EstablishmentID is the CNPJ/CPF of an establishment of the register.
	EstablishmentID string
	Name            string
	Document        string
	Address         string
}

// MeasurementRequest is how the noise was measured.
type MeasurementRequest struct {
	Kind           notice.MeasurementKind
	SourceAttested bool
	Meter          *notice.Meter
	LAeqDB         *float64
	LAFmaxDB       *float64
	DurationS      int
	ResidualDB     *float64
	Evidence       string
}

// ConstatacaoRequest is a constatação as the fiscal records it.
type ConstatacaoRequest struct {
	// FollowsUp is the notice whose prazo this constatação follows up.
	FollowsUp   string
	Source      SourceRequest
	Position    notice.Position
	At          time.Time
	Heard       string
	Measurement MeasurementRequest
}

// ConstatacaoView is a stored constatação and whether it grounds a notice.
type ConstatacaoView struct {
	notice.Constatacao
	Grounds bool `json:"grounds"`
	// Why says, when it does not ground a notice, why and what is needed.
	Why string `json:"why,omitempty"`
}

func constatacaoView(k notice.Constatacao) ConstatacaoView {
	v := ConstatacaoView{Constatacao: k, Grounds: true}
	if err := k.Grounds(); err != nil {
		v.Grounds, v.Why = false, strings.TrimPrefix(err.Error(), notice.ErrNoGround.Error()+": ")
	}
	return v
}

// RecordConstatacao records the constatação u made of the alert; u signs
// it.
func (s *Service) RecordConstatacao(ctx context.Context, alertID string, req ConstatacaoRequest, u User) (ConstatacaoView, error) {
	cs, err := s.Load(ctx, alertID)
	if err != nil {
		return ConstatacaoView{}, err
	}
	ag, err := agentOf(u)
	if err != nil {
		return ConstatacaoView{}, err
	}
	now := s.now()
	k, err := s.constatacao(cs, req, ag, actor(u), now)
	if err != nil {
		return ConstatacaoView{}, err
	}
	if err := notice.CheckConstatacao(k, now); err != nil {
		return ConstatacaoView{}, err
	}
	if k, err = s.cases.Constatacoes.RecordConstatacao(ctx, k); err != nil {
		return ConstatacaoView{}, err
	}
	s.changed(Change{AlertID: cs.Alert.ID, NoticeID: k.FollowsUp, Action: "constatacao", By: u.ID, At: now})
	return constatacaoView(k), nil
}

// constatacao assembles a constatação from its request and the case: the
// register's establishment, the sensor's window and calibration verdict,
// the limit in force at its time.
func (s *Service) constatacao(cs *AlertCase, b ConstatacaoRequest, ag notice.Agent, by notice.Actor, now time.Time) (notice.Constatacao, error) {
	k := notice.Constatacao{AlertID: cs.Alert.ID, CodeID: cs.Code.ID, FollowsUp: strings.TrimSpace(b.FollowsUp),
		Position: b.Position, At: b.At, Heard: strings.TrimSpace(b.Heard), Agent: ag, RecordedBy: by, RecordedAt: now}
	k.Position.Address = strings.TrimSpace(k.Position.Address)
	estType, err := s.source(cs, b.Source, &k)
	if err != nil {
		return k, err
	}
	m := b.Measurement
	k.Measurement = notice.Measurement{Kind: m.Kind, Evidence: strings.TrimSpace(m.Evidence)}
	switch m.Kind {
	case notice.MeasureSensor:
		if k.FollowsUp != "" {
			return k, fmt.Errorf("%w: a constatação após o prazo precisa de nova medição no local ou da declaração do fiscal; a janela do alerta é anterior à notificação", notice.ErrInput)
		}
		s.sensorMeasurement(cs, m.SourceAttested, &k.Measurement)
	case notice.MeasureOnSite:
		k.Measurement.Meter, k.Measurement.LAeqDB, k.Measurement.LAFmaxDB = m.Meter, m.LAeqDB, m.LAFmaxDB
		k.Measurement.DurationS, k.Measurement.ResidualDB = m.DurationS, m.ResidualDB
	}
	if m.Kind == notice.MeasureOnSite || m.Kind == notice.MeasureStatement {
		if !k.At.IsZero() {
			if l, ok := cs.Code.ActiveLimit(cs.Site.Zone, estType, k.At); ok && l.DBA > 0 {
				lim := l.DBA
				k.Measurement.LimitDB = &lim
			}
		}
	}
	return k, nil
}

// source fills the constatação's source from the request (an
// establishment of the register by its CNPJ/CPF) and returns the
// establishment type the limit is looked up with.
func (s *Service) source(cs *AlertCase, src SourceRequest, k *notice.Constatacao) (string, error) {
	k.Source = notice.Source{Kind: src.Kind, Name: strings.TrimSpace(src.Name), Document: strings.TrimSpace(src.Document),
		Address: strings.TrimSpace(src.Address)}
	estType := cs.Alert.EstablishmentType
	switch src.Kind {
	case notice.SourceEstablishment:
		id := docid.Normalize(src.EstablishmentID)
		k.Source.EstablishmentID = id
		if id != "" {
			e, ok := s.establishment(cs, id)
			if !ok {
				return estType, fmt.Errorf("%w: fonte: o estabelecimento %q não está no cadastro; escolha um da lista ou informe a fonte como “outra”",
					notice.ErrInput, src.EstablishmentID)
			}
			k.Source.Name, k.Source.Document, k.Source.Address, k.Source.Type = e.Name, e.Document, e.Address, e.Type
			if e.Type != "" {
				estType = e.Type
			}
		}
	case notice.SourceUnidentified:
		k.Source = notice.Source{Kind: notice.SourceUnidentified}
	}
	return estType, nil
}

// sensorMeasurement is the alert's window as the measurement: its levels,
// the sensor's grade and calibration verdict, the limit it exceeded.
func (s *Service) sensorMeasurement(cs *AlertCase, attested bool, m *notice.Measurement) {
	a := cs.Alert
	laeq, lafmax := a.LAeqDB, a.LAFmaxDB
	m.Sensor, m.WindowStart, m.WindowEnd = a.Sensor, a.WindowStart, a.WindowEnd
	m.SensorGrade, m.SourceAttested = cs.Site.Grade, attested
	m.LAeqDB, m.LAFmaxDB = &laeq, &lafmax
	if sn, ok := s.registry.Sensor(a.Sensor); ok {
		m.CalibrationOK, m.CalibrationNote = s.calibration(sn, a.WindowStart)
	}
	if a.LimitDB > 0 {
		lim := a.LimitDB
		m.LimitDB = &lim
	}
}

// establishment finds an establishment of the register by its CNPJ/CPF:
// the alert's sensor's first, then any sensor's.
func (s *Service) establishment(cs *AlertCase, id string) (registry.Establishment, bool) {
	var sensors []registry.Sensor
	if sn, ok := s.registry.Sensor(cs.Alert.Sensor); ok {
		sensors = append(sensors, sn)
	}
	if all, ok := s.registry.(interface{ Sensors() []registry.Sensor }); ok {
		sensors = append(sensors, all.Sensors()...)
	}
	for _, sn := range sensors {
		for _, e := range sn.Establishments {
			if docid.Normalize(e.Document) == id {
				return e, true
			}
		}
	}
	return registry.Establishment{}, false
}

// Constatacoes lists the alert's constatações, each with whether it
// grounds a notice.
func (s *Service) Constatacoes(ctx context.Context, alertID string) ([]ConstatacaoView, error) {
	if err := s.knownAlert(ctx, alertID); err != nil {
		return nil, err
	}
	ks, err := s.cases.Constatacoes.Constatacoes(ctx, alertID)
	if err != nil {
		return nil, err
	}
	out := make([]ConstatacaoView, len(ks))
	for i, k := range ks {
		out[i] = constatacaoView(k)
	}
	return out, nil
}

// grounding picks the constatação a new notice rests on: the one named in
// the request, or the latest first-document constatação of the alert; the
// error says what is missing.
func (s *Service) grounding(ctx context.Context, alertID, want string) (notice.Constatacao, error) {
	ks, err := s.cases.Constatacoes.Constatacoes(ctx, alertID)
	if err != nil {
		return notice.Constatacao{}, err
	}
	var last *notice.Constatacao
	for i := range ks {
		k := ks[i]
		if want != "" && k.ID == want {
			if k.FollowsUp != "" {
				return k, conflict("a constatação %s acompanha o prazo da %s: ela fundamenta o auto, não uma nova notificação", k.ID, k.FollowsUp)
			}
			return k, k.Grounds()
		}
		if want == "" && k.FollowsUp == "" {
			last = &ks[i]
		}
	}
	if want != "" {
		return notice.Constatacao{}, fmt.Errorf("constatação %q do alerta %s: %w", want, alertID, cases.ErrNotFound)
	}
	if last == nil {
		return notice.Constatacao{}, fmt.Errorf("%w: o alerta é um indício, não uma infração: antes da notificação, registre a constatação do fiscal "+
			"(fonte, onde o fiscal estava, data e hora, o que foi ouvido e a medição que confirma)", notice.ErrNoGround)
	}
	return *last, last.Grounds()
}
