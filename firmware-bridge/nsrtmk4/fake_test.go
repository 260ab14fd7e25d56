package nsrtmk4

import (
	"encoding/binary"
	"math"
	"sync"
	"time"
)

// instrument is a fake NSRT_mk4 speaking the binary protocol, with fault
// injection. feed takes what the host wrote and returns the reply bytes.
type instrument struct {
	mu        sync.Mutex
	model     string
	serial    string
	fw        string
	pad       bool   // pad strings with NULs to the requested count
	doc       uint64 // seconds since 1904
	weighting byte
	tau       float32
	leqs      []float32 // successive Read_LEQ results; the last repeats
	levels    []float32 // successive Read_Level results; the last repeats

	// Faults, by command.
	silent map[uint32]bool   // never answer
	short  map[uint32]int    // answer only the first n bytes
	reply  map[uint32][]byte // answer these bytes instead
	prefix []byte            // garbage before the next reply, once
	ackVal byte              // Ack byte; 0 means 0x06

	in       []byte   // partial command
	commands []uint32 // every command received
	writes   []uint32 // write commands received
	leqReads int
}

func newInstrument() *instrument {
	return &instrument{
		model:     "NSRT_mk4_Dev",
		serial:    "CI-NSRT4-20931",
		fw:        "1.4",
		doc:       uint64(time.Date(2025, 11, 3, 14, 0, 0, 0, time.UTC).Sub(epoch1904) / time.Second),
		weighting: 1,
		tau:       0.125,
		leqs:      []float32{48.7},
		levels:    []float32{51.2},
	}
}

func f32(v float32) []byte {
	b := make([]byte, 4)
	binary.LittleEndian.PutUint32(b, math.Float32bits(v))
	return b
}

func (m *instrument) next(q *[]float32) float32 {
	v := (*q)[0]
	if len(*q) > 1 {
		*q = (*q)[1:]
	}
	return v
}

func (m *instrument) str(s string, count uint32) []byte {
	b := append([]byte(s), 0)
	if m.pad {
		for uint32(len(b)) < count {
			b = append(b, 0)
		}
	}
	return b
}

func (m *instrument) feed(p []byte) []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.in = append(m.in, p...)
	var out []byte
	for len(m.in) >= 12 {
		cmd := binary.LittleEndian.Uint32(m.in[0:])
		count := binary.LittleEndian.Uint32(m.in[8:])
		var data []byte
		if cmd&0x80000000 == 0 { // write: data follows
			if uint32(len(m.in)) < 12+count {
				break
			}
			data = m.in[12 : 12+count]
		}
		m.in = m.in[12+len(data):]
		m.commands = append(m.commands, cmd)
		var r []byte
		switch cmd {
		case cmdReadModel:
			r = m.str(m.model, count)
		case cmdReadSN:
			r = m.str(m.serial, count)
		case cmdReadFW:
			r = m.str(m.fw, count)
		case cmdReadDOC:
			r = binary.LittleEndian.AppendUint64(nil, m.doc)
		case cmdReadWeighting:
			r = []byte{m.weighting}
		case cmdReadTau:
			r = f32(m.tau)
		case cmdReadLEQ:
			m.leqReads++
			r = f32(m.next(&m.leqs))
		case cmdReadLevel:
			r = f32(m.next(&m.levels))
		case cmdWriteWeight, cmdWriteTau:
			m.writes = append(m.writes, cmd)
			if cmd == cmdWriteWeight && len(data) == 1 {
				m.weighting = data[0]
			}
			if cmd == cmdWriteTau && len(data) == 4 {
				m.tau = math.Float32frombits(binary.LittleEndian.Uint32(data))
			}
			r = []byte{0x06}
			if m.ackVal != 0 {
				r = []byte{m.ackVal}
			}
		default:
			continue // unknown command: no answer
		}
		if m.silent[cmd] {
			continue
		}
		if x, ok := m.reply[cmd]; ok {
			r = x
		}
		if n, ok := m.short[cmd]; ok && n < len(r) {
			r = r[:n]
		}
		if m.prefix != nil {
			r = append(m.prefix, r...)
			m.prefix = nil
		}
		out = append(out, r...)
	}
	return out
}
