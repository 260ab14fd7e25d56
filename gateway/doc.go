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
package gateway
