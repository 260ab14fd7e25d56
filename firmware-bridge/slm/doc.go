// Package slm is a software sound-level meter: PCM audio from a microphone
// (a WAV file, or a raw capture such as `arecord -f S32_LE -r 48000 -t raw`)
// in, IEC 61672-1 levels out — LAeq, LCeq, LAFmax, LAFmin, LASmax, LCpeak and
// the statistical levels L10, L50, L90.
//
// # Levels and calibration
//
// A level is 20·lg(rms / (full_scale/√2)) + OffsetDB: with OffsetDB = 0 a
// full-scale sine at 1 kHz reads LAeq = 0 dB. OffsetDB is the calibration:
// the sound pressure level, in dB re 20 µPa, that drives the capture chain to
// full scale (for example 120 dB for a MEMS microphone with −26 dBFS
// sensitivity at 94 dB). Digital silence has no finite level; the meter
// reports FloorDBFS (≈ −197 dB, 10 dB under one LSB of a 32-bit sample)
// instead, so every output is a finite number.
//
// # Frequency weightings
//
// A and C are realised as float64 biquads (transposed direct form II),
// designed for the actual sample rate when the Meter is built:
//
//	A = k · [s²/(s+ω1)²] · [s²/((s+ω2)(s+ω3))] · [ω4²/(s+ω4)²]
//	C = k · [s²/(s+ω1)²] ·                       [ω4²/(s+ω4)²]
//
// with the pole frequencies f1 = 20.598997 Hz, f2 = 107.65265 Hz,
// f3 = 737.86223 Hz, f4 = 12194.217 Hz of IEC 61672-1 Annex E, and k
// chosen so that each digital weighting is exactly 0 dB at 1 kHz. The two
// weightings share the f1 and f4 sections and linear filters commute, so
// the meter computes C after two biquads and A after a third one: three
// biquads per sample for both.
//
// The high-pass sections (f1, f2, f3, all below 1 kHz) use the bilinear
// transform with pre-warped corners; their warping error is under 0.02 dB.
//
// The f4 low-pass is where the plain bilinear transform fails: it maps the
// analog ∞ onto the Nyquist frequency, so the digital filter gets a double
// zero at fs/2 and droops above ~5 kHz — at 48 kHz the A weighting reads
// −3.70 dB at 10 kHz instead of −2.49 dB and −13.1 dB at 16 kHz instead of
// −6.6 dB, and it is worse at 44.1 kHz. We correct the droop at its cause
// rather than patching it with a shelf: the f4 section keeps its exact
// analog poles (z = e^{−ω4/fs}, the matched-z mapping) and gets the
// numerator whose magnitude equals the analog one at DC, 14 kHz and
// 19.25 kHz (scaled to 0.31·fs and 0.437·fs at rates below 45 kHz). The
// magnitude-matching conditions are linear in the squared-magnitude
// coefficients, so the design is closed-form and runs in microseconds.
// Against the exact IEC formula, the resulting cascades are within 0.07 dB
// (48 kHz) and 0.12 dB (44.1 kHz) from 31.5 Hz to 16 kHz, and within
// 0.15 dB up to 20 kHz, at the cost of the uncorrected design. We rejected the alternatives: running at 96 kHz
// doubles the CPU cost and needs a resampler; a correction shelf is a
// second approximation layered on the first; pre-warping alone can fix one
// frequency only. The tests check the response at every nominal one-third-
// octave frequency from 31.5 Hz to 16 kHz against the IEC 61672-1 table
// (class 1 tolerance limits) and against the exact formula (0.15 dB), at
// 44.1 and 48 kHz, by feeding sine tones through the meter.
//
// # Time weightings and descriptors
//
// Fast (τ = 125 ms) and Slow (τ = 1 s) are exponential averages of the
// squared A-weighted signal, e[n] = e[n−1] + α·(x²−e[n−1]) with
// α = 1 − exp(−1/(τ·fs)), evaluated at every sample (so LAFmax catches the
// true maximum of the detector, as in the IEC tone-burst test). LAeq and
// LCeq are plain energy means, without time weighting. LCpeak is the largest
// |sample| of the C-weighted waveform (a sample peak: for a pure tone at f
// it can read up to 20·lg(cos(π·f/fs)) low, 0.02 dB at 1 kHz, 1.2 dB at
// 8 kHz at 48 kHz). L10, L50 and L90 are read from a level.Histogram (0.1 dB
// bins) of L_AF sampled every StatsInterval (100 ms by default).
//
// The detectors need a past that a recording does not have. The Meter
// buffers the first 125 ms, starts both detectors at its A-weighted mean
// square, and primes the filter states with the first sample (as if it had
// been held forever), so that a DC offset does not ring through the
// high-pass sections and a file's LAFmin is not the detector rising from
// zero.
//
// # Inputs
//
// WAV files are parsed by a small, strict RIFF reader (PCM 8/16/24/32 bits,
// IEEE float 32/64 bits, WAVE_FORMAT_EXTENSIBLE), fuzzed by FuzzReadWAV: no
// WAV library is among the modules vetted for this project, and the subset a
// meter needs (read the header, then stream one channel from a file or a
// pipe) is about 150 lines. Raw streams are
// decoded by Stream (FuzzStream). Multi-channel input is read one channel at
// a time. Input problems are *InputError values whose Msg, in Portuguese,
// tells the operator what to fix.
//
// # Use
//
// Meter is the pure engine (no I/O, no clock). Analyze runs a whole Stream
// and returns a Summary (the JSON printed by `sossego slm analyze`). Source
// wraps a Stream and a Meter into a bridge.Meter for the gateway: each Sense
// consumes one second of audio and reports LAeq,1s, LAFmax, LAFmin and
// LCpeak.
package slm
