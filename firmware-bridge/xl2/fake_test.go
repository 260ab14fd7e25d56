package xl2

import (
	"fmt"
	"strings"
	"sync"
)

// meter is a fake XL2 speaking the remote measurement protocol, with fault
// injection. feed takes what the host wrote and returns the reply bytes.
type meter struct {
	mu      sync.Mutex
	idn     string
	snaps   []map[string]string // dt values per MEAS:INIT; the last repeats
	cur     map[string]string
	errs    []int
	silent  map[string]bool   // commands (upper case, without parameters) never answered
	replace map[string]string // raw reply (with line ends) instead of the normal one
	prefix  string            // garbage before the next reply, once
	in      []byte

	commands []string
	started  bool
}

func newMeter() *meter {
	return &meter{idn: "NTiAudio,XL2,A2A-10242-E0,V4.21", snaps: []map[string]string{snap("A", 48.2, 55.0, 44.1, 70.3)}}
}

// snap is one dt period's values for weighting w.
func snap(w string, leq, fmax, fmin, pk float64) map[string]string {
	return map[string]string{
		"L" + w + "EQ":   fmt.Sprintf("%.1f dB", leq),
		"L" + w + "FMAX": fmt.Sprintf("%.1f dB", fmax),
		"L" + w + "FMIN": fmt.Sprintf("%.1f dB", fmin),
		"LCPKMAX":        fmt.Sprintf("%.1f dB, OK", pk),
	}
}

func (m *meter) feed(p []byte) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.in = append(m.in, p...)
	var out strings.Builder
	for {
		i := strings.IndexByte(string(m.in), '\n')
		if i < 0 {
			break
		}
		line := strings.TrimRight(string(m.in[:i]), "\r")
		m.in = m.in[i+1:]
		m.commands = append(m.commands, line)
		f := strings.Fields(strings.ToUpper(line))
		if len(f) == 0 {
			continue
		}
		head := f[0]
		if head == "INIT" && len(f) > 1 {
			head += " " + f[1]
		}
		var reply []string
		switch head {
		case "*IDN?":
			reply = []string{m.idn}
		case "*RST":
			m.started, m.errs = false, nil
		case "INIT START":
			m.started = true
		case "INIT STOP":
			m.started = false
		case "MEAS:INIT":
			m.cur = m.snaps[0]
			if len(m.snaps) > 1 {
				m.snaps = m.snaps[1:]
			}
		case "SYST:ERR?":
			if len(m.errs) == 0 {
				reply = []string{"0"}
			} else {
				s := make([]string, len(m.errs))
				for i, e := range m.errs {
					s[i] = fmt.Sprint(e)
				}
				reply, m.errs = []string{strings.Join(s, ",")}, nil
			}
		case "MEAS:SLM:123:DT?":
			for _, p := range f[1:] {
				v, ok := m.cur[p]
				if !ok {
					m.errs = append(m.errs, 6)
					continue
				}
				reply = append(reply, v)
			}
		default:
			m.errs = append(m.errs, -113)
		}
		if m.silent[head] {
			continue
		}
		if r, ok := m.replace[head]; ok {
			out.WriteString(m.prefix + r)
			m.prefix = ""
			continue
		}
		if len(reply) > 0 {
			out.WriteString(m.prefix)
			m.prefix = ""
			for _, r := range reply {
				out.WriteString(r + "\r\n")
			}
		}
	}
	return []byte(out.String())
}
