package pdf

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"strings"
	"time"

	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"codeberg.org/go-pdf/fpdf"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/sossego/sossego/internal/stats"
)

// ReportInput is a noise report (relatório de níveis sonoros) of one or
// more sensors over a range.
type ReportInput struct {
	Municipality string // as printed in the header, e.g. "Lapa"
	State        string // UF, e.g. "PR"
	From, To     time.Time
	Generated    time.Time
	Sensors      []ReportSensor
}

// ReportSensor is one sensor's part of a report.
type ReportSensor struct {
	ID, Address, Zone string
	Code              string // the code's title, e.g. "Código de Posturas de Lapa (Lei 1.234/2004)"
	Meter             string
	Report            stats.Report
	Hours             []Point           // hourly LAeq and LAFmax for the chart
	Limits            []stats.LimitStep // the limit in force over the range
}

// ReportChart draws hourly LAeq (and LAFmax) with the limit in force as a
// stepped line, times in Brasília; a PNG of w×h at dpi.
func ReportChart(title string, hours []Point, limits []stats.LimitStep, w, h vg.Length, dpi int) ([]byte, error) {
	if len(hours) == 0 {
		return nil, fmt.Errorf("pdf: chart: nenhuma leitura no período")
	}
	ps := Downsample(hours, 1500)
	p := newPlot(title, "dB(A)")
	var lg legend
	x := func(t time.Time) float64 { return float64(t.UnixMilli()) / 1000 }
	lo, hi := math.Inf(1), math.Inf(-1)
	leq := make(plotter.XYs, len(ps))
	mx := make(plotter.XYs, len(ps))
	for i, pt := range ps {
		leq[i] = plotter.XY{X: x(pt.T), Y: pt.LAeq}
		mx[i] = plotter.XY{X: x(pt.T), Y: pt.LAFmax}
		lo, hi = math.Min(lo, pt.LAeq), math.Max(hi, pt.LAFmax)
	}
	lmax, err := plotter.NewLine(mx)
	if err != nil {
		return nil, fmt.Errorf("pdf: chart: %w", err)
	}
	lmax.Color = color.RGBA{R: 160, G: 160, B: 160, A: 255}
	lmax.Width = vg.Points(0.5)
	lleq, err := plotter.NewLine(leq)
	if err != nil {
		return nil, fmt.Errorf("pdf: chart: %w", err)
	}
	lleq.Color = color.RGBA{R: 20, G: 60, B: 160, A: 255}
	lleq.Width = vg.Points(0.9)
	p.Add(lmax, lleq)
	lg.add("LAFmax da hora", lmax)
	lg.add("LAeq da hora", lleq)
	var steps plotter.XYs
	for _, s := range limits {
		if s.LimitDBA == nil {
			continue
		}
		v := *s.LimitDBA
		lo, hi = math.Min(lo, v), math.Max(hi, v)
		steps = append(steps, plotter.XY{X: x(s.Start), Y: v}, plotter.XY{X: x(s.End), Y: v})
	}
	if len(steps) > 0 {
		lim, err := plotter.NewLine(steps)
		if err != nil {
			return nil, fmt.Errorf("pdf: chart: %w", err)
		}
		lim.Color = color.RGBA{R: 200, G: 0, B: 0, A: 255}
		lim.Width = vg.Points(1)
		lim.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(lim)
		lg.add("limite em vigor", lim)
	}
	p.Y.Min, p.Y.Max = math.Floor(lo-5), math.Ceil(hi+5)
	setTimeAxis(p)
	return drawPNG(p, lg, w, h, dpi)
}

func brDB(v *float64) string {
	if v == nil {
		return "—"
	}
	return br1(*v)
}

func brPct(v float64) string {
	return strings.Replace(fmt.Sprintf("%.1f", 100*v), ".", ",", 1) + " %"
}

func when(t time.Time) string { return t.In(saoPaulo).Format("02/01/2006 15:04") }

// RenderReport lays out a report as an A4 PDF in pt-BR.
func RenderReport(in ReportInput) ([]byte, error) {
	f := fpdf.New("P", "mm", "A4", "")
	f.SetCreationDate(in.Generated)
	f.SetModificationDate(in.Generated)
	f.SetCatalogSort(true)
	f.SetCompression(true)
	f.AddUTF8FontFromBytes("sans", "", liberationsansregular.TTF)
	f.AddUTF8FontFromBytes("sans", "B", liberationsansbold.TTF)
	f.SetTitle("Relatório de níveis sonoros — "+in.Municipality, true)
	f.SetAuthor("Prefeitura Municipal de "+in.Municipality, true)
	f.SetCreator("Sossego", true)
	f.SetMargins(margin, margin, margin)
	f.SetAutoPageBreak(true, 18)
	f.AliasNbPages("{nb}")
	f.SetFooterFunc(func() {
		f.SetY(-14)
		f.SetFont("sans", "", 7)
		f.SetTextColor(90, 90, 90)
		f.CellFormat(bodyW, 3.5, "Gerado pelo Sossego em "+when(in.Generated)+" (horário de Brasília) a partir dos agregados de longo prazo",
			"", 1, "L", false, 0, "")
		f.CellFormat(bodyW, 3.5, fmt.Sprintf("Relatório de níveis sonoros · página %d de {nb}", f.PageNo()), "", 0, "R", false, 0, "")
		f.SetTextColor(0, 0, 0)
	})
	f.AddPage()
	f.SetFont("sans", "B", 12)
	f.CellFormat(bodyW, 6, "PREFEITURA MUNICIPAL DE "+strings.ToUpper(in.Municipality), "", 1, "L", false, 0, "")
	f.SetFont("sans", "", 9)
	if s := stateNames[in.State]; s != "" {
		f.CellFormat(bodyW, 5, s, "", 1, "L", false, 0, "")
	}
	f.Ln(2)
	f.SetFont("sans", "B", 15)
	f.CellFormat(bodyW, 8, "RELATÓRIO DE NÍVEIS SONOROS", "", 1, "C", false, 0, "")
	f.SetFont("sans", "", 9)
	f.CellFormat(bodyW, 5, fmt.Sprintf("Período: %s a %s (horário de Brasília)", when(in.From), when(in.To)), "", 1, "C", false, 0, "")
	f.SetFont("sans", "", 7.5)
	f.SetTextColor(90, 90, 90)
	f.MultiCell(bodyW, 3.6, "Documento informativo do monitoramento contínuo; não substitui a constatação do agente fiscal. "+
		"Níveis em dB(A) re 20 µPa, combinados por energia.", "", "C", false)
	f.SetTextColor(0, 0, 0)

	for i, s := range in.Sensors {
		if i > 0 {
			f.AddPage()
		}
		if err := reportSensor(f, s); err != nil {
			return nil, err
		}
	}
	section(f, "Método")
	f.SetFont("sans", "", 7.5)
	for _, n := range []string{
		"LAeq: nível equivalente contínuo, média de energia dos registros de 1 s do período; nunca média de decibéis.",
		"Períodos legais: os do código municipal do sensor, como o sistema os aplica a cada instante (feriados e dias de serviço incluídos). " +
			"Cada ocorrência (por exemplo, uma noite) é apurada à parte.",
		"Ld, Le, Ln e Lden: ISO 1996-1 / Diretiva Europeia 2002/49/CE — dia 07h–19h, entardecer 19h–23h (+5 dB), noite 23h–07h (+10 dB), " +
			"por dia civil (00h–24h); Lden = 10·lg((12·10^(Ld/10) + 4·10^((Le+5)/10) + 8·10^((Ln+10)/10))/24). São indicadores " +
			"internacionais, não os períodos do código municipal.",
		"L10, L50, L90, L95: níveis excedidos em 10, 50, 90 e 95 % do tempo, lidos dos histogramas de 0,1 dB dos níveis LAF " +
			"(125 ms) de cada segundo somados; onde um segundo não trouxe histograma, conta o seu LAeq de 1 s.",
		"Minutos acima: minutos cujo LAeq de 1 min é maior que o limite em vigor no seu início. Episódio: sequência de minutos " +
			"consecutivos acima do limite; um minuto abaixo ou sem dados o encerra.",
		"Cobertura: parcela do tempo do período coberta por registros recebidos.",
	} {
		f.MultiCell(bodyW, 3.6, "• "+n, "", "L", false)
	}
	if f.Err() {
		return nil, fmt.Errorf("pdf: report: %w", f.Error())
	}
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		return nil, fmt.Errorf("pdf: report: %w", err)
	}
	return buf.Bytes(), nil
}

type col struct {
	title string
	w     float64
}

func table(f *fpdf.Fpdf, cols []col, rows [][]string) {
	head := func() {
		f.SetFont("sans", "B", 7)
		f.SetFillColor(230, 230, 230)
		for _, c := range cols {
			f.CellFormat(c.w, 5, c.title, "1", 0, "C", true, 0, "")
		}
		f.Ln(-1)
	}
	head()
	f.SetFont("sans", "", 7)
	for _, r := range rows {
		if f.GetY() > 297-24 {
			f.AddPage()
			head()
			f.SetFont("sans", "", 7)
		}
		for i, c := range cols {
			align := "R"
			if i == 0 {
				align = "L"
			}
			f.CellFormat(c.w, 4.4, r[i], "1", 0, align, false, 0, "")
		}
		f.Ln(-1)
	}
}

func limitText(p stats.PeriodFigures) string {
	if p.LimitDBA == nil {
		return "—"
	}
	return br1(*p.LimitDBA)
}

func reportSensor(f *fpdf.Fpdf, s ReportSensor) error {
	reportSensorSummary(f, s)
	reportPeriodTable(f, &s.Report)
	if len(s.Hours) > 0 {
		if err := reportSensorChart(f, s); err != nil {
			return err
		}
	}
	if len(s.Report.Days) > 1 {
		reportDayTable(f, &s.Report)
	}
	if len(s.Report.Occurrences) > 0 && len(s.Report.Occurrences) <= 100 {
		reportOccurrenceTable(f, &s.Report)
	}
	return nil
}

// reportSensorSummary writes the sensor's heading, its place, zone, code
// and meter, and the figures of the whole range.
func reportSensorSummary(f *fpdf.Fpdf, s ReportSensor) {
	r := s.Report
	section(f, "Sensor "+s.ID)
	for _, row := range [][2]string{
		{"Local", s.Address}, {"Zona", s.Zone}, {"Código", s.Code}, {"Medidor", s.Meter},
	} {
		if row[1] == "" {
			continue
		}
		f.SetFont("sans", "B", 8)
		y := f.GetY()
		f.CellFormat(22, 4.5, row[0], "", 0, "L", false, 0, "")
		f.SetFont("sans", "", 8)
		f.SetXY(margin+22, y)
		f.MultiCell(bodyW-22, 4.5, row[1], "", "L", false)
	}
	f.Ln(1)
	f.SetFont("sans", "", 8.5)
	f.MultiCell(bodyW, 4.5, fmt.Sprintf("Período inteiro: LAeq %s dB(A); L10 %s, L50 %s, L90 %s, L95 %s dB(A); LAFmax %s dB(A). "+
		"Ld %s, Le %s, Ln %s, Lden %s dB(A). Cobertura %s; %d minutos acima do limite em %d episódio(s).",
		brDB(r.LAeq), brDB(r.L10), brDB(r.L50), brDB(r.L90), brDB(r.L95), brDB(r.LAFmax),
		brDB(r.Ld), brDB(r.Le), brDB(r.Ln), brDB(r.Lden), brPct(r.Coverage), r.MinutesAbove, r.EpisodesAbove), "", "L", false)
	f.Ln(1)
}

// reportPeriodTable writes the figures of each legal period.
func reportPeriodTable(f *fpdf.Fpdf, r *stats.Report) {
	f.SetFont("sans", "B", 8.5)
	f.CellFormat(bodyW, 5, "Por período legal", "", 1, "L", false, 0, "")
	cols := []col{{"Período", 52}, {"Limite", 14}, {"LAeq", 14}, {"L90", 14}, {"LAFmax", 15}, {"Min. acima", 18}, {"Episódios", 17}, {"Cobertura", 16}}
	var rows [][]string
	for _, p := range r.Periods {
		rows = append(rows, []string{p.PeriodLabel, limitText(p), brDB(p.LAeq), brDB(p.L90), brDB(p.LAFmax),
			fmt.Sprint(p.MinutesAbove), fmt.Sprint(p.EpisodesAbove), brPct(p.Coverage)})
	}
	table(f, cols, rows)
}

// reportSensorChart draws the hourly chart with the limit in force, on a
// new page when it does not fit.
func reportSensorChart(f *fpdf.Fpdf, s ReportSensor) error {
	png, err := ReportChart("", s.Hours, s.Limits, vg.Length(bodyW)*vg.Millimeter, vg.Length(bodyW*0.42)*vg.Millimeter, 150)
	if err != nil {
		return err
	}
	name := "chart-" + s.ID
	opt := fpdf.ImageOptions{ImageType: "PNG"}
	f.RegisterImageOptionsReader(name, opt, bytes.NewReader(png))
	if f.Err() {
		return fmt.Errorf("pdf: chart image: %w", f.Error())
	}
	h := bodyW * 0.42
	if f.GetY()+h > 297-22 {
		f.AddPage()
	}
	f.ImageOptions(name, margin, f.GetY()+2, bodyW, h, false, opt, 0, "")
	f.SetY(f.GetY() + h + 3)
	return nil
}

// reportDayTable writes the figures of each civil day, with the ISO 1996
// indicators.
func reportDayTable(f *fpdf.Fpdf, r *stats.Report) {
	if f.GetY() > 297-50 {
		f.AddPage()
	}
	f.SetFont("sans", "B", 8.5)
	f.CellFormat(bodyW, 5, "Por dia (00h–24h)", "", 1, "L", false, 0, "")
	cols := []col{{"Dia", 22}, {"LAeq 24 h", 17}, {"Ld", 14}, {"Le", 14}, {"Ln", 14}, {"Lden", 14}, {"L90", 14}, {"LAFmax", 16}, {"Min. acima", 18}, {"Cobertura", 17}}
	var rows [][]string
	for _, d := range r.Days {
		day, _ := time.Parse(time.DateOnly, d.Date)
		rows = append(rows, []string{day.Format("02/01/2006"), brDB(d.LAeq), brDB(d.Ld), brDB(d.Le), brDB(d.Ln), brDB(d.Lden),
			brDB(d.L90), brDB(d.LAFmax), fmt.Sprint(d.MinutesAbove), brPct(d.Coverage)})
	}
	table(f, cols, rows)
}

// reportOccurrenceTable writes the figures of each occurrence of a legal
// period (one night, say).
func reportOccurrenceTable(f *fpdf.Fpdf, r *stats.Report) {
	if f.GetY() > 297-50 {
		f.AddPage()
	}
	f.Ln(2)
	f.SetFont("sans", "B", 8.5)
	f.CellFormat(bodyW, 5, "Por ocorrência de período legal", "", 1, "L", false, 0, "")
	cols := []col{{"Início – fim", 50}, {"Período", 30}, {"Limite", 14}, {"LAeq", 14}, {"L90", 14}, {"Min. acima", 18}, {"Episódios", 17}, {"Cobertura", 17}}
	var rows [][]string
	for _, o := range r.Occurrences {
		period := o.Period
		if period == "" {
			period = "sem limite"
		}
		rows = append(rows, []string{when(o.Start) + " – " + o.End.In(saoPaulo).Format("02/01 15:04"), period, limitText(o),
			brDB(o.LAeq), brDB(o.L90), fmt.Sprint(o.MinutesAbove), fmt.Sprint(o.EpisodesAbove), brPct(o.Coverage)})
	}
	table(f, cols, rows)
}
