package sender_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/motionstudio/platform/pkg/apperr"
	"github.com/motionstudio/platform/pkg/outbound"
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"
	"github.com/motionstudio/platform/services/identity-svc/internal/outbound/sender"
)

// mail is what the test SMTP server received.
type mail struct {
	from, to string
	data     string
}

// smtpServer is a minimal SMTP server on 127.0.0.1 that accepts every message, or refuses every
// recipient with 550 when refuse is set.
func smtpServer(refuse bool) (string, chan mail) {
	GinkgoHelper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(ln.Close)
	got := make(chan mail, 4)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go serveSMTP(conn, refuse, got)
		}
	}()
	return ln.Addr().String(), got
}

func serveSMTP(conn net.Conn, refuse bool, got chan<- mail) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	reply := func(s string) { _, _ = conn.Write([]byte(s + "\r\n")) }
	reply("220 test ESMTP")
	var m mail
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"), strings.HasPrefix(cmd, "HELO"):
			reply("250-test\r\n250 8BITMIME")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			m.from = address(line[10:])
			reply("250 ok")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			if refuse {
				reply("550 no such user")
				continue
			}
			m.to = address(line[8:])
			reply("250 ok")
		case cmd == "DATA":
			reply("354 go ahead")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				b.WriteString(l)
			}
			m.data = b.String()
			got <- m
			reply("250 queued")
		case cmd == "QUIT":
			reply("221 bye")
			return
		default:
			reply("250 ok")
		}
	}
}

// address is the mailbox of a MAIL FROM or RCPT TO argument, without brackets or parameters.
func address(arg string) string {
	arg = strings.TrimSpace(arg)
	if i := strings.IndexByte(arg, '>'); i >= 0 {
		arg = arg[:i]
	}
	return strings.TrimPrefix(arg, "<")
}

var _ = Describe("the SMTP notifier", func() {
	It("delivers a plain-text email to a local SMTP server", func() {
		addr, got := smtpServer(false)
		n := sender.NewSMTP(sender.SMTPConfig{Addr: addr, From: "no-reply@motionstudio.test"})
		err := n.Send(context.Background(), notify.Message{
			Channel: notify.Email, To: "ada@example.test", Subject: "Verify your email", Body: "Your code is 123456\nThanks",
		})
		Expect(err).NotTo(HaveOccurred())
		var m mail
		Eventually(got).Should(Receive(&m))
		Expect(m.from).To(Equal("no-reply@motionstudio.test"))
		Expect(m.to).To(Equal("ada@example.test"))
		Expect(m.data).To(ContainSubstring("Subject: Verify your email"))
		Expect(m.data).To(ContainSubstring("Your code is 123456\r\nThanks"))
	})

	It("reports a refused recipient and an unreachable server as Unavailable", func() {
		addr, _ := smtpServer(true)
		err := sender.NewSMTP(sender.SMTPConfig{Addr: addr, From: "a@b.test"}).Send(context.Background(), notify.Message{To: "x@example.test"})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))

		ln, err := net.Listen("tcp", "127.0.0.1:0")
		Expect(err).NotTo(HaveOccurred())
		closed := ln.Addr().String()
		Expect(ln.Close()).To(Succeed())
		err = sender.NewSMTP(sender.SMTPConfig{Addr: closed, From: "a@b.test"}).Send(context.Background(), notify.Message{To: "x@example.test"})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
	})

	It("refuses header injection in the recipient", func() {
		err := sender.NewSMTP(sender.SMTPConfig{Addr: "127.0.0.1:1", From: "a@b.test"}).Send(context.Background(), notify.Message{To: "x@example.test\r\nBcc: y@example.test"})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})
})

// outbox is a Recorder that keeps the messages it was given.
type outbox struct{ kept []notify.Message }

func (o *outbox) Record(_ context.Context, m notify.Message) error {
	o.kept = append(o.kept, m)
	return nil
}

var _ = Describe("the development notifier teed to SMTP", func() {
	verify := notify.Message{Channel: notify.Email, To: "grace@example.test", Kind: "verify-email",
		Subject: "Verify your email address", Body: "Your verification code is 123456.", Data: map[string]string{"code": "123456"}}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))

	It("keeps the email in the outbox and delivers it to the SMTP server", func() {
		addr, got := smtpServer(false)
		kept := &outbox{}
		tee := sender.Tee{sender.NewDev(quiet, kept), sender.NewSMTP(sender.SMTPConfig{Addr: addr, From: "no-reply@motionstudio.test"})}
		Expect(tee.Send(context.Background(), verify)).To(Succeed())
		Expect(kept.kept).To(ConsistOf(verify))
		var m mail
		Eventually(got).Should(Receive(&m))
		Expect(m.to).To(Equal("grace@example.test"))
		Expect(m.data).To(ContainSubstring("Your verification code is 123456."))
	})

	It("fails as Unavailable when the SMTP server refuses the email", func() {
		addr, _ := smtpServer(true)
		tee := sender.Tee{sender.NewDev(quiet, &outbox{}), sender.NewSMTP(sender.SMTPConfig{Addr: addr, From: "no-reply@motionstudio.test"})}
		Expect(apperr.KindOf(tee.Send(context.Background(), verify))).To(Equal(apperr.Unavailable))
	})
})

var _ = Describe("the SMS gateway notifier", func() {
	client := outbound.New(outbound.Options{AllowLoopback: true})

	It("posts the text to the gateway with its API key", func() {
		got := make(chan map[string]string, 1)
		var auth string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth = r.Header.Get("Authorization")
			var body map[string]string
			_ = json.NewDecoder(r.Body).Decode(&body)
			got <- body
			w.WriteHeader(http.StatusAccepted)
		}))
		DeferCleanup(srv.Close)
		n := sender.NewSMSGateway(sender.SMSConfig{URL: srv.URL + "/send", APIKey: "k-123", From: "Motion"}, client)
		Expect(n.Send(context.Background(), notify.Message{Channel: notify.SMS, To: "+491511234567", Body: "code 123456"})).To(Succeed())
		var body map[string]string
		Eventually(got).Should(Receive(&body))
		Expect(body).To(Equal(map[string]string{"from": "Motion", "to": "+491511234567", "text": "code 123456"}))
		Expect(auth).To(Equal("Bearer k-123"))
	})

	It("reports a gateway error as Unavailable", func() {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusInternalServerError)
		}))
		DeferCleanup(srv.Close)
		err := sender.NewSMSGateway(sender.SMSConfig{URL: srv.URL}, client).Send(context.Background(), notify.Message{To: "+491511234567"})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Unavailable))
	})
})

var _ = Describe("the channel router", func() {
	It("refuses a message without recipient", func() {
		err := notify.Router{}.Send(context.Background(), notify.Message{Channel: notify.Email})
		Expect(apperr.KindOf(err)).To(Equal(apperr.Invalid))
	})
})
