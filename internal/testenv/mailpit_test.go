package testenv

import (
	"net/smtp"
	"strings"
	"testing"
	"time"
)

func TestMailpit(t *testing.T) {
	m := StartMailpit(t, MailpitOpts{})
	msg := "From: a@sossego.test\r\nTo: b@sossego.test\r\nSubject: teste\r\n\r\ncorpo da mensagem\r\n"
	if err := smtp.SendMail(m.SMTPAddr(), nil, "a@sossego.test", []string{"b@sossego.test"}, []byte(msg)); err != nil {
		t.Fatalf("send: %v", err)
	}
	got := m.WaitMessages(t, 1, 10*time.Second)
	if len(got) != 1 || got[0].Subject != "teste" || !strings.Contains(got[0].Text, "corpo da mensagem") || got[0].To[0] != "b@sossego.test" {
		t.Fatalf("messages: %+v", got)
	}
	m.DeleteAll(t)
	if n := m.Count(t); n != 0 {
		t.Fatalf("%d messages after DeleteAll", n)
	}
}
