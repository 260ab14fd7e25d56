package pdf

import (
	"bytes"
	"fmt"
	"strings"
	"time"

	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"codeberg.org/go-pdf/fpdf"

	"github.com/sossego/sossego/alerts/notice"
)

// Input is what a document PDF shows.
type Input struct {
	Doc       notice.Document
	Deadlines []notice.DeadlineView
	Chart     []byte    // PNG; nil = no chart
	Generated time.Time // printed in the footer and used as the PDF's creation date
}

var stateNames = map[string]string{"PR": "Estado do Paraná", "RJ": "Estado do Rio de Janeiro", "MG": "Estado de Minas Gerais"}

var romans = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}

const (
	pageW, margin = 210.0, 15.0
	bodyW         = pageW - 2*margin
)

// Render lays out the document as an A4 PDF.
func Render(in Input) ([]byte, error) {
	f := newDocument(in)
	f.AddPage()
	header(f, in.Doc)
	requiredFields(f, in.Doc.Draft)
	if err := measurement(f, in.Doc.Draft, in.Chart); err != nil {
		return nil, err
	}
	penalty(f, in.Doc.Draft, in.Deadlines)
	signatures(f, in.Doc)
	if f.Err() {
		return nil, fmt.Errorf("pdf: render: %w", f.Error())
	}
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		return nil, fmt.Errorf("pdf: render: %w", err)
	}
	return buf.Bytes(), nil
}

// newDocument is an A4 document with the embedded fonts, fixed metadata
// dates (the same act renders the same bytes) and the footer of every page.
func newDocument(in Input) *fpdf.Fpdf {
	d := in.Doc
	dr := d.Draft
	f := fpdf.New("P", "mm", "A4", "")
	f.SetCreationDate(in.Generated)
	f.SetModificationDate(in.Generated)
	f.SetCatalogSort(true)
	f.SetCompression(true)
	f.AddUTF8FontFromBytes("sans", "", liberationsansregular.TTF)
	f.AddUTF8FontFromBytes("sans", "B", liberationsansbold.TTF)
	f.SetTitle(fmt.Sprintf("%s %s", dr.Title, d.ID), true)
	f.SetAuthor("Prefeitura Municipal de "+dr.Municipality, true)
	f.SetCreator("Sossego", true)
	f.SetMargins(margin, margin, margin)
	f.SetAutoPageBreak(true, 18)
	f.AliasNbPages("{nb}")
	f.SetFooterFunc(func() {
		f.SetY(-14)
		f.SetFont("sans", "", 7)
		f.SetTextColor(90, 90, 90)
		f.CellFormat(bodyW, 3.5, fmt.Sprintf("Gerado pelo Sossego em %s · %s · versão do código %s", in.Generated.In(saoPaulo).Format("02/01/2006 15:04"),
			dr.CodeTitle, dr.CodeVersion), "", 1, "L", false, 0, "")
		f.CellFormat(bodyW, 3.5, fmt.Sprintf("%s · página %d de {nb}", number(d), f.PageNo()), "", 0, "R", false, 0, "")
		f.SetTextColor(0, 0, 0)
	})
	return f
}

// header is the talonário's header: Prefeitura, number, state, copies, the
// title, the article and its quote.
func header(f *fpdf.Fpdf, d notice.Document) {
	dr := d.Draft
	f.SetFont("sans", "B", 12)
	f.CellFormat(bodyW*0.68, 6, "PREFEITURA MUNICIPAL DE "+strings.ToUpper(dr.Municipality), "LT", 0, "L", false, 0, "")
	f.SetFont("sans", "", 8)
	f.CellFormat(bodyW*0.32, 6, "Nº do documento", "LTR", 1, "L", false, 0, "")
	f.SetFont("sans", "", 9)
	state := stateNames[dr.State]
	if state == "" {
		state = dr.State
	}
	f.CellFormat(bodyW*0.68, 5, state, "L", 0, "L", false, 0, "")
	f.SetFont("sans", "B", 11)
	f.CellFormat(bodyW*0.32, 5, number(d), "LR", 1, "C", false, 0, "")
	f.SetFont("sans", "", 8)
	dept := dr.Department
	y := f.GetY()
	f.MultiCell(bodyW*0.68, 4, dept, "LB", "L", false)
	yEnd := f.GetY()
	f.SetXY(margin+bodyW*0.68, y)
	via := "1ª via: notificado · 2ª via: Prefeitura"
	switch dr.Kind {
	case notice.KindRelatorio:
		via = "documento interno da fiscalização"
	case notice.KindAuto:
		via = "1ª via: autuado · 2ª via: Prefeitura"
	}
	f.CellFormat(bodyW*0.32, yEnd-y, via, "LRB", 1, "C", false, 0, "")
	f.Ln(3)

	f.SetFont("sans", "B", 15)
	f.CellFormat(bodyW, 8, strings.ToUpper(dr.Title), "", 1, "C", false, 0, "")
	f.SetFont("sans", "", 9)
	f.CellFormat(bodyW, 5, fmt.Sprintf("(%s da %s)", dr.Article, dr.CodeTitle), "", 1, "C", false, 0, "")
	if d.State == notice.StateDraft || d.State == "" {
		f.SetTextColor(180, 0, 0)
		f.SetFont("sans", "B", 9)
		f.CellFormat(bodyW, 5, "RASCUNHO — sem valor legal até a emissão pelo agente fiscal", "", 1, "C", false, 0, "")
		f.SetTextColor(0, 0, 0)
	} else {
		f.SetFont("sans", "", 8)
		f.CellFormat(bodyW, 5, "Situação: "+d.State.Label(), "", 1, "C", false, 0, "")
	}
	if dr.Quote != "" {
		f.SetFont("sans", "", 7.5)
		f.SetTextColor(70, 70, 70)
		f.MultiCell(bodyW, 3.5, "“"+dr.Quote+"”", "", "C", false)
		f.SetTextColor(0, 0, 0)
	}
	f.Ln(2)

}

// requiredFields prints the elements the code's procedure requires,
// numbered like the article's items.
func requiredFields(f *fpdf.Fpdf, dr notice.Draft) {
	for i, fl := range dr.Fields {
		n := fmt.Sprint(i + 1)
		if i < len(romans) {
			n = romans[i]
		}
		f.SetFillColor(235, 235, 235)
		f.SetFont("sans", "B", 8.5)
		f.MultiCell(bodyW, 4.5, fmt.Sprintf("%s – %s  (%s)", n, capital(fl.Label), fl.Article), "LTR", "L", true)
		f.SetFont("sans", "", 9.5)
		switch {
		case fl.Pending && fl.ByHand:
			f.SetTextColor(120, 120, 120)
			f.MultiCell(bodyW, 5, "[ preenchimento à mão pelo agente fiscal ]\n\n", "LRB", "L", false)
			f.SetTextColor(0, 0, 0)
		default:
			f.MultiCell(bodyW, 4.8, fl.Value, "LRB", "L", false)
		}
		f.Ln(1.2)
	}

}

// measurement prints what the monitoring system measured, and the chart.
func measurement(f *fpdf.Fpdf, dr notice.Draft, chart []byte) error {
	fd := dr.Finding
	section(f, "Medição (dados do sistema de monitoramento)")
	rows := [][2]string{
		{"Sensor / ponto", fmt.Sprintf("%s — %s (%.5f, %.5f)", dr.Site.Sensor, dr.Site.Address, dr.Site.Lat, dr.Site.Lon)},
		{"Medidor", meter(dr.Site)},
		{"Janela", fmt.Sprintf("%s a %s", fd.WindowStart.In(saoPaulo).Format("02/01/2006 15:04:05"), fd.WindowEnd.In(saoPaulo).Format("02/01/2006 15:04:05"))},
		{"LAeq / LAFmax", fmt.Sprintf("%s dB(A) / %s dB(A)", br1(fd.LAeqDB), br1(fd.LAFmaxDB))},
	}
	if fd.LimitDB != nil {
		rows = append(rows, [2]string{"Limite", fmt.Sprintf("%s dB — %s (%s); margem de incerteza do medidor %s dB", br1(*fd.LimitDB), fd.Article, fd.PeriodLabel, br1(fd.MarginDB))})
	} else {
		rows = append(rows, [2]string{"Regra", fmt.Sprintf("%s — %s (o código não fixa limite em decibéis)", fd.Article, fd.RuleLabel)})
	}
	rows = append(rows, [2]string{"Alerta", fd.AlertID})
	for _, r := range rows {
		f.SetFont("sans", "B", 8)
		y := f.GetY()
		f.CellFormat(32, 4.5, r[0], "", 0, "L", false, 0, "")
		f.SetFont("sans", "", 8)
		f.SetXY(margin+32, y)
		f.MultiCell(bodyW-32, 4.5, r[1], "", "L", false)
	}
	if len(chart) > 0 {
		opt := fpdf.ImageOptions{ImageType: "PNG", ReadDpi: false}
		f.RegisterImageOptionsReader("chart", opt, bytes.NewReader(chart))
		if f.Err() {
			return fmt.Errorf("pdf: chart image: %w", f.Error())
		}
		h := bodyW * 0.42
		if f.GetY()+h > 297-20 {
			f.AddPage()
		}
		f.ImageOptions("chart", margin, f.GetY()+1, bodyW, h, false, opt, 0, "")
		f.SetY(f.GetY() + h + 2)
	}

	return nil
}

// penalty prints the penalty, what follows non-compliance, the appeal and
// the deadlines.
func penalty(f *fpdf.Fpdf, dr notice.Draft, deadlines []notice.DeadlineView) {
	section(f, "Penalidade e prazos")
	f.SetFont("sans", "", 8.5)
	f.MultiCell(bodyW, 4.5, "Penalidade desta infração: "+dr.Penalty.Text, "", "L", false)
	if dr.OnNonCompliance != nil && dr.Kind.IsNotice() {
		f.MultiCell(bodyW, 4.5, "Em caso de não regularização no prazo: "+dr.OnNonCompliance.Text, "", "L", false)
	}
	if !dr.Penalty.AppealAllowed {
		f.MultiCell(bodyW, 4.5, capital(dr.Penalty.AppealNote)+".", "", "L", false)
	}
	for _, dl := range deadlines {
		f.MultiCell(bodyW, 4.5, "• "+deadlineLine(dl), "", "L", false)
	}
	if dr.RefersTo != nil {
		f.MultiCell(bodyW, 4.5, fmt.Sprintf("Documento anterior: %s nº %s.", dr.RefersTo.Title, dr.RefersTo.ID), "", "L", false)
	}
	if len(dr.Notes) > 0 {
		section(f, "Observações")
		f.SetFont("sans", "", 8)
		for _, n := range dr.Notes {
			f.MultiCell(bodyW, 4.2, "• "+capital(n)+".", "", "L", false)
		}
	}

}

// signatures prints the agent's and the party's lines, and the witnesses'.
func signatures(f *fpdf.Fpdf, d notice.Document) {
	dr := d.Draft
	if f.GetY() > 297-70 {
		f.AddPage()
	}
	section(f, "Assinaturas")
	f.Ln(8)
	ag := "Agente fiscal (nome, matrícula e assinatura)"
	if d.Agent != nil {
		ag = fmt.Sprintf("%s — matrícula %s", d.Agent.Name, d.Agent.Matricula)
	}
	party := "Notificado: ciente em ____/____/________"
	if dr.Kind == notice.KindAuto || dr.Kind == notice.KindRelatorio {
		party = "Autuado / infrator"
	}
	if d.SignedBy != "" {
		party = "Ciente: " + d.SignedBy + " em " + d.CienciaAt.In(saoPaulo).Format("02/01/2006")
	} else if len(d.Witnesses) > 0 {
		party = "Recusou-se a assinar em " + d.CienciaAt.In(saoPaulo).Format("02/01/2006")
	}
	sigPair(f, ag, party)
	if dr.Witnesses > 0 || len(d.Witnesses) > 0 {
		w := []string{"Testemunha 1 (nome e documento)", "Testemunha 2 (nome e documento)"}
		for i := range min(2, len(d.Witnesses)) {
			w[i] = fmt.Sprintf("Testemunha %d: %s (%s)", i+1, d.Witnesses[i].Name, d.Witnesses[i].Document)
		}
		f.Ln(10)
		sigPair(f, w[0], w[1])
	}
}

func number(d notice.Document) string {
	if d.ID == "" {
		return "(sem número)"
	}
	return d.ID
}

func section(f *fpdf.Fpdf, title string) {
	if f.GetY() > 297-40 {
		f.AddPage()
	}
	f.Ln(2)
	f.SetFont("sans", "B", 10)
	f.CellFormat(bodyW, 6, title, "B", 1, "L", false, 0, "")
	f.Ln(1)
}

func sigPair(f *fpdf.Fpdf, a, b string) {
	w := bodyW/2 - 5
	y := f.GetY()
	f.Line(margin, y, margin+w, y)
	f.Line(margin+w+10, y, margin+2*w+10, y)
	f.SetFont("sans", "", 7.5)
	f.SetXY(margin, y+0.5)
	f.MultiCell(w, 3.6, a, "", "C", false)
	y2 := f.GetY()
	f.SetXY(margin+w+10, y+0.5)
	f.MultiCell(w, 3.6, b, "", "C", false)
	f.SetY(max(y2, f.GetY()))
}

func meter(s notice.Site) string {
	g := map[string]string{"class1": "classe 1", "class2": "classe 2", "screening": "triagem (não calibrado)"}[s.Grade]
	if g == "" {
		g = "grau não informado"
	}
	out := g
	if s.MeterModel != "" {
		out = fmt.Sprintf("%s nº %s, %s", s.MeterModel, s.MeterSerial, g)
	}
	if s.CalibratedAt != "" {
		out += ", calibração " + s.CalibratedAt
		if s.Certificate != "" {
			out += " (certificado " + s.Certificate + ")"
		}
	}
	return out
}

func deadlineLine(dl notice.DeadlineView) string {
	unit := "dias"
	if dl.Business {
		unit = "dias úteis"
	}
	s := capital(dl.Label)
	if dl.Article != "" {
		s += " (" + dl.Article + ")"
	}
	if dl.Days > 0 {
		s += fmt.Sprintf(": %d %s", dl.Days, unit)
	}
	switch dl.Status {
	case notice.DeadlineNotAllowed:
		return s + " — " + dl.Note
	case notice.DeadlineWaiting:
		return s + " — " + dl.Note
	}
	s += ", último dia " + dl.LastDay
	switch dl.Status {
	case notice.DeadlineExpired:
		s += " (vencido)"
	case notice.DeadlineRunning:
		s += " (em curso)"
	}
	return s
}

func br1(v float64) string { return strings.Replace(fmt.Sprintf("%.1f", v), ".", ",", 1) }

func capital(s string) string {
	if s == "" {
		return s
	}
	r := []rune(s)
	return strings.ToUpper(string(r[0])) + string(r[1:])
}
