package sqlitestore

import (
	"context"
	"fmt"

	"github.com/sossego/sossego/internal/store"
)

// FloorLevelIDs raises the level records' id sequence to at least pos, so
// that no record stored from now on gets an id at or below pos. A follower
// that keeps its cursor outside this database (the long-term tier keeps
// its own, in its own file, in the transaction of its aggregates) calls it
// with its cursor before ingest starts: on a readings database restored
// from an older copy, or created anew beside a kept tier, new records
// would otherwise take ids the follower has passed and never be folded in.
// It does nothing when the sequence is already at or above pos.
func (s *Store) FloorLevelIDs(ctx context.Context, pos int64) error {
	if pos <= 0 {
		return nil
	}
	if s.closed.Load() {
		return store.ErrClosed
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	for _, q := range []string{
		`INSERT INTO sqlite_sequence (name, seq) SELECT 'level_packs', ?1 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'level_packs')`,
		`UPDATE sqlite_sequence SET seq = ?1 WHERE name = 'level_packs' AND seq < ?1`,
	} {
		if _, err := s.w.ExecContext(ctx, q, pos); err != nil {
			return fmt.Errorf("store: raise level ids above %d: %w", pos, err)
		}
	}
	// The next Apply reads the sequence again instead of its cached next id.
	s.nextLevelID = 0
	return nil
}
