package evidence

import (
	"math"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/internal/level"
)

// Summary is the energy-correct summary of the event window.
type Summary struct {
	AlertID       string    `json:"alert_id"`
	WindowStart   time.Time `json:"window_start"`
	WindowEnd     time.Time `json:"window_end"`
	ExportedFrom  time.Time `json:"exported_from"`
	ExportedTo    time.Time `json:"exported_to"`
	MarginS       float64   `json:"margin_s"`
	Records       int       `json:"records_in_window"`
	RecordsTotal  int       `json:"records_exported"`
	CoveragePct   float64   `json:"coverage_pct"` // time covered by records / window length
	Gaps          int       `json:"gaps"`         // holes longer than 1.5 record durations inside the window
	LAeqDB        *float64  `json:"laeq_db"`
	LAFmaxDB      *float64  `json:"lafmax_db"`
	L10DB         *float64  `json:"l10_db"`
	L90DB         *float64  `json:"l90_db"`
	LnMethod      string    `json:"ln_method"`
	LimitDB       *float64  `json:"limit_db"`
	MarginDB      *float64  `json:"margin_db"` // LAeq − limit
	UncertaintyDB float64   `json:"meter_uncertainty_db"`
	ExceedanceS   float64   `json:"exceedance_s"` // time of records whose LAeq > limit, in the window
	Unsynced      int       `json:"records_clock_unsynced"`
	Rule          string    `json:"rule"`
	Article       string    `json:"article"`
	CodeVersion   string    `json:"code_version"`
	EnvReadings   int       `json:"env_readings"`
}

// summarizer folds records into a Summary one at a time.
type summarizer struct {
	s                Summary
	f                notice.Finding
	acc              level.Accumulator
	hist, laeqHist   level.Histogram
	allHist          bool
	prevEnd          time.Time
	covered          float64
	synced, unsynced int
}

func newSummarizer(p *Package) *summarizer {
	f := p.Finding
	return &summarizer{f: f, allHist: true, s: Summary{AlertID: p.AlertID, WindowStart: f.WindowStart, WindowEnd: f.WindowEnd,
		ExportedFrom: p.From, ExportedTo: p.To, MarginS: p.Margin.Seconds(), LimitDB: f.LimitDB, UncertaintyDB: f.MarginDB,
		Rule: f.RuleID, Article: f.Article, CodeVersion: f.CodeVersion, EnvReadings: len(p.Env)}}
}

func (z *summarizer) add(r *Record) {
	z.s.RecordsTotal++
	if r.Synced {
		z.synced++
	} else {
		z.unsynced++
	}
	if r.T.Before(z.f.WindowStart) || !r.T.Before(z.f.WindowEnd) {
		return
	}
	d := float64(r.DurMs)
	s := &z.s
	s.Records++
	z.acc.Add(r.LAeq, d)
	z.covered += d
	if s.LAFmaxDB == nil || r.LAFmax > *s.LAFmaxDB {
		v := r.LAFmax
		s.LAFmaxDB = &v
	}
	if r.Hist != nil {
		z.hist.Merge(*r.Hist)
	} else {
		z.allHist = false
	}
	z.laeqHist.Add(r.LAeq, d)
	if z.f.LimitDB != nil && r.LAeq > *z.f.LimitDB {
		s.ExceedanceS += d / 1000
	}
	if !r.Synced {
		s.Unsynced++
	}
	if !z.prevEnd.IsZero() && r.T.Sub(z.prevEnd) > time.Duration(d*0.5)*time.Millisecond {
		s.Gaps++
	}
	z.prevEnd = r.T.Add(time.Duration(r.DurMs) * time.Millisecond)
}

func (z *summarizer) done() Summary {
	s := z.s
	if leq, ok := z.acc.Leq(); ok {
		s.LAeqDB = &leq
		if z.f.LimitDB != nil {
			m := leq - *z.f.LimitDB
			s.MarginDB = &m
		}
	}
	hist := z.hist
	if !z.allHist || s.Records == 0 {
		hist = z.laeqHist
		s.LnMethod = "distribuição dos LAeq de 1 s (os registros não trazem histograma LAF completo)"
	} else {
		s.LnMethod = "histograma LAF de 0,1 dB dos registros"
	}
	if v, ok := hist.Percentile(10); ok {
		s.L10DB = &v
	}
	if v, ok := hist.Percentile(90); ok {
		s.L90DB = &v
	}
	if w := z.f.WindowEnd.Sub(z.f.WindowStart); w > 0 {
		s.CoveragePct = math.Round(z.covered/float64(w.Milliseconds())*1000) / 10
	}
	return s
}

// Summarize computes the summary over the finding's window of p.Records.
func Summarize(p *Package) Summary {
	z := newSummarizer(p)
	for i := range p.Records {
		z.add(&p.Records[i])
	}
	return z.done()
}
