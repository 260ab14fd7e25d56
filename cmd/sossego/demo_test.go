package main

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sossego/sossego/gateway"
	"github.com/sossego/sossego/internal/testenv"
)

// TestDemoFiresAlert runs `sossego demo` as make run does (on free ports):
// the banner names the URL and the accounts, a fiscal can log in, the Lapa
// bar's scripted scenario fires an Art. 96 alert within two minutes, and
// Ctrl-C (context cancel) stops everything cleanly.
func TestDemoFiresAlert(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("runs the whole demo for up to two minutes")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb testenv.SyncBuffer
	done := make(chan int, 1)
	dataDir := t.TempDir()
	go func() {
		done <- run(ctx, []string{"demo", "--data-dir", dataDir, "--http", "127.0.0.1:0", "--mqtt-listen", "127.0.0.1:0"},
			stdio{in: strings.NewReader(""), out: &out, err: &errb})
	}()
	re := regexp.MustCompile(`painel:\s+(http://\S+)`)
	var base string
	// The demo writes a week of simulated history before it starts: give
	// a loaded machine under the race detector its time.
	for deadline := time.Now().Add(3 * time.Minute); base == ""; {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner after 3 min\nstdout:\n%s\nstderr:\n%s", out.String(), errb.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, want := range []string{"fiscal", "fiscal-demo-2026", "operador-demo-2026", "Ctrl-C", "mensagens:", filepath.Join(dataDir, "mensagens")} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("banner lacks %q:\n%s", want, out.String())
		}
	}
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, Timeout: 10 * time.Second}
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/login", strings.NewReader(`{"user":"fiscal","password":"fiscal-demo-2026"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", base)
	resp, err := c.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("login: %v %v", err, resp)
	}
	resp.Body.Close()
	// The simulated BME280 reads at once and every 10 s, one reading per
	// batch: the bar's environmental records are queryable within seconds.
	type envRec struct {
		T        time.Time `json:"t"`
		TempC    *float64  `json:"temperature_c"`
		RH       *float64  `json:"humidity_pct"`
		Pressure *float64  `json:"pressure_hpa"`
	}
	var envRecs []envRec
	for deadline := time.Now().Add(30 * time.Second); len(envRecs) == 0; {
		if time.Now().After(deadline) {
			t.Fatalf("no environmental record of lapa-bar-01 within 30 s\nstderr:\n%s", errb.String())
		}
		time.Sleep(time.Second)
		resp, err := c.Get(base + "/api/v1/sensors/lapa-bar-01/env")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Records []envRec `json:"records"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("env: %d %v", resp.StatusCode, err)
		}
		envRecs = body.Records
	}
	if e := envRecs[0]; e.TempC == nil || e.RH == nil || e.Pressure == nil || *e.Pressure < 895 || *e.Pressure > 925 {
		t.Errorf("lapa-bar-01 env record %+v: want temperature, humidity and Lapa's station pressure", e)
	}
	start := time.Now()
	var firing bool
	for !firing && time.Since(start) < 2*time.Minute {
		time.Sleep(2 * time.Second)
		resp, err := c.Get(base + "/api/v1/alerts?sensor=lapa-bar-01&state=firing")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Alerts []struct {
				Article string  `json:"article"`
				Limit   float64 `json:"limit_db"`
				CodeID  string  `json:"code_id"`
			} `json:"alerts"`
		}
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range body.Alerts {
			if a.Article == "Art. 96" && a.CodeID == "lapa" && (a.Limit == 60 || a.Limit == 65) {
				firing = true
			}
		}
	}
	if !firing {
		t.Fatalf("no Art. 96 alert for lapa-bar-01 within 2 minutes\nstderr:\n%s", errb.String())
	}
	t.Logf("alert firing %s after the banner", time.Since(start).Round(time.Second))
	// The fiscal on duty gets the e-mail (written as .eml in the demo),
	// at once or, behind another alert of Lapa, within the demo's 30 s
	// group interval.
	var mail string
	for deadline := time.Now().Add(60 * time.Second); mail == ""; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			files, _ := os.ReadDir(filepath.Join(dataDir, "mensagens"))
			var names []string
			for _, f := range files {
				b, _ := os.ReadFile(filepath.Join(dataDir, "mensagens", f.Name()))
				_, rest, _ := strings.Cut(string(b), "Subject: ")
				subj, _, _ := strings.Cut(rest, "\r\n")
				names = append(names, subj)
			}
			t.Fatalf("no e-mail about lapa-bar-01 in %s within 60 s of the alert (subjects: %q)\nstderr:\n%s", filepath.Join(dataDir, "mensagens"), names, errb.String())
		}
		eml, _ := filepath.Glob(filepath.Join(dataDir, "mensagens", "*.eml"))
		for _, f := range eml {
			if b, _ := os.ReadFile(f); strings.Contains(string(b), "Subject: [Sossego] Alerta em lapa: lapa-bar-01 ") {
				mail = string(b)
			}
		}
	}
	if !strings.Contains(mail, "fiscal@demo.invalid") {
		t.Errorf("demo e-mail not to the fiscal:\n%s", mail)
	}
	resp, err = c.Get(base + "/api/v1/notify/on-duty")
	if err != nil {
		t.Fatal(err)
	}
	var duty struct {
		OnDuty []struct {
			Municipality string   `json:"municipality"`
			Users        []string `json:"users"`
		} `json:"on_duty"`
	}
	err = json.NewDecoder(resp.Body).Decode(&duty)
	resp.Body.Close()
	if err != nil || len(duty.OnDuty) != 2 || duty.OnDuty[1].Municipality != "lapa" || len(duty.OnDuty[1].Users) != 1 || duty.OnDuty[1].Users[0] != "fiscal" {
		t.Errorf("on duty: %+v %v", duty, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("demo exit %d\nstderr:\n%s", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("demo did not stop within 30 s of Ctrl-C")
	}
	if !strings.Contains(out.String(), "demonstração encerrada") {
		t.Errorf("no closing line:\n%s", out.String())
	}
}

// TestDemoEnvPlausible: the demo's simulated BME280 of each gateway gives,
// hour by hour over a year, readings the wire contract accepts and that are
// plausible for its town (station pressure at its altitude), repeats itself
// for the same instant, is warmer and drier in the afternoon than before
// dawn, and names a per-gateway serial with grade screening.
func TestDemoEnvPlausible(t *testing.T) {
	t.Parallel()
	loc := time.FixedZone("-03", -3*3600)
	cases := []struct {
		municipality     string
		tempLo, tempHi   float64
		pressLo, pressHi float64
	}{
		{"lapa", 5, 30, 895, 925},
		{"conceicao-de-macabu", 14, 34, 995, 1025},
	}
	serials := map[string]bool{}
	for _, d := range demoGateways {
		c := cases[0]
		if d.Municipality != c.municipality {
			c = cases[1]
		}
		t.Run(d.ID, func(t *testing.T) {
			s, err := newDemoEnv(d, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Date(2026, 1, 1, 0, 0, 0, 0, loc)
			for at := start; at.Before(start.AddDate(1, 0, 0)); at = at.Add(time.Hour) {
				e := s.at(at)
				if _, err := gateway.EnvRecordOf(e, at); err != nil {
					t.Fatalf("%v: %v", at, err)
				}
				if e.TemperatureC < c.tempLo || e.TemperatureC > c.tempHi || e.HumidityPct < 20 || e.HumidityPct > 99 ||
					e.PressureHPa < c.pressLo || e.PressureHPa > c.pressHi {
					t.Fatalf("%v: implausible %+v", at, e)
				}
				if again := s.at(at); again != e {
					t.Fatalf("%v: %+v then %+v", at, e, again)
				}
			}
			for _, day := range []time.Time{time.Date(2026, 1, 20, 0, 0, 0, 0, loc), time.Date(2026, 7, 20, 0, 0, 0, 0, loc)} {
				dawn, afternoon := s.at(day.Add(5*time.Hour)), s.at(day.Add(15*time.Hour))
				if afternoon.TemperatureC < dawn.TemperatureC+5 || afternoon.HumidityPct > dawn.HumidityPct-10 {
					t.Errorf("%s: 05:00 %+v, 15:00 %+v", day.Format("2006-01-02"), dawn, afternoon)
				}
			}
			if jan, jul := s.at(time.Date(2026, 1, 20, 15, 0, 0, 0, loc)), s.at(time.Date(2026, 7, 20, 15, 0, 0, 0, loc)); jan.TemperatureC < jul.TemperatureC+4 {
				t.Errorf("January %.1f °C, July %.1f °C", jan.TemperatureC, jul.TemperatureC)
			}
			dev := s.at(start).Device
			if dev.Model != "BME280 (simulado)" || dev.Grade != "screening" || dev.Serial == "" || serials[dev.Serial] {
				t.Errorf("device %+v (serials so far %v)", dev, serials)
			}
			serials[dev.Serial] = true
		})
	}
}
