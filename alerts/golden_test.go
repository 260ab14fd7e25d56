package alerts_test

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/sossego/sossego/alerts"
	"github.com/sossego/sossego/alerts/alertstest"
)

var update = flag.Bool("update", false, "rewrite alerts/testdata/*/want.json from the current output (review the diff!)")

// goldenEvent is the reviewed part of an event. Times are local (Sao Paulo).
type goldenEvent struct {
	Kind        string  `json:"kind"`
	At          string  `json:"at"`
	ID          string  `json:"id"`
	State       string  `json:"state"`
	Sensor      string  `json:"sensor"`
	Period      string  `json:"period,omitempty"`
	RuleID      string  `json:"rule_id,omitempty"`
	Article     string  `json:"article,omitempty"`
	LimitDB     float64 `json:"limit_db,omitempty"`
	MarginDB    float64 `json:"margin_db,omitempty"`
	Screening   bool    `json:"screening,omitempty"`
	LAeqDB      float64 `json:"laeq_db,omitempty"`
	LAFmaxDB    float64 `json:"lafmax_db,omitempty"`
	WindowStart string  `json:"window_start,omitempty"`
	WindowEnd   string  `json:"window_end,omitempty"`
	Resolution  string  `json:"resolution,omitempty"`
	Reason      string  `json:"reason,omitempty"`
}

func localStamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.In(loc).Format("2006-01-02T15:04:05")
}

func toGolden(e alerts.Event) goldenEvent {
	a := e.Alert
	return goldenEvent{
		Kind: string(e.Kind), At: localStamp(e.At), ID: a.ID, State: string(a.State), Sensor: a.Sensor,
		Period: a.Period, RuleID: a.RuleID, Article: a.Article, LimitDB: a.LimitDB, MarginDB: a.MarginDB,
		Screening: a.Screening, LAeqDB: math.Round(a.LAeqDB*100) / 100, LAFmaxDB: a.LAFmaxDB,
		WindowStart: localStamp(a.WindowStart), WindowEnd: localStamp(a.WindowEnd),
		Resolution: a.Resolution, Reason: a.Reason,
	}
}

// TestGolden walks alerts/testdata/<case>/readings.csv through a Monitor
// with DefaultConfig and compares the transitions with want.json.
//
// readings.csv columns: op,time,count,laeq_db,lafmax_db,sensor,grade,zone
// where op is rec (count 1-s records from time), tick, offline or online
// (gateway of the sensor), and time is local "2006-01-02 15:04:05". A
// record arrives at its end; a tick or gateway status happens at time.
func TestGolden(t *testing.T) {
	dirs, err := filepath.Glob("testdata/*/readings.csv")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no golden cases: %v", err)
	}
	for _, path := range dirs {
		dir := filepath.Dir(path)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got := runGolden(t, path)
			wantPath := filepath.Join(dir, "want.json")
			if *update {
				b, _ := json.MarshalIndent(got, "", "  ")
				if err := os.WriteFile(wantPath, append(b, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			b, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatal(err)
			}
			var want []goldenEvent
			if err := json.Unmarshal(b, &want); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("transitions (-want +got):\n%s", d)
			}
		})
	}
}

func runGolden(t *testing.T, path string) []goldenEvent {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.Comment = '#'
	rows, err := cr.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	m, rec, _, clk := newMonitor(t, alerts.DefaultConfig(), &alertstest.MemStore{})
	ctx := t.Context()
	for i, row := range rows[1:] {
		line := fmt.Sprintf("%s:%d", path, i+2)
		if len(row) != 8 {
			t.Fatalf("%s: %d columns, want 8", line, len(row))
		}
		ts, err := time.ParseInLocation("2006-01-02 15:04:05", row[1], loc)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		num := func(s string) float64 {
			if s == "" {
				return 0
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%s: %v", line, err)
			}
			return v
		}
		info := alerts.SensorInfo{Sensor: row[5], Gateway: "gw-" + strings.SplitN(row[5], "-", 2)[0],
			Municipality: "lapa", Zone: row[7], EstablishmentType: "bar", Grade: row[6]}
		switch row[0] {
		case "rec":
			for k := range int(num(row[2])) {
				r := alerts.Reading{SensorInfo: info, T: ts.Add(time.Duration(k) * time.Second), DurMs: 1000,
					LAeq: num(row[3]), LAFmax: num(row[4]), LAFmin: num(row[3]) - 3}
				clk.Set(r.End())
				if err := m.Observe(ctx, r); err != nil {
					t.Fatalf("%s: %v", line, err)
				}
			}
		case "tick":
			clk.Set(ts)
			if err := m.Tick(ctx, ts); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
		case "offline", "online":
			clk.Set(ts)
			if err := m.GatewayStatus(ctx, info.Gateway, row[0] == "online"); err != nil {
				t.Fatalf("%s: %v", line, err)
			}
		default:
			t.Fatalf("%s: unknown op %q", line, row[0])
		}
	}
	out := []goldenEvent{}
	for _, e := range rec.Events() {
		out = append(out, toGolden(e))
	}
	return out
}
