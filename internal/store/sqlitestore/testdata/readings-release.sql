-- The readings store's schema as the release before numbered migration steps
-- left it (every table and index, the gateways counters added by ALTER TABLE).
-- A database in this shape must open and migrate keeping its data.
CREATE TABLE batches (
	gateway      TEXT    NOT NULL,
	seq          INTEGER NOT NULL,
	kind         TEXT    NOT NULL,
	municipality TEXT    NOT NULL,
	sensor       TEXT    NOT NULL,
	topic        TEXT    NOT NULL,
	body         BLOB    NOT NULL,
	sig          BLOB,
	verified     INTEGER NOT NULL,
	received_at  INTEGER NOT NULL,
	records      INTEGER NOT NULL,
	PRIMARY KEY (gateway, seq)
);
CREATE TABLE env (
	id            INTEGER PRIMARY KEY AUTOINCREMENT,
	sensor        TEXT    NOT NULL,
	t             INTEGER NOT NULL,
	temperature_c REAL,
	humidity_pct  REAL,
	pressure_hpa  REAL,
	gateway       TEXT    NOT NULL,
	seq           INTEGER NOT NULL
);
CREATE UNIQUE INDEX env_sensor_t ON env (sensor, t);
CREATE TABLE dead_letters (
	id          INTEGER PRIMARY KEY,
	received_at INTEGER NOT NULL,
	topic       TEXT    NOT NULL,
	reason      TEXT    NOT NULL,
	message     TEXT    NOT NULL,
	gateway     TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	payload     BLOB    NOT NULL,
	truncated   INTEGER NOT NULL
);
CREATE INDEX dead_letters_reason ON dead_letters (reason, id);
CREATE TABLE gateways (
	gateway      TEXT PRIMARY KEY,
	municipality TEXT    NOT NULL DEFAULT '',
	state        TEXT    NOT NULL DEFAULT '',
	at           INTEGER NOT NULL DEFAULT 0,
	received_at  INTEGER NOT NULL DEFAULT 0,
	clock        TEXT,
	outbox       TEXT,
	version      TEXT    NOT NULL DEFAULT '',
	last_seen    INTEGER NOT NULL DEFAULT 0,
	last_seq     INTEGER NOT NULL DEFAULT 0,
	watermark    INTEGER NOT NULL DEFAULT 0
, conflicts INTEGER NOT NULL DEFAULT 0, skipped_seqs INTEGER NOT NULL DEFAULT 0);
CREATE TABLE seq_above (
	gateway TEXT    NOT NULL,
	seq     INTEGER NOT NULL,
	PRIMARY KEY (gateway, seq)
) WITHOUT ROWID;
CREATE TABLE settled (
	gateway     TEXT    NOT NULL,
	seq         INTEGER NOT NULL,
	dead_letter INTEGER NOT NULL,
	PRIMARY KEY (gateway, seq)
) WITHOUT ROWID;
CREATE INDEX settled_dead_letter ON settled (dead_letter);
CREATE TABLE cursors (
	name     TEXT PRIMARY KEY,
	position INTEGER NOT NULL
);
CREATE TABLE level_packs (
	id      INTEGER PRIMARY KEY AUTOINCREMENT, -- id of the pack's last record
	sensor  TEXT    NOT NULL,
	t0      INTEGER NOT NULL, -- earliest record start, Unix ms
	t1      INTEGER NOT NULL, -- latest record start, Unix ms (t1 - t0 < packSpan)
	n       INTEGER NOT NULL, -- records; their ids are id - n + 1 … id
	gateway TEXT    NOT NULL,
	seq     INTEGER NOT NULL,
	grade   TEXT    NOT NULL,
	synced  INTEGER NOT NULL,
	data    BLOB    NOT NULL  -- the records (encodePack)
);
CREATE INDEX level_packs_sensor_t1 ON level_packs (sensor, t1, t0);
CREATE TABLE record_conflicts (
	id          INTEGER PRIMARY KEY,
	received_at INTEGER NOT NULL,
	kind        TEXT    NOT NULL, -- levels | env
	sensor      TEXT    NOT NULL,
	t           INTEGER NOT NULL, -- the start both records claim, Unix ms
	kept_gateway TEXT   NOT NULL,
	kept_seq    INTEGER NOT NULL,
	kept        TEXT    NOT NULL, -- the stored record (JSON, wire form)
	new_gateway TEXT    NOT NULL,
	new_seq     INTEGER NOT NULL,
	new         TEXT    NOT NULL  -- the record that arrived later (JSON, wire form)
);
CREATE INDEX record_conflicts_sensor_t ON record_conflicts (sensor, t);
CREATE TABLE seq_skips (
	id      INTEGER PRIMARY KEY,
	gateway TEXT    NOT NULL,
	first   INTEGER NOT NULL,
	last    INTEGER NOT NULL,
	at      INTEGER NOT NULL,
	reason  TEXT    NOT NULL
);
