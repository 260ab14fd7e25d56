package notice_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
	"github.com/sossego/sossego/codes"
)

var set = noticetest.Codes()

func fiscal() notice.Actor { return noticetest.Fiscal }

func agent() *notice.Agent { a := noticetest.Agent; return &a }

func witnesses() []notice.Witness {
	return []notice.Witness{{Name: "João da Silva", DocType: notice.WitnessRG, Document: "1.234.567-8", Issuer: "SSP/PR"},
		{Name: "Maria Souza", DocType: notice.WitnessCPF, Document: "111.444.777-35"}}
}

const declaration = "O notificado, Sr. Carlos, recebeu a via e recusou-se a assinar diante das testemunhas."

// grounded is the scenario's first document built from its constatação.
func grounded(t *testing.T, sc noticetest.Scenario, now time.Time) notice.Draft {
	t.Helper()
	d, err := notice.BuildFrom(sc.Code, sc.Finding, sc.Constatacao(), sc.Site, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func at(y int, m time.Month, d, h, min int) time.Time {
	return time.Date(y, m, d, h, min, 0, 0, noticetest.SaoPaulo)
}

func TestBuildKindAndFields(t *testing.T) {
	tests := []struct {
		sc       noticetest.Scenario
		kind     notice.Kind
		title    string
		articles []string // every required field's article, in order
		byHand   []string
		inFact   []string
		penalty  string // in the penalidade/dispositivo text
	}{
		{noticetest.Lapa(set), notice.KindNotificacaoPreliminar, "Notificação Preliminar",
			[]string{"Art. 334, I", "Art. 334, II", "Art. 334, III", "Art. 334, IV", "Art. 334, V", "Art. 334, VI"},
			[]string{"prazo", "agente"}, []string{"06/03/2026", "23:10:00", "68,4", "60", "Art. 96", "Bar Exemplo", "NSRT-0001", "CAL-2026-0415"},
			"2ª infração: multa de 25% do VRM (Art. 102, II)"},
		{noticetest.Macabu(set), notice.KindIntimacaoPreliminar, "Intimação Preliminar",
			[]string{"Art. 171", "Art. 171", "Art. 171, § 1º", "Art. 172", "Art. 172, parágrafo único"},
			[]string{"prazo", "ciente", "testemunhas"}, []string{"10/03/2026", "21:30:00", "58,7", "45", "Art. 55", "Lanchonete"}, ""},
		{noticetest.CamposAltos(set), notice.KindRelatorio, "Relatório de Constatação",
			[]string{"Art. 17, a", "Art. 17, b", "Art. 17, c", "Art. 17, d", "Art. 17, § 1º"},
			[]string{"assinaturas"}, []string{"07/03/2026", "01:30:00", "Art. 202, VIII", "66,0", "Bar do Largo"}, "Cr$ 50,00 a Cr$ 200,00"},
	}
	for _, tc := range tests {
		t.Run(tc.sc.Name, func(t *testing.T) {
			d, err := notice.Build(tc.sc.Code, tc.sc.Finding, tc.sc.Party, tc.sc.Site, nil, at(2026, 3, 9, 9, 0))
			if err != nil {
				t.Fatal(err)
			}
			if d.Kind != tc.kind || d.Title != tc.title {
				t.Fatalf("kind %s %q, want %s %q", d.Kind, d.Title, tc.kind, tc.title)
			}
			var arts, hands []string
			for _, f := range d.Fields {
				arts = append(arts, f.Article)
				if f.ByHand {
					hands = append(hands, f.ID)
					if !f.Pending || f.Value != "" {
						t.Errorf("by-hand field %s pre-filled: %q", f.ID, f.Value)
					}
				} else if f.Value == "" || f.Pending {
					t.Errorf("field %s (%s) has no value", f.ID, f.Article)
				}
			}
			if strings.Join(arts, "|") != strings.Join(tc.articles, "|") {
				t.Errorf("articles %q, want %q", arts, tc.articles)
			}
			if strings.Join(hands, "|") != strings.Join(tc.byHand, "|") {
				t.Errorf("by hand %q, want %q", hands, tc.byHand)
			}
			fact := notice.FactText(&d)
			for _, s := range tc.inFact {
				if !strings.Contains(fact, s) {
					t.Errorf("fact lacks %q: %s", s, fact)
				}
			}
			if !strings.Contains(fact, tc.sc.Finding.Quote) {
				t.Errorf("fact lacks the quoted text")
			}
			if !strings.HasSuffix(fact, ".") && !strings.HasSuffix(fact, ".”") && !strings.HasSuffix(fact, "!”") && !strings.HasSuffix(fact, "?”") ||
				strings.HasSuffix(fact, "”.") && strings.HasSuffix(strings.TrimRight(tc.sc.Finding.Quote, " "), ".") {
				t.Errorf("fact ends %q: one closing mark, the quote's own or the fact's", fact[max(0, len(fact)-24):])
			}
			if tc.penalty != "" {
				txt := ""
				for _, f := range d.Fields {
					txt += f.Value
				}
				if !strings.Contains(txt, tc.penalty) {
					t.Errorf("no field states the penalty %q", tc.penalty)
				}
			}
		})
	}
}

func TestPenaltyFromHistory(t *testing.T) {
	lapa, macabu, ca := noticetest.Lapa(set), noticetest.Macabu(set), noticetest.CamposAltos(set)
	er, _ := set.Code("entre-rios-de-minas")
	tests := []struct {
		name    string
		sc      noticetest.Scenario
		history []codes.PriorInfraction
		kind    notice.Kind
		want    []string
		not     []string
	}{
		{"lapa first", lapa, nil, notice.KindNotificacaoPreliminar, []string{"1ª infração: Notificação Preliminar"}, nil},
		{"lapa other ladder does not count", lapa, []codes.PriorInfraction{{PenaltyID: "lapa-299"}}, notice.KindNotificacaoPreliminar,
			[]string{"1ª infração"}, nil},
		{"lapa second goes to the auto", lapa, []codes.PriorInfraction{{PenaltyID: "lapa-102"}}, notice.KindRelatorio,
			[]string{"2ª infração: multa de 25% do VRM", "não calculado"}, nil},
		{"lapa fifth stays at the last rung", lapa, []codes.PriorInfraction{{PenaltyID: "lapa-102"}, {PenaltyID: "lapa-102"}, {PenaltyID: "lapa-102"}, {PenaltyID: "lapa-102"}},
			notice.KindRelatorio, []string{"5ª infração: adoção de medidas judiciais", "termina na 4ª"}, nil},
		{"macabu notified only: no doubling", macabu, []codes.PriorInfraction{{PenaltyID: "cm-152"}}, notice.KindIntimacaoPreliminar,
			[]string{"não está mapeada"}, []string{"em dobro"}},
		{"macabu punished: doubling", macabu, []codes.PriorInfraction{{PenaltyID: "cm-152", Punished: true}}, notice.KindIntimacaoPreliminar,
			[]string{"em dobro por reincidência (Art. 157)"}, nil},
		{"campos altos punished: doubling", ca, []codes.PriorInfraction{{PenaltyID: "ca-204", Punished: true}}, notice.KindRelatorio,
			[]string{"em dobro por reincidência (Art. 7)"}, nil},
		{"campos altos punished elsewhere: no doubling", ca, []codes.PriorInfraction{{PenaltyID: "ca-75", Punished: true}}, notice.KindRelatorio,
			nil, []string{"em dobro"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, err := notice.Build(tc.sc.Code, tc.sc.Finding, tc.sc.Party, tc.sc.Site, tc.history, at(2026, 3, 9, 9, 0))
			if err != nil {
				t.Fatal(err)
			}
			if d.Kind != tc.kind {
				t.Errorf("kind %s, want %s", d.Kind, tc.kind)
			}
			for _, s := range tc.want {
				if !strings.Contains(d.Penalty.Text, s) {
					t.Errorf("penalty %q lacks %q", d.Penalty.Text, s)
				}
			}
			for _, s := range tc.not {
				if strings.Contains(d.Penalty.Text, s) {
					t.Errorf("penalty %q has %q", d.Penalty.Text, s)
				}
			}
		})
	}
	// Entre Rios: fixed 30% VR, never doubled; amount only with a configured unit.
	pen, err := er.PenaltyForHistory("er-37", []codes.PriorInfraction{{PenaltyID: "er-37", Punished: true}})
	if err != nil {
		t.Fatal(err)
	}
	if pen.Reincidence || *pen.Percent != 30 || pen.AmountBRL != nil {
		t.Errorf("entre rios: %+v", pen)
	}
}

func TestAmountOnlyWhenUnitConfigured(t *testing.T) {
	data := strings.Replace(readLapa(t), `indexation: "valor fixado pela legislação tributária municipal (não consta do texto da lei)"`,
		`indexation: "valor fixado pela legislação tributária municipal (não consta do texto da lei)"
    value_brl: 200`, 1)
	c, err := codes.Parse("lapa.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	pen, err := c.PenaltyForHistory("lapa-102", []codes.PriorInfraction{{PenaltyID: "lapa-102"}, {PenaltyID: "lapa-102"}})
	if err != nil {
		t.Fatal(err)
	}
	if pen.AmountBRL == nil || *pen.AmountBRL != 100 || !strings.Contains(pen.Text, "R$ 100,00") {
		t.Errorf("3ª infração with VRM = 200: %+v", pen)
	}
	if !pen.AppealAllowed {
		t.Errorf("50%% VRM must be appealable")
	}
}

// TestLapaWorkflow: the notice is issued, refused before two witnesses, the
// prazo runs, the auto follows with the 2ª-infração fine and no appeal.
func TestLapaWorkflow(t *testing.T) {
	sc := noticetest.Lapa(set)
	c := sc.Code
	d := grounded(t, sc, at(2026, 3, 9, 9, 0))
	doc := notice.Document{ID: "lapa-NP-2026-000001", Draft: d, State: notice.StateDraft}
	step := func(a notice.Action) {
		t.Helper()
		next, err := doc.Apply(c, a)
		if err != nil {
			t.Fatalf("%s: %v", a.Kind, err)
		}
		doc = next
	}
	step(notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 9, 10, 0), Agent: agent(), PrazoDays: 5})
	if len(doc.Draft.Pending()) != 0 {
		t.Fatalf("pending after issue: %+v", doc.Draft.Pending())
	}
	step(notice.Action{Kind: notice.ActRefuse, Actor: fiscal(), At: at(2026, 3, 9, 10, 30), Witnesses: witnesses(), Declaration: declaration,
		Observation: "estabelecimento com as portas abertas"})
	if doc.Declaration != declaration || doc.Observation != "estabelecimento com as portas abertas" ||
		len(doc.Witnesses) != 2 || doc.Witnesses[0].Text() != "João da Silva (RG 1.234.567-8 SSP/PR)" {
		t.Errorf("recusa not kept as recorded: %q %q %+v", doc.Declaration, doc.Observation, doc.Witnesses)
	}
	if got := doc.PrazoEnd; !got.Equal(at(2026, 3, 15, 0, 0)) {
		t.Fatalf("prazo end %v, want 15/03 00:00 (5 days from 10/03)", got)
	}
	dl := notice.Deadlines(c, &doc, at(2026, 3, 14, 23, 59))
	if len(dl) != 1 || dl[0].Status != notice.DeadlineRunning || dl[0].LastDay != "14/03/2026" {
		t.Fatalf("deadline: %+v", dl)
	}
	if _, err := doc.Apply(c, notice.Action{Kind: notice.ActEscalate, Actor: fiscal(), At: at(2026, 3, 14, 23, 59)}); !errors.Is(err, notice.ErrTransition) ||
		!strings.Contains(err.Error(), "corre até 14/03/2026") {
		t.Fatalf("auto before the prazo: %v", err)
	}
	if _, err := doc.Apply(c, notice.Action{Kind: notice.ActRegularise, Actor: fiscal(), At: at(2026, 3, 15, 8, 0)}); err == nil ||
		!strings.Contains(err.Error(), "venceu em 14/03/2026") {
		t.Fatalf("regularise after the prazo: %v", err)
	}
	if notice.Deadlines(c, &doc, at(2026, 3, 15, 0, 0))[0].Status != notice.DeadlineExpired {
		t.Fatal("prazo not expired at 15/03 00:00")
	}
	follow := sc.FollowUp(doc.ID, at(2026, 3, 15, 23, 0), 67.2)
	step(notice.Action{Kind: notice.ActEscalate, Actor: fiscal(), At: at(2026, 3, 16, 9, 0), FollowUp: &follow})
	if doc.State != notice.StateEscalated || doc.FollowUp != follow.ID {
		t.Fatalf("state %s follow-up %q", doc.State, doc.FollowUp)
	}
	auto, err := notice.BuildAuto(c, &doc, &follow, nil, at(2026, 3, 16, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if auto.Kind != notice.KindAuto || auto.RefersTo == nil || auto.RefersTo.ID != doc.ID {
		t.Fatalf("auto does not reference the notice: %+v", auto.RefersTo)
	}
	if auto.Penalty.Ordinal != 2 || *auto.Penalty.Percent != 25 || auto.Penalty.AppealAllowed {
		t.Fatalf("auto penalty %+v", auto.Penalty)
	}
	fato := auto.Field("fato").Value
	for _, s := range []string{"Notificação Preliminar nº lapa-NP-2026-000001", "recusada", "vencido em 14/03/2026", "Art. 96",
		"Constatação nº lapa-CT-2026-000001", "Constatação nº lapa-CT-2026-000002", "15/03/2026 às 23:00", "LAeq 67,2 dB(A) em 5 min", "XL2, nº de série A2A-99999"} {
		if !strings.Contains(fato, s) {
			t.Errorf("auto fato lacks %q: %s", s, fato)
		}
	}
	if !strings.Contains(auto.Field("prazo").Value, "10 dias a contar da intimação (Art. 339") {
		t.Errorf("auto prazo: %q", auto.Field("prazo").Value)
	}
	ad := notice.Document{ID: "lapa-AI-2026-000001", Draft: auto, State: notice.StateDraft}
	var views []notice.DeadlineView
	for _, a := range []notice.Action{
		{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 16, 10, 0), Agent: agent()},
		{Kind: notice.ActAcknowledge, Actor: fiscal(), At: at(2026, 3, 16, 11, 0), SignedBy: "Carlos Dono"},
	} {
		if ad, err = ad.Apply(c, a); err != nil {
			t.Fatal(err)
		}
	}
	views = notice.Deadlines(c, &ad, at(2026, 3, 20, 0, 0))
	got := map[string]notice.DeadlineView{}
	for _, v := range views {
		got[v.ID] = v
	}
	if got["defesa"].LastDay != "26/03/2026" || got["defesa"].Status != notice.DeadlineRunning {
		t.Errorf("defesa %+v", got["defesa"])
	}
	if got["recurso"].Status != notice.DeadlineNotAllowed || !strings.Contains(got["recurso"].Note, "Art. 346, § 1º") {
		t.Errorf("recurso %+v", got["recurso"])
	}
	if got["pagamento"].Status != notice.DeadlineWaiting {
		t.Errorf("pagamento %+v", got["pagamento"])
	}
}

func TestIllegalTransitions(t *testing.T) {
	lapa, macabu, ca := noticetest.Lapa(set), noticetest.Macabu(set), noticetest.CamposAltos(set)
	draft := func(sc noticetest.Scenario) notice.Document {
		return notice.Document{ID: "X-1", Draft: grounded(t, sc, at(2026, 3, 11, 9, 0)), State: notice.StateDraft}
	}
	issued := func(sc noticetest.Scenario, prazo int) notice.Document {
		d := draft(sc)
		d, err := d.Apply(sc.Code, notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: agent(), PrazoDays: prazo})
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	op := notice.Actor{ID: "u2", Name: "Operador", Role: notice.RoleOperator}
	ungrounded := func(sc noticetest.Scenario) notice.Document {
		d, err := notice.Build(sc.Code, sc.Finding, sc.Party, sc.Site, nil, at(2026, 3, 11, 9, 0))
		if err != nil {
			t.Fatal(err)
		}
		return notice.Document{ID: "X-0", Draft: d, State: notice.StateDraft}
	}
	tests := []struct {
		name string
		sc   noticetest.Scenario
		doc  notice.Document
		a    notice.Action
		want string
	}{
		{"operator issues", lapa, draft(lapa), notice.Action{Kind: notice.ActIssue, Actor: op, At: at(2026, 3, 11, 10, 0), Agent: agent(), PrazoDays: 5}, "somente um fiscal pode emitir"},
		{"no matrícula", lapa, draft(lapa), notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: &notice.Agent{Name: "Ana"}, PrazoDays: 5}, "matrícula"},
		{"no prazo", lapa, draft(lapa), notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: agent()}, "informe o prazo"},
		{"macabu prazo over 30", macabu, draft(macabu), notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: agent(), PrazoDays: 31}, "excede o máximo de 30 dias"},
		{"macabu imminent risk on issue", macabu, draft(macabu), notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: agent(), PrazoDays: 10, ImminentRisk: true}, "não cabe Intimação Preliminar"},
		{"lapa imminent risk", lapa, draft(lapa), notice.Action{Kind: notice.ActEscalate, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: agent(), ImminentRisk: true}, "não prevê exceção por risco iminente"},
		{"ciente on draft", lapa, draft(lapa), notice.Action{Kind: notice.ActAcknowledge, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), SignedBy: "X"}, "ainda é rascunho"},
		{"auto on draft", lapa, draft(lapa), notice.Action{Kind: notice.ActEscalate, Actor: fiscal(), At: at(2026, 3, 11, 10, 0)}, "ainda é rascunho"},
		{"auto before delivery", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActEscalate, Actor: fiscal(), At: at(2026, 4, 11, 10, 0)}, "registre o ciente ou a recusa"},
		{"issue twice", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 11, 0), Agent: agent(), PrazoDays: 5}, "só um rascunho pode ser emitido"},
		{"one witness", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActRefuse, Actor: fiscal(), At: at(2026, 3, 11, 11, 0), Witnesses: witnesses()[:1]}, "precisa de 2 testemunhas"},
		{"same witness twice", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActRefuse, Actor: fiscal(), At: at(2026, 3, 11, 11, 0), Witnesses: []notice.Witness{witnesses()[0], witnesses()[0]}}, "pessoas distintas"},
		{"agent as witness", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActRefuse, Actor: fiscal(), At: at(2026, 3, 11, 11, 0), Witnesses: []notice.Witness{witnesses()[0], {Name: noticetest.Agent.Name, DocType: notice.WitnessCPF, Document: "529.982.247-25"}}}, "agente fiscal não pode testemunhar"},
		{"witness without document", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActRefuse, Actor: fiscal(), At: at(2026, 3, 11, 11, 0), Witnesses: []notice.Witness{witnesses()[0], {Name: "Pedro Alves"}}}, "informe o tipo do documento"},
		{"recusa without declaration", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActRefuse, Actor: fiscal(), At: at(2026, 3, 11, 11, 0), Witnesses: witnesses()}, "declaração do fiscal"},
		{"prazo of 10000 days", lapa, draft(lapa), notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: agent(), PrazoDays: 10000}, "passa de 365 dias"},
		{"prazo negative", lapa, draft(lapa), notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: agent(), PrazoDays: -1}, "não pode ser negativo"},
		{"issue without constatação", lapa, ungrounded(lapa), notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: agent(), PrazoDays: 5}, "registre antes a constatação"},
		{"ciente before issue", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActAcknowledge, Actor: fiscal(), At: at(2026, 3, 11, 9, 0), SignedBy: "X"}, "anterior à emissão"},
		{"cancel issued", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActCancel, Actor: fiscal(), At: at(2026, 3, 11, 11, 0)}, "só rascunhos podem ser cancelados"},
		{"relatório ciente", ca, issued(ca, 0), notice.Action{Kind: notice.ActAcknowledge, Actor: fiscal(), At: at(2026, 3, 11, 11, 0), SignedBy: "X"}, "não é entregue ao infrator"},
		{"relatório prazo", ca, draft(ca), notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 11, 11, 0), Agent: agent(), PrazoDays: 3}, "não tem prazo de regularização"},
		{"decide a notice", lapa, issued(lapa, 5), notice.Action{Kind: notice.ActDecide, Actor: fiscal(), At: at(2026, 3, 11, 11, 0)}, "só um auto de infração é julgado"},
		{"unknown", lapa, draft(lapa), notice.Action{Kind: "sign", Actor: fiscal(), At: at(2026, 3, 11, 11, 0)}, "desconhecida"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := tc.doc.State
			got, err := tc.doc.Apply(tc.sc.Code, tc.a)
			if err == nil {
				t.Fatalf("accepted: state %s", got.State)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q lacks %q", err, tc.want)
			}
			if got.State != before {
				t.Errorf("state moved %s → %s on a refused transition", before, got.State)
			}
		})
	}
}

func TestMacabuImminentRiskGoesToAuto(t *testing.T) {
	sc := noticetest.Macabu(set)
	doc := notice.Document{ID: "cm-IP-1", Draft: grounded(t, sc, at(2026, 3, 11, 9, 0)), State: notice.StateDraft}
	doc, err := doc.Apply(sc.Code, notice.Action{Kind: notice.ActEscalate, Actor: fiscal(), At: at(2026, 3, 11, 10, 0), Agent: agent(), ImminentRisk: true})
	if err != nil {
		t.Fatal(err)
	}
	auto, err := notice.BuildAuto(sc.Code, &doc, nil, nil, at(2026, 3, 11, 10, 0))
	if err != nil {
		t.Fatal(err)
	}
	if auto.Kind != notice.KindAuto || !strings.Contains(strings.Join(auto.Notes, " "), "prejuízo ou risco iminente") {
		t.Fatalf("auto %s notes %q", auto.Kind, auto.Notes)
	}
}

func TestBusinessDayDeadline(t *testing.T) {
	er, _ := set.Code("entre-rios-de-minas")
	tests := []struct {
		start time.Time
		last  string
	}{
		// Thursday 16/04/2026: 17 Fri, 20 Mon, 21 Tiradentes (holiday), 22, 23, 24, 27 , 27 Mon, 28 → 7th business day 28/04.
		{at(2026, 4, 16, 15, 0), "28/04/2026"},
		// Friday 06/03/2026: 9..13, 16, 17 → 17/03.
		{at(2026, 3, 6, 23, 0), "17/03/2026"},
	}
	for _, tc := range tests {
		end := notice.DeadlineEnd(er, tc.start, 7, true)
		if got := end.Add(-time.Second).Format("02/01/2006"); got != tc.last {
			t.Errorf("7 dias úteis from %s: last day %s, want %s", tc.start.Format("02/01"), got, tc.last)
		}
	}
	if got := notice.DeadlineEnd(er, at(2026, 4, 16, 15, 0), 10, false).Add(-time.Second).Format("02/01/2006"); got != "26/04/2026" {
		t.Errorf("10 calendar days: %s", got)
	}
}

func TestBuildRejectsBadInput(t *testing.T) {
	sc := noticetest.Lapa(set)
	f := sc.Finding
	f.RuleID = "lapa-nao-existe"
	_, err := notice.Build(sc.Code, f, notice.Party{}, sc.Site, nil, at(2026, 3, 9, 9, 0))
	if !errors.Is(err, notice.ErrInput) || !strings.Contains(err.Error(), "lapa-nao-existe") || !strings.Contains(err.Error(), "complete o cadastro") {
		t.Fatalf("err %v", err)
	}
}
