// Package mailer sends mail.
package mailer

// Mailer sends mail.
type Mailer struct{}
