// Package gorm stands in for gorm.io/gorm in the layering checker's test workspace.
package gorm

// DB stands in for gorm's database handle.
type DB struct{}
