package notify

import (
	"fmt"
	"html"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/internal/tz"
)

// SensorDetails is what the register says about a sensor, for messages.
type SensorDetails struct {
	Address              string `json:"address,omitempty"`
	Establishment        string `json:"establishment,omitempty"`
	EstablishmentAddress string `json:"establishment_address,omitempty"`
	Gateway              string `json:"gateway,omitempty"`
	GatewayName          string `json:"gateway_name,omitempty"`
}

// Message is a notification rendered for people: a subject, a plain-text
// body and the same as HTML, in pt-BR.
type Message struct {
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html"`
	// Short is a one-line summary (push notifications, SMS).
	Short string `json:"short"`
	URL   string `json:"url"` // the dashboard page of the (first) alert
}

// RenderContext is what rendering needs besides the notification.
type RenderContext struct {
	PublicURL string
	Location  *time.Location                            // local time of the municipality; nil → Brasília time
	Details   func(sensor string) (SensorDetails, bool) // nil: none
}

// dbFmt writes a level with a decimal comma: 72,4.
func dbFmt(v float64) string {
	return strings.Replace(strconv.FormatFloat(v, 'f', 1, 64), ".", ",", 1)
}

func signed(v float64) string {
	if v > 0 {
		return "+" + dbFmt(v)
	}
	return dbFmt(v)
}

// AlertURL is the dashboard link of an alert.
func AlertURL(base, id string) string {
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/#/alertas/" + url.PathEscape(id)
}

func (rc RenderContext) details(sensor string) SensorDetails {
	if rc.Details == nil {
		return SensorDetails{}
	}
	d, _ := rc.Details(sensor)
	return d
}

func (rc RenderContext) local(t time.Time) string {
	loc := rc.Location
	if loc == nil {
		loc = tz.Brasilia()
	}
	if t.IsZero() {
		return "—"
	}
	return t.In(loc).Format("02/01/2006 15:04:05")
}

// headline is one line about an alert.
func headline(a alerts.Alert) string {
	if a.Kind == alerts.KindNoData {
		why := "sensor silencioso"
		if a.Reason == alerts.ReasonGatewayOffline {
			why = "gateway " + a.Gateway + " offline"
		}
		return fmt.Sprintf("%s sem dados (%s)", a.Sensor, why)
	}
	return fmt.Sprintf("%s a %s dB(A), limite %s dB(A)", a.Sensor, dbFmt(a.LAeqDB), dbFmt(a.LimitDB))
}

// facts are the labelled lines of one alert.
func (rc RenderContext) facts(a alerts.Alert) [][2]string {
	d := rc.details(a.Sensor)
	where := a.Sensor
	if d.Address != "" {
		where += " — " + d.Address
	}
	out := [][2]string{{"Sensor", where}}
	est := a.Establishment
	if d.Establishment != "" {
		est = d.Establishment
	}
	if est != "" {
		if d.EstablishmentAddress != "" {
			est += " — " + d.EstablishmentAddress
		}
		out = append(out, [2]string{"Estabelecimento", est})
	}
	out = append(out, [2]string{"Município", a.Municipality})
	if a.Kind == alerts.KindNoData {
		gw := a.Gateway
		if d.GatewayName != "" {
			gw += " (" + d.GatewayName + ")"
		}
		why := "o sensor parou de enviar leituras"
		if a.Reason == alerts.ReasonGatewayOffline {
			why = "o gateway informou que ficou offline"
		}
		out = append(out, [2]string{"Situação", "sem dados: " + why}, [2]string{"Gateway", gw},
			[2]string{"Sem dados desde", rc.local(a.WindowStart)})
	} else {
		lvl := fmt.Sprintf("%s dB(A) (LAeq) para limite de %s dB(A): %s dB", dbFmt(a.LAeqDB), dbFmt(a.LimitDB), signed(a.LAeqDB-a.LimitDB))
		if a.MarginDB > 0 {
			lvl += fmt.Sprintf("; margem de incerteza do medidor %s dB", dbFmt(a.MarginDB))
		}
		out = append(out, [2]string{"Nível", lvl})
		if a.PeakLAeqDB > a.LAeqDB {
			out = append(out, [2]string{"Pico", dbFmt(a.PeakLAeqDB) + " dB(A)"})
		}
		if p := a.PeriodLabel; p != "" {
			out = append(out, [2]string{"Período", p})
		}
		if a.Article != "" {
			art := a.Article
			if a.CodeID != "" {
				art += " — Código de Posturas " + a.CodeID
				if a.CodeVersion != "" {
					art += " (" + a.CodeVersion + ")"
				}
			}
			out = append(out, [2]string{"Dispositivo legal", art})
		}
		if a.Quote != "" {
			out = append(out, [2]string{"Texto", "“" + a.Quote + "”"})
		}
		since := a.FiringAt
		if since.IsZero() {
			since = a.PendingAt
		}
		out = append(out, [2]string{"Desde", rc.local(since)})
		if a.Screening {
			out = append(out, [2]string{"Atenção", "medidor de triagem: indicativo, não serve de prova"})
		}
		if a.UnsyncedRecords > 0 {
			out = append(out, [2]string{"Atenção", fmt.Sprintf("relógio do gateway não sincronizado em %d leituras: horário incerto, não gera notificação preliminar", a.UnsyncedRecords)})
		}
	}
	if a.State == alerts.StateResolved || a.State == alerts.StateCancelled || !a.ResolvedAt.IsZero() {
		out = append(out, [2]string{"Encerrado em", rc.local(a.ResolvedAt)})
	}
	if u := AlertURL(rc.PublicURL, a.ID); u != "" {
		out = append(out, [2]string{"Abrir o alerta", u})
	}
	return out
}

// Render writes a notification for people.
func Render(n Notification, rc RenderContext) Message {
	var m Message
	if len(n.Alerts) > 0 {
		m.URL = AlertURL(rc.PublicURL, n.Alerts[0].ID)
	}
	var intro string
	m.Subject, intro = subjectAndIntro(n)
	m.Short = shortText(n, m.Subject)
	m.Text, m.HTML = renderBody(n, rc, intro)
	return m
}

// subjectAndIntro returns the subject of n's message and the sentence
// that opens it.
func subjectAndIntro(n Notification) (subject, intro string) {
	count := len(n.Alerts)
	first := alerts.Alert{}
	if count > 0 {
		first = n.Alerts[0]
	}
	what := "alertas"
	switch n.Class {
	case ClassNoData:
		what = "sensores sem dados"
	case ClassClock:
		what = "alertas com relógio não sincronizado"
	}
	switch n.Type {
	case TypeFiring:
		if count == 1 {
			subject = fmt.Sprintf("[Sossego] Alerta em %s: %s", n.Municipality, headline(first))
		} else {
			subject = fmt.Sprintf("[Sossego] %d %s em %s", count, what, n.Municipality)
		}
		intro = fmt.Sprintf("Você está de plantão em %s. ", n.Municipality)
		if count == 1 {
			intro += "Há um alerta novo."
		} else {
			intro += fmt.Sprintf("Há %d %s novos.", count, what)
		}
		intro += fmt.Sprintf(" Reconheça no painel; sem reconhecimento em %s o próximo da escala é chamado.", minutes(n.EscalateAfter))
	case TypeEscalation:
		target := "o próximo da escala"
		if n.Step >= 2 {
			target = "a coordenação"
		}
		subject = fmt.Sprintf("[Sossego] ESCALONADO (%s): %d alerta(s) em %s sem reconhecimento", target, count, n.Municipality)
		if count == 1 {
			subject = fmt.Sprintf("[Sossego] ESCALONADO: %s sem reconhecimento em %s", headline(first), n.Municipality)
		}
		intro = fmt.Sprintf("Ninguém reconheceu estes alertas de %s (chamados antes: %s). Você é %s: reconheça no painel.",
			n.Municipality, strings.Join(n.Called, ", "), target)
	case TypeResolved:
		if count == 1 {
			subject = fmt.Sprintf("[Sossego] Encerrado em %s: %s", n.Municipality, first.Sensor)
		} else {
			subject = fmt.Sprintf("[Sossego] %d alertas encerrados em %s", count, n.Municipality)
		}
		intro = "Estes alertas sobre os quais você foi avisado(a) foram encerrados."
	case TypeTest:
		subject = "[Sossego] Mensagem de teste"
		intro = "Mensagem de teste das notificações do Sossego: este canal está funcionando."
	}
	return subject, intro
}

// shortText returns the message's short form (push, SMS): the subject
// without its prefix and, for several alerts, the first three headlines.
func shortText(n Notification, subject string) string {
	short := subject[len("[Sossego] "):]
	count := len(n.Alerts)
	if count > 1 {
		var hs []string
		for i, a := range n.Alerts {
			if i == 3 {
				hs = append(hs, fmt.Sprintf("e mais %d", count-3))
				break
			}
			hs = append(hs, headline(a))
		}
		short += ": " + strings.Join(hs, "; ")
	}
	return short
}

// renderBody returns the message's body as text and as HTML: intro, a
// summary of a no-data storm, each alert's facts, and the footer.
func renderBody(n Notification, rc RenderContext, intro string) (text, htm string) {
	var t, h strings.Builder
	t.WriteString(intro + "\n")
	h.WriteString(`<!doctype html><html lang="pt-BR"><body style="font-family:sans-serif">`)
	h.WriteString("<p>" + html.EscapeString(intro) + "</p>")
	if line := noDataSummary(n); line != "" {
		t.WriteString(line + "\n")
		h.WriteString("<p><b>" + html.EscapeString(line) + "</b></p>")
	}
	for i, a := range n.Alerts {
		fmt.Fprintf(&t, "\n%d. %s\n", i+1, headline(a))
		h.WriteString("<h3>" + html.EscapeString(fmt.Sprintf("%d. %s", i+1, headline(a))) + "</h3><table>")
		for _, f := range rc.facts(a) {
			fmt.Fprintf(&t, "   %s: %s\n", f[0], f[1])
			val := html.EscapeString(f[1])
			if strings.HasPrefix(f[1], "http://") || strings.HasPrefix(f[1], "https://") {
				val = `<a href="` + html.EscapeString(f[1]) + `">` + val + `</a>`
			}
			h.WriteString("<tr><th align=\"left\" valign=\"top\">" + html.EscapeString(f[0]) + "</th><td>" + val + "</td></tr>")
		}
		h.WriteString("</table>")
	}
	foot := "Sossego — monitoramento de ruído. Horários locais de " + n.Municipality + "."
	if n.Type == TypeTest {
		foot = "Sossego — monitoramento de ruído."
	}
	t.WriteString("\n-- \n" + foot + "\n")
	h.WriteString("<hr><p><small>" + html.EscapeString(foot) + "</small></p></body></html>")
	return t.String(), h.String()
}

// noDataSummary returns, for a no_data storm (several sensors), the line
// that says which gateways they are on; "" for any other notification.
func noDataSummary(n Notification) string {
	if n.Class != ClassNoData || len(n.Alerts) <= 1 {
		return ""
	}
	gws := map[string]int{}
	for _, a := range n.Alerts {
		gws[a.Gateway]++
	}
	keys := make([]string, 0, len(gws))
	for k := range gws {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("gateway %s: %d sensor(es)", k, gws[k]))
	}
	return "Resumo: " + strings.Join(parts, "; ") + "."
}

func minutes(d time.Duration) string {
	if d <= 0 {
		d = DefaultEscalateAfter * time.Minute
	}
	if m := int(d.Minutes()); m == 1 {
		return "1 minuto"
	} else if d%time.Minute == 0 {
		return fmt.Sprintf("%d minutos", m)
	}
	return d.String()
}
