// Package sim is a deterministic simulated sound-level meter. It implements
// bridge.Meter, so the gateway, the demo and the tests run without hardware.
//
// # Model
//
// The simulated signal is an A-weighted, fast time-weighted level defined on
// 125 ms slots of the simulated time line. The level of a slot is a pure
// function of (scenario, seed, slot instant): a diurnal background profile in
// local time, smooth random variation, per-slot jitter and scenario events
// (cars, music, jackhammers, bells, sirens), all combined in the energy
// domain. Nothing depends on how often, or in which order, the meter is read:
// two meters with the same scenario and seed report identical levels for the
// same simulated instants.
//
// Sense reports, for the window that ends at the current simulated instant,
// the LAeq (TimeWeighting Leq), the LAFmax and LAFmin (HasMax, HasMin) and a
// simulated LCpeak (HasPeakC). The window is the simulated time since the
// previous Sense, capped at 1 s: a gateway that samples at 10 Hz gets 100 ms
// samples that combine exactly into the 1-s values, one that samples at 1 Hz
// gets 1-s samples, and an accelerated meter (Speed > 1) reports the last
// simulated second before each read. Measure evaluates any window directly,
// with no clock at all.
//
// Sample.At is the simulated instant, not the wall clock: a demo that starts
// the bar scenario at simulated 21:58 sees readings stamped 21:58, 21:59,
// 22:00… Levels are rounded to 0.01 dB.
//
// # Scenarios
//
// See Scenarios for the list and their pt-BR descriptions. Local time is
// America/Sao_Paulo unless Opts.Location says otherwise. In short:
//
//   - quiet_night: residential street; ≈35 dB(A) at night, ≈48 dB(A) by day,
//     occasional cars and a dog.
//   - bar_music: a bar; street and chatter below 60 dB(A) until 22:00, then
//     amplified music at ≈72 dB(A) LAeq every night until 02:00, fading in
//     over 20 s from 22:00:00 (well above Lapa's 60 dB night limit).
//   - construction: a building site working Mon–Fri 07:00–17:00 (lunch
//     12:00–13:00) and Sat 07:00–12:00; machinery ≈68 dB(A), jackhammer
//     bursts of 82–90 dB(A), reversing beepers, impacts.
//   - church_bells: a small town; the hour struck from 06:00 to 21:00 (one
//     strike per hour on a 12-hour dial), one strike at half past, a peal at
//     18:00 daily and at 07:00 and 10:00 on Sundays.
//   - siren: a city street with ≈3–4 emergency vehicles per hour passing
//     with a wail or yelp siren peaking at 88–96 dB(A).
//
// # Use from the gateway
//
//	m, err := sim.New(&sim.Opts{Scenario: sim.BarMusic, Seed: 1,
//		Start: time.Date(2026, 3, 6, 21, 58, 0, 0, loc), Speed: 1})
//
// Opts.Now injects the clock (tests pass a fake; nil means time.Now). The
// grade is screening unless Opts.Grade says otherwise.
package sim
