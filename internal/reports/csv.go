package reports

import (
	"bufio"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/stats"
)

// CSV: ';'-separated with decimal commas and a UTF-8 byte-order mark, as
// spreadsheets set to pt-BR open it.

const bom = "\ufeff"

func csvDB(dst []byte, v *float64) []byte {
	if v == nil {
		return dst
	}
	return csvNum(dst, *v, 2)
}

func csvNum(dst []byte, v float64, prec int) []byte {
	if prec >= 0 && prec <= 3 && !math.IsNaN(v) && math.Abs(v) < 1e12 {
		return appendFixed(dst, v, prec, ',')
	}
	n := len(dst)
	dst = strconv.AppendFloat(dst, v, 'f', prec, 64)
	for i := n; i < len(dst); i++ {
		if dst[i] == '.' {
			dst[i] = ','
		}
	}
	return dst
}

// appendFixed appends v with prec decimals (0–3) and the decimal mark sep,
// rounding half away from zero: strconv's shortest-exact formatting was a
// third of a 1-min export's time.
func appendFixed(dst []byte, v float64, prec int, sep byte) []byte {
	scale := [...]float64{1, 10, 100, 1000}[prec]
	n := int64(math.Round(math.Abs(v) * scale))
	if v < 0 && n != 0 {
		dst = append(dst, '-')
	}
	p := int64(scale)
	dst = strconv.AppendInt(dst, n/p, 10)
	if prec > 0 {
		dst = append(dst, sep)
		frac := n % p
		for d := p / 10; d > 0; d /= 10 {
			dst = append(dst, byte('0'+frac/d))
			frac %= d
		}
	}
	return dst
}

func csvText(dst []byte, s string) []byte {
	if !strings.ContainsAny(s, ";\"\n\r") {
		return append(dst, s...)
	}
	return append(append(append(dst, '"'), strings.ReplaceAll(s, `"`, `""`)...), '"')
}

func localTime(t time.Time) string { return t.In(loc).Format("2006-01-02T15:04:05-07:00") }

// WriteCSV writes the reports as CSV: a total line, a line per legal
// period, per occurrence of a period and per day of each sensor.
func WriteCSV(w *bufio.Writer, reps []SensorReport) {
	w.WriteString(bom + "sensor;linha;inicio;fim;periodo;limite_dba;laeq_db;l10_db;l50_db;l90_db;l95_db;lafmax_db;lafmin_db;" +
		"ld_db;le_db;ln_db;lden_db;cobertura_pct;minutos_acima;episodios_acima\n")
	var b []byte
	row := func(sensor, kind string, start, end time.Time, period string, limit *float64, f stats.Figures, den *stats.DEN) {
		b = csvText(b[:0], sensor)
		b = append(b, ';')
		b = append(b, kind...)
		b = append(b, ';')
		b = append(b, localTime(start)...)
		b = append(b, ';')
		b = append(b, localTime(end)...)
		b = append(b, ';')
		b = csvText(b, period)
		for _, v := range []*float64{limit, f.LAeq, f.L10, f.L50, f.L90, f.L95, f.LAFmax, f.LAFmin} {
			b = csvDB(append(b, ';'), v)
		}
		for i := range 4 {
			b = append(b, ';')
			if den != nil {
				b = csvDB(b, [...]*float64{den.Ld, den.Le, den.Ln, den.Lden}[i])
			}
		}
		b = csvNum(append(b, ';'), 100*f.Coverage, 1)
		b = strconv.AppendInt(append(b, ';'), int64(f.MinutesAbove), 10)
		b = strconv.AppendInt(append(b, ';'), int64(f.EpisodesAbove), 10)
		b = append(b, '\n')
		w.Write(b) //nolint:errcheck // a bufio.Writer keeps its first error
	}
	for _, r := range reps {
		row(r.Sensor, "total", r.From, r.To, "", nil, r.Figures, &r.DEN)
		for _, p := range r.Periods {
			row(r.Sensor, "periodo_legal", r.From, r.To, p.PeriodLabel, p.LimitDBA, p.Figures, nil)
		}
		for _, o := range r.Occurrences {
			label := o.PeriodLabel
			if o.Holiday != "" {
				label += " (feriado: " + o.Holiday + ")"
			} else if o.HolidayEve {
				label += " (véspera de feriado)"
			}
			row(r.Sensor, "ocorrencia", o.Start, o.End, label, o.LimitDBA, o.Figures, nil)
		}
		for _, d := range r.Days {
			day, _ := time.ParseInLocation(time.DateOnly, d.Date, loc)
			start, end := day, day.AddDate(0, 0, 1)
			if start.Before(r.From) {
				start = r.From
			}
			if end.After(r.To) {
				end = r.To
			}
			row(r.Sensor, "dia", start, end, dayLabel(d.DayInfo), nil, d.Figures, &d.DEN)
		}
	}
}

// dayLabel is what the code's calendar says of a day, pt-BR ("" for an
// ordinary day).
func dayLabel(d stats.DayInfo) string {
	switch {
	case d.Holiday != "":
		return "feriado: " + d.Holiday
	case d.Optional != "" && d.HolidayEve:
		return "ponto facultativo: " + d.Optional + "; véspera de feriado"
	case d.Optional != "":
		return "ponto facultativo: " + d.Optional
	case d.HolidayEve:
		return "véspera de feriado"
	}
	return ""
}
