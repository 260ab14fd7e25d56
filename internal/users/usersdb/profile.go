package usersdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sossego/sossego/internal/users"
)

// Create adds a user after checking everything at once: the login, the
// role, the password and the profile (a fiscal needs a full name and a
// matrícula). A *users.ValidationError lists every problem in pt-BR.
func (s *Store) Create(ctx context.Context, n users.NewUser, now time.Time) (users.User, error) {
	n, err := users.CheckNewUser(n)
	if err != nil {
		return users.User{}, err
	}
	h, err := s.hash(ctx, n.Password)
	if err != nil {
		return users.User{}, err
	}
	return s.insert(ctx, n.Name, n.Role, h, n.Profile, now)
}

func (s *Store) insert(ctx context.Context, name string, role users.Role, hash string, p users.Profile, now time.Time) (users.User, error) {
	u := users.User{Name: name, Role: role, Profile: p, Created: now.UTC().Truncate(time.Millisecond)}
	_, err := s.db.ExecContext(ctx, `INSERT INTO users(name, role, hash, created, full_name, matricula, email, phone) VALUES(?,?,?,?,?,?,?,?)`,
		name, string(role), hash, u.Created.UnixMilli(), p.FullName, p.Matricula, p.Email, p.Phone)
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") || strings.Contains(err.Error(), "PRIMARY KEY") {
			return users.User{}, fmt.Errorf("users: add %q: %w", name, users.ErrExists)
		}
		return users.User{}, fmt.Errorf("users: add %q: %w", name, err)
	}
	return u, nil
}

// Get returns one user.
func (s *Store) Get(ctx context.Context, name string) (users.User, error) {
	u, err := scanUser(s.db.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE name=?`, name))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return users.User{}, fmt.Errorf("users: %q: %w", name, users.ErrNotFound)
	case err != nil:
		return users.User{}, fmt.Errorf("users: get %q: %w", name, err)
	}
	return u, nil
}

// Update applies ch to the user name and returns the result. The user as
// changed must be valid (a user who becomes fiscal needs a full name and a
// matrícula); disabling or demoting the last active admin is refused
// (users.ErrLastAdmin). Disabling or a new password ends the user's sessions.
func (s *Store) Update(ctx context.Context, name string, ch users.Change) (users.User, error) {
	var hash string
	if ch.Password != nil {
		if err := users.CheckNewPassword(*ch.Password); err != nil {
			return users.User{}, err
		}
		h, err := s.hash(ctx, *ch.Password)
		if err != nil {
			return users.User{}, err
		}
		hash = h
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return users.User{}, fmt.Errorf("users: update %q: %w", name, err)
	}
	defer tx.Rollback()
	old, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userCols+` FROM users WHERE name=?`, name))
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return users.User{}, fmt.Errorf("users: update %q: %w", name, users.ErrNotFound)
	case err != nil:
		return users.User{}, fmt.Errorf("users: update %q: %w", name, err)
	}
	u, err := ch.Apply(old)
	if err != nil {
		return users.User{}, err
	}
	if old.Role == users.Admin && !old.Disabled && (u.Role != users.Admin || u.Disabled) {
		var others int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role=? AND disabled=0 AND name<>?`, string(users.Admin), name).
			Scan(&others); err != nil {
			return users.User{}, fmt.Errorf("users: update %q: %w", name, err)
		}
		if others == 0 {
			return users.User{}, fmt.Errorf("users: update %q: %w", name, users.ErrLastAdmin)
		}
	}
	if _, err := tx.ExecContext(ctx, `UPDATE users SET role=?, full_name=?, matricula=?, email=?, phone=?, disabled=? WHERE name=?`,
		string(u.Role), u.FullName, u.Matricula, u.Email, u.Phone, boolInt(u.Disabled), name); err != nil {
		return users.User{}, fmt.Errorf("users: update %q: %w", name, err)
	}
	if hash != "" {
		if _, err := tx.ExecContext(ctx, `UPDATE users SET hash=? WHERE name=?`, hash, name); err != nil {
			return users.User{}, fmt.Errorf("users: update %q: %w", name, err)
		}
	}
	if hash != "" || (u.Disabled && !old.Disabled) {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE name=?`, name); err != nil {
			return users.User{}, fmt.Errorf("users: update %q: end sessions: %w", name, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return users.User{}, fmt.Errorf("users: update %q: %w", name, err)
	}
	return u, nil
}
