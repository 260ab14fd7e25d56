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
//
// Overview of its parts: A4 PDFs (two copies, every page with summary,
// rubrica, página n/N and the act's seal as text and QR code; charts with
// round Brasília time ticks — docs/documents.md; `internal/pdf/report.go`: the
// relatório de níveis sonoros).
package pdf

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"strings"
	"time"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
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
// the limit line and the event window shaded; the time axis has ticks at
// round Brasília times (TimeTicks), the legend stands beside the plot area
// so it never covers a curve, and all text is Liberation Sans, the
// document's font.
func Chart(s ChartSpec, w, h vg.Length, dpi int) ([]byte, error) {
	if len(s.Points) == 0 {
		return nil, fmt.Errorf("pdf: chart: nenhuma leitura no período")
	}
	if s.MaxPoints == 0 {
		s.MaxPoints = 1200
	}
	ps := Downsample(s.Points, s.MaxPoints)
	p := newPlot(s.Title, "dB(A)")
	x := func(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }
	var lg legend

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
		lg.add("janela do evento", band)
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
	lg.add("LAFmax", lmax)
	lg.add("LAeq (1 s)", lleq)
	if s.LimitDB != nil {
		lim, err := plotter.NewLine(plotter.XYs{{X: x(ps[0].T), Y: *s.LimitDB}, {X: x(ps[len(ps)-1].T), Y: *s.LimitDB}})
		if err != nil {
			return nil, fmt.Errorf("pdf: chart: %w", err)
		}
		lim.Color = color.RGBA{R: 200, G: 0, B: 0, A: 255}
		lim.Width = vg.Points(1.2)
		lim.Dashes = []vg.Length{vg.Points(5), vg.Points(3)}
		p.Add(lim)
		lg.add(fmt.Sprintf("limite %s dB", fmtDB(*s.LimitDB)), lim)
	}
	p.Y.Min, p.Y.Max = lo, hi
	setTimeAxis(p)
	return drawPNG(p, lg, w, h, dpi)
}

// The chart's text: Liberation Sans from gonum's embedded collection (the
// same family the PDF embeds).
var (
	chartFont     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	chartFontBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: xfont.WeightBold}
)

// newPlot is a plot with the document's font everywhere and a grid.
func newPlot(title, yLabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font = font.From(chartFontBold, 10)
	p.Title.Padding = vg.Points(4)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(chartFont, 9)
		a.Tick.Label.Font = font.From(chartFont, 8)
	}
	p.Y.Label.Text = yLabel
	p.Y.Tick.Marker = levelTicker{}
	p.Add(plotter.NewGrid())
	return p
}

// setTimeAxis gives the X axis (Unix seconds) round Brasília ticks and
// names it after what its labels show.
func setTimeAxis(p *plot.Plot) {
	p.X.Tick.Marker = timeTicker{}
	p.X.Label.Text = "hora (Brasília)"
	var labels string
	for _, t := range TimeTicks(unixTime(p.X.Min), unixTime(p.X.Max)) {
		labels += t.Label
	}
	switch {
	case strings.Contains(labels, "/") && strings.Contains(labels, ":"):
		p.X.Label.Text = "dia e hora (Brasília)"
	case strings.Contains(labels, "/"):
		p.X.Label.Text = "dia (Brasília)"
	}
}

// legend is a chart's key, drawn in its own column right of the plot area.
type legend struct {
	names  []string
	thumbs []plot.Thumbnailer
}

func (l *legend) add(name string, t plot.Thumbnailer) {
	l.names, l.thumbs = append(l.names, name), append(l.thumbs, t)
}

// drawPNG draws p with the legend in a column on its right and encodes
// the PNG.
func drawPNG(p *plot.Plot, l legend, w, h vg.Length, dpi int) ([]byte, error) {
	key := plot.NewLegend()
	key.TextStyle.Font = font.From(chartFont, 8)
	key.Top, key.Left = true, true
	key.ThumbnailWidth = vg.Points(18)
	key.Padding = vg.Points(3)
	var keyW vg.Length
	for i, n := range l.names {
		key.Add(n, l.thumbs[i])
		keyW = max(keyW, key.TextStyle.Width(n))
	}
	keyW += key.ThumbnailWidth + vg.Points(14)
	c := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	dc := draw.New(c)
	if len(l.names) == 0 {
		keyW = 0
	}
	p.Draw(draw.Crop(dc, 0, -keyW, 0, 0))
	if keyW > 0 {
		// Aligned with the top of the plot area, below the title.
		top := p.Title.TextStyle.Rectangle(p.Title.Text).Size().Y + p.Title.Padding + vg.Points(6)
		key.Draw(draw.Crop(dc, w-keyW+vg.Points(8), 0, 0, -top))
	}
	// Fastest deflate: the chart is mostly flat colour, so it compresses
	// well anyway, and encoding is most of a chart's time.
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, c.Image()); err != nil {
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
