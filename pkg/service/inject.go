package service

import (
	"time"

	"github.com/google/uuid"
)

// Now is the clock every service injects into its domain: the current time in UTC.
func Now() time.Time { return time.Now().UTC() }

// NewID is the id source every service injects into its domain: a time-ordered UUID v7, so
// that new rows sort by creation.
func NewID() string { return uuid.Must(uuid.NewV7()).String() }
