package store

import "gorm.io/gorm"

// Auth keeps what only login needs besides users and tenants: MFA factors and OAuth links.
// Users it creates go through users, so they get the same row and event as every other.
type Auth struct {
	db    *gorm.DB
	users *Users
}

// NewAuth returns an Auth store that creates users through users.
func NewAuth(db *gorm.DB, users *Users) *Auth { return &Auth{db: db, users: users} }
