// Package nsrtmk4 reads a Convergence Instruments NSRT_mk4_Dev (or
// NSRT_mk3_Dev) sound level meter over its USB virtual COM port.
//
// # Protocol
//
// "NSRT_mk4_Dev Com Protocol", B. Paillard, Convergence Instruments,
// 2025-02-06 (product page:
// https://convergenceinstruments.com/product/sound-level-meter-data-logger-with-type-1-microphone-nsrt_mk4_dev/).
// Master/slave, little-endian. The host sends a 12-byte command packet
// (U32 command, U32 address, U32 count; bit 31 of the command set = read),
// followed by count data bytes for a write; the instrument answers a read
// with the data and a write with an Ack byte 0x06. Serial settings (baud,
// parity) have no effect on a USB CDC port.
//
// Commands used: 0x80000011 Read_LEQ (float32 dB: the Leq since the
// previous Read_LEQ, which restarts the integration), 0x80000010 Read_Level
// (float32 dB: the running exponential level with the instrument's τ),
// 0x80000020/0x00000020 Read/Write_Weighting (0 C, 1 A, 2 Z),
// 0x80000022/0x00000022 Read/Write_Tau (float32 s), 0x80000031/32/33
// Read_Model/SN/FW_Rev (NUL-terminated ASCII, at most 32 bytes) and
// 0x80000034 Read_DOC (U64 seconds since 1904-01-01 UTC, the last
// calibration).
//
// # Behaviour
//
// New reads model, serial number, firmware and calibration date; a model
// that does not start with "NSRT" is an *IDError. Weighting and τ live in
// the instrument's flash (about 10 000 write cycles), so New writes them
// only when they differ from Opts, and then waits max(1 s, 10 τ) for the
// filters to settle as the protocol document requires. New ends with a
// Read_LEQ that starts a fresh integration.
//
// In the default ModeLeq, each Sense is one Read_LEQ: a genuine
// energy-equivalent level over the time since the previous Sense
// (TimeWeighting Leq, Duration measured with Opts.Now). Poll it once per
// second for a 1-s LAeq series. After a failed exchange the driver cannot
// know whether the instrument restarted its integration, so the next Sense
// restarts it and returns ErrNotReady instead of a level with a wrong
// duration. ModeLevel reads the exponential level instead (τ 0.125 s = F,
// 1 s = S; Duration 0).
//
// Replies are checked: a timeout or a short reply is a *TimeoutError, a
// wrong Ack, a non-printable string, a non-finite or impossible level is a
// *ReplyError. Stale bytes are discarded before each command.
//
// # Grade
//
// The NSRT_mk4 has a class-1-type microphone but is not a type-approved
// class 1 sound level meter, so samples are marked bridge.GradeClass2
// unless Opts.Grade says otherwise (set class1 when the instrument's
// verification certificate supports it). The calibration date read from
// the instrument is reported; Opts.CalibratedAt overrides it.
//
// # Use from the gateway
//
//	m, err := nsrtmk4.Open("/dev/ttyACM0", &nsrtmk4.Opts{Weighting: bridge.WeightingA})
//	err = m.Sense(&sample) // once per second
//
// New takes any Port (io.ReadWriter with SetReadTimeout), for tests and for
// ports opened elsewhere.
package nsrtmk4
