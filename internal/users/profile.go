package users

import (
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Profile is the person behind a login. A fiscal signs notices and autos,
// so a fiscal must have a full name and a matrícula; the e-mail and phone
// are optional for every role but checked when given.
type Profile struct {
	FullName  string `json:"full_name"`
	Matricula string `json:"matricula"`
	Email     string `json:"email"`
	Phone     string `json:"phone"` // normalised: "(41) 99876-5432"
}

// ErrInvalid is wrapped by a ValidationError.
var ErrInvalid = errors.New("invalid user data")

// ErrLastAdmin: the change would leave no active admin to manage users.
var ErrLastAdmin = errors.New("the last active admin cannot be disabled or demoted")

// ValidationError lists every problem of a user's data, in pt-BR, each
// naming the field and what to type. errors.Is matches ErrInvalid and the
// specific sentinels (ErrBadName, ErrBadRole, ErrWeakPassword) it holds.
type ValidationError struct {
	Problems []string
	errs     []error
}

func (e *ValidationError) Error() string {
	return "users: " + ErrInvalid.Error() + ": " + strings.Join(e.Problems, "; ")
}

// Unwrap returns ErrInvalid and the sentinels of the problems.
func (e *ValidationError) Unwrap() []error { return append([]error{ErrInvalid}, e.errs...) }

func (e *ValidationError) add(sentinel error, format string, a ...any) {
	e.Problems = append(e.Problems, fmt.Sprintf(format, a...))
	if sentinel != nil {
		e.errs = append(e.errs, sentinel)
	}
}

func (e *ValidationError) orNil() error {
	if e == nil || len(e.Problems) == 0 {
		return nil
	}
	return e
}

// Field limits.
const (
	maxFullName  = 120
	maxMatricula = 32
	maxEmail     = 254
)

// NormalizeProfile trims p and formats the phone; it does not validate.
func NormalizeProfile(p Profile) Profile {
	p.FullName = strings.Join(strings.Fields(p.FullName), " ")
	p.Matricula = strings.TrimSpace(p.Matricula)
	p.Email = strings.TrimSpace(p.Email)
	p.Phone = strings.TrimSpace(p.Phone)
	if f, ok := formatPhone(p.Phone); ok {
		p.Phone = f
	}
	return p
}

// CheckProfile validates a normalised profile for role.
func CheckProfile(role Role, p Profile) error {
	e := &ValidationError{}
	checkProfile(e, role, p)
	return e.orNil()
}

func checkProfile(e *ValidationError, role Role, p Profile) {
	switch {
	case p.FullName == "" && role == Fiscal:
		e.add(nil, "nome completo: obrigatório para fiscal (é o nome impresso nas notificações e autos)")
	case p.FullName != "" && utf8.RuneCountInString(p.FullName) > maxFullName:
		e.add(nil, "nome completo: no máximo %d caracteres", maxFullName)
	case p.FullName != "" && !fullNameOK(p.FullName):
		e.add(nil, "nome completo %q: use nome e sobrenome, só letras, espaços, apóstrofo, hífen e ponto", p.FullName)
	}
	switch {
	case p.Matricula == "" && role == Fiscal:
		e.add(nil, "matrícula: obrigatória para fiscal (identifica o agente no ato, com o nome)")
	case len(p.Matricula) > maxMatricula:
		e.add(nil, "matrícula: no máximo %d caracteres", maxMatricula)
	case p.Matricula != "" && !matriculaOK(p.Matricula):
		e.add(nil, "matrícula %q: use letras, dígitos, ponto, hífen ou barra (ex.: 12.345-6)", p.Matricula)
	}
	if p.Email != "" && !emailOK(p.Email) {
		e.add(nil, "e-mail %q inválido: use o formato nome@prefeitura.gov.br", p.Email)
	}
	if p.Phone != "" {
		if _, ok := formatPhone(p.Phone); !ok {
			e.add(nil, "telefone %q inválido: use DDD e número, 10 ou 11 dígitos (ex.: (41) 99876-5432)", p.Phone)
		}
	}
}

func fullNameOK(s string) bool {
	words := 0
	for _, w := range strings.Fields(s) {
		letters := 0
		for _, r := range w {
			switch {
			case unicode.IsLetter(r):
				letters++
			case r == '\'' || r == '-' || r == '.' || r == '’':
			default:
				return false
			}
		}
		if letters > 0 {
			words++
		}
	}
	return words >= 2
}

func matriculaOK(s string) bool {
	for _, r := range s {
		if !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) || strings.ContainsRune(".-/", r)) {
			return false
		}
	}
	return true
}

func emailOK(s string) bool {
	if len(s) > maxEmail || strings.ContainsAny(s, " <>\"") {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != s {
		return false
	}
	at := strings.LastIndexByte(s, '@')
	domain := s[at+1:]
	return at > 0 && strings.Contains(domain, ".") && !strings.HasPrefix(domain, ".") && !strings.HasSuffix(domain, ".") &&
		!strings.Contains(domain, "..")
}

// formatPhone reads a Brazilian phone number (optionally +55, with any
// spaces, dots, dashes and parentheses): a two-digit DDD (11–99, no zero)
// and 8 digits (landline, starting 2–5) or 9 digits (mobile, starting 9).
func formatPhone(s string) (string, bool) {
	var d []byte
	for i, r := range s {
		switch {
		case r >= '0' && r <= '9':
			d = append(d, byte(r))
		case r == '+' && i == 0:
		case strings.ContainsRune(" .-()", r):
		default:
			return "", false
		}
	}
	if strings.HasPrefix(s, "+") {
		if len(d) < 2 || string(d[:2]) != "55" {
			return "", false
		}
		d = d[2:]
	}
	if len(d) != 10 && len(d) != 11 {
		return "", false
	}
	if d[0] == '0' || d[1] == '0' {
		return "", false
	}
	n := d[2:]
	switch {
	case len(n) == 9 && n[0] == '9':
		return fmt.Sprintf("(%s) %s-%s", d[:2], n[:5], n[5:]), true
	case len(n) == 8 && n[0] >= '2' && n[0] <= '5':
		return fmt.Sprintf("(%s) %s-%s", d[:2], n[:4], n[4:]), true
	}
	return "", false
}

// NewUser is a user to create (a store's Create).
type NewUser struct {
	Name     string
	Role     Role
	Password string
	Profile
}

// CheckNewUser normalises n's profile and checks everything at once: the
// login, the role, the password and the profile (a fiscal needs a full name
// and a matrícula). A *ValidationError lists every problem in pt-BR.
func CheckNewUser(n NewUser) (NewUser, error) {
	n.Profile = NormalizeProfile(n.Profile)
	e := &ValidationError{}
	if err := CheckName(n.Name); err != nil {
		e.add(ErrBadName, "usuário %q inválido: use de 1 a 64 letras, dígitos e . _ - @, começando por letra ou dígito", n.Name)
	}
	if _, err := ParseRole(string(n.Role)); err != nil {
		e.add(ErrBadRole, "papel %q inválido: use admin, fiscal ou operador", n.Role)
	}
	if utf8.RuneCountInString(n.Password) < MinPasswordLen {
		e.add(ErrWeakPassword, "senha: use pelo menos %d caracteres", MinPasswordLen)
	}
	checkProfile(e, n.Role, n.Profile)
	if err := e.orNil(); err != nil {
		return NewUser{}, err
	}
	return n, nil
}

// CheckNewPassword checks a password given in a Change: a
// *ValidationError (ErrWeakPassword) when it is too short.
func CheckNewPassword(pw string) error {
	if utf8.RuneCountInString(pw) < MinPasswordLen {
		e := &ValidationError{}
		e.add(ErrWeakPassword, "senha: use pelo menos %d caracteres", MinPasswordLen)
		return e
	}
	return nil
}

// Change is an edit of a user: nil fields stay as they are.
type Change struct {
	Role      *Role
	FullName  *string
	Matricula *string
	Email     *string
	Phone     *string
	Disabled  *bool
	Password  *string
}

// Apply returns u with ch's fields set (the password aside: a store hashes
// it) and its profile normalised, after checking the user as changed: a
// user who becomes fiscal needs a full name and a matrícula. A
// *ValidationError lists every problem in pt-BR.
func (ch Change) Apply(u User) (User, error) {
	set := func(dst *string, src *string) {
		if src != nil {
			*dst = *src
		}
	}
	if ch.Role != nil {
		u.Role = *ch.Role
	}
	set(&u.FullName, ch.FullName)
	set(&u.Matricula, ch.Matricula)
	set(&u.Email, ch.Email)
	set(&u.Phone, ch.Phone)
	if ch.Disabled != nil {
		u.Disabled = *ch.Disabled
	}
	u.Profile = NormalizeProfile(u.Profile)
	e := &ValidationError{}
	if _, err := ParseRole(string(u.Role)); err != nil {
		e.add(ErrBadRole, "papel %q inválido: use admin, fiscal ou operador", u.Role)
	}
	checkProfile(e, u.Role, u.Profile)
	if err := e.orNil(); err != nil {
		return User{}, err
	}
	return u, nil
}
