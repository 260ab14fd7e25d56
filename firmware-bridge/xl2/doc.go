// Package xl2 reads an NTi Audio XL2 sound level meter (with a class 1
// measurement microphone such as the M2230 or M4260) over its USB virtual
// COM port, using the XL2's remote measurement (SCPI-like ASCII) protocol.
//
// # Protocol
//
// "XL2 Remote Measurement Manual", NTi Audio
// (https://www.nti-audio.com/en/support/xl2-sound-level-meter, remote
// measurement option). Commands are ASCII lines ended by CR LF; queries end
// in "?" and are answered one line per requested value, e.g.
// "53.8 dB" or "53.8 dB, OK". Commands used:
//
//	*IDN?                           → "NTiAudio,XL2,A2A-10242-E0,V4.21"
//	*RST                            reset to the SLMeter function, keyboard locked
//	INIT START                      start the sound level meter
//	MEAS:INIT                       close the current dt period, start the next
//	MEAS:SLM:123:dt? LAEQ LAFMAX LAFMIN LCPKMAX
//	                                values over the last closed dt period
//	SYST:ERR?                       error queue, "0" when empty
//
// # Behaviour
//
// New asks *IDN? first and refuses anything that is not an NTi XL2
// (*IDError) before it resets anything, then sends *RST, INIT START and
// MEAS:INIT and checks the error queue. Each Sense sends MEAS:INIT, which
// closes the dt period that began at the previous MEAS:INIT, and queries
// LxEQ, LxFMAX, LxFMIN (x = the weighting) and LCPKMAX over it: a genuine
// LAeq with its LAFmax, LAFmin and LCpeak (TimeWeighting Leq, Duration
// measured with Opts.Now between the two MEAS:INIT). While the XL2 is
// still settling it reports invalid values (−999 dB or below −50 dB): Sense
// returns ErrNotReady. A value flagged as overload or under-range, or a
// line that does not parse, is a *ReplyError; a missing line is a
// *TimeoutError. Stale input is discarded before each command.
//
// The parameter names and reply layout follow the manual and public
// integrations of it; the driver was developed against a fake speaking that
// protocol (no XL2 was available), so check the first real session with
// the pty-style test in this package as a template.
//
// # Grade and calibration
//
// Samples are bridge.GradeClass1 (an XL2 with a class 1 microphone) unless
// Opts.Grade says otherwise. The remote protocol does not report the date
// of the last calibration: put the date from the verification certificate
// in Opts.CalibratedAt.
//
// # Use from the gateway
//
//	m, err := xl2.Open("/dev/ttyACM0", &xl2.Opts{CalibratedAt: certDate})
//	err = m.Sense(&sample) // once per second
package xl2
