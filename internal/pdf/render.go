package pdf

import (
	"bytes"
	"fmt"
	"image/color"
	"regexp"
	"strconv"
	"strings"
	"time"

	"codeberg.org/go-fonts/liberation/liberationsansbold"
	"codeberg.org/go-fonts/liberation/liberationsansregular"
	"codeberg.org/go-pdf/fpdf"
	"github.com/boombuler/barcode"
	"github.com/boombuler/barcode/qr"

	"github.com/sossego/sossego/alerts/evidence"
	"github.com/sossego/sossego/alerts/notice"
)

// Input is what a document PDF shows.
type Input struct {
	Doc       notice.Document
	Deadlines []notice.DeadlineView
	Chart     []byte    // PNG; nil = no chart
	Generated time.Time // printed in the footer and used as the PDF's creation date
	// EvidenceKey is the fingerprint (evidence.Fingerprint) of the key that
	// signs the evidence packages, printed on every page so that a perito
	// can compare it with a package and with the published key ("" = none).
	EvidenceKey string
}

var stateNames = map[string]string{"PR": "Estado do Paraná", "RJ": "Estado do Rio de Janeiro", "MG": "Estado de Minas Gerais"}

var romans = []string{"I", "II", "III", "IV", "V", "VI", "VII", "VIII", "IX", "X", "XI", "XII"}

const (
	pageW, pageH, margin = 210.0, 297.0, 15.0
	bodyW                = pageW - 2*margin
	// footerTop is where every page's footer (summary, rubrica, seal, QR
	// code) begins; the body breaks pages above it.
	footerTop = pageH - 25
	bodyEnd   = footerTop - 2
	qrSize    = 17.0
)

// Via is one copy of a document: "1ª via" for the party, "2ª via" for the
// Prefeitura's files. A Relatório de Constatação is internal and has one
// unnumbered copy.
type Via struct {
	Label string // "1ª via — notificado"
}

// Vias are the copies Render prints for a document of kind k, in order.
func Vias(k notice.Kind) []Via {
	if k == notice.KindRelatorio {
		return []Via{{Label: "documento interno da fiscalização"}}
	}
	return []Via{{Label: "1ª via — " + partyWord(k)}, {Label: "2ª via — Prefeitura"}}
}

// partyWord is how the code's document names the person it is addressed to.
func partyWord(k notice.Kind) string {
	switch k {
	case notice.KindIntimacaoPreliminar:
		return "intimado"
	case notice.KindAuto, notice.KindRelatorio:
		return "autuado"
	}
	return "notificado"
}

// feminine reports whether the document's name is feminine in Portuguese
// ("a Notificação", "a Intimação"; "o Auto", "o Relatório"), for agreement.
func feminine(k notice.Kind) bool { return k.IsNotice() }

// agree picks the feminine or masculine form.
func agree(k notice.Kind, fem, masc string) string {
	if feminine(k) {
		return fem
	}
	return masc
}

// renderer lays out one document; pages remember which copy they belong
// to, for the footer.
type renderer struct {
	f    *fpdf.Fpdf
	in   Input
	seal Seal
	qr   barcode.Barcode

	via       int   // the copy being laid out
	pageVia   []int // per page (index PageNo), its copy
	viaFirst  []int // per copy, its first page
	initials  string
	viaLabels []Via
}

// Render lays out the document as an A4 PDF: every copy (Vias) in full, one
// after the other, each page with the document's summary, the agent's
// initials, "página n/N" of its copy, and the seal (Seal) as text and as a
// QR code.
func Render(in Input) ([]byte, error) {
	seal, err := SealOf(in.Doc)
	if err != nil {
		return nil, err
	}
	code, err := qr.Encode(seal.URI(), qr.M, qr.Auto)
	if err != nil {
		return nil, fmt.Errorf("pdf: QR code: %w", err)
	}
	r := &renderer{in: in, seal: seal, qr: code, viaLabels: Vias(in.Doc.Draft.Kind), pageVia: []int{0}}
	if in.Doc.Agent != nil {
		r.initials = Initials(in.Doc.Agent.Name)
	}
	r.f = r.newDocument()
	f := r.f
	if len(in.Chart) > 0 {
		f.RegisterImageOptionsReader("chart", fpdf.ImageOptions{ImageType: "PNG"}, bytes.NewReader(in.Chart))
		if f.Err() {
			return nil, fmt.Errorf("pdf: chart image: %w", f.Error())
		}
	}
	for i := range r.viaLabels {
		r.via = i
		r.viaFirst = append(r.viaFirst, f.PageNo()+1)
		f.AddPage()
		r.body()
	}
	if f.Err() {
		return nil, fmt.Errorf("pdf: render: %w", f.Error())
	}
	// Every copy has the same layout, so the same number of pages.
	f.RegisterAlias("{nv}", strconv.Itoa(f.PageNo()/len(r.viaLabels)))
	var buf bytes.Buffer
	if err := f.Output(&buf); err != nil {
		return nil, fmt.Errorf("pdf: render: %w", err)
	}
	return buf.Bytes(), nil
}

// body is one complete copy of the document.
func (r *renderer) body() {
	f, d := r.f, r.in.Doc
	header(f, d, r.viaLabels[r.via])
	requiredFields(f, d.Draft)
	constatacoes(f, d.Draft)
	measurement(f, d.Draft, len(r.in.Chart) > 0)
	r.closing()
}

// newDocument is an A4 document with the embedded fonts, fixed metadata
// dates (the same act renders the same bytes) and the footer of every page.
func (r *renderer) newDocument() *fpdf.Fpdf {
	d := r.in.Doc
	dr := d.Draft
	f := fpdf.New("P", "mm", "A4", "")
	f.SetCreationDate(r.in.Generated)
	f.SetModificationDate(r.in.Generated)
	f.SetCatalogSort(true)
	f.SetCompression(true)
	f.AddUTF8FontFromBytes("sans", "", liberationsansregular.TTF)
	f.AddUTF8FontFromBytes("sans", "B", liberationsansbold.TTF)
	f.SetTitle(fmt.Sprintf("%s %s", dr.Title, d.ID), true)
	f.SetAuthor("Prefeitura Municipal de "+dr.Municipality, true)
	f.SetSubject(r.seal.URI(), true)
	f.SetCreator("Sossego", true)
	f.SetMargins(margin, margin, margin)
	f.SetAutoPageBreak(true, pageH-bodyEnd)
	f.SetHeaderFunc(func() { r.pageVia = append(r.pageVia, r.via) })
	f.SetFooterFunc(r.footer)
	return f
}

// footer is what every page carries: the document's summary, the agent's
// initials and a line for the rubrica, the copy and "página n/N", the seal
// and its QR code, and how and when the PDF was made.
func (r *renderer) footer() {
	f, d := r.f, r.in.Doc
	dr := d.Draft
	via := r.pageVia[f.PageNo()]
	n := f.PageNo() - r.viaFirst[via] + 1
	textW := bodyW - qrSize - 3
	f.SetDrawColor(150, 150, 150)
	f.SetLineWidth(0.2)
	f.Line(margin, footerTop, margin+textW, footerTop)
	f.SetDrawColor(0, 0, 0)
	f.SetXY(margin, footerTop+0.8)
	f.SetFont("sans", "B", 7.5)
	f.CellFormat(textW, 3.8, fit(f, Summary(d), textW), "", 2, "L", false, 0, "")
	f.SetFont("sans", "", 7.5)
	agent := "Rubrica do agente fiscal: ____________"
	if r.initials != "" {
		agent = fmt.Sprintf("Rubrica do agente fiscal (%s): ____________", r.initials)
	}
	f.CellFormat(textW*0.62, 3.8, agent, "", 0, "L", false, 0, "")
	f.SetFont("sans", "B", 7.5)
	f.CellFormat(textW*0.38, 3.8, fmt.Sprintf("%s · página %d/{nv}", r.viaLabels[via].Label, n), "", 2, "R", false, 0, "")
	f.SetX(margin)
	f.SetFont("sans", "", 6.5)
	f.SetTextColor(70, 70, 70)
	f.CellFormat(textW, 3.3, fit(f, fmt.Sprintf("Verificação do ato: %s (número e início do SHA-256 do conteúdo)", r.seal.URI()), textW), "", 2, "L", false, 0, "")
	f.CellFormat(textW, 3.3, fit(f, "Pacote de evidências: "+r.seal.Bag, textW), "", 2, "L", false, 0, "")
	if r.in.EvidenceKey != "" {
		f.CellFormat(textW, 3.3, fit(f, "Chave que assina o pacote (publicada em /api/v1/evidence/key): "+evidence.GroupedFingerprint(r.in.EvidenceKey), textW), "", 2, "L", false, 0, "")
	}
	f.CellFormat(textW, 3.3, fit(f, fmt.Sprintf("Gerado pelo Sossego em %s (horário de Brasília) · %s · versão do código %s",
		r.in.Generated.In(saoPaulo).Format("02/01/2006 15:04"), dr.CodeTitle, dr.CodeVersion), textW), "", 2, "L", false, 0, "")
	f.SetTextColor(0, 0, 0)
	drawQR(f, r.qr, margin+bodyW-qrSize, footerTop+0.5, qrSize)
}

// drawQR draws the QR code as filled squares (one rectangle per run of
// dark modules): vector, so it stays sharp at any print resolution.
func drawQR(f *fpdf.Fpdf, code barcode.Barcode, x, y, size float64) {
	b := code.Bounds()
	m := size / float64(b.Dx())
	f.SetFillColor(0, 0, 0)
	dark := func(i, j int) bool { return color.GrayModel.Convert(code.At(i, j)).(color.Gray).Y < 128 }
	for j := b.Min.Y; j < b.Max.Y; j++ {
		for i := b.Min.X; i < b.Max.X; {
			if !dark(i, j) {
				i++
				continue
			}
			k := i
			for k < b.Max.X && dark(k, j) {
				k++
			}
			// A hair wider and taller so neighbouring squares leave no seam.
			f.Rect(x+float64(i-b.Min.X)*m, y+float64(j-b.Min.Y)*m, float64(k-i)*m+0.01, m+0.01, "F")
			i = k
		}
	}
}

// fit shortens s with an ellipsis to fit w at the current font.
func fit(f *fpdf.Fpdf, s string, w float64) string {
	if f.GetStringWidth(s) <= w-1 {
		return s
	}
	r := []rune(s)
	for len(r) > 1 && f.GetStringWidth(string(r)+"…") > w-1 {
		r = r[:len(r)-1]
	}
	return strings.TrimSpace(string(r)) + "…"
}

// Summary is the one-line description of the document every page's footer
// carries: what, which number, whom, which provision, when.
func Summary(d notice.Document) string {
	dr := d.Draft
	s := dr.Title + " nº " + number(d) + " · " + dr.Party.Name
	if dr.Finding.Article != "" {
		s += " · " + dr.Finding.Article
	}
	if !dr.Finding.WindowStart.IsZero() {
		s += " · fato em " + dr.Finding.WindowStart.In(saoPaulo).Format("02/01/2006 15:04")
	}
	return s
}

// Initials are the agent's initials for the rubrica line: the first letter
// of each name, leaving out the particles da, de, do, das, dos and e.
func Initials(name string) string {
	var b strings.Builder
	for _, w := range strings.Fields(name) {
		switch strings.ToLower(w) {
		case "da", "de", "do", "das", "dos", "e", "d'":
			continue
		}
		r := []rune(w)
		b.WriteString(strings.ToUpper(string(r[0])))
	}
	return b.String()
}

// header is the talonário's header: Prefeitura, number, state, the copy,
// the title, the article, the document's situation and the article's quote.
func header(f *fpdf.Fpdf, d notice.Document, via Via) {
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
	// Long numbers (the municipality's id is part of them) shrink to fit the box.
	size := 11.0
	for f.SetFont("sans", "B", size); size > 6 && f.GetStringWidth(number(d)) > bodyW*0.32-2; size -= 0.5 {
		f.SetFont("sans", "B", size-0.5)
	}
	f.CellFormat(bodyW*0.32, 5, number(d), "LR", 1, "C", false, 0, "")
	f.SetFont("sans", "", 8)
	y := f.GetY()
	f.MultiCell(bodyW*0.68, 4, dr.Department, "LB", "L", false)
	yEnd := f.GetY()
	f.SetXY(margin+bodyW*0.68, y)
	f.SetFont("sans", "B", 9)
	f.SetFillColor(235, 235, 235)
	f.CellFormat(bodyW*0.32, max(yEnd-y, 5), strings.ToUpper(via.Label), "LRB", 1, "C", true, 0, "")
	f.SetY(max(yEnd, f.GetY()))
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
		f.MultiCell(bodyW, 4, Situation(d), "", "C", false)
	}
	if dr.Quote != "" {
		f.SetFont("sans", "", 7.5)
		f.SetTextColor(70, 70, 70)
		f.MultiCell(bodyW, 3.5, "“"+dr.Quote+"”", "", "C", false)
		f.SetTextColor(0, 0, 0)
	}
	f.Ln(2)
}

// Situation is the document's state as a sentence in agreement with its
// name: "Notificação Preliminar emitida em 09/03/2026 às 10:00 (horário de
// Brasília); recusa do notificado testemunhada em 09/03/2026".
func Situation(d notice.Document) string {
	k, dr := d.Draft.Kind, d.Draft
	day := func(t time.Time) string { return t.In(saoPaulo).Format("02/01/2006") }
	s := dr.Title + " " + agree(k, "emitida", "emitido")
	if !d.IssuedAt.IsZero() {
		s += " em " + day(d.IssuedAt) + " às " + d.IssuedAt.In(saoPaulo).Format("15:04") + " (horário de Brasília)"
	}
	who := partyWord(k)
	switch {
	case d.CienciaAt.IsZero():
	case d.SignedBy != "":
		s += "; ciente do " + who + " em " + day(d.CienciaAt)
	default:
		s += "; recusa do " + who + " testemunhada em " + day(d.CienciaAt)
	}
	switch d.State {
	case notice.StateRegularised:
		s += "; situação regularizada"
		if !d.RegularisedAt.IsZero() {
			s += " em " + day(d.RegularisedAt)
		}
	case notice.StateEscalated:
		s += "; não regularizada no prazo: Auto de Infração"
		if d.EscalatedTo != "" {
			s += " nº " + d.EscalatedTo
		}
		s += " lavrado"
	case notice.StateCancelled:
		return dr.Title + " " + agree(k, "cancelada", "cancelado")
	case notice.StateDecided:
		s += "; " + agree(k, "julgada", "julgado")
		if !d.DecidedAt.IsZero() {
			s += " em " + day(d.DecidedAt)
		}
	}
	return s
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
			f.MultiCell(bodyW, 4.8, brDates(fl.Value), "LRB", "L", false)
		}
		f.Ln(1.2)
	}
}

// constatacoes prints what the fiscal verified in person, each
// constatação as recorded: the one that grounds the notice and, on an
// auto, the one after the prazo.
//
// A code whose document has a "fato" element already prints them there
// (the draft words the facts with the constatações), so only documents
// without one get this section.
func constatacoes(f *fpdf.Fpdf, dr notice.Draft) {
	if len(dr.Constatacoes) == 0 {
		return
	}
	if fl := dr.Field("fato"); fl != nil && strings.Contains(fl.Value, dr.Constatacoes[0].ID) {
		return
	}
	section(f, "Constatação do agente fiscal")
	for i, k := range dr.Constatacoes {
		label := "Constatação que fundamenta o documento"
		if k.FollowsUp != "" {
			label = "Constatação após o prazo (a infração continuou)"
		} else if i > 0 {
			label = "Constatação"
		}
		f.SetFont("sans", "B", 8.5)
		f.MultiCell(bodyW, 4.5, label, "", "L", false)
		f.SetFont("sans", "", 8.5)
		f.MultiCell(bodyW, 4.5, brDates(k.Text()), "", "L", false)
		f.Ln(1)
	}
}

// measurement prints what the monitoring system measured, and the chart
// (registered as image "chart").
func measurement(f *fpdf.Fpdf, dr notice.Draft, chart bool) {
	fd := dr.Finding
	section(f, "Medição (dados do sistema de monitoramento)")
	rows := [][2]string{
		{"Sensor / ponto", fmt.Sprintf("%s — %s (%.5f, %.5f)", dr.Site.Sensor, dr.Site.Address, dr.Site.Lat, dr.Site.Lon)},
		{"Medidor", meter(dr.Site)},
		{"Janela", fmt.Sprintf("%s a %s (horário de Brasília)", fd.WindowStart.In(saoPaulo).Format("02/01/2006 15:04:05"), fd.WindowEnd.In(saoPaulo).Format("02/01/2006 15:04:05"))},
		{"LAeq / LAFmax", fmt.Sprintf("%s dB(A) / %s dB(A)", br1(fd.LAeqDB), br1(fd.LAFmaxDB))},
	}
	if fd.LimitDB != nil {
		rows = append(rows, [2]string{"Limite", fmt.Sprintf("%s dB — %s (%s); margem de incerteza do medidor %s dB", br1(*fd.LimitDB), fd.Article, fd.PeriodLabel, br1(fd.MarginDB))})
	} else {
		rows = append(rows, [2]string{"Regra", fmt.Sprintf("%s — %s (o código não fixa limite em decibéis)", fd.Article, fd.RuleLabel)})
	}
	rows = append(rows, [2]string{"Alerta (identificador)", fd.AlertID})
	for _, r := range rows {
		f.SetFont("sans", "B", 8)
		y := f.GetY()
		f.MultiCell(32, 4.5, r[0], "", "L", false)
		y2 := f.GetY()
		f.SetFont("sans", "", 8)
		f.SetXY(margin+32, y)
		f.MultiCell(bodyW-32, 4.5, r[1], "", "L", false)
		f.SetY(max(y2, f.GetY()))
	}
	if chart {
		h := bodyW * 0.42
		if f.GetY()+h > bodyEnd {
			f.AddPage()
		}
		f.ImageOptions("chart", margin, f.GetY()+1, bodyW, h, false, fpdf.ImageOptions{ImageType: "PNG"}, 0, "")
		f.SetY(f.GetY() + h + 2)
	}
}

// para is one paragraph of the closing block, measured before it is laid
// out so the block can be kept together with the signatures.
type para struct {
	bold bool
	size float64
	lh   float64
	text string
	gap  float64 // space before
	head bool    // a section heading
}

func (p para) height(f *fpdf.Fpdf) float64 {
	if p.head {
		return 9 + p.gap
	}
	f.SetFont("sans", style(p.bold), p.size)
	return float64(len(f.SplitText(p.text, bodyW)))*p.lh + p.gap
}

func (p para) draw(f *fpdf.Fpdf) {
	if p.head {
		f.Ln(2)
		f.SetFont("sans", "B", 10)
		f.CellFormat(bodyW, 6, p.text, "B", 1, "L", false, 0, "")
		f.Ln(1)
		return
	}
	f.Ln(p.gap)
	f.SetFont("sans", style(p.bold), p.size)
	f.MultiCell(bodyW, p.lh, p.text, "", "L", false)
}

func style(bold bool) string {
	if bold {
		return "B"
	}
	return ""
}

// closing prints the penalty and deadlines, the notes and the signatures
// as one block: when it does not fit on the page it starts a new one with
// a summary of the document, so no page ever holds only signatures.
func (r *renderer) closing() {
	f, d := r.f, r.in.Doc
	ps := penalty(d.Draft, r.in.Deadlines)
	need := sigHeight(d)
	ps = append(ps, delivery(d)...)
	for _, p := range ps {
		need += p.height(f)
	}
	if f.GetY()+need > bodyEnd {
		f.AddPage()
		summaryBox(f, d)
	}
	for _, p := range ps {
		p.draw(f)
	}
	// A block longer than a page flowed over; the signatures still never
	// stand alone on a page.
	if f.GetY()+sigHeight(d) > bodyEnd {
		f.AddPage()
		summaryBox(f, d)
	}
	signatures(f, d)
}

// summaryBox restates, at the top of a page that continues the document,
// what the signatures below refer to.
func summaryBox(f *fpdf.Fpdf, d notice.Document) {
	dr := d.Draft
	f.SetFont("sans", "B", 9)
	f.SetFillColor(235, 235, 235)
	f.MultiCell(bodyW, 5, fmt.Sprintf("%s nº %s — continuação", dr.Title, number(d)), "LTR", "L", true)
	f.SetFont("sans", "", 8.5)
	fd := dr.Finding
	fact := fmt.Sprintf("Fato: %s, das %s às %s (horário de Brasília), %s", fd.WindowStart.In(saoPaulo).Format("02/01/2006"),
		fd.WindowStart.In(saoPaulo).Format("15:04"), fd.WindowEnd.In(saoPaulo).Format("15:04"), fd.Article)
	if fd.LimitDB != nil {
		fact += fmt.Sprintf(": LAeq %s dB(A) acima do limite de %s dB", br1(fd.LAeqDB), br1(*fd.LimitDB))
	} else if fd.RuleLabel != "" {
		fact += ": " + fd.RuleLabel
	}
	lines := []string{
		fmt.Sprintf("%s: %s%s — %s", capital(partyWord(dr.Kind)), dr.Party.Name, docSuffix(dr.Party.Document), dr.Party.Address),
		fact + ".",
	}
	if d.Agent != nil {
		lines = append(lines, fmt.Sprintf("Agente fiscal: %s, matrícula %s.", d.Agent.Name, d.Agent.Matricula))
	}
	f.MultiCell(bodyW, 4.5, strings.Join(lines, "\n"), "LRB", "L", false)
	f.Ln(2)
}

func docSuffix(doc string) string {
	if doc == "" {
		return ""
	}
	return ", " + doc
}

// penalty is the penalty, what follows non-compliance, the appeal, the
// deadlines and the notes.
func penalty(dr notice.Draft, deadlines []notice.DeadlineView) []para {
	line := func(s string) para { return para{size: 8.5, lh: 4.5, text: s} }
	ps := []para{{head: true, text: "Penalidade e prazos"}, line("Penalidade desta infração: " + dr.Penalty.Text)}
	if dr.Fine != nil {
		// The fine valued on the act's date: amount, unit, its value, the act
		// that set it and its validity (or what is missing to value it).
		ps = append(ps, line("Valor da multa: "+dr.Fine.Text+"."))
		if dr.Fine.Warning != "" {
			ps = append(ps, line("Atenção: "+dr.Fine.Warning+"."))
		}
	}
	if dr.OnNonCompliance != nil && dr.Kind.IsNotice() {
		ps = append(ps, line("Em caso de não regularização no prazo: "+dr.OnNonCompliance.Text))
	}
	if !dr.Penalty.AppealAllowed {
		ps = append(ps, line(capital(dr.Penalty.AppealNote)+"."))
	}
	for _, dl := range deadlines {
		ps = append(ps, line("• "+deadlineLine(dl)))
	}
	if dr.RefersTo != nil {
		ps = append(ps, line(fmt.Sprintf("Documento anterior: %s nº %s.", dr.RefersTo.Title, dr.RefersTo.ID)))
	}
	if dr.Corrects != nil {
		ps = append(ps, line(fmt.Sprintf("Este ato corrige %s nº %s, emitido anteriormente, que fica substituído por este.", dr.Corrects.Title, dr.Corrects.ID)))
	}
	if len(dr.Notes) > 0 {
		ps = append(ps, para{head: true, text: "Observações"})
		for _, n := range dr.Notes {
			ps = append(ps, para{size: 8, lh: 4.2, text: "• " + capital(n) + "."})
		}
	}
	return ps
}

// delivery is what the fiscal recorded at the ciente or the recusa,
// printed exactly as recorded.
func delivery(d notice.Document) []para {
	if d.Declaration == "" && d.Observation == "" {
		return nil
	}
	head := "Ciência"
	if d.SignedBy == "" {
		head = "Recusa"
	}
	if !d.CienciaAt.IsZero() {
		head += " em " + d.CienciaAt.In(saoPaulo).Format("02/01/2006") + " às " + d.CienciaAt.In(saoPaulo).Format("15:04") + " (horário de Brasília)"
	}
	ps := []para{{head: true, text: head}}
	if d.Declaration != "" {
		ps = append(ps, para{size: 8.5, lh: 4.5, text: "Declaração do agente fiscal: " + d.Declaration})
	}
	if d.Observation != "" {
		ps = append(ps, para{size: 8.5, lh: 4.5, text: "Observação: " + d.Observation})
	}
	return ps
}

// sigHeight is the height signatures takes.
func sigHeight(d notice.Document) float64 {
	h := 9.0 + 8 + 8
	if d.Draft.Witnesses > 0 || len(d.Witnesses) > 0 {
		h += 10 + 8
	}
	return h + 2
}

// signatures prints the agent's and the party's lines, and the witnesses'.
func signatures(f *fpdf.Fpdf, d notice.Document) {
	dr := d.Draft
	para{head: true, text: "Assinaturas"}.draw(f)
	f.Ln(8)
	ag := "Agente fiscal (nome, matrícula e assinatura)"
	if d.Agent != nil {
		ag = fmt.Sprintf("%s — matrícula %s", d.Agent.Name, d.Agent.Matricula)
	}
	party := capital(partyWord(dr.Kind)) + ": ciente em ____/____/________"
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
			w[i] = fmt.Sprintf("Testemunha %d: %s", i+1, d.Witnesses[i].Text())
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
	if f.GetY() > bodyEnd-25 {
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
		out += ", calibração " + dateBR(s.CalibratedAt)
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

// dateBR writes an ISO date (YYYY-MM-DD) as dd/mm/aaaa; anything else is
// returned as it is.
func dateBR(iso string) string {
	t, err := time.Parse("2006-01-02", iso)
	if err != nil {
		return iso
	}
	return t.Format("02/01/2006")
}

// isoDay is a calendar date written the ISO way, standing alone (not
// inside a timestamp or an identifier).
var isoDay = regexp.MustCompile(`(^|[\s(])(\d{4})-(\d\d)-(\d\d)([\s).,;:]|$)`)

// brDates rewrites the ISO dates of a recorded text (a calibration date
// typed as 2026-02-05) as dd/mm/aaaa, as every date of the document is.
func brDates(s string) string { return isoDay.ReplaceAllString(s, "${1}${4}/${3}/${2}${5}") }
