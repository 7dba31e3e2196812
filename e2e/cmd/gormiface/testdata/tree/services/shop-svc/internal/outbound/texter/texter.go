// Package texter sends text messages.
package texter

// Texter sends text messages.
type Texter struct{}
