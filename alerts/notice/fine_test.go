package notice_test

import (
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/codes"
)

func TestBRL(t *testing.T) {
	tests := []struct {
		v         float64
		two, four string
	}{
		{1234.56, "R$ 1.234,56", "R$ 1.234,56"},
		{0.5, "R$ 0,50", "R$ 0,50"},
		{4938.24, "R$ 4.938,24", "R$ 4.938,24"},
		{4.2719, "R$ 4,27", "R$ 4,2719"},
		{1234567, "R$ 1.234.567,00", "R$ 1.234.567,00"},
		{-12.3, "-R$ 12,30", "-R$ 12,30"},
	}
	for _, tc := range tests {
		if got := notice.BRL(tc.v); got != tc.two {
			t.Errorf("BRL(%v) = %q, want %q", tc.v, got, tc.two)
		}
		if got := notice.BRL4(tc.v); got != tc.four {
			t.Errorf("BRL4(%v) = %q, want %q", tc.v, got, tc.four)
		}
	}
}

func f64(v float64) *float64 { return &v }

func TestComputeFine(t *testing.T) {
	lapa, _ := set.Code("lapa")
	er, _ := set.Code("entre-rios-de-minas")
	cgs, _ := set.Code("campina-grande-do-sul")
	cm, _ := set.Code("conceicao-de-macabu")
	yaml := strings.Replace(readLapa(t), `indexation: "valor fixado pela legislação tributária municipal (não consta do texto da lei)"`,
		`indexation: "valor fixado pela legislação tributária municipal (não consta do texto da lei)"
    value_brl: 200`, 1)
	lapaYAML, err := codes.Parse("lapa.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	table := []notice.UnitValue{
		{CodeID: "lapa", Unit: "VRM", From: "2025-01-01", To: "2025-12-31", ValueBRL: 4700, Act: "Decreto nº 10/2024"},
		{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", ValueBRL: 4938.24, Act: "Decreto nº 20/2025"},
		{CodeID: "entre-rios-de-minas", Unit: "VR", From: "2026-01-01", To: "2026-12-31", ValueBRL: 4.2719, Act: "Lei Complementar nº 5/2025"},
		{CodeID: "campina-grande-do-sul", Unit: "VR", From: "2026-01-01", ValueBRL: 100, Act: "Decreto nº 7/2026"},
	}
	ladder := func(c *codes.Code, id string, prior int) codes.PenaltyOutcome {
		var h []codes.PriorInfraction
		for range prior {
			h = append(h, codes.PriorInfraction{PenaltyID: id})
		}
		o, err := c.PenaltyForHistory(id, h)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	tests := []struct {
		name    string
		c       *codes.Code
		o       codes.PenaltyOutcome
		values  []notice.UnitValue
		day     [3]int
		nilFine bool
		amount  *float64
		lo, hi  *float64
		text    []string
		warning string
		source  string
	}{
		{name: "Lapa 2ª infração, 2026 value", c: lapa, o: ladder(lapa, "lapa-102", 1), values: table, day: [3]int{2026, 3, 9},
			amount: f64(1234.56), source: "tabela",
			text: []string{"multa de 25% do VRM = R$ 1.234,56", "VRM de R$ 4.938,24 vigente desde 01/01/2026, Decreto nº 20/2025", "valor na data do ato, 09/03/2026"}},
		{name: "Lapa 3ª infração valued on a 2025 date", c: lapa, o: ladder(lapa, "lapa-102", 2), values: table, day: [3]int{2025, 12, 31},
			amount: f64(2350), source: "tabela", text: []string{"multa de 50% do VRM = R$ 2.350,00", "vigente de 01/01/2025 a 31/12/2025, Decreto nº 10/2024"}},
		{name: "Lapa date before every period", c: lapa, o: ladder(lapa, "lapa-102", 1), values: table, day: [3]int{2024, 6, 1},
			text: []string{"a calcular: falta o valor do VRM vigente em 01/06/2024"}, warning: "não há valor do VRM vigente em 01/06/2024 para Lei nº 1783/2004 (Lapa/PR). Um administrador deve cadastrá-lo em Administração → Unidades monetárias (ou: sossego units set --code lapa --unit VRM"},
		{name: "Lapa without any value", c: lapa, o: ladder(lapa, "lapa-102", 1), day: [3]int{2026, 3, 9},
			warning: "multa sem valor em R$: não há valor do VRM vigente em 09/03/2026"},
		{name: "code file fallback", c: lapaYAML, o: ladder(lapaYAML, "lapa-102", 1), day: [3]int{2026, 3, 9},
			amount: f64(50), source: "codigo", text: []string{"= R$ 50,00", "valor padrão do arquivo do código"}, warning: "sem vigência nem ato legal"},
		{name: "the table wins over the code file", c: lapaYAML, o: ladder(lapaYAML, "lapa-102", 1), values: table, day: [3]int{2026, 3, 9},
			amount: f64(1234.56), source: "tabela"},
		{name: "the code file is no fallback for a date the table leaves out", c: lapaYAML, o: ladder(lapaYAML, "lapa-102", 1), values: table, day: [3]int{2024, 1, 1},
			warning: "não há valor do VRM vigente em 01/01/2024"},
		{name: "Lapa 1ª infração is a notice, not a fine", c: lapa, o: ladder(lapa, "lapa-102", 0), values: table, day: [3]int{2026, 3, 9}, nilFine: true},
		{name: "Lapa 4ª infração: judicial measures", c: lapa, o: ladder(lapa, "lapa-102", 3), values: table, day: [3]int{2026, 3, 9}, nilFine: true},
		{name: "Entre Rios 30% of a four-decimal VR, rounded", c: er, o: ladder(er, "er-37", 0), values: table, day: [3]int{2026, 3, 9},
			amount: f64(1.28), source: "tabela", text: []string{"multa de 30% do VR = R$ 1,28", "VR de R$ 4,2719 vigente de 01/01/2026 a 31/12/2026"}},
		{name: "Campina Grande do Sul range", c: cgs, o: ladder(cgs, "cgs-92", 0), values: table, day: [3]int{2026, 3, 9},
			lo: f64(20), hi: f64(50), source: "tabela", text: []string{"multa de 20% a 50% do VR = R$ 20,00 a R$ 50,00"}},
		{name: "Conceição de Macabu literal amounts", c: cm, o: ladder(cm, "cm-152", 0), values: table, day: [3]int{2026, 3, 9},
			text: []string{"R$ 84,75"}, warning: "valores literais que o sistema não converte"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := notice.ComputeFine(tc.c, tc.o, tc.values, at(tc.day[0], time.Month(tc.day[1]), tc.day[2], 23, 30))
			if tc.nilFine {
				if f != nil {
					t.Fatalf("fine %+v, want none", f)
				}
				return
			}
			if f == nil {
				t.Fatal("no fine")
			}
			eq := func(what string, got, want *float64) {
				if (got == nil) != (want == nil) || got != nil && *got != *want {
					t.Errorf("%s = %v, want %v", what, deref(got), deref(want))
				}
			}
			eq("amount", f.AmountBRL, tc.amount)
			eq("min", f.AmountMinBRL, tc.lo)
			eq("max", f.AmountMaxBRL, tc.hi)
			for _, s := range tc.text {
				if !strings.Contains(f.Text, s) {
					t.Errorf("text %q lacks %q", f.Text, s)
				}
			}
			if !strings.Contains(f.Warning, tc.warning) || (tc.warning == "" && f.Warning != "") {
				t.Errorf("warning %q, want %q", f.Warning, tc.warning)
			}
			if f.Source != tc.source {
				t.Errorf("source %q, want %q", f.Source, tc.source)
			}
		})
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestApplyFine: a Lapa notice carries the fine it announces, the auto the
// fine it imposes, each in the penalty field; without a value the draft
// gets a note saying what to set and where.
func TestApplyFine(t *testing.T) {
	sc := noticetest.Lapa(set)
	table := []notice.UnitValue{{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", ValueBRL: 4938.24, Act: "Decreto nº 20/2025"}}
	d, err := notice.Build(sc.Code, sc.Finding, sc.Party, sc.Site, nil, at(2026, 3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	bare := d
	bare.Fields = append([]notice.Field(nil), d.Fields...)
	notice.ApplyFine(&d, sc.Code, table, d.Prepared)
	if d.Fine == nil || d.Fine.AmountBRL == nil || *d.Fine.AmountBRL != 1234.56 || d.Fine.Law != "Decreto nº 20/2025" {
		t.Fatalf("notice fine %+v", d.Fine)
	}
	pen := d.Field("penalidade").Value
	if !strings.Contains(pen, "em caso de não regularização no prazo: 2ª infração: multa de 25% do VRM (Art. 102, II) = R$ 1.234,56 (VRM de R$ 4.938,24 vigente desde 01/01/2026, Decreto nº 20/2025") ||
		strings.Contains(pen, "não calculado") {
		t.Errorf("penalidade %q", pen)
	}
	for _, n := range d.Notes {
		if strings.Contains(n, "multa sem valor") {
			t.Errorf("note %q with a value set", n)
		}
	}

	notice.ApplyFine(&bare, sc.Code, nil, bare.Prepared)
	if bare.Fine == nil || bare.Fine.AmountBRL != nil || bare.Fine.Warning == "" {
		t.Fatalf("fine without a value: %+v", bare.Fine)
	}
	pen = bare.Field("penalidade").Value
	if !strings.Contains(pen, "(valor em R$ a calcular: falta o valor do VRM vigente em 09/03/2026)") || strings.Contains(pen, "não está configurado") {
		t.Errorf("penalidade without a value %q", pen)
	}
	found := false
	for _, n := range bare.Notes {
		found = found || strings.Contains(n, "atenção: multa sem valor em R$") && strings.Contains(n, "Administração → Unidades monetárias")
	}
	if !found {
		t.Errorf("no warning note: %q", bare.Notes)
	}
}

// TestRevalueFine: a draft valued when prepared is valued again on the date
// of the act; the penalty field, the fine and the warning note follow the
// new valuation, and changed says whether the value moved.
func TestRevalueFine(t *testing.T) {
	sc := noticetest.Lapa(set)
	v2025 := notice.UnitValue{CodeID: "lapa", Unit: "VRM", From: "2025-01-01", To: "2025-12-31", ValueBRL: 4700, Act: "Decreto nº 10/2024"}
	v2026 := notice.UnitValue{CodeID: "lapa", Unit: "VRM", From: "2026-01-01", ValueBRL: 4938.24, Act: "Decreto nº 20/2025"}
	tests := []struct {
		name            string
		draftValues     []notice.UnitValue
		issueValues     []notice.UnitValue
		prepared, issue time.Time
		changed         bool
		amount          *float64
		penalty         string // in the penalty field after the issue
		gone            string // no longer in the penalty field
		warning         string // "" = no warning note
	}{
		{name: "new year's value between draft and issue", draftValues: []notice.UnitValue{v2025, v2026}, issueValues: []notice.UnitValue{v2025, v2026},
			prepared: at(2025, 12, 30, 22, 0), issue: at(2026, 1, 2, 9, 0), changed: true, amount: f64(1234.56),
			penalty: "= R$ 1.234,56 (VRM de R$ 4.938,24 vigente desde 01/01/2026, Decreto nº 20/2025; valor na data do ato, 02/01/2026)",
			gone:    "R$ 1.175,00"},
		{name: "value set after the draft", draftValues: nil, issueValues: []notice.UnitValue{v2026},
			prepared: at(2026, 3, 9, 9, 0), issue: at(2026, 3, 10, 9, 0), changed: true, amount: f64(1234.56),
			penalty: "= R$ 1.234,56", gone: "a calcular"},
		{name: "unchanged", draftValues: []notice.UnitValue{v2026}, issueValues: []notice.UnitValue{v2026},
			prepared: at(2026, 3, 9, 9, 0), issue: at(2026, 3, 11, 9, 0), changed: false, amount: f64(1234.56),
			penalty: "= R$ 1.234,56 (VRM de R$ 4.938,24 vigente desde 01/01/2026, Decreto nº 20/2025; valor na data do ato, 11/03/2026)",
			gone:    "09/03/2026"},
		{name: "no value in force at issue", draftValues: []notice.UnitValue{v2025}, issueValues: []notice.UnitValue{v2025},
			prepared: at(2025, 12, 30, 22, 0), issue: at(2026, 1, 2, 9, 0), changed: true, amount: nil,
			penalty: "(valor em R$ a calcular: falta o valor do VRM vigente em 02/01/2026)", gone: "R$ 1.175,00",
			warning: "atenção: multa sem valor em R$: não há valor do VRM vigente em 02/01/2026"},
		{name: "still no value", draftValues: nil, issueValues: nil,
			prepared: at(2026, 3, 9, 9, 0), issue: at(2026, 3, 10, 9, 0), changed: false, amount: nil,
			penalty: "(valor em R$ a calcular: falta o valor do VRM vigente em 10/03/2026)", gone: "vigente em 09/03/2026",
			warning: "atenção: multa sem valor em R$: não há valor do VRM vigente em 10/03/2026"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := notice.Build(sc.Code, sc.Finding, sc.Party, sc.Site, nil, tc.prepared)
			if err != nil {
				t.Fatal(err)
			}
			notice.ApplyFine(&d, sc.Code, tc.draftValues, d.Prepared)
			drafted := d.Fine
			before, changed := notice.RevalueFine(&d, sc.Code, tc.issueValues, tc.issue)
			if before != drafted || changed != tc.changed {
				t.Fatalf("RevalueFine = (%p, %v), want (%p, %v)", before, changed, drafted, tc.changed)
			}
			if d.Fine == nil || d.Fine.Date != tc.issue.In(noticetest.SaoPaulo).Format(time.DateOnly) {
				t.Fatalf("fine %+v, want valued on %v", d.Fine, tc.issue)
			}
			if got := d.Fine.AmountBRL; (got == nil) != (tc.amount == nil) || (got != nil && *got != *tc.amount) {
				t.Errorf("amount %v, want %v", deref(got), deref(tc.amount))
			}
			pen := d.Field("penalidade").Value
			if !strings.Contains(pen, tc.penalty) || strings.Contains(pen, tc.gone) || strings.Count(pen, "multa de 25% do VRM") != 1 {
				t.Errorf("penalidade %q\nwant %q, without %q", pen, tc.penalty, tc.gone)
			}
			var warnings []string
			for _, n := range d.Notes {
				if strings.HasPrefix(n, "atenção: ") {
					warnings = append(warnings, n)
				}
			}
			switch {
			case tc.warning == "" && len(warnings) > 0:
				t.Errorf("warning notes %q with a value in force", warnings)
			case tc.warning != "" && (len(warnings) != 1 || !strings.HasPrefix(warnings[0], tc.warning)):
				t.Errorf("warning notes %q, want one starting %q", warnings, tc.warning)
			}
		})
	}
}
