#!/usr/bin/env bash
# The soak (docs/performance-goals.md): the central service with an
# external Mosquitto (the shipped ACL, persistence on) and --store influx
# against a real InfluxDB 1.8.10, fed by `sossego loadgen` (100 gateways ×
# 10 batches/s by default), while Mosquitto is restarted (SIGTERM) every
# BROKER_EVERY and InfluxDB killed (SIGKILL) every INFLUX_EVERY and started
# again about a minute later. Every 30 s it samples the service's /metrics into
# $OUT/metrics.tsv. At the end it checks that the load generator saw every
# batch acknowledged and that SQLite and InfluxDB hold one record per batch.
#
# Beside the load generator runs one real sossego-gateway (simulated meter,
# 1 record/s) whose state folder is a small tmpfs when the script runs as
# root (FULLDISK=1, the default then). At FULL_AT (default a third of the
# way) the script fills that file system to the last byte and frees it
# FULL_FOR later: the gateway must report storage_error in its status, keep
# sampling and sending, and the central service must hold every second it
# measured, with none dropped.
#
#   DURATION=60m BROKER_EVERY=10m INFLUX_EVERY=20m scripts/soak.sh
#
# Needs mosquitto, mosquitto_passwd and sqlite3 (Debian packages) and builds
# influxd with scripts/tools.sh. Everything listens on loopback and lives
# in $OUT (default: a new temporary folder), which is kept for inspection.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-60m}
BROKER_EVERY=${BROKER_EVERY:-10m}
INFLUX_EVERY=${INFLUX_EVERY:-20m}
GATEWAYS=${GATEWAYS:-100}
RATE=${RATE:-10}
OUT=${OUT:-$(mktemp -d /tmp/sossego-soak.XXXXXX)}
FULLDISK=${FULLDISK:-$([ "$(id -u)" = 0 ] && echo 1 || echo 0)}
FULL_FOR=${FULL_FOR:-5m}
# A folder left by an earlier run would hold its records, and this run's
# batches (the same gateways and seqs) would all be duplicates.
if [ -d "$OUT" ] && [ -n "$(ls -A "$OUT")" ]; then echo "soak: OUT=$OUT is not empty; give a new folder" >&2; exit 2; fi
mkdir -p "$OUT"
# Not the public demonstration seed: sossego central refuses keys derived from it.
SEED=sossego-soak-$(od -An -N6 -tx1 /dev/urandom | tr -d ' \n')
secs() { local d=$1; case $d in *h) echo $((${d%h} * 3600)) ;; *m) echo $((${d%m} * 60)) ;; *s) echo "${d%s}" ;; *) echo "$d" ;; esac; }
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
log() { echo "soak: $(date -u +%H:%M:%S) $*"; }

./scripts/tools.sh >/dev/null
if [ -n "${SOSSEGO_BIN:-}" ]; then cp "$SOSSEGO_BIN" "$OUT/sossego"; else go build -o "$OUT/sossego" ./cmd/sossego; fi
go build -o "$OUT/sossego-gateway" ./cmd/sossego-gateway
MQ=$(port) HTTP=$(port) IH=$(port) IB=$(port)
log "output in $OUT; mosquitto :$MQ, influxd :$IH, service http://127.0.0.1:$HTTP"

# Registry and broker credentials of the simulated gateways (the load
# generator derives each password from the seed: sha256(...)[:12], hex).
"$OUT/sossego" loadgen --gateways "$GATEWAYS" --seed "$SEED" --write-registry "$OUT/registry.yaml" >/dev/null
SVC_PASS=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s' "$SVC_PASS" >"$OUT/svc-pass"
mosquitto_passwd -c -b "$OUT/passwd" sossego-central "$SVC_PASS"
for i in $(seq 1 "$GATEWAYS"); do
	gw=$(printf 'lg-%04d' "$i")
	pw=$(printf '%s' "sossego-loadgen/password/v1|$SEED|$gw" | sha256sum | cut -c1-24)
	mosquitto_passwd -b "$OUT/passwd" "$gw" "$pw"
done
# The real gateway: its state folder (key, outbox) on a 6 MiB tmpfs.
GW=soak-gw GW_SENSOR=soak-gw-m1 GW_STATE="$OUT/gw-state"
mkdir -p "$GW_STATE"
if [ "$FULLDISK" = 1 ]; then mount -t tmpfs -o size=6m tmpfs "$GW_STATE"; fi
GW_PASS=$(head -c 12 /dev/urandom | od -An -tx1 | tr -d ' \n')
mosquitto_passwd -b "$OUT/passwd" "$GW" "$GW_PASS"
cat >"$OUT/gateway.yaml" <<EOF
municipality: lapa
gateway: $GW
sensor: $GW_SENSOR
state_dir: $GW_STATE
log_level: info
meter: {type: sim, sim_scenario: bar_music}
mqtt: {broker: "tcp://127.0.0.1:$MQ", username: $GW, password: "$GW_PASS", max_reconnect_interval: 5s}
outbox: {reserve_bytes: 262144, memory_records: 1800}
status_interval: 5s
EOF
GW_KEY=$("$OUT/sossego-gateway" key --config "$OUT/gateway.yaml" 2>/dev/null)
python3 - "$OUT/registry.yaml" "$GW" "$GW_SENSOR" "$GW_KEY" <<'PY'
import sys
path, gw, sensor, key = sys.argv[1:]
lines = open(path).read().splitlines()
i = lines.index("sensors:")
lines.insert(i, "  - {id: %s, municipality: lapa, public_key: %s}" % (gw, key))
lines.append("  - {id: %s, gateway: %s, zone: other, location: {lat: -25.77, lon: -49.71}, address: Rua do Gateway Real 1, meter: {grade: screening}}" % (sensor, gw))
open(path, "w").write("\n".join(lines) + "\n")
PY
start_gateway() { "$OUT/sossego-gateway" run --config "$OUT/gateway.yaml" >>"$OUT/gateway.log" 2>&1 & GW_PID=$!; }
gw_status() { mosquitto_sub -h 127.0.0.1 -p "$MQ" -u sossego-central -P "$SVC_PASS" -t "sossego/v1/lapa/$GW/status" -C 1 -W 5 2>/dev/null || true; }

mkdir -p "$OUT/mosquitto"
cat >"$OUT/mosquitto.conf" <<EOF
per_listener_settings false
allow_anonymous false
password_file $OUT/passwd
acl_file $PWD/docs/mosquitto/acl
listener $MQ 127.0.0.1
max_packet_size 1052672
max_inflight_messages 1000
max_queued_messages 0
max_queued_bytes 0
set_tcp_nodelay true
persistence true
persistence_location $OUT/mosquitto/
autosave_interval 1
log_dest file $OUT/mosquitto.log
EOF
# As root Mosquitto would drop to its own user, which cannot write $OUT:
# its persistence would silently not be saved across the restarts.
if [ "$(id -u)" = 0 ]; then echo "user root" >>"$OUT/mosquitto.conf"; fi
start_mosquitto() { mosquitto -c "$OUT/mosquitto.conf" & MOSQ_PID=$!; }

cat >"$OUT/influxdb.conf" <<EOF
reporting-disabled = true
bind-address = "127.0.0.1:$IB"
[meta]
  dir = "$OUT/influx/meta"
[data]
  dir = "$OUT/influx/data"
  wal-dir = "$OUT/influx/wal"
  query-log-enabled = false
[http]
  enabled = true
  bind-address = "127.0.0.1:$IH"
  flux-enabled = true
  log-enabled = false
[logging]
  level = "warn"
[monitor]
  store-enabled = false
EOF
start_influx() { .tools/bin/influxd -config "$OUT/influxdb.conf" >>"$OUT/influxd.log" 2>&1 & INFLUX_PID=$!; }
wait_http() { for _ in $(seq 1 100); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.2; done; echo "soak: $1 did not answer" >&2; return 1; }

cleanup() {
	kill "${LG_PID:-}" "${GW_PID:-}" "${SVC_PID:-}" "${MOSQ_PID:-}" "${INFLUX_PID:-}" 2>/dev/null || true
	wait 2>/dev/null || true
	if [ "$FULLDISK" = 1 ]; then umount "$GW_STATE" 2>/dev/null || true; fi
}
trap cleanup EXIT

start_mosquitto
start_influx
wait_http "http://127.0.0.1:$IH/ping"
curl -fs -XPOST "http://127.0.0.1:$IH/query" --data-urlencode "q=CREATE DATABASE sossego" >/dev/null
"$OUT/sossego" central --data-dir "$OUT/data" --registry "$OUT/registry.yaml" --http "127.0.0.1:$HTTP" \
	--mqtt-url "tcp://127.0.0.1:$MQ" --mqtt-password-file "$OUT/svc-pass" \
	--store influx --influx-url "http://127.0.0.1:$IH" --log warn >"$OUT/central.log" 2>&1 &
SVC_PID=$!
wait_http "http://127.0.0.1:$HTTP/metrics"
"$OUT/sossego" loadgen --gateways "$GATEWAYS" --seed "$SEED" --registry "$OUT/registry.yaml" \
	--mqtt-url "tcp://127.0.0.1:$MQ" --rate "$RATE" --duration "$DURATION" --wait-acks 5m --json \
	>"$OUT/loadgen.json" 2>"$OUT/loadgen.log" &
LG_PID=$!
start_gateway
log "load: $GATEWAYS gateways × $RATE batches/s for $DURATION; Mosquitto restarted every $BROKER_EVERY, InfluxDB killed every $INFLUX_EVERY"

metric() { awk -v m="$1" '$1 == m { print $2; exit }' "$OUT/last.prom"; }
printf 'elapsed_s\trss_bytes\theap_inuse_bytes\tgoroutines\trecords_total\tcpu_s\n' >"$OUT/metrics.tsv"
begin=$(date +%s) next_broker=$(secs "$BROKER_EVERY") next_influx=$(secs "$INFLUX_EVERY")
broker_restarts=0 influx_kills=0
full_at=$(secs "${FULL_AT:-$(($(secs "$DURATION") / 3))s}") full_until= full_seen=0 full_done=0
while kill -0 "$LG_PID" 2>/dev/null; do
	sleep 30
	t=$(($(date +%s) - begin))
	if curl -fs "http://127.0.0.1:$HTTP/metrics" >"$OUT/last.prom"; then
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$t" "$(metric process_resident_memory_bytes)" "$(metric go_memstats_heap_inuse_bytes)" \
			"$(metric go_goroutines)" "$(metric sossego_ingest_records_total)" "$(metric process_cpu_seconds_total)" >>"$OUT/metrics.tsv"
	fi
	if [ "$t" -ge "$next_broker" ] && [ "$t" -lt "$(secs "$DURATION")" ]; then
		log "restarting Mosquitto (SIGTERM)"
		kill -TERM "$MOSQ_PID"; wait "$MOSQ_PID" 2>/dev/null || true
		start_mosquitto
		broker_restarts=$((broker_restarts + 1)) next_broker=$((next_broker + $(secs "$BROKER_EVERY")))
	fi
	if [ "$FULLDISK" = 1 ] && [ "$full_done" = 0 ]; then
		if [ -z "$full_until" ] && [ "$t" -ge "$full_at" ]; then
			log "filling the gateway's file system (tmpfs) to the last byte for $FULL_FOR"
			dd if=/dev/zero of="$GW_STATE/filler" bs=4k 2>/dev/null || true
			full_until=$((t + $(secs "$FULL_FOR")))
		elif [ -n "$full_until" ]; then
			st=$(gw_status)
			case $st in *storage_error*) full_seen=$((full_seen + 1)) ;; esac
			if [ "$t" -ge "$full_until" ]; then
				log "freeing the gateway's file system; its status showed storage_error in $full_seen samples; last: $st"
				rm -f "$GW_STATE/filler"
				full_done=1
			fi
		fi
	fi
	if [ -n "${influx_back:-}" ] && [ "$t" -ge "$influx_back" ]; then
		log "restarting InfluxDB"
		start_influx
		influx_back=
	elif [ -z "${influx_back:-}" ] && [ "$t" -ge "$next_influx" ] && [ "$t" -lt "$(secs "$DURATION")" ]; then
		log "killing InfluxDB (SIGKILL); it comes back in about a minute"
		kill -KILL "$INFLUX_PID"; wait "$INFLUX_PID" 2>/dev/null || true
		influx_back=$((t + 60))
		influx_kills=$((influx_kills + 1)) next_influx=$((next_influx + $(secs "$INFLUX_EVERY")))
	fi
done
wait "$LG_PID" || { log "loadgen failed:"; cat "$OUT/loadgen.log"; exit 1; }
if [ -n "${influx_back:-}" ]; then log "restarting InfluxDB"; start_influx; fi
LG_PID=
log "loadgen: $(cat "$OUT/loadgen.json")"

# The real gateway: every second it measured from its first stored record
# up to a cut two minutes before it is stopped must be in SQLite, once; its
# status must say nothing was dropped.
gw_final=$(gw_status)
for _ in $(seq 1 60); do
	gw_pending=$(printf '%s' "$gw_final" | python3 -c 'import json,sys
try: print(json.load(sys.stdin)["outbox"]["pending"])
except Exception: print(-1)')
	[ "$gw_pending" -ge 0 ] && [ "$gw_pending" -le 20 ] && break
	sleep 5; gw_final=$(gw_status)
done
gw_cut=$(($(date +%s) * 1000 - 120000))
kill -TERM "$GW_PID"; wait "$GW_PID" 2>/dev/null || true; GW_PID=
log "gateway: status at the end: $gw_final"
gw_total=$(sqlite3 "file:$OUT/data/readings.db?mode=ro" "SELECT COALESCE(SUM(n),0) FROM level_packs WHERE sensor='$GW_SENSOR'")

# The mirror drains SQLite into InfluxDB after the last ack.
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["published"])' "$OUT/loadgen.json")
acked=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["acked"])' "$OUT/loadgen.json")
# One record per load-generator batch, plus what the real gateway stored.
want_records=$((want + gw_total))
influx_count() { { curl -fs "http://127.0.0.1:$IH/query?db=sossego" --data-urlencode 'q=SELECT count("laeq") FROM "levels"' || echo '{}'; } |
	python3 -c 'import json,sys
try: r=json.load(sys.stdin)["results"][0]; print(r["series"][0]["values"][0][1] if "series" in r else 0)
except Exception: print(0)'; }
for _ in $(seq 1 120); do [ "$(influx_count)" -ge "$want_records" ] && break; sleep 5; done
in_influx=$(influx_count)
in_sqlite=$(sqlite3 "file:$OUT/data/readings.db?mode=ro" 'SELECT COALESCE(SUM(n), 0) FROM level_packs')
log "published $want, acked $acked (+ $gw_total records of the real gateway); SQLite holds $in_sqlite records, InfluxDB $in_influx; Mosquitto restarted $broker_restarts×, InfluxDB killed $influx_kills×"
python3 - "$OUT/metrics.tsv" <<'PY'
import sys, csv
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
rows = [r for r in rows if r["rss_bytes"]]
mb = lambda r, k: float(r[k]) / 2**20
third = rows[len(rows) // 3] if rows else None
print("soak: samples %d; RSS first %.1f MB, at 1/3 %.1f MB, last %.1f MB, max %.1f MB; goroutines %s–%s; heap in use last %.1f MB; CPU %.0f s" % (
    len(rows), mb(rows[0], "rss_bytes"), mb(third, "rss_bytes"), mb(rows[-1], "rss_bytes"), max(mb(r, "rss_bytes") for r in rows),
    min(int(float(r["goroutines"])) for r in rows), max(int(float(r["goroutines"])) for r in rows), mb(rows[-1], "heap_inuse_bytes"),
    float(rows[-1]["cpu_s"])))
PY
# A lost connection the service noticed only at its keepalive ("pingresp
# not received") means it was blind to a broker that had gone: on loopback
# a restart is seen at once.
curl -fs "http://127.0.0.1:$HTTP/metrics" >"$OUT/last.prom" || true
blind=$(grep -c "pingresp not received" "$OUT/central.log" || true)
lost=$(grep -c "conexão MQTT perdida" "$OUT/central.log" || true)
log "service: $(metric sossego_ingest_mqtt_connects_total) connections to Mosquitto, $lost lost ($blind noticed only at the keepalive), $(metric sossego_ingest_queue_overflow_total) waits for room in the ingest queue"
[ "$acked" -eq "$want" ] && [ "$in_sqlite" -eq "$want_records" ] && [ "$in_influx" -eq "$want_records" ] || { log "FAILED: counts differ"; exit 1; }
if [ "$FULLDISK" = 1 ]; then
	# The simulated meter makes one record a second, so from the first
	# stored record to the cut a missing second is a loss.
	IFS='|' read -r gw_n gw_t0 gw_t1 <<<"$(sqlite3 "file:$OUT/data/readings.db?mode=ro" \
		"SELECT COALESCE(SUM(n),0), MIN(t0), MAX(t1) FROM level_packs WHERE sensor='$GW_SENSOR' AND t1 < $gw_cut")"
	gw_want=$(((gw_t1 - gw_t0) / 1000 + 1))
	gw_dropped=$(printf '%s' "$gw_final" | python3 -c 'import json,sys
try: print(json.load(sys.stdin)["outbox"]["dropped"])
except Exception: print(-1)')
	log "gateway: seconds from its first to its last stored record $gw_want, stored $gw_n; dropped (status) $gw_dropped; storage_error seen in $full_seen status samples"
	[ "$full_seen" -gt 0 ] || { log "FAILED: the gateway's status never showed storage_error while its disk was full"; exit 1; }
	[ "$gw_n" -eq "$gw_want" ] && [ "$gw_dropped" -eq 0 ] || { log "FAILED: the gateway lost records across the full disk"; exit 1; }
fi
[ "$blind" -eq 0 ] || { log "FAILED: the service noticed $blind broker disconnections only at its keepalive"; exit 1; }
log "ok"
