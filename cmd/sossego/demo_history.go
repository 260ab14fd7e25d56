package main

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"golang.org/x/sync/errgroup"

	bridge "github.com/sossego/sossego/firmware-bridge"
	"github.com/sossego/sossego/firmware-bridge/sim"
	"github.com/sossego/sossego/internal/longterm"
	"github.com/sossego/sossego/internal/stats"
)

// demoHistoryDays of simulated minutes are written into the demo's
// long-term tier before it starts, so that the Relatórios page has a week
// to show (the live gateways add the present).
const demoHistoryDays = 7

// historyStep is how many seconds of simulated history one sample stands
// for.
const historyStep = 10

// backfillDemo writes demoHistoryDays of each demo sensor's simulated
// minutes, up to the minute before end, into the long-term tier in dir: a
// 125-ms LAF sample every historyStep seconds from the sensor's scenario, folded as the
// tier folds records. A tier that already holds the sensor (--keep) is
// left as it is.
func backfillDemo(ctx context.Context, dir string, end time.Time) error {
	tier, err := longterm.Open(filepath.Join(dir, longterm.FileName))
	if err != nil {
		return err
	}
	defer tier.Close()
	end = end.Truncate(time.Minute)
	start := end.Add(-demoHistoryDays * 24 * time.Hour)
	var g errgroup.Group
	g.SetLimit(2)
	for _, d := range demoGateways {
		if _, _, has, err := tier.Span(ctx, d.Sensor); err != nil || has {
			continue
		}
		g.Go(func() error {
			dev, err := sim.New(&sim.Opts{Scenario: d.Scenario, Seed: 1, Start: start, Now: func() time.Time { return start }})
			if err != nil {
				return err
			}
			var s bridge.Sample
			var day []stats.Minute
			for m := start; m.Before(end); m = m.Add(time.Minute) {
				mi := stats.Minute{Start: m}
				for sec := 0; sec < 60; sec += historyStep {
					// One 125-ms LAF sample stands for its historyStep
					// seconds (the real gateways take eight a second): a
					// week of four sensors in a few seconds, also on a slow
					// machine.
					t := m.Add(time.Duration(sec) * time.Second)
					dev.Measure(t.Add(125*time.Millisecond), 125*time.Millisecond, &s)
					const ms = historyStep * 1000
					a := stats.Agg{DurMs: ms, Energy: ms * math.Pow(10, s.Level/10), Max: s.Level, Min: s.Level, FastMs: ms}
					a.Hist.AddLevel(s.Level, ms)
					mi.Merge(&a)
				}
				day = append(day, mi)
				if len(day) == 1440 {
					if err := tier.AddMinutes(ctx, d.Sensor, day); err != nil {
						return err
					}
					day = day[:0]
				}
			}
			if len(day) > 0 {
				return tier.AddMinutes(ctx, d.Sensor, day)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return fmt.Errorf("histórico simulado: %w", err)
	}
	return nil
}
