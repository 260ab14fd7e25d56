package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/sossego/sossego/internal/store"
)

// Record ids (level_packs, env) are the InfluxDB mirror's cursors, so a new
// record must never get an id at or below a cursor. Both tables take their
// ids from sqlite_sequence (AUTOINCREMENT), which only grows; plain rowids
// would restart at max(rowid)+1 after retention deleted the newest rows, and
// the mirror would skip the records stored under the reused ids.

// migrateEnv rebuilds an env table created before its ids came from
// sqlite_sequence, keeping every row and id. It does nothing on a current
// database.
func migrateEnv(ctx context.Context, tx *sql.Tx) error {
	const cols = `id, sensor, t, temperature_c, humidity_pct, pressure_hpa, gateway, seq`
	return rebuildTable(ctx, tx, "env", "ids that only grow",
		func(def string) bool { return strings.Contains(def, "AUTOINCREMENT") },
		`CREATE TABLE env_seq (`+envColumns+`)`,
		`INSERT INTO env_seq (`+cols+`) SELECT `+cols+` FROM env ORDER BY id`,
		`DROP TABLE env`, // drops env_sensor_t with it
		`ALTER TABLE env_seq RENAME TO env`,
		`CREATE UNIQUE INDEX env_sensor_t ON env (sensor, t)`)
}

// floorSequences raises each record table's sqlite_sequence entry to the
// position of the mirror cursor that reads it; Open runs it at every
// open, after the migrations. On a database whose ids were
// reused before (or migrated from a table whose newest rows retention had
// deleted), the next id would otherwise fall at or below the cursor.
func floorSequences(db *sql.DB) error {
	for _, c := range []struct{ table, cursor string }{
		{"level_packs", store.CursorInflux},
		{"env", store.CursorInfluxEnv},
	} {
		var pos int64
		err := db.QueryRow(`SELECT position FROM cursors WHERE name = ?`, c.cursor).Scan(&pos)
		if errors.Is(err, sql.ErrNoRows) || (err == nil && pos <= 0) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read cursor %s: %w", c.cursor, err)
		}
		// A table with no row yet has no sqlite_sequence entry.
		for _, q := range []string{
			`INSERT INTO sqlite_sequence (name, seq) SELECT ?1, ?2 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ?1)`,
			`UPDATE sqlite_sequence SET seq = ?2 WHERE name = ?1 AND seq < ?2`,
		} {
			if _, err := db.Exec(q, c.table, pos); err != nil {
				return fmt.Errorf("raise %s ids above cursor %s: %w", c.table, c.cursor, err)
			}
		}
	}
	return nil
}
