package evidence

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/sossego/sossego/alerts/notice"
)

const readingsHeader = "t_utc,t_brasilia,dur_ms,laeq_db,lafmax_db,lafmin_db,lcpeak_db,overload,gateway,batch_seq,grade,clock_synced,in_window,above_limit\n"

// readings streams data/readings.csv and returns the batches the records
// name, in first-seen order.
func (w *writer) readings(p *Package, z *summarizer, progress func(done, total int)) ([]BatchKey, error) {
	fw, h, err := w.create("data/readings.csv")
	if err != nil {
		return nil, err
	}
	cw := &countWriter{w: fw}
	bw := bufio.NewWriterSize(cw, 64<<10)
	bw.WriteString(readingsHeader)
	f := p.Finding
	buf := make([]byte, 0, 256)
	total := len(p.Records)
	if p.Stream != nil {
		total = int(p.To.Sub(p.From) / time.Second)
	}
	var keys []BatchKey
	seen := map[BatchKey]bool{}
	var werr error
	i := 0
	emit := func(r Record) bool {
		z.add(&r)
		if k := (BatchKey{r.Gateway, r.Seq}); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
		buf = appendReading(buf[:0], &r, &f)
		if _, werr = bw.Write(buf); werr != nil {
			return false
		}
		i++
		if progress != nil && i%4096 == 0 {
			progress(min(i, total), max(total, i))
		}
		return true
	}
	if p.Stream != nil {
		if err := p.Stream(emit); err != nil {
			return nil, fmt.Errorf("evidence: readings: %w", err)
		}
	} else {
		for _, r := range p.Records {
			if !emit(r) {
				break
			}
		}
	}
	if werr != nil {
		return nil, fmt.Errorf("evidence: readings: %w", werr)
	}
	if progress != nil && i > 0 {
		progress(i, i)
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("evidence: readings: %w", err)
	}
	w.payload = append(w.payload, entry{"data/readings.csv", hex.EncodeToString(h.Sum(nil))})
	w.bytes += cw.n
	return keys, nil
}

func appendReading(buf []byte, r *Record, f *notice.Finding) []byte {
	buf = appendUTCMillis(buf, r.T)
	buf = append(buf, ',')
	buf = appendLocalMillis(buf, r.T.In(saoPaulo))
	buf = append(buf, ',')
	buf = strconv.AppendInt(buf, r.DurMs, 10)
	for _, v := range []float64{r.LAeq, r.LAFmax, r.LAFmin} {
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, v, 'f', 2, 64)
	}
	buf = append(buf, ',')
	if r.LCpeak != nil {
		buf = strconv.AppendFloat(buf, *r.LCpeak, 'f', 2, 64)
	}
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, r.Overload)
	buf = append(buf, ',')
	buf = append(buf, csvSafe(r.Gateway)...)
	buf = append(buf, ',')
	buf = strconv.AppendUint(buf, r.Seq, 10)
	buf = append(buf, ',')
	buf = append(buf, csvSafe(r.Grade)...)
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, r.Synced)
	in := !r.T.Before(f.WindowStart) && r.T.Before(f.WindowEnd)
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, in)
	buf = append(buf, ',')
	buf = strconv.AppendBool(buf, f.LimitDB != nil && r.LAeq > *f.LimitDB)
	return append(buf, '\n')
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

var csvReplacer = strings.NewReplacer(",", "_", "\n", "_", "\r", "_", "\"", "_", " ", "_")

// csvSafe keeps a name from breaking a CSV field or a batches.txt column.
func csvSafe(s string) string {
	if !strings.ContainsAny(s, ",\n\r\" ") {
		return s
	}
	return csvReplacer.Replace(s)
}

func fmtOpt(v *float64) string {
	if v == nil {
		return ""
	}
	return strconv.FormatFloat(*v, 'f', 2, 64)
}

func (w *writer) env(p *Package) error {
	var b strings.Builder
	b.WriteString("t_utc,t_brasilia,temperature_c,humidity_pct,pressure_hpa,gateway,batch_seq\n")
	for _, e := range p.Env {
		fmt.Fprintf(&b, "%s,%s,%s,%s,%s,%s,%d\n", e.T.UTC().Format("2006-01-02T15:04:05.000Z"), e.T.In(saoPaulo).Format("2006-01-02 15:04:05.000"),
			fmtOpt(e.TemperatureC), fmtOpt(e.HumidityPct), fmtOpt(e.PressureHPa), csvSafe(e.Gateway), e.Seq)
	}
	_, err := w.file("data/env.csv", []byte(b.String()))
	return err
}
