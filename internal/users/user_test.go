package users

import (
	"strings"
	"testing"
)

func TestHashFormat(t *testing.T) {
	h, err := HashPassword("pw", Params{Time: 2, MemKiB: 256, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=256,t=2,p=1$") {
		t.Fatalf("hash %q is not a PHC argon2id string", h)
	}
	h2, _ := HashPassword("pw", Params{Time: 2, MemKiB: 256, Threads: 1})
	if h == h2 {
		t.Fatal("two hashes of one password are equal: salt not random")
	}
	for _, bad := range []string{
		"", "plain", "$2a$10$abcdefghijklmnopqrstuv",
		"$argon2id$v=18$m=256,t=2,p=1$c2FsdA$a2V5",
		"$argon2id$v=19$m=0,t=2,p=1$c2FsdA$a2V5",
		"$argon2id$v=19$m=99999999,t=2,p=1$c2FsdA$a2V5",
		"$argon2id$v=19$m=256,t=2,p=1$!!$a2V5",
		"$argon2id$v=19$m=256,t=2,p=1$c2FsdA$",
	} {
		if ok, err := VerifyPassword(bad, "pw"); ok || err == nil {
			t.Errorf("VerifyPassword(%q) = %v, %v; want an error", bad, ok, err)
		}
	}
}

func TestParseRole(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Role
		ok   bool
	}{{"admin", Admin, true}, {"fiscal", Fiscal, true}, {"operador", Operador, true}, {"Admin", "", false}, {"", "", false}} {
		got, err := ParseRole(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseRole(%q) = %q, %v", tc.in, got, err)
		}
	}
}

// FuzzCheckName: user names come from the login form.
func FuzzCheckName(f *testing.F) {
	for _, s := range []string{"ana", "joão.silva", "", ".x", "a b", strings.Repeat("z", 70), "a\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if err := CheckName(name); err == nil {
			if len(name) == 0 || len(name) > 64 || strings.ContainsAny(name, " \x00/\\'\"") {
				t.Fatalf("CheckName accepted %q", name)
			}
		}
	})
}

// FuzzVerifyPassword: a corrupted database must not crash the login path.
func FuzzVerifyPassword(f *testing.F) {
	h, _ := HashPassword("pw", Params{Time: 1, MemKiB: 64, Threads: 1})
	f.Add(h, "pw")
	f.Add("$argon2id$v=19$m=64,t=1,p=1$$", "")
	f.Fuzz(func(t *testing.T, phc, pw string) {
		if strings.Contains(phc, "m=") && !strings.Contains(phc, "m=64,") {
			return // keep the fuzzer off expensive cost parameters
		}
		_, _ = VerifyPassword(phc, pw)
	})
}
