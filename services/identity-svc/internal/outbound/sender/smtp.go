package sender

import (
	"github.com/motionstudio/platform/services/identity-svc/internal/notify"

	"context"
	"crypto/tls"
	"fmt"
	"mime"
	"net"
	"net/smtp"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/motionstudio/platform/pkg/apperr"
)

// SMTPConfig addresses an SMTP server.
type SMTPConfig struct {
	// Addr is host:port.
	Addr string
	// From is the envelope and header sender.
	From string
	// Username and Password enable PLAIN authentication, which net/smtp only performs over TLS
	// (STARTTLS) or to localhost.
	Username, Password string
	// Timeout bounds the whole conversation; zero means 10 seconds.
	Timeout time.Duration
}

// SMTP sends email through an SMTP server with STARTTLS when the server offers it.
type SMTP struct{ cfg SMTPConfig }

// NewSMTP returns an SMTP notifier.
func NewSMTP(cfg SMTPConfig) *SMTP {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &SMTP{cfg: cfg}
}

// Send implements Notifier: it delivers m as a plain-text email. It returns apperr Invalid for a
// recipient with line breaks and Unavailable when the server refuses or does not answer.
func (s *SMTP) Send(ctx context.Context, m notify.Message) error {
	if strings.ContainsAny(m.To, "\r\n") || strings.ContainsAny(m.Subject, "\r\n") {
		return apperr.Invalidf("email recipient and subject must be single lines")
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return unavailable("smtp dial", err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	host, _, _ := net.SplitHostPort(s.cfg.Addr)
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		_ = conn.Close()
		return unavailable("smtp hello", err)
	}
	defer c.Close()
	if err := s.deliver(c, host, m); err != nil {
		return unavailable("smtp send", err)
	}
	return nil
}

func (s *SMTP) deliver(c *smtp.Client, host string, m notify.Message) error {
	if ok, _ := c.Extension("STARTTLS"); ok {
		if err := c.StartTLS(&tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}); err != nil {
			return err
		}
	}
	if s.cfg.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", s.cfg.Username, s.cfg.Password, host)); err != nil {
			return err
		}
	}
	if err := c.Mail(s.cfg.From); err != nil {
		return err
	}
	if err := c.Rcpt(m.To); err != nil {
		return err
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(compose(s.cfg.From, m)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// compose builds an RFC 5322 message with a UTF-8 plain-text body.
func compose(from string, m notify.Message) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\nTo: %s\r\nSubject: %s\r\n", from, m.To, mime.QEncoding.Encode("utf-8", m.Subject))
	fmt.Fprintf(&b, "Date: %s\r\nMessage-ID: <%s@motionstudio>\r\n", time.Now().UTC().Format(time.RFC1123Z), uuid.NewString())
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(m.Body, "\r\n", "\n"), "\n", "\r\n"))
	b.WriteString("\r\n")
	return []byte(b.String())
}

func unavailable(op string, err error) error {
	return apperr.Wrap(fmt.Errorf("notify: %s: %w", op, err), apperr.Unavailable, "notification_failed", "The message could not be sent.")
}
