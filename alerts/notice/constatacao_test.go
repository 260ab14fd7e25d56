package notice_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/notice"
	"github.com/sossego/sossego/alerts/notice/noticetest"
)

func fp(v float64) *float64 { return &v }

func onSite(k notice.Constatacao, laeq float64) notice.Constatacao {
	k.Measurement = notice.Measurement{Kind: notice.MeasureOnSite, Meter: &notice.Meter{Grade: alerts.GradeClass1, Model: "XL2", Serial: "A2A-1",
		CalibratedAt: "2026-01-10"}, LAeqDB: fp(laeq), DurationS: 300, LimitDB: k.Measurement.LimitDB}
	return k
}

func TestCheckConstatacao(t *testing.T) {
	sc := noticetest.Lapa(set)
	now := sc.Finding.WindowEnd.Add(time.Hour)
	tests := []struct {
		name string
		edit func(*notice.Constatacao)
		want string // "" = accepted
	}{
		{"the scenario's", func(*notice.Constatacao) {}, ""},
		{"unidentified source is recorded", func(k *notice.Constatacao) { k.Source = notice.Source{Kind: notice.SourceUnidentified} }, ""},
		{"no source", func(k *notice.Constatacao) { k.Source = notice.Source{} }, "informe a fonte do ruído"},
		{"unknown source kind", func(k *notice.Constatacao) { k.Source.Kind = "vizinho" }, "fonte \"vizinho\" desconhecida"},
		{"register without id", func(k *notice.Constatacao) { k.Source.EstablishmentID = "" }, "escolha o estabelecimento"},
		{"other with a bad CPF", func(k *notice.Constatacao) {
			k.Source = notice.Source{Kind: notice.SourceOther, Name: "José Vizinho", Document: "111.444.777-00", Address: "Rua A, 1"}
		}, "dígito verificador do CPF"},
		{"other without address", func(k *notice.Constatacao) {
			k.Source = notice.Source{Kind: notice.SourceOther, Name: "José Vizinho", Document: "111.444.777-35"}
		}, "endereço de quem produziu"},
		{"no position", func(k *notice.Constatacao) { k.Position = notice.Position{} }, "onde o fiscal estava"},
		{"latitude alone", func(k *notice.Constatacao) { k.Position.Lat = fp(-25.7) }, "latitude e longitude juntas"},
		{"latitude out of range", func(k *notice.Constatacao) { k.Position.Lat, k.Position.Lon = fp(-95), fp(-49) }, "fora do intervalo"},
		{"no time", func(k *notice.Constatacao) { k.At = time.Time{} }, "data e a hora da constatação"},
		{"in the future", func(k *notice.Constatacao) { k.At = now.Add(time.Hour) }, "está no futuro"},
		{"nothing heard", func(k *notice.Constatacao) { k.Heard = " " }, "descreva o que foi ouvido"},
		{"no agent", func(k *notice.Constatacao) { k.Agent = notice.Agent{Name: "fiscal"} }, "nome completo e matrícula"},
		{"no measurement", func(k *notice.Constatacao) { k.Measurement = notice.Measurement{} }, "informe a medição que confirma"},
		{"on-site screening meter", func(k *notice.Constatacao) { *k = onSite(*k, 70); k.Measurement.Meter.Grade = alerts.GradeScreening }, "classe 1 ou 2"},
		{"on-site without serial", func(k *notice.Constatacao) { *k = onSite(*k, 70); k.Measurement.Meter.Serial = "" }, "número de série"},
		{"on-site bad calibration date", func(k *notice.Constatacao) { *k = onSite(*k, 70); k.Measurement.Meter.CalibratedAt = "10/01/2026" }, "use AAAA-MM-DD"},
		{"on-site calibrated after", func(k *notice.Constatacao) { *k = onSite(*k, 70); k.Measurement.Meter.CalibratedAt = "2026-12-01" }, "posterior à medição"},
		{"on-site no duration", func(k *notice.Constatacao) { *k = onSite(*k, 70); k.Measurement.DurationS = 0 }, "duração em segundos"},
		{"on-site no LAeq", func(k *notice.Constatacao) { *k = onSite(*k, 70); k.Measurement.LAeqDB = nil }, "informe o LAeq"},
		{"on-site absurd level", func(k *notice.Constatacao) { *k = onSite(*k, 400) }, "fora do intervalo de 0 a 160"},
		{"statement first", func(k *notice.Constatacao) {
			k.Measurement = notice.Measurement{Kind: notice.MeasureStatement, Evidence: "vídeo"}
		}, "só vale para a constatação após o prazo"},
		{"statement without evidence", func(k *notice.Constatacao) {
			k.FollowsUp = "lapa-NP-2026-000001"
			k.Measurement = notice.Measurement{Kind: notice.MeasureStatement}
		}, "descreva a evidência"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := sc.Constatacao()
			tc.edit(&k)
			err := notice.CheckConstatacao(k, now)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (!errors.Is(err, notice.ErrInput) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want ErrInput with %q", err, tc.want)
			}
		})
	}
}

func TestGrounds(t *testing.T) {
	sc := noticetest.Lapa(set)
	tests := []struct {
		name string
		edit func(*notice.Constatacao)
		want string // "" = grounds a notice
	}{
		{"calibrated class 2 sensor, source attested", func(*notice.Constatacao) {}, ""},
		{"on-site class 1 reading", func(k *notice.Constatacao) { *k = onSite(*k, 66) }, ""},
		{"screening sensor", func(k *notice.Constatacao) { k.Measurement.SensorGrade = alerts.GradeScreening }, "é de triagem"},
		{"screening sensor says what is needed", func(k *notice.Constatacao) { k.Measurement.SensorGrade = alerts.GradeScreening }, "Faça a medição no local com medidor classe 1 ou 2"},
		{"calibration expired", func(k *notice.Constatacao) {
			k.Measurement.CalibrationOK, k.Measurement.CalibrationNote = false, "calibração vencida em 05/02/2026"
		}, "vencida em 05/02/2026"},
		{"source not attested", func(k *notice.Constatacao) { k.Measurement.SourceAttested = false }, "atestar"},
		{"source unidentified", func(k *notice.Constatacao) { k.Source = notice.Source{Kind: notice.SourceUnidentified} }, "não há a quem notificar"},
		{"below the limit", func(k *notice.Constatacao) { *k = onSite(*k, 59.5) }, "não passa do limite de 60,0 dB"},
		{"within 3 dB of the residual", func(k *notice.Constatacao) { *k = onSite(*k, 64); k.Measurement.ResidualDB = fp(62) }, "menos de 3 dB do nível residual"},
		{"statement grounds a follow-up", func(k *notice.Constatacao) {
			k.FollowsUp = "lapa-NP-2026-000001"
			k.Measurement = notice.Measurement{Kind: notice.MeasureStatement, Evidence: "vídeo de 2 min"}
		}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := sc.Constatacao()
			tc.edit(&k)
			err := k.Grounds()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("does not ground: %v", err)
			case tc.want != "" && (!errors.Is(err, notice.ErrNoGround) || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want ErrNoGround with %q", err, tc.want)
			}
			if tc.want != "" {
				if _, err := notice.BuildFrom(sc.Code, sc.Finding, k, sc.Site, nil, at(2026, 3, 9, 9, 0)); !errors.Is(err, notice.ErrNoGround) {
					t.Fatalf("BuildFrom accepted a constatação that does not ground a notice: %v", err)
				}
			}
		})
	}
}

func TestBuildFromOnSiteOtherParty(t *testing.T) {
	sc := noticetest.Lapa(set)
	k := onSite(sc.Constatacao(), 66.3)
	k.Source = notice.Source{Kind: notice.SourceOther, Name: "José Vizinho", Document: "111.444.777-35", Address: "Rua XV de Novembro, 102"}
	k.Position.Lat, k.Position.Lon = fp(-25.76971), fp(-49.71582)
	d, err := notice.BuildFrom(sc.Code, sc.Finding, k, sc.Site, nil, at(2026, 3, 9, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	if d.Party.Name != "José Vizinho" || d.LavraturaPlace != "Rua XV de Novembro, 102" || d.Site.MeterSerial != "A2A-1" || d.Site.Sensor != "" {
		t.Fatalf("party %+v, lavratura %q, site %+v", d.Party, d.LavraturaPlace, d.Site)
	}
	fato := d.Field("fato").Value
	for _, s := range []string{"o fiscal, no local, mediu", "LAeq de 66,3 dB(A)", "CPF 111.444.777-35", "classe 1 (IEC 61672-1), XL2",
		"[-25.76971, -49.71582]", "música mecânica amplificada", "Ana Paula Ferreira (matrícula F-1234)"} {
		if !strings.Contains(fato, s) {
			t.Errorf("fato lacks %q: %s", s, fato)
		}
	}
	if strings.Contains(fato, "o sensor") {
		t.Errorf("an on-site finding names the sensor: %s", fato)
	}
}

func TestCheckWitness(t *testing.T) {
	tests := []struct {
		w    notice.Witness
		want string // "" = accepted
	}{
		{notice.Witness{Name: "Maria Souza", DocType: notice.WitnessCPF, Document: "111.444.777-35"}, ""},
		{notice.Witness{Name: "João da Silva", DocType: notice.WitnessRG, Document: "1.234.567-8", Issuer: "SSP/PR"}, ""},
		{notice.Witness{Name: "Maria Souza", Document: "abc"}, "informe o tipo do documento"},
		{notice.Witness{Name: "Maria Souza", DocType: notice.WitnessCPF, Document: "abc"}, "CPF \"abc\" inválido"},
		{notice.Witness{Name: "Maria Souza", DocType: notice.WitnessCPF, Document: "111.444.777-36"}, "dígito verificador"},
		{notice.Witness{Name: "Maria Souza", DocType: notice.WitnessRG, Document: "abc", Issuer: "SSP/PR"}, "RG \"abc\" inválido"},
		{notice.Witness{Name: "Maria Souza", DocType: notice.WitnessRG, Document: "1.234.567-8"}, "órgão emissor"},
		{notice.Witness{Name: "Maria", DocType: notice.WitnessCPF, Document: "111.444.777-35"}, "nome completo"},
		{notice.Witness{Name: "Maria 123", DocType: notice.WitnessCPF, Document: "111.444.777-35"}, "sem letras"},
		{notice.Witness{Name: "Maria Souza", DocType: "cnh", Document: "123"}, "use cpf ou rg"},
	}
	for _, tc := range tests {
		err := notice.CheckWitness(tc.w)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v refused: %v", tc.w, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: err %v, want %q", tc.w, err, tc.want)
		}
	}
}

func TestEditDraft(t *testing.T) {
	sc := noticetest.Lapa(set)
	c := sc.Code
	doc := notice.Document{ID: "lapa-NP-2026-000001", Draft: grounded(t, sc, at(2026, 3, 9, 9, 0)), State: notice.StateDraft}
	t0 := at(2026, 3, 9, 9, 30)
	next, edits, err := doc.Edit(c, fiscal(), t0, []notice.FieldChange{
		{Field: notice.EditPartyAddress, Value: "Rua XV de Novembro, 98, sala 2, Centro, Lapa - PR"},
		{Field: notice.EditLavraturaPlace, Value: "Sede da Prefeitura, Praça Gen. Carneiro, Lapa - PR"},
		{Field: notice.EditCircumstances, Value: "Portas abertas e caixas de som voltadas para a rua."},
		{Field: notice.EditPrazoDays, Value: "5"},
		{Field: notice.EditPartyName, Value: sc.Party.Name}, // unchanged: no edit
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(edits) != 4 || len(next.Edits) != 4 || edits[0].Before != sc.Party.Address || edits[0].Actor.Name != "Ana Paula Ferreira" || !edits[0].At.Equal(t0) {
		t.Fatalf("edits %+v", edits)
	}
	for id, want := range map[string]string{"notificado": "sala 2", "fato": "Circunstâncias: Portas abertas", "lavratura": "Sede da Prefeitura"} {
		if v := next.Draft.Field(id).Value; !strings.Contains(v, want) {
			t.Errorf("field %s not recomputed: %q lacks %q", id, v, want)
		}
	}
	if next.PrazoDays != 5 || doc.Draft.Party.Address != sc.Party.Address || doc.Draft.Field("fato").Value == next.Draft.Field("fato").Value {
		t.Fatal("prazo not kept, or the original document changed")
	}
	// The fiscal's own wording of a field stays when the data under it changes.
	next, _, err = next.Edit(c, fiscal(), t0.Add(time.Minute), []notice.FieldChange{{Field: "field.fato", Value: "Texto do fiscal."}})
	if err != nil {
		t.Fatal(err)
	}
	next, _, err = next.Edit(c, fiscal(), t0.Add(2*time.Minute), []notice.FieldChange{{Field: notice.EditPartyAddress, Value: "Rua B, 2"}})
	if err != nil || next.Draft.Field("fato").Value != "Texto do fiscal." || !strings.Contains(next.Draft.Field("notificado").Value, "Rua B, 2") {
		t.Fatalf("fato %q notificado %q err %v", next.Draft.Field("fato").Value, next.Draft.Field("notificado").Value, err)
	}
	// The prazo set on the draft is the one issued.
	issued, err := next.Apply(c, notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: t0.Add(time.Hour), Agent: agent()})
	if err != nil || issued.PrazoDays != 5 || issued.StateLabel() != "emitida" {
		t.Fatalf("issue with the draft's prazo: %v, %d, %q", err, issued.PrazoDays, issued.StateLabel())
	}
	if !strings.Contains(issued.Draft.Field("lavratura").Value, "Sede da Prefeitura") {
		t.Errorf("lavratura after issue: %q", issued.Draft.Field("lavratura").Value)
	}

	refusals := []struct {
		name    string
		doc     notice.Document
		actor   notice.Actor
		changes []notice.FieldChange
		want    error
		msg     string
	}{
		{"operator", doc, notice.Actor{ID: "op", Role: notice.RoleOperator}, []notice.FieldChange{{Field: notice.EditCircumstances, Value: "x"}}, notice.ErrForbidden, "somente um fiscal"},
		{"issued", issued, fiscal(), []notice.FieldChange{{Field: notice.EditCircumstances, Value: "x"}}, notice.ErrTransition, "um ato emitido não se altera"},
		{"nothing", doc, fiscal(), nil, notice.ErrInput, "nenhuma alteração"},
		{"prazo 0", doc, fiscal(), []notice.FieldChange{{Field: notice.EditPrazoDays, Value: "0"}}, notice.ErrInput, "ao menos 1 dia"},
		{"prazo 10000", doc, fiscal(), []notice.FieldChange{{Field: notice.EditPrazoDays, Value: "10000"}}, notice.ErrInput, "passa de 365 dias"},
		{"prazo text", doc, fiscal(), []notice.FieldChange{{Field: notice.EditPrazoDays, Value: "cinco"}}, notice.ErrInput, "número inteiro"},
		{"bad CNPJ", doc, fiscal(), []notice.FieldChange{{Field: notice.EditPartyDocument, Value: "12.345.678/0001-00"}}, notice.ErrInput, "dígito verificador do CNPJ"},
		{"empty address", doc, fiscal(), []notice.FieldChange{{Field: notice.EditPartyAddress, Value: " "}}, notice.ErrInput, "não pode ficar vazio"},
		{"unknown field", doc, fiscal(), []notice.FieldChange{{Field: "field.cor"}}, notice.ErrInput, "não tem o campo \"cor\""},
		{"agent field", doc, fiscal(), []notice.FieldChange{{Field: "field.agente", Value: "Outro"}}, notice.ErrInput, "preenchido na emissão"},
		{"not editable", doc, fiscal(), []notice.FieldChange{{Field: "state", Value: "issued"}}, notice.ErrInput, "não é editável"},
		{"one bad change spoils all", doc, fiscal(), []notice.FieldChange{{Field: notice.EditCircumstances, Value: "ok"}, {Field: notice.EditPrazoDays, Value: "-3"}}, notice.ErrInput, "ao menos 1 dia"},
	}
	for _, tc := range refusals {
		t.Run(tc.name, func(t *testing.T) {
			got, edits, err := tc.doc.Edit(c, tc.actor, t0, tc.changes)
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err %v, want %v with %q", err, tc.want, tc.msg)
			}
			if edits != nil || len(got.Edits) != len(tc.doc.Edits) || got.Draft.Circumstances != tc.doc.Draft.Circumstances {
				t.Fatalf("a refused edit changed the document: %+v", edits)
			}
		})
	}
}

func TestAutoNeedsFollowUpAfterPrazo(t *testing.T) {
	sc := noticetest.Lapa(set)
	c := sc.Code
	doc := notice.Document{ID: "lapa-NP-2026-000001", Draft: grounded(t, sc, at(2026, 3, 9, 9, 0)), State: notice.StateDraft}
	var err error
	for _, a := range []notice.Action{
		{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 9, 10, 0), Agent: agent(), PrazoDays: 5},
		{Kind: notice.ActAcknowledge, Actor: fiscal(), At: at(2026, 3, 9, 10, 30), SignedBy: "Carlos Dono", Observation: "recebeu a 1ª via"},
	} {
		if doc, err = doc.Apply(c, a); err != nil {
			t.Fatal(err)
		}
	}
	if doc.StateLabel() != "ciente do notificado" || doc.Observation != "recebeu a 1ª via" {
		t.Fatalf("label %q observation %q", doc.StateLabel(), doc.Observation)
	}
	good := sc.FollowUp(doc.ID, at(2026, 3, 15, 22, 0), 66)
	tests := []struct {
		name   string
		at     time.Time
		follow func() *notice.Constatacao
		want   string
	}{
		{"before the prazo", at(2026, 3, 14, 22, 0), func() *notice.Constatacao { return &good }, "corre até 14/03/2026"},
		{"no follow-up", at(2026, 3, 16, 9, 0), func() *notice.Constatacao { return nil }, "registre a constatação após o prazo"},
		{"follow-up of another notice", at(2026, 3, 16, 9, 0), func() *notice.Constatacao {
			k := good
			k.FollowsUp = "lapa-NP-2026-000009"
			return &k
		}, "não é o acompanhamento"},
		{"follow-up inside the prazo", at(2026, 3, 16, 9, 0), func() *notice.Constatacao {
			k := good
			k.At = at(2026, 3, 14, 22, 0)
			return &k
		}, "anterior ao fim do prazo (14/03/2026)"},
		{"follow-up names another party", at(2026, 3, 16, 9, 0), func() *notice.Constatacao {
			k := good
			k.Source = notice.Source{Kind: notice.SourceOther, Name: "José Vizinho", Document: "111.444.777-35", Address: "Rua A"}
			return &k
		}, "identifica outra fonte"},
		{"follow-up below the limit", at(2026, 3, 16, 9, 0), func() *notice.Constatacao {
			k := sc.FollowUp(doc.ID, at(2026, 3, 15, 22, 0), 58)
			return &k
		}, "não passa do limite"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := doc.Apply(c, notice.Action{Kind: notice.ActEscalate, Actor: fiscal(), At: tc.at, FollowUp: tc.follow()})
			if !errors.Is(err, notice.ErrTransition) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if got.State != doc.State || got.FollowUp != "" {
				t.Fatalf("state moved to %s", got.State)
			}
		})
	}
	statement := good
	statement.Measurement = notice.Measurement{Kind: notice.MeasureStatement, Evidence: "vídeo de 2 min gravado da calçada"}
	esc, err := doc.Apply(c, notice.Action{Kind: notice.ActEscalate, Actor: fiscal(), At: at(2026, 3, 16, 9, 0), FollowUp: &statement})
	if err != nil {
		t.Fatal(err)
	}
	auto, err := notice.BuildAuto(c, &esc, &statement, nil, at(2026, 3, 16, 9, 0))
	if err != nil {
		t.Fatal(err)
	}
	ad := notice.Document{ID: "lapa-AI-2026-000001", Draft: auto, State: notice.StateDraft}
	if len(auto.Constatacoes) != 2 || !strings.Contains(auto.Field("fato").Value, "Declaração do fiscal; evidência: vídeo de 2 min") {
		t.Fatalf("auto constatações %d, fato %s", len(auto.Constatacoes), auto.Field("fato").Value)
	}
	if ad, err = ad.Apply(c, notice.Action{Kind: notice.ActIssue, Actor: fiscal(), At: at(2026, 3, 16, 10, 0), Agent: agent()}); err != nil {
		t.Fatal(err)
	}
	if ad.StateLabel() != "emitido" {
		t.Errorf("auto label %q, want emitido", ad.StateLabel())
	}
}

func TestStateLabelsAgree(t *testing.T) {
	tests := []struct {
		s    notice.State
		k    notice.Kind
		want string
	}{
		{notice.StateIssued, notice.KindNotificacaoPreliminar, "emitida"},
		{notice.StateIssued, notice.KindIntimacaoPreliminar, "emitida"},
		{notice.StateIssued, notice.KindAuto, "emitido"},
		{notice.StateIssued, notice.KindRelatorio, "emitido"},
		{notice.StateRegularised, notice.KindNotificacaoPreliminar, "regularizada"},
		{notice.StateCancelled, notice.KindAuto, "cancelado"},
		{notice.StateAcknowledged, notice.KindAuto, "ciente do autuado"},
		{notice.StateAcknowledged, notice.KindNotificacaoIntimacao, "ciente do notificado"},
	}
	for _, tc := range tests {
		if got := tc.s.LabelFor(tc.k); got != tc.want {
			t.Errorf("%s of %s: %q, want %q", tc.s, tc.k, got, tc.want)
		}
	}
}
