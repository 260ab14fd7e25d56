// Package pdf renders the fiscal's documents (notificação/intimação
// preliminar, relatório de constatação, auto de infração) as A4 PDFs in
// pt-BR, laid out like the municipal forms they replace, and draws the chart
// of the readings around the event with the limit line.
//
// Fonts are Liberation Sans (SIL OFL), embedded through the Go module
// codeberg.org/go-fonts/liberation: nothing is downloaded at run time. The
// output is reproducible: the same document and chart give the same bytes
// (fixed creation date, sorted catalog), so an evidence package's hash of
// the PDF is stable.
package pdf

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/sossego/sossego/internal/level"
	"github.com/sossego/sossego/internal/tz"
)

// Point is one record for the chart.
type Point struct {
	T      time.Time
	DurMs  int64
	LAeq   float64
	LAFmax float64
}

// ChartSpec says what to draw.
type ChartSpec struct {
	Title      string
	Points     []Point  // time order
	LimitDB    *float64 // nil: no limit line
	EventStart time.Time
	EventEnd   time.Time
	// MaxPoints bounds the plotted points: longer series are merged into
	// energy-correct buckets (LAeq energy mean, LAFmax max). Default 1200.
	MaxPoints int
}

var saoPaulo = tz.Brasilia()

// Downsample merges points into at most n buckets of equal record count,
// energy-correctly.
func Downsample(ps []Point, n int) []Point {
	if n <= 0 || len(ps) <= n {
		return ps
	}
	per := int(math.Ceil(float64(len(ps)) / float64(n)))
	out := make([]Point, 0, n)
	for i := 0; i < len(ps); i += per {
		j := min(i+per, len(ps))
		var acc level.Accumulator
		var mx float64 = math.Inf(-1)
		var dur int64
		for _, p := range ps[i:j] {
			d := p.DurMs
			if d <= 0 {
				d = 1000
			}
			acc.Add(p.LAeq, float64(d))
			mx = math.Max(mx, p.LAFmax)
			dur += d
		}
		leq, _ := acc.Leq()
		out = append(out, Point{T: ps[i].T, DurMs: dur, LAeq: leq, LAFmax: mx})
	}
	return out
}

// Chart draws the readings as a PNG of w×h at dpi: LAeq per record, LAFmax,
// the limit line and the event window shaded; times in America/Sao_Paulo.
func Chart(s ChartSpec, w, h vg.Length, dpi int) ([]byte, error) {
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("pdf: chart: nenhuma leitura no período")
	}
	if s.MaxPoints == 0 {
		s.MaxPoints = 1200
	}
	ps := Downsample(s.Points, s.MaxPoints)
	p := plot.New()
	p.Title.Text = s.Title
	p.X.Label.Text = "hora (Brasília)"
	p.Y.Label.Text = "dB(A)"
	p.X.Tick.Marker = plot.TimeTicks{Format: "15:04", Time: plot.UnixTimeIn(saoPaulo)}
	p.Add(plotter.NewGrid())
	x := func(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }

	lo, hi := math.Inf(1), math.Inf(-1)
	leq := make(plotter.XYs, len(ps))
	mx := make(plotter.XYs, len(ps))
	for i, pt := range ps {
		leq[i] = plotter.XY{X: x(pt.T), Y: pt.LAeq}
		mx[i] = plotter.XY{X: x(pt.T), Y: pt.LAFmax}
		lo, hi = math.Min(lo, pt.LAeq), math.Max(hi, pt.LAFmax)
	}
	if s.LimitDB != nil {
		lo, hi = math.Min(lo, *s.LimitDB), math.Max(hi, *s.LimitDB)
	}
	lo, hi = math.Floor(lo-5), math.Ceil(hi+5)
	if !s.EventStart.IsZero() && s.EventEnd.After(s.EventStart) {
		band, err := plotter.NewPolygon(plotter.XYs{{X: x(s.EventStart), Y: lo}, {X: x(s.EventEnd), Y: lo}, {X: x(s.EventEnd), Y: hi}, {X: x(s.EventStart), Y: hi}})
		if err != nil {
			return nil, fmt.Errorf("pdf: chart: %w", err)
		}
		band.Color = color.RGBA{R: 255, G: 228, B: 181, A: 255}
		band.LineStyle.Width = 0
		p.Add(band)
		p.Legend.Add("janela do evento", band)
	}
	lmax, err := plotter.NewLine(mx)
	if err != nil {
		return nil, fmt.Errorf("pdf: chart: %w", err)
	}
	lmax.Color = color.RGBA{R: 150, G: 150, B: 150, A: 255}
	lmax.Width = vg.Points(0.6)
	lleq, err := plotter.NewLine(leq)
	if err != nil {
		return nil, fmt.Errorf("pdf: chart: %w", err)
	}
	lleq.Color = color.RGBA{R: 20, G: 60, B: 160, A: 255}
	lleq.Width = vg.Points(1)
	p.Add(lmax, lleq)
	p.Legend.Add("LAFmax", lmax)
	p.Legend.Add("LAeq (1 s)", lleq)
	if s.LimitDB != nil {
		lim, err := plotter.NewLine(plotter.XYs{{X: x(ps[0].T), Y: *s.LimitDB}, {X: x(ps[len(ps)-1].T), Y: *s.LimitDB}})
		if err != nil {
			return nil, fmt.Errorf("pdf: chart: %w", err)
		}
		lim.Color = color.RGBA{R: 200, G: 0, B: 0, A: 255}
		lim.Width = vg.Points(1.2)
		lim.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(lim)
		p.Legend.Add(fmt.Sprintf("limite %s dB", fmtDB(*s.LimitDB)), lim)
	}
	p.Y.Min, p.Y.Max = lo, hi
	p.Legend.Top = true
	p.Legend.Left = true
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	p.Draw(draw.New(c))
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&buf); err != nil {
		return nil, fmt.Errorf("pdf: chart: %w", err)
	}
	return buf.Bytes(), nil
}

func fmtDB(v float64) string {
	if v == math.Trunc(v) {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.1f", v)
}
