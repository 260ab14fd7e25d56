// Package gateway is the edge daemon that runs on a Raspberry Pi next to a
// sound-level meter. It samples a bridge.Meter at a fixed rate, turns the
// samples into 1-s energy records (LAeq,1s, LAFmax, LAFmin, LCpeak and a
// 0.1 dB histogram, combined strictly in the energy domain), groups records
// into signed batches, keeps every batch in a durable SQLite outbox and
// publishes it until the central service acknowledges durable storage on the
// gateway's ack topic (docs/wire.md).
//
// The pieces:
//
//   - Aggregator and Batcher are pure: samples and records go in with their
//     own timestamps, records and batches come out; no clock, no I/O.
//   - Outbox is the on-disk queue (WAL, synchronous=FULL): a batch gets its
//     seq when it is enqueued and leaves only on an application-level ack.
//   - Gateway.Run drives the sampling loop and the sender; it talks to MQTT
//     through the small Publisher interface (gateway/mqttconn implements it
//     with paho) and is told about connections and acks through Handler
//     methods.
//   - SyncSource reports the kernel clock-sync state (adjtimex) so that
//     records made on an unsynchronised clock are flagged, never re-dated.
//   - An optional EnvSensor (a BME280 through firmware-bridge/bme280) is
//     read in its own loop at Options.Env.Interval; EnvBatcher (pure)
//     groups its readings into env batches that go through the same outbox,
//     seq space, ack and replay as the levels, on the env topic.
//
// Where each concern lives:
//
//   - gateway.go: Options, the Publisher interfaces, the Gateway type, New
//     and Run.
//   - sample.go: the sampling loop (meter reads, clock state, records into
//     batches); env.go the environmental sensor's loop; check.go the
//     meter's field checks read from Options.CheckDir.
//   - store.go: putting a finished batch into the outbox, and the bounded
//     memory buffer that holds batches while the disk refuses writes.
//   - send.go: the sender (replay window, batches in flight, status
//     publishes); ack.go: acks from the central service (fast resend on a
//     repeated ack, a watermark that went backwards flagged and never
//     obeyed).
//   - outbox.go: the outbox's file, schema and Store; outbox_ack.go: reading
//     after a seq, deleting on an ack, renumbering; outbox_disk.go: free
//     space, the ballast file and drop counts on a full disk.
//   - aggregate.go, batch.go: the pure Aggregator and Batchers; clock*.go
//     the clock-sync source; key.go the gateway's signing key.
package gateway
